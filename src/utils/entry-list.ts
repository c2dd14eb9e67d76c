/**
 * A doubly linked list whose `add` hands back the entry that later removes the
 * value in O(1). For the per-call sets of the engine (the running calls, the
 * calls of one deadline slot): a `Set` of objects hashes each call on add and
 * delete and rehashes its table as it grows and drains, which measured as the
 * costliest part of the engine's bookkeeping of a fast call; here an add is one
 * small object and a remove relinks two neighbours.
 *
 * @example
 * const running = new EntryList<Call>();
 * const entry = running.add(call);
 * running.remove(entry); // true; false if it was already removed
 */
export interface Entry<T> {
  readonly value: T;
  /** @internal */ prev: Entry<T> | undefined;
  /** @internal */ next: Entry<T> | undefined;
  /** @internal The list holding it (undefined once removed). */ list: EntryList<T> | undefined;
}

export class EntryList<T> implements Iterable<T> {
  private head: Entry<T> | undefined;
  private tail: Entry<T> | undefined;
  private count = 0;

  /** Values in the list. */
  get size(): number {
    return this.count;
  }

  /** Append `value`; returns its entry, for `remove`. */
  add(value: T): Entry<T> {
    const entry: Entry<T> = { value, prev: this.tail, next: undefined, list: this };
    if (this.tail === undefined) this.head = entry;
    else this.tail.next = entry;
    this.tail = entry;
    this.count++;
    return entry;
  }

  /** Take `entry` out; false when it is not in this list (already removed or taken). */
  remove(entry: Entry<T>): boolean {
    if (entry.list !== this) return false;
    const { prev, next } = entry;
    if (prev === undefined) this.head = next;
    else prev.next = next;
    if (next === undefined) this.tail = prev;
    else next.prev = prev;
    entry.prev = entry.next = entry.list = undefined;
    this.count--;
    return true;
  }

  /** Take the oldest value out (undefined when empty). */
  shift(): T | undefined {
    const first = this.head;
    if (first === undefined) return undefined;
    this.remove(first);
    return first.value;
  }

  /**
   * Oldest first. Removing the value just visited, or the one after it, while iterating is safe; removing
   * both ends the walk there (take a copy, `[...list]`, to change the list freely while going through it).
   */
  *[Symbol.iterator](): Iterator<T> {
    for (let e = this.head; e !== undefined && e.list === this; ) {
      const next = e.next;
      yield e.value;
      e = e.list === this ? e.next : next;
    }
  }
}
