/**
 * One tool call's whole lifecycle. Every door (JSON, SSE, call resources,
 * other transports) drives the same `Call`: it runs the tool under an
 * AbortController, numbers its events (kept and followed through
 * `call-events.ts`), and settles exactly once.
 */
import {
  PROTOCOL_VERSION,
  newId,
  nowTs,
  type ToolCallRequest,
  type ToolCallResponse,
  type ToolEvent,
  type ToolEventDataMap,
  type ToolEventKind,
  type ToolResult,
} from '../protocol/index.js';
import { CallEvents, gapNotice, type EventLimits, type Watcher } from './call-events.js';
import type { Deadline, Deadlines } from '../utils/deadlines.js';
import { ToolError } from './errors.js';
import { isToolEvent, reportBadEvent } from './event-check.js';
import { safeErrorMessage, truncateValue } from './output.js';
import { JsonText, parseOnRead } from '../utils/json-text.js';
import { ToolOutput, type Logger } from './plugin.js';
import { CallContext } from './call-context.js';
import { responseJson } from './response-json.js';
import type { RegisteredTool } from './registry.js';
import type { Caller } from './policy.js';

/** `awaiting_approval`: held before the tool runs until a person decides (approvals/). */
export type CallState = 'awaiting_approval' | 'running' | 'completed' | 'failed' | 'canceled';

/** Why a call was stopped from outside. */
export type StopReason = 'timeout' | 'cancel' | 'disconnect' | 'shutdown';

export interface CallLimits extends EventLimits {
  /** Effective timeout of this call, ms. */
  timeoutMs: number;
  /** Byte cap on the JSON of ToolResult.data. */
  maxOutputBytes: number;
}

const NO_EVENTS: readonly ToolEvent[] = Object.freeze([]);

export class Call {
  private _id: string | undefined;
  readonly request: ToolCallRequest;
  readonly tool: RegisteredTool;
  readonly caller: Caller;
  readonly result: Promise<ToolCallResponse>;

  private _state: CallState = 'running';
  private _response: ToolCallResponse | undefined;
  private stopReason: StopReason | undefined;
  /** Made by the first event or watcher: most calls have neither. */
  private events: CallEvents | undefined;
  // The AbortController is made on first use of ctx.signal: most fast tools never read it, and a
  // controller plus the DOMException of its abort cost more than the rest of a quick call.
  private controller: AbortController | undefined;
  private abortReason: DOMException | typeof FINISHED | undefined;
  /** ctx.onStop listeners (one per tool in practice). */
  private stopListeners: ((reason: DOMException) => void)[] | undefined;
  private readonly startedAt = performance.now();
  private deadline: Deadline<Call> | undefined;
  private resolveResult!: (r: ToolCallResponse) => void;
  private args: Record<string, unknown> | undefined;
  /** Size of the request body, for the audit record (set by the engine). */
  inputBytes = 0;
  /** Size of the result's data as JSON, for the audit record. */
  outputBytes = 0;
  /** The door the call came through (set by the engine), for the audit record. */
  door = 'rest';
  /** The JSON text (or its UTF-8 bytes) of the settled result's data, kept for responseJson until its turn ends (settled-turn.ts). */
  private dataJson: string | Uint8Array | null = null;
  /** The result's data came as JSON text (JsonText): reading it parses it, so responseJson does not look. */
  private dataIsText = false;

  constructor(
    request: ToolCallRequest,
    tool: RegisteredTool,
    args: Record<string, unknown>,
    caller: Caller,
    private readonly limits: CallLimits,
    /** Logger of the door that started the call (bound to its request id), used for the call's own lines. */
    readonly logger: Logger,
    private readonly onSettled: (call: Call) => void,
    /** Where the call's timeout is kept (one per engine). */
    private readonly deadlines: Deadlines<Call>,
  ) {
    this.request = request;
    this.tool = tool;
    this.caller = caller;
    this.result = new Promise((resolve) => (this.resolveResult = resolve));
    this.deadline = deadlines.add(this, limits.timeoutMs);
    this.args = args;
  }

  /**
   * @internal Hold the call before its tool runs (approvals/): its own timeout starts only on `release`. The
   * engine calls it instead of begin(); stop() still ends it.
   */
  hold(): void {
    this._state = 'awaiting_approval';
    this.deadlines.remove(this.deadline!);
    this.deadline = undefined;
  }

