/**
 * Call timeouts, grouped: items whose deadlines fall in the same 10 ms slot
 * are kept together, and one ticker (running only while items are waiting)
 * expires the slots that are due. A Node timer per call (made, inserted,
 * cleared and dropped for every call, most of which end long before their
 * timeout) was a measurable part of a fast call's cost; here a call costs
 * one list entry (entry-list.ts: no hashing, unlike a Set per slot, which was
 * the next largest cost). An item expires at most one slot (10 ms) late.
 */
import { EntryList, type Entry } from './entry-list.js';

export const DEADLINE_SLOT_MS = 10;

/** The items due at one slot boundary. */
class Slot<T> extends EntryList<T> {
  constructor(readonly at: number) {
    super();
  }
}

/** An item's place among the deadlines: what `add` returns and `remove` takes. */
export type Deadline<T> = Entry<T>;

export class Deadlines<T> {
  /** Non-empty slots by due time (a multiple of the slot length, in performance.now() ms). */
  private readonly slots = new Map<number, Slot<T>>();
  private waiting = 0;
  private ticker: NodeJS.Timeout | undefined;
  /** The next slot the ticker has not looked at yet. */
  private nextDue = 0;

  constructor(private readonly onExpire: (item: T) => void) {}

  /** Expire `item` once `timeoutMs` have passed, unless removed first. Returns its deadline, for `remove`. */
  add(item: T, timeoutMs: number): Deadline<T> {
    const now = performance.now();
    // The first slot boundary strictly after the deadline: never before a slot the ticker still has to visit.
    const at = (Math.floor((now + timeoutMs) / DEADLINE_SLOT_MS) + 1) * DEADLINE_SLOT_MS;
    let slot = this.slots.get(at);
    if (!slot) this.slots.set(at, (slot = new Slot(at)));
    const deadline = slot.add(item);
    this.waiting++;
    if (!this.ticker) {
      this.nextDue = Math.floor(now / DEADLINE_SLOT_MS) * DEADLINE_SLOT_MS;
      // Unref'd: waiting deadlines alone never keep the process alive (a running call has handles of its own).
      this.ticker = setInterval(() => this.tick(), DEADLINE_SLOT_MS).unref();
    }
    return deadline;
  }

  /** Forget a deadline (no-op once it expired or was removed). */
  remove(deadline: Deadline<T>): void {
    const slot = deadline.list as Slot<T> | undefined;
    if (slot === undefined || !slot.remove(deadline)) return;
    this.waiting--;
    if (slot.size === 0) this.slots.delete(slot.at);
  }

  private tick(): void {
    const now = performance.now();
    for (; this.nextDue <= now; this.nextDue += DEADLINE_SLOT_MS) {
      const slot = this.slots.get(this.nextDue);
      if (!slot) continue;
      this.slots.delete(this.nextDue);
      // Taken out one by one: an item's own remove() while it expires is then a no-op.
      for (let item = slot.shift(); item !== undefined; item = slot.shift()) {
        this.waiting--;
        this.onExpire(item);
      }
    }
    // Stopped once nothing waits; under steady load it keeps running rather than starting per call.
    if (this.waiting === 0 && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
  }
}
