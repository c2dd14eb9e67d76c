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
import { EntryList, type Entry } from '../utils/entry-list.js';

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
  /**
   * True when this view is read from a shared store, whose count can lag behind what a reader already saw
   * (the owner's writes on their way, a call put back after the store lost its data); a local call's cannot.
   */
  readonly lags?: boolean;
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
  /** Most finished calls kept of all principals together (the backstop); the oldest finished are dropped first. */
  maxRetained: number;
  /** Most finished calls kept of one principal (its share); that principal's oldest finished are dropped first. */
  maxRetainedPerPrincipal?: number;
  /** Most bytes (events and result) all finished calls may hold together; the oldest finished are dropped first. */
  maxRetainedBytes?: number;
  /** Clock, epoch ms (tests pass their own). */
  now?: () => number;
}

/** A finished call's place in the store: when it finished, what it holds, and its place in its principal's list. */
interface Finished {
  at: number;
  bytes: number;
  principal: string | null;
  entry: Entry<string> | undefined;
}

/**
 * In-memory store. Running calls are always kept (they are bounded by what
 * runs); finished ones are kept for `retainMs`, at most
 * `maxRetainedPerPrincipal` of each principal (so one caller's many calls
 * drop only its own), and at most `maxRetained` of them and
 * `maxRetainedBytes` of their events and results in all.
 * Expiry is lazy (on put/get/list/finish), so there is no timer to stop.
 */
export class MemoryCallStore implements CallStore {
  private readonly calls = new Map<string, Call>();
  /** Finished calls by id, oldest first (Map keeps insertion order). */
  private readonly finished = new Map<string, Finished>();
  /** Each principal's finished calls, oldest first. */
  private readonly byPrincipal = new Map<string | null, EntryList<string>>();
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
    for (const [id, { at }] of this.finished) {
      if (at > cutoff && this.finished.size <= this.retention.maxRetained && this.finishedBytes <= maxBytes) break;
      this.drop(id);
      dropped++;
    }
    return dropped;
  }

  private markFinished(id: string): void {
    const call = this.calls.get(id);
    if (!call) return;
    const bytes = call.retainedBytes ?? 0; // (stand-ins for calls in tests may not count bytes)
    const principal = call.principal ?? null;
    let mine = this.byPrincipal.get(principal);
    if (!mine) this.byPrincipal.set(principal, (mine = new EntryList()));
    this.finished.set(id, { at: this.now(), bytes, principal, entry: mine.add(id) });
    this.finishedBytes += bytes;
    // The principal's share first: its own oldest go, never another's.
    const share = this.retention.maxRetainedPerPrincipal ?? Infinity;
    while (mine.size > share) this.drop(mine.shift()!);
    this.expire();
  }

  /** Forget a finished call. */
  private drop(id: string): void {
    const f = this.finished.get(id);
    if (!f) return;
    this.finished.delete(id);
    this.calls.delete(id);
    this.finishedBytes -= f.bytes;
    const mine = this.byPrincipal.get(f.principal);
    if (mine && f.entry) mine.remove(f.entry);
    if (mine?.size === 0) this.byPrincipal.delete(f.principal);
  }
}
