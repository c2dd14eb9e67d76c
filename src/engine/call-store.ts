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
  /** Clock, epoch ms (tests pass their own). */
  now?: () => number;
}

/**
 * In-memory store. Running calls are always kept (they are bounded by what
 * runs); finished ones are kept for `retainMs` and at most `maxRetained`.
 * Expiry is lazy (on put/get/list/finish), so there is no timer to stop.
 */
export class MemoryCallStore implements CallStore {
  private readonly calls = new Map<string, Call>();
  /** Finished calls by id → finish time, oldest first (Map keeps insertion order). */
  private readonly finished = new Map<string, number>();
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

  expire(): number {
    const cutoff = this.now() - this.retention.retainMs;
    let dropped = 0;
    for (const [id, at] of this.finished) {
      if (at > cutoff && this.finished.size <= this.retention.maxRetained) break;
      this.finished.delete(id);
      this.calls.delete(id);
      dropped++;
    }
    return dropped;
  }

  private markFinished(id: string): void {
    if (!this.calls.has(id)) return;
    this.finished.set(id, this.now());
    this.expire();
  }
}
