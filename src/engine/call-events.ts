/**
 * The events of one call: numbered from 0, kept for replay within a count and
 * byte budgets, and followed by any number of `Watcher`s. A watcher that fell
 * behind what is kept gets a gap (and the door a notice) instead of a stall.
 * `Call` owns one of these, made when its first event or watcher arrives.
 *
 * Back-pressure: `taken()` waits while a watcher has more than a quarter of
 * the call's byte budget still to take, so a tool that awaits it between
 * bursts never outruns a reader that keeps reading, and what it holds stays
 * within the budget. A tool that does not (or emits more than the budget in
 * one synchronous burst) still has its oldest events dropped at the budget:
 * memory stays bounded either way.
 */
import { PROTOCOL_VERSION, newId, nowTs, type ToolEvent } from '../protocol/index.js';
import { approxJsonBytes, type ByteBudget } from '../utils/byte-budget.js';

/** A batch of events for a watcher; `gap` names seqs that were dropped before it could read them. */
export interface EventBatch {
  events: ToolEvent[];
  gap?: { from: number; to: number };
}

export interface EventLimits {
  /** Events kept for replay; older ones are dropped once every watcher has read them. */
  maxEvents: number;
  /** Hard cap on buffered events, even when a slow watcher has not read them. */
  maxBufferedEvents: number;
  /** Bytes of events kept while running, read or not; the oldest are dropped beyond it (watchers get a gap notice). */
  maxEventBytes: number;
  /** Bytes of events kept once the call has settled (and the watchers following it then have taken theirs). */
  retainedEventBytes: number;
  /** Bytes of events all running calls keep together; over it, an emitting call drops its oldest events. */
  eventBudget: ByteBudget;
}

/**
 * What one event costs beyond its data: the envelope, two UUIDs, object
 * headers. Measured: a `log` event of a short line takes ~670 bytes of heap,
 * of which ~40 are its data.
 */
const EVENT_OVERHEAD_BYTES = 640;

const MAX_BATCH = 1000;

const RESOLVED = Promise.resolve();

export class CallEvents {
  private events: ToolEvent[] = [];
  /** Approximate size of each kept event (parallel to `events`) and their sum, counted in `limits.eventBudget` while running. */
  private sizes: number[] = [];
  private keptBytes = 0;
  /** Whether `keptBytes` counts in the running calls' budget (until the call settles). */
  private counted = true;
  private base = 0; // seq of events[0]
  private nextSeq = 0;
  private trimAt: number;
  private watchers: Set<Watcher> | undefined; // made by the first watch()
  /** The watchers that were following the call when it settled, until they have taken what it kept for them. */
  private draining: Set<Watcher> | undefined;
  private _settled = false;
  /** Bytes of every event pushed, and of every event dropped: byte positions, so a watcher's lag is one subtraction. */
  private pushedBytes = 0;
  private droppedBytes = 0;
  /** Resolvers of `taken()` promises, waiting for the watchers to catch up. */
  private waiting: Array<() => void> | undefined;

  constructor(private readonly limits: EventLimits) {
    this.trimAt = limits.maxEvents + Math.max(64, limits.maxEvents >> 2);
  }

  /** Seq of the oldest event still kept. */
  get firstSeq(): number {
    return this.base;
  }

  /** Number of events added so far (the seq the next one gets). */
  get count(): number {
    return this.nextSeq;
  }

  /** The events still kept, oldest first. */
  get kept(): readonly ToolEvent[] {
    return this.events;
  }

  /** Approximate bytes of the kept events. */
  get bytes(): number {
    return this.keptBytes;
  }

  get settled(): boolean {
    return this._settled;
  }

  /** Keep an event (its `seq` must be `count`) and wake the watchers. */
  push(event: ToolEvent): void {
    this.nextSeq++;
    const size = EVENT_OVERHEAD_BYTES + event.req_id.length + approxJsonBytes(event.data);
    this.events.push(event);
    this.sizes.push(size);
    this.keptBytes += size;
    this.pushedBytes += size;
    const budget = this.limits.eventBudget;
    budget.add(size);
    if (this.events.length >= this.trimAt || this.keptBytes > this.limits.maxEventBytes || budget.over) this.trim();
    if (this.watchers) for (const w of this.watchers) w.notify();
  }

