/**
 * Call timeouts, grouped: items whose deadlines fall in the same 10 ms slot
 * are kept together, and one ticker (running only while items are waiting)
 * expires the slots that are due. A Node timer per call (made, inserted,
 * cleared and dropped for every call, most of which end long before their
 * timeout) was a measurable part of a fast call's cost; here a call costs
 * one Set add and one delete. An item expires at most one slot (10 ms) late.
 */

export const DEADLINE_SLOT_MS = 10;

export class Deadlines<T> {
  /** Non-empty slots by due time (a multiple of the slot length, in performance.now() ms). */
  private readonly slots = new Map<number, Set<T>>();
  private waiting = 0;
  private ticker: NodeJS.Timeout | undefined;
  /** The next slot the ticker has not looked at yet. */
  private nextDue = 0;

  constructor(private readonly onExpire: (item: T) => void) {}

  /** Expire `item` once `timeoutMs` have passed, unless removed first. Returns its slot, for `remove`. */
  add(item: T, timeoutMs: number): number {
    const now = performance.now();
    // The first slot boundary strictly after the deadline: never before a slot the ticker still has to visit.
    const at = (Math.floor((now + timeoutMs) / DEADLINE_SLOT_MS) + 1) * DEADLINE_SLOT_MS;
    let slot = this.slots.get(at);
    if (!slot) this.slots.set(at, (slot = new Set()));
    slot.add(item);
    this.waiting++;
    if (!this.ticker) {
      this.nextDue = Math.floor(now / DEADLINE_SLOT_MS) * DEADLINE_SLOT_MS;
      // Unref'd: waiting deadlines alone never keep the process alive (a running call has handles of its own).
      this.ticker = setInterval(() => this.tick(), DEADLINE_SLOT_MS).unref();
    }
    return at;
  }

  remove(item: T, at: number): void {
    const slot = this.slots.get(at);
    if (!slot?.delete(item)) return;
    this.waiting--;
    if (slot.size === 0) this.slots.delete(at);
  }

  private tick(): void {
    const now = performance.now();
    for (; this.nextDue <= now; this.nextDue += DEADLINE_SLOT_MS) {
      const slot = this.slots.get(this.nextDue);
      if (!slot) continue;
      this.slots.delete(this.nextDue);
      this.waiting -= slot.size;
      for (const item of slot) this.onExpire(item);
    }
    // Stopped once nothing waits; under steady load it keeps running rather than starting per call.
    if (this.waiting === 0 && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
  }
}
