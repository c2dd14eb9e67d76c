/**
 * The live feed of call lifecycle events (a call started, finished, or was
 * refused) for watchers such as the console's "Live activity".
 *
 * While nobody watches it costs the engine one boolean check per call. While
 * watched — and for `lingerMs` after the last watcher left, so a reloading
 * page can resume where it was — it numbers the events and keeps the last
 * `capacity` of them for replay.
 */
import { nowTs } from '../protocol/index.js';
import type { Call, CallState } from './call.js';

export type ActivityType = 'call.started' | 'call.finished' | 'call.refused';

/** One lifecycle event, as sent to watchers. Never argument values or results. */
export interface CallActivity {
  /** Position in this feed (ids are `<epoch>.<seq>`). */
  seq: number;
  type: ActivityType;
  /** When it happened, Unix seconds. */
  ts: number;
  /** Server-assigned call id; "" for a refused call (it never became one). */
  call_id: string;
  req_id: string;
  tool_name: string;
  kind: string | null;
  /** The token's name (auth on), else null. */
  principal: string | null;
  session_id: string;
  state: CallState | 'refused';
  /** When the call started, Unix seconds. */
  created_at: number;
  /** Set once finished. */
  duration_ms: number | null;
  error_code: string | null;
}

export type ActivityListener = (activity: CallActivity, call: Call | undefined) => void;

/** A recorded event with its call (undefined for a refusal), for watchers that need more than the event. */
export interface ActivityEntry {
  activity: CallActivity;
  call: Call | undefined;
}

export interface ActivityFeedOptions {
  /** Events kept for resuming watchers. */
  capacity?: number;
  /** How long to keep recording after the last watcher left, ms. */
  lingerMs?: number;
}

export class ActivityFeed {
  /** True while the engine must report to this feed. The one check on the hot path. */
  active = false;
  /** Changes at every start: ids from another run of the gateway are not resumed. */
  readonly epoch = Date.now().toString(36);
  private readonly listeners = new Set<ActivityListener>();
  private readonly ring: ActivityEntry[] = [];
  private nextSeq = 0;
  private readonly capacity: number;
  private readonly lingerMs: number;
  private linger: NodeJS.Timeout | undefined;

  constructor(options: ActivityFeedOptions = {}) {
    this.capacity = options.capacity ?? 500;
    this.lingerMs = options.lingerMs ?? 60_000;
  }

  /** Follow the feed; returns the function that stops following. */
  watch(listener: ActivityListener): () => void {
    this.listeners.add(listener);
    clearTimeout(this.linger);
    this.linger = undefined;
    this.active = true;
    return () => {
      if (!this.listeners.delete(listener) || this.listeners.size > 0) return;
      clearTimeout(this.linger);
      this.linger = setTimeout(() => {
        this.linger = undefined;
        if (this.listeners.size > 0) return;
        this.active = false;
        this.ring.length = 0;
        // Calls that run now go unrecorded: skip a seq so no earlier id can resume across the hole.
        this.nextSeq++;
      }, this.lingerMs).unref();
    };
  }

  /**
   * Events after `afterSeq` still kept, or undefined when some of them were
   * already dropped (or were never recorded): then the watcher needs a fresh snapshot.
   */
  since(afterSeq: number): ActivityEntry[] | undefined {
    if (afterSeq > this.lastSeq) return undefined;
    const oldest = this.ring[0]?.activity.seq ?? this.nextSeq;
    if (afterSeq + 1 < oldest) return undefined;
    return this.ring.filter((e) => e.activity.seq > afterSeq);
  }

  /** Seq of the last event recorded (-1 before the first). */
  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  /** Finished calls still kept, newest last. */
  recentFinished(): ActivityEntry[] {
    return this.ring.filter((e) => e.activity.type === 'call.finished');
  }

  /** @internal Engine: a call began running. */
  started(call: Call): void {
    this.publish(describeCall(call, 'call.started', null), call);
  }

  /** @internal Engine: a call settled. */
  finished(call: Call): void {
    const r = call.response!.data;
    this.publish(describeCall(call, 'call.finished', r.error_code, r.duration_ms), call);
  }

  /** @internal Engine: a call was refused before it ran. */
  refused(attempt: {
    req_id: string;
    tool_name: string;
    kind: string | null;
    principal: string | null;
    session_id: string;
    error_code: string;
  }): void {
    const ts = nowTs();
    this.publish(
      { seq: 0, type: 'call.refused', ts, call_id: '', state: 'refused', created_at: ts, duration_ms: 0, ...attempt },
      undefined,
    );
  }

  private publish(activity: CallActivity, call: Call | undefined): void {
    activity.seq = this.nextSeq++;
    this.ring.push({ activity, call });
    if (this.ring.length > this.capacity) this.ring.splice(0, this.ring.length - this.capacity);
    for (const listener of this.listeners) listener(activity, call);
  }
}

/** A snapshot line for a call (running or settled), in the shape of its lifecycle events. */
export function describeCall(
  call: Call,
  type: ActivityType,
  errorCode: string | null,
  durationMs: number | null = null,
): CallActivity {
  return {
    seq: -1,
    type,
    ts: nowTs(),
    call_id: call.id,
    req_id: call.request.id,
    tool_name: call.request.tool_name,
    kind: call.tool.definition.kind,
    principal: call.caller.principal,
    session_id: call.caller.sessionId,
    state: call.state,
    created_at: call.createdAt,
    duration_ms: durationMs,
    error_code: errorCode,
  };
}
