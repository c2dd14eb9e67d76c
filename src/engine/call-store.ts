/**
 * Where call resources (POST /tool/calls) live while they run and for a while
 * after. An interface with an in-memory implementation (this process) and a
 * Redis one (src/store/redis/calls.ts: any instance reads any call).
 *
 * A call runs on the instance that received it; what the doors read is a
 * `CallView`: the `Call` itself on that instance, a view of the shared copy
 * elsewhere. Methods answer synchronously in memory and with a promise where
 * they must ask the shared store.
 */
import type { ToolCallResponse, ToolEvent } from '../protocol/index.js';
import type { Call, CallState, StopReason } from './call.js';
import type { EventBatch } from './call-events.js';

/** Follows a call's events (from `CallView.watch`); ends after the last one, or when closed. */
export interface CallWatch extends AsyncIterable<EventBatch> {
  close(): void;
}

/** What a door reads of a call resource, wherever the call runs. `Call` is one. */
export interface CallView {
  readonly id: string;
  /** The id of the request that started it. */
  readonly requestId: string;
  readonly toolName: string;
  readonly state: CallState;
  readonly settled: boolean;
  /** Unix epoch seconds. */
  readonly createdAt: number;
  /** Events emitted so far (as far as this view knows). */
  readonly eventCount: number;
  /** The final response, once settled. */
  readonly response: ToolCallResponse | undefined;
  /** Name of the bearer token that started it (null without auth). */
  readonly principal: string | null;
  /** The credential that started it (Principal.credential), when known: only it owns the call. */
  readonly credential?: string;
  /** Follow the events after `afterSeq` (-1 = from the start); the view's state, count and response follow what it reads. */
  watch(afterSeq?: number): CallWatch;
  /** Stop the call (wherever it runs); resolves once the stop has been passed on (remote views: once settled, or after a bound). */
  stop(reason: StopReason): void | Promise<void>;
  /** The `status` event telling a watcher events `gap.from`..`gap.to` were dropped. */
  gapNotice(gap: { from: number; to: number }): ToolEvent;
}

export interface CallStore {
  /** Keep a running call; it stays until expired after it finishes. Rejects (unavailable) when the shared store cannot take it. */
  put(call: Call): void | Promise<void>;
  /** The call with this id that runs (or ran) in this process, unless it is unknown or expired. */
  get(id: string): Call | undefined;
  /** The call with this id wherever it runs, unless it is unknown or expired. */
  find(id: string): CallView | undefined | Promise<CallView | undefined>;
  /** Key of the per-call access tokens in `events_url`: the same on every instance sharing the store. */
  accessKey?(): Buffer;
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

  find(id: string): Call | undefined {
    return this.get(id);
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