  /**
   * @internal A held call was approved: its timeout starts now and the tool will run with `args` (maybe edited);
   * false when it ended meanwhile. The engine then calls begin() (under its tracer).
   */
  release(args: Record<string, unknown>): boolean {
    if (this.settled || this._state !== 'awaiting_approval') return false;
    this._state = 'running';
    this.deadline = this.deadlines.add(this, this.limits.timeoutMs);
    this.args = args;
    return true;
  }

  /** @internal A held call was refused by a person or its wait ran out: it ends `tool_denied` without running. */
  refuse(message: string): void {
    if (this.settled) return;
    this.settle({ success: false, error: message, error_code: 'tool_denied' }, 'failed');
  }

  /** @internal Run the tool; the engine calls it once the call is registered (a tool that throws at once settles at once). */
  begin(): void {
    const args = this.args!;
    this.args = undefined;
    if (this.request.streaming) {
      // Run on the next microtask, so a watcher attached right after start() sees every event.
      // (A resolved promise rather than queueMicrotask, which wraps every callback in an AsyncResource.)
      void Promise.resolve().then(() => this.run(args));
    } else {
      // No events to miss: start the tool now.
      void this.run(args);
    }
  }

  /** When the call was created (Unix epoch seconds, float). */
  get createdAt(): number {
    return (performance.timeOrigin + this.startedAt) / 1000;
  }

  /** Server-assigned id (requests may reuse their own ids; this one is unique). Made on first use. */
  get id(): string {
    return (this._id ??= newId());
  }

  get state(): CallState {
    return this._state;
  }

  /** The id of the request that started it (CallView). */
  get requestId(): string {
    return this.request.id;
  }

  get toolName(): string {
    return this.tool.definition.name;
  }

  /** Name of the bearer token that started it (CallView). */
  get principal(): string | null {
    return this.caller.principal;
  }

  /** The credential that started it (CallView). */
  get credential(): string | undefined {
    return this.caller.credential;
  }

  get settled(): boolean {
    return this._response !== undefined;
  }

  /** The final response, once settled. */
  get response(): ToolCallResponse | undefined {
    return this._response;
  }

  /** Seq of the oldest event still kept. */
  get firstSeq(): number {
    return this.events?.firstSeq ?? 0;
  }

  /** Number of events emitted so far. */
  get eventCount(): number {
    return this.events?.count ?? 0;
  }

  private eventLog(): CallEvents {
    if (!this.events) {
      this.events = new CallEvents(this.limits);
      if (this.settled) this.events.settle();
    }
    return this.events;
  }

  /**
   * The final response with the kept events in `data.events`, for answers
   * that cannot stream (JSON to a streaming call). `truncated` is set when
   * early events were dropped.
   */
  responseWithEvents(): ToolCallResponse | undefined {
    const r = this._response;
    if (!r) return undefined;
    return {
      ...r,
      data: { ...r.data, events: this.keptEvents.slice(), truncated: r.data.truncated || this.firstSeq > 0 },
    };
  }

  /**
   * The final response as JSON, once settled, followed by `after` (a door's newline): exactly
   * `JSON.stringify(call.response) + after`, built around the JSON of the result's data that measuring it
   * against the output cap made (a result is not serialised twice). Text, or its UTF-8 bytes when the data came
   * as bytes (JsonText), which then go to the socket without being decoded. The data's JSON is kept for it until
   * the event-loop turn the call settled in ends (settled-turn.ts); after that the response is serialised afresh.
   *
   * @example
   * const body = call.responseJson('\n')!; // string | Uint8Array, either a response body as it is
   */
  responseJson(after = ''): string | Uint8Array<ArrayBuffer> | undefined {
    const r = this._response;
    if (!r) return undefined;
    const dataJson = this.dataJson;
    this.dataJson = null;
    return responseJson(r, dataJson, this.dataIsText, after);
  }

