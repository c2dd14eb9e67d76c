/**
 * Call timeouts, grouped: items whose deadlines fall in the same 10 ms slot
 * share one timer. A Node timer per call (made, inserted, cleared and
 * dropped for every call, most of which end long before their timeout) was
 * a measurable part of a fast call's cost; here a call costs one Set add
 * and one delete. An item expires at most one slot (10 ms) late.
 */

export const DEADLINE_SLOT_MS = 10;

export class Deadlines<T> {
  private readonly slots = new Map<number, Set<T>>();

  constructor(private readonly onExpire: (item: T) => void) {}

  /** Expire `item` once `timeoutMs` have passed, unless removed first. Returns the slot, for `remove`. */
  add(item: T, timeoutMs: number): number {
    const at = Math.ceil((performance.now() + timeoutMs) / DEADLINE_SLOT_MS) * DEADLINE_SLOT_MS;
    let slot = this.slots.get(at);
    if (!slot) {
      slot = new Set();
      this.slots.set(at, slot);
      // The slot's timer is left to fire even when its items are all removed: clearing it would
      // make the next item in the same slot start a new timer, a timer per call again. Unref'd, so
      // an emptied slot never keeps the process alive.
      setTimeout(() => this.expire(at), Math.max(0, at - performance.now())).unref();
    }
    slot.add(item);
    return at;
  }

  remove(item: T, slot: number): void {
    this.slots.get(slot)?.delete(item);
  }

  private expire(at: number): void {
    const slot = this.slots.get(at);
    this.slots.delete(at);
    if (slot) for (const item of slot) this.onExpire(item);
  }
}