  /**
   * Resolves once no watcher is more than a quarter of the call's byte budget
   * behind (at once if none is), or the call has settled, or the lagging
   * watchers went away.
   */
  taken(): Promise<void> {
    if (this._settled || this.lag() <= this.limits.maxEventBytes >> 2) return RESOLVED;
    return new Promise((resolve) => (this.waiting ??= []).push(resolve));
  }

  /** Bytes the watcher furthest behind has still to take (0 without watchers). */
  private lag(): number {
    let least = this.pushedBytes;
    if (this.watchers) for (const w of this.watchers) if (w.takenBytes < least) least = w.takenBytes;
    return this.pushedBytes - least;
  }

  /** Let `taken()` waiters go once the watchers caught up (or are gone, or the call settled). */
  private release(): void {
    if (!this.waiting || (!this._settled && this.lag() > this.limits.maxEventBytes >> 2)) return;
    const waiting = this.waiting;
    this.waiting = undefined;
    for (const resolve of waiting) resolve();
  }

  /**
   * Follow the events from after `afterSeq` (-1 = from the start).
   * Registers at once: events added later are kept for this watcher.
   * Iteration ends when the call has settled and every event was delivered.
   */
  watch(afterSeq: number): Watcher {
    const cursor = Math.min(afterSeq + 1, this.nextSeq);
    const w = new Watcher(this, afterSeq + 1, this.positionOf(cursor));
    if (!this._settled) (this.watchers ??= new Set()).add(w);
    return w;
  }

  /** Byte position of event `seq` (the bytes of every event before it; dropped ones count as taken). */
  private positionOf(seq: number): number {
    let bytes = this.droppedBytes;
    for (let i = 0, n = seq - this.base; i < n; i++) bytes += this.sizes[i]!;
    return bytes;
  }

  /** The call has settled: leave the running total, keep only what a finished call may, let watchers finish. */
  settle(): void {
    if (this._settled) return;
    this._settled = true;
    this.limits.eventBudget.release(this.keptBytes);
    this.counted = false;
    // The watchers following the call now still get every event they have not taken: a reader that kept up
    // to the back-pressure threshold must not lose the call's last events to the smaller retained budget.
    // What they have not taken goes once they have (keepRetained after each read, and when they go).
    this.draining = this.watchers;
    this.watchers = undefined;
    this.keepRetained();
    if (this.draining) for (const w of this.draining) w.notify();
    this.release();
  }

  /** After settling: keep only `retainedEventBytes` of events, less any that a draining watcher has still to take. */
  private keepRetained(): void {
    if (this.keptBytes <= this.limits.retainedEventBytes) return;
    let cut = this.base + this.countToDrop(this.limits.retainedEventBytes);
    if (this.draining) for (const w of this.draining) cut = Math.min(cut, w.cursor);
    this.dropBefore(cut);
  }

  /**
   * Drop the oldest events beyond `maxEvents`, but not ones a watcher still
   * has to read (up to the hard cap). Bytes are a hard cap too: beyond the
   * call's own budget the events every watcher has taken go first (down to
   * three quarters of it, so the next trim is a while off), and ones a watcher
   * has still to read only when they alone are over the budget; while all
   * running calls together are over theirs, the oldest go whoever still has to
   * read them. A watcher whose events were dropped gets a gap notice.
   */
  private trim(): void {
    let cut = this.nextSeq - this.limits.maxEvents;
    let taken = this.nextSeq; // every watcher has read the events before this seq
    if (this.watchers) for (const w of this.watchers) taken = Math.min(taken, w.cursor);
    if (this.watchers && this.events.length < this.limits.maxBufferedEvents) cut = Math.min(cut, taken);
    const { maxEventBytes, eventBudget } = this.limits;
    if (eventBudget.over) {
      // Half of what it holds (at most three quarters of its own budget).
      cut = Math.max(cut, this.base + this.countToDrop(Math.min(this.keptBytes >> 1, (maxEventBytes * 3) >> 2)));
    } else if (this.keptBytes > maxEventBytes) {
      const unreadOver = this.lag() > maxEventBytes;
      cut = Math.max(
        cut,
        this.base + this.countToDrop((maxEventBytes * 3) >> 2, unreadOver ? this.sizes.length : taken - this.base),
      );
    }
    this.dropBefore(cut);
    this.trimAt = this.events.length + Math.max(64, this.limits.maxEvents >> 2);
  }