  /**
   * The JSON text of the settled result's data, once (then undefined): the text measuring it against the output
   * cap made, or the text a native tool gave (JsonText, decoded from its bytes), for a door that writes the data into
   * an answer of its own shape (the MCP door's reply) instead of serialising the data again. Undefined once the turn
   * the call settled in has ended (settled-turn.ts), or when already taken (here or by responseJson).
   *
   * @example
   * const json = call.takeDataJson() ?? JSON.stringify(call.response!.data.data);
   */
  takeDataJson(): string | undefined {
    const dataJson = this.dataJson;
    if (dataJson === null || this._response === undefined) return undefined;
    this.dataJson = null;
    return typeof dataJson === 'string'
      ? dataJson
      : Buffer.from(dataJson.buffer, dataJson.byteOffset, dataJson.byteLength).toString('utf8');
  }

  /** @internal The turn the call settled in ended (settled-turn.ts): its data's JSON is no longer kept. */
  turnEnded(): void {
    this.dataJson = null;
  }

  /** The events still kept, oldest first (seq `firstSeq` onwards): what a door reports of a running call. */
  get keptEvents(): readonly ToolEvent[] {
    return this.events?.kept ?? NO_EVENTS;
  }

  /**
   * A `status` event telling a watcher that events `gap.from`..`gap.to` were
   * dropped before it could read them. It carries seq `gap.to`, so resuming
   * after it continues right after the gap.
   */
  gapNotice(gap: { from: number; to: number }): ToolEvent {
    return gapNotice(this.request.id, gap);
  }

  /**
   * Follow the call's events from after `afterSeq` (-1 = from the start).
   * Registers at once: events emitted later are kept for this watcher.
   * Iteration ends when the call has settled and every event was delivered.
   */
  watch(afterSeq = -1): Watcher {
    return this.eventLog().watch(afterSeq);
  }

  /** Stop the call from outside (cancel, client disconnect, shutdown). No-op once settled. */
  stop(reason: StopReason): void {
    if (this.settled) return;
    this.stopReason = reason;
    const message = this.stopMessage(reason);
    this.abort(new DOMException(message, reason === 'timeout' ? 'TimeoutError' : 'AbortError'));
    this.settle(
      {
        success: false,
        error: message,
        error_code: 'tool_error',
      },
      reason === 'timeout' ? 'failed' : 'canceled',
    );
  }

  private stopMessage(reason: StopReason): string {
    const name = this.tool.definition.name;
    switch (reason) {
      case 'timeout':
        return `tool "${name}" timed out after ${formatSeconds(this.limits.timeoutMs)} and was stopped; raise the request's "timeout" (seconds) if it needs longer`;
      case 'cancel':
        return `tool "${name}" was canceled`;
      case 'disconnect':
        return `tool "${name}" was stopped because the client disconnected`;
      case 'shutdown':
        return `tool "${name}" was stopped because the gateway is shutting down; retry the call`;
    }
  }

