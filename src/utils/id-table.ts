/**
 * Values waiting for an answer, each under a number id: a request goes out
 * with its id, and the answer that names the id takes the value back out. For
 * the per-call bookkeeping of a request/answer protocol (the file tools
 * worker, a helper thread).
 *
 * Why not a `Map<number, T>`: V8 keeps a Map's entries in a hash table that
 * it copies into a new one as entries come and go, and allocates the new
 * table in the generation of the old one. Once a long-lived Map's table is in
 * the old generation, every table it leaves behind is old garbage still
 * holding the values it had; until a full collection frees it, the
 * young-generation collector takes those values, and all they reach (a call,
 * its request, its result), as alive, copies them and promotes them. With one
 * entry per call coming and going, that was nearly every call: in the file
 * tools worker's bookkeeping, 4 s of read_file load promoted 121 MB with a
 * Map and 0.6 MB with this table (nothing else changed; scavenges took 538
 * against 150 ms in all). Here a value sits in an array slot that is cleared
 * when it is taken and reused later: a cleared slot holds nothing.
 *
 * An id is its slot plus a multiple of SLOTS that grows each time the slot is
 * reused, so an id whose value was taken names nothing, even once its slot
 * holds another value.
 *
 * @example
 * const pending = new IdTable<Pending>();
 * const id = pending.add({ resolve, reject });
 * send({ id, ... });
 * // when the answer comes:
 * pending.take(answer.id)?.resolve(answer);
 */
export class IdTable<T extends NonNullable<unknown>> {
  private readonly values: (T | undefined)[] = [];
  /** The id each slot holds (or last held). */
  private readonly ids: number[] = [];
  /** Free slots, reused last-freed first. */
  private readonly free: number[] = [];
  private count = 0;
  /** Set once `set` is used: ids then come from another table, and this one makes none. */
  private mirror = false;

  /** How many values are waiting. */
  get size(): number {
    return this.count;
  }

  /** Keep `value` under a new id, and return the id. */
  add(value: T): number {
    if (this.mirror) throw new Error('IdTable: a table that mirrors ids (set) cannot make them (add)');
    const slot = this.free.length > 0 ? this.free.pop()! : this.values.length;
    if (slot >= SLOTS) throw new Error(`IdTable: more than ${SLOTS} values waiting`);
    const last = this.ids[slot];
    const id = last === undefined ? slot : last + SLOTS;
    this.ids[slot] = id;
    this.values[slot] = value;
    this.count++;
    return id;
  }

  /**
   * Keep `value` under `id`, an id made by another IdTable (the process at the other end of a channel keeps
   * its own bookkeeping under the ids of the side that made them). The id must not be waiting already.
   */
  set(id: number, value: T): void {
    const slot = slotOf(id);
    if (slot < 0) throw new Error(`IdTable: ${id} is not an id (a non-negative integer)`);
    this.mirror = true;
    if (this.values[slot] !== undefined)
      throw new Error(`IdTable: id ${id} is set while id ${this.ids[slot]} waits in its slot`);
    this.ids[slot] = id;
    this.values[slot] = value;
    this.count++;
  }

  /** The value waiting under `id`, if any. */
  get(id: number): T | undefined {
    const slot = slotOf(id);
    return this.ids[slot] === id ? this.values[slot] : undefined;
  }

  /** Take the value waiting under `id` out (undefined when none is). */
  take(id: number): T | undefined {
    const slot = slotOf(id);
    const value = this.values[slot];
    if (value === undefined || this.ids[slot] !== id) return undefined;
    this.values[slot] = undefined;
    this.count--;
    if (!this.mirror) this.free.push(slot);
    return value;
  }

  /** Take every waiting value out, and return them. */
  takeAll(): T[] {
    const all: T[] = [];
    for (let slot = 0; slot < this.values.length; slot++) {
      const value = this.values[slot];
      if (value === undefined) continue;
      all.push(value);
      this.values[slot] = undefined;
      if (!this.mirror) this.free.push(slot);
    }
    this.count = 0;
    return all;
  }
}

/** How many slots a table may have; ids stay exact integers while a slot is reused fewer than 2^32 times. */
const SLOTS = 2 ** 21;

/** The slot of an id (ids are non-negative integers). */
const slotOf = (id: number): number => (Number.isInteger(id) && id >= 0 ? id % SLOTS : -1);
