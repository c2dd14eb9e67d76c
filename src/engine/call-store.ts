/**
 * Where call resources (POST /tool/calls) live while they run and for a while
 * after. An interface with an in-memory implementation; running several
 * gateway instances later means another implementation, not a rewrite.
 */
import type { Call } from './call.js';

export interface CallStore {
  /** Keep a running call; it stays until expired after it finishes. */
  put(call: Call): void;
  /** The call with this id, unless it is unknown or expired. */
  get(id: string): Call | undefined;
  /** Every call kept (running and finished). */
  list(): Iterable<Call>;
  /** Drop finished calls past their retention. Returns how many were dropped. */
  expire(): number;
  /** Number of calls kept. */
  readonly size: number;
}

export interface CallRetention {
  /** How long a finished call is kept, ms. */
  retainMs: number;
  /** Most finished calls kept; the oldest finished are dropped first. */
  maxRetained: number;
  /** Most bytes (events and result) all finished calls may hold together; the oldest finished are dropped first. */
  maxRetainedBytes?: number;
  /** Clock, epoch ms (tests pass their own). */
  now?: () => number;
}

/**
 * In-memory store. Running calls are always kept (they are bounded by what
 * runs); finished ones are kept for `retainMs`, at most `maxRetained` of
 * them and at most `maxRetainedBytes` of their events and results.
 * Expiry is lazy (on put/get/list/finish), so there is no timer to stop.
 */
export class MemoryCallStore implements CallStore {
  private readonly calls = new Map<string, Call>();
  /** Finished calls by id → finish time and bytes held, oldest first (Map keeps insertion order). */
  private readonly finished = new Map<string, { at: number; bytes: number }>();
  private finishedBytes = 0;
  private readonly now: () => number;

  constructor(private readonly retention: CallRetention) {
    this.now = retention.now ?? Date.now;
  }

  put(call: Call): void {
    this.expire();
    this.calls.set(call.id, call);
    if (call.settled) this.markFinished(call.id);
    else void call.result.then(() => this.markFinished(call.id));
  }

  get(id: string): Call | undefined {
    this.expire();
    return this.calls.get(id);
  }

  list(): Iterable<Call> {
    this.expire();
    return this.calls.values();
  }

  get size(): number {
    return this.calls.size;
  }

  /** Bytes the finished calls hold (events and results, approximate). */
  get retainedBytes(): number {
    return this.finishedBytes;
  }

  expire(): number {
    const cutoff = this.now() - this.retention.retainMs;
    const maxBytes = this.retention.maxRetainedBytes ?? Infinity;
    let dropped = 0;
    for (const [id, { at, bytes }] of this.finished) {
      if (at > cutoff && this.finished.size <= this.retention.maxRetained && this.finishedBytes <= maxBytes) break;
      this.finished.delete(id);
      this.calls.delete(id);
      this.finishedBytes -= bytes;
      dropped++;
    }
    return dropped;
  }

  private markFinished(id: string): void {
    const call = this.calls.get(id);
    if (!call) return;
    const bytes = call.retainedBytes ?? 0; // (stand-ins for calls in tests may not count bytes)
    this.finished.set(id, { at: this.now(), bytes });
    this.finishedBytes += bytes;
    this.expire();
  }
}