  /** @internal Aborted once the call is stopped or settled (made on first use). */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortReason) this.controller.abort(abortError(this.abortReason));
    }
    return this.controller.signal;
  }

  private abort(reason: DOMException | typeof FINISHED): void {
    if (this.abortReason) return;
    this.abortReason = reason;
    this.controller?.abort(abortError(reason));
    const listeners = this.stopListeners;
    this.stopListeners = undefined;
    if (listeners && reason !== FINISHED) for (const l of listeners) l(reason);
  }

  /** @internal for CallContext */
  onStop(listener: (reason: DOMException) => void): () => void {
    const reason = this.abortReason;
    if (reason !== undefined) {
      if (reason !== FINISHED) listener(reason);
      return noop;
    }
    (this.stopListeners ??= []).push(listener);
    return () => {
      const at = this.stopListeners?.indexOf(listener) ?? -1;
      if (at !== -1) this.stopListeners!.splice(at, 1);
    };
  }

  private async run(args: Record<string, unknown>): Promise<void> {
    const ctx = new CallContext(this, Date.now() + this.limits.timeoutMs);
    try {
      const out = await this.tool.plugin.executeTool(this.tool.definition.name, args, ctx);
      if (this.settled) return;
      if (out instanceof ToolOutput) {
        this.settle(
          { success: true, data: out.data, summary: out.summary, exit_code: out.exitCode, truncated: out.truncated },
          'completed',
        );
      } else {
        this.settle({ success: true, data: out === undefined ? null : out }, 'completed');
      }
    } catch (err) {
      if (this.settled) return;
      if (err instanceof ToolError) {
        this.settle(
          {
            success: false,
            error: err.message,
            error_code: 'tool_error',
            // A plain Error named "ToolError" may lack these.
            data: err.data ?? null,
            exit_code: err.exitCode ?? null,
            truncated: err.truncated ?? false,
          },
          'failed',
        );
      } else {
        this.logger.warn({ err }, `tool "${this.tool.definition.name}" threw`);
        this.settle(
          {
            success: false,
            error: `tool "${this.tool.definition.name}" failed: ${safeErrorMessage(err)}`,
            error_code: 'tool_error',
          },
          'failed',
        );
      }
    }
  }

  /** @internal for CallContext */
  emit<K extends ToolEventKind>(kind: K, data: ToolEventDataMap[K]): void {
    if (this.settled) return; // a stopped tool must not write after its answer
    // Plugins are JavaScript: the types do not stop { kind: "custom" } or { pct: "x" } at run time.
    if (!isToolEvent(kind, data)) return reportBadEvent(this.tool, this.logger, kind, data);
    const events = this.eventLog();
    const event = {
      type: 'tool/event',
      id: newId(),
      version: PROTOCOL_VERSION,
      ts: nowTs(),
      kind,
      req_id: this.request.id,
      data,
      seq: events.count,
    } as ToolEvent;
    events.push(event);
  }

  /** @internal for CallContext: resolves once the call's watchers have caught up with its events. */
  eventsTaken(): Promise<void> {
    return this.events?.taken() ?? RESOLVED;
  }

  /** Bytes this call holds: its kept events and its result (approximate JSON size). */
  get retainedBytes(): number {
    return (this.events?.bytes ?? 0) + this.outputBytes;
  }

  private settle(partial: Partial<ToolResult> & { success: boolean }, state: CallState): void {
    if (this.deadline !== undefined) this.deadlines.remove(this.deadline);
    let data: unknown = partial.data ?? null;
    let truncated = partial.truncated ?? false;
    // Data given as JSON text that fits the cap: answered as it is (text or bytes), parsed only if something reads it.
    let text: JsonText | null = null;
    if (data instanceof JsonText) {
      const bytes = data.byteLength;
      if (bytes <= this.limits.maxOutputBytes) {
        text = data;
        this.outputBytes = bytes;
        this.dataIsText = true;
      }
      data = text === null ? JSON.parse(data.json) : null;
    }
    if (text !== null) {
      this.dataJson = text.utf8 ?? text.json;
    } else if (data !== null) {
      const cut = truncateValue(data, this.limits.maxOutputBytes);
      data = cut.value;
      truncated ||= cut.truncated;
      this.outputBytes = cut.bytes;
      if (cut.json !== undefined) this.dataJson = cut.json;
    } else {
      this.dataJson = 'null';
    }
    const result: ToolResult = {
      success: partial.success,
      tool_name: this.tool.definition.name,
      data,
      summary: partial.summary ?? null,
      truncated,
      exit_code: partial.exit_code ?? null,
      error: partial.error ?? null,
      error_code: partial.error_code ?? null,
      duration_ms: Math.round(performance.now() - this.startedAt),
      events: [],
    };
    if (text !== null) parseOnRead(result, 'data', text);
    this._state = state;
    // A finished call's events leave the running total, it keeps only what a finished call may, its watchers finish.
    this.events?.settle();
    const ts = nowTs();
    this._response = {
      type: 'tool/call/resp',
      id: newId(),
      version: PROTOCOL_VERSION,
      ts,
      req_id: this.request.id,
      data: result,
      created_at: ts,
    };
    this.abort(FINISHED);
    this.onSettled(this);
    this.resolveResult(this._response);
  }

  /** Why the call was stopped from outside, if it was. */
  get stoppedBy(): StopReason | undefined {
    return this.stopReason;
  }
}

function noop(): void {}

const RESOLVED = Promise.resolve();

/** Abort reason of a call that finished on its own; its DOMException is only made if a signal is read. */
const FINISHED = Symbol('call finished');

/** The one abort reason of every call that finished on its own: made once, not per call (a DOMException captures a stack). */
let finishedError: DOMException | undefined;

function abortError(reason: DOMException | typeof FINISHED): DOMException {
  return reason === FINISHED ? (finishedError ??= new DOMException('call finished', 'AbortError')) : reason;
}

function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}