  /** How many of the oldest kept events (at most `most`) to drop so that at most `targetBytes` remain. */
  private countToDrop(targetBytes: number, most = this.sizes.length): number {
    let bytes = this.keptBytes;
    let n = 0;
    while (n < most && bytes > targetBytes) bytes -= this.sizes[n++]!;
    return n;
  }

  /** Drop the kept events with seq < `cut`. */
  private dropBefore(cut: number): void {
    if (cut <= this.base) return;
    const n = Math.min(cut - this.base, this.events.length);
    let dropped = 0;
    for (let i = 0; i < n; i++) dropped += this.sizes[i]!;
    this.events = this.events.slice(n);
    this.sizes = this.sizes.slice(n);
    this.base += n;
    this.keptBytes -= dropped;
    this.droppedBytes += dropped;
    if (this.counted) this.limits.eventBudget.release(dropped);
  }

  /** @internal for Watcher: the next batch after its cursor, which it moves past the batch. */
  read(w: Watcher): EventBatch | null {
    const cursor = w.cursor;
    if (cursor < this.base) {
      w.cursor = this.base;
      w.takenBytes = this.droppedBytes;
      if (this.waiting) this.release();
      return { events: [], gap: { from: cursor, to: this.base - 1 } };
    }
    const start = cursor - this.base;
    if (start >= this.events.length) return null;
    const end = Math.min(start + MAX_BATCH, this.events.length);
    let bytes = 0;
    for (let i = start; i < end; i++) bytes += this.sizes[i]!;
    w.cursor = cursor + (end - start);
    w.takenBytes += bytes;
    if (this.waiting) this.release();
    const batch = { events: this.events.slice(start, end) };
    if (this.draining?.has(w)) {
      if (w.cursor >= this.nextSeq) this.draining.delete(w);
      this.keepRetained();
    }
    return batch;
  }

  /** @internal for Watcher */
  detach(w: Watcher): void {
    this.watchers?.delete(w);
    if (this.draining?.delete(w)) this.keepRetained();
    if (this.waiting) this.release();
  }
}

/** Follows one call's events; an async iterable of batches. */
export class Watcher implements AsyncIterable<EventBatch> {
  private wake: (() => void) | undefined;
  private closed = false;

  constructor(
    private readonly events: CallEvents,
    /** Seq of the next event to read. */
    public cursor: number,
    /** Byte position of `cursor` in the call's events: how much of them this watcher has taken. */
    public takenBytes: number,
  ) {}

  /** @internal */
  notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** The next batch, or null when the call has settled and everything was read (or the watcher was closed). */
  async next(): Promise<EventBatch | null> {
    for (;;) {
      if (this.closed) return null;
      const batch = this.events.read(this);
      if (batch) return batch;
      if (this.events.settled) return null;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  close(): void {
    this.closed = true;
    this.events.detach(this);
    this.notify();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<EventBatch> {
    try {
      for (let b = await this.next(); b; b = await this.next()) yield b;
    } finally {
      this.close();
    }
  }
}

/**
 * A `status` event telling a watcher that events `gap.from`..`gap.to` were
 * dropped before it could read them. It carries seq `gap.to`, so resuming
 * after it continues right after the gap.
 */
export function gapNotice(reqId: string, gap: { from: number; to: number }): ToolEvent {
  return {
    type: 'tool/event',
    id: newId(),
    version: PROTOCOL_VERSION,
    ts: nowTs(),
    kind: 'status',
    req_id: reqId,
    data: {
      message: `events ${gap.from}..${gap.to} of this call are no longer kept and were skipped; the stream continues with event ${gap.to + 1}`,
    },
    seq: gap.to,
  };
}
