/**
 * The engine: list/search and the start of every call. Every door into the
 * gateway ends here; it knows nothing of HTTP.
 *
 *   start(req) → find the tool → policy → validate arguments → Call (runs the tool)
 */
import type { ToolCallRequest, ToolDefinition, ToolListRequest } from '../protocol/index.js';
import { capProblem, formatProblems, nowTs } from '../protocol/index.js';
import { Admission, NO_ADMISSION_LIMITS, checkShape, type Admitted } from './admission.js';
import { ActivityFeed } from './activity.js';
import { Approvals } from './approvals/approvals.js';
import type { ApprovalGate } from './approvals/gate.js';
import type { ApprovalStore } from './approvals/approval-store.js';
import { noAudit, type AuditRecord, type AuditSink } from './audit.js';
import { ByteBudget } from '../utils/byte-budget.js';
import { Call, type CallLimits } from './call.js';
import { Deadlines } from '../utils/deadlines.js';
import { EntryList, type Entry } from '../utils/entry-list.js';
import { GatewayError } from './errors.js';
import type { Logger } from './plugin.js';
import { allowAll, type Caller, type Policy } from './policy.js';
import type { RegisteredTool, ToolRegistry } from './registry.js';
import { SettledTurn } from './settled-turn.js';
import { levelEnabled } from './child-logger.js';
import { lineCarried, writeCallLine } from './call-line.js';
import { ToolListWatch } from './tool-list-watch.js';
import type { CallTracer } from './tracing.js';

/** The end of an unknown_tool message without suggestions (a door with its own way to list tools swaps it). */
export const LIST_TOOLS_HINT = 'POST /tool/list to see the available tools.';

export interface EngineLimits {
  /** Upper bound on any call's timeout, seconds. */
  maxTimeoutS: number;
  /** Byte cap on a result's data (JSON); larger results are truncated. */
  maxOutputBytes: number;
  /** Events kept per call for replay. */
  maxEvents: number;
  /** Hard cap on events buffered for a slow watcher. */
  maxBufferedEvents: number;
  /** Bytes of events one running call keeps (default 8 MiB). */
  maxEventBytes?: number;
  /** Bytes of events a finished call keeps (default 1 MiB). */
  retainedEventBytes?: number;
  /** Bytes of events all running calls keep together (default 64 MiB). */
  eventsTotalBytes?: number;
}

const MiB = 1024 * 1024;

export interface EngineOptions {
  registry: ToolRegistry;
  logger: Logger;
  limits: EngineLimits;
  policy?: Policy;
  audit?: AuditSink;
  /** Rate limit, concurrency caps and argument shape limits (none when omitted). */
  admission?: Admission;
  /** Spans of calls (only when tracing is on). */
  tracer?: CallTracer;
  /** Which calls wait for a person's approval (approvals.*); none wait when omitted. */
  approvals?: { gate: ApprovalGate; urlOf?: (id: string) => string; store?: ApprovalStore };
}

export interface StartOptions {
  /** Size of the request body, for the audit record. */
  inputBytes?: number;
  /** Logger for this call's lines (e.g. bound to the HTTP request id); the engine's own by default. */
  logger?: Logger;
  /** The door the call came through, for audit and metrics ("rest" when not given). */
  door?: string;
  /** The shared admission's decision (store.kind redis), taken by the door before start; see Admission.adopt. */
  admitted?: Admitted;
}

/** What a config reload may change for new calls (calls already running keep theirs). */
export interface EngineSettings {
  registry: ToolRegistry;
  limits: Pick<
    EngineLimits,
    'maxTimeoutS' | 'maxOutputBytes' | 'maxEvents' | 'maxBufferedEvents' | 'maxEventBytes' | 'retainedEventBytes'
  >;
}

export class Engine {
  /** Call lifecycle events for live watchers (GET /admin/events); idle unless watched. */
  readonly activity = new ActivityFeed();
  /** Told when the listed tools change (the MCP doors' list_changed); see `toolsRebuilt`. */
  readonly toolList = new ToolListWatch(() => this.tools.all());
  private tools: ToolRegistry;
  private readonly logger: Logger;
  private limits: EngineLimits;
  private readonly policy: Policy;
  private readonly audit: AuditSink;
  private readonly admission: Admission;
  private readonly tracer: CallTracer | undefined;
  /** Running calls, oldest first. */
  private readonly inflight = new EntryList<Call>();
  private readonly deadlines = new Deadlines<Call>((call) => call.stop('timeout'));
  /** Calls settled in this event-loop turn, whose data's JSON a door may still take. */
  private readonly settledTurn = new SettledTurn();
  /** Event bytes of running calls; shared by all of them. */
  private readonly eventBudget: ByteBudget;
  private closing = false;
  private lastCallLimits: CallLimits | undefined;
  /** Calls held for a person's approval (approvals/), when the gateway has an approval gate. */
  readonly approvals: Approvals | undefined;

  constructor(options: EngineOptions) {
    this.tools = options.registry;
    this.logger = options.logger;
    this.limits = options.limits;
    this.policy = options.policy ?? allowAll;
    this.audit = options.audit ?? noAudit;
    this.admission = options.admission ?? new Admission(NO_ADMISSION_LIMITS);
    this.tracer = options.tracer;
    this.eventBudget = new ByteBudget(this.limits.eventsTotalBytes ?? 64 * MiB);
    if (options.approvals) {
      this.approvals = new Approvals({
        ...options.approvals,
        check: (call, args) => this.checkArguments(call.tool, args),
        checkTool: (name, args) => {
          const tool = this.registry.get(name);
          if (!tool) {
            throw new GatewayError(
              'invalid_arguments',
              `tool "${name}" is not on this instance, so edited arguments cannot be checked here; decide on the instance holding the call, or approve without editing`,
            );
          }
          return this.checkArguments(tool, args);
        },
        begin: (call) => (this.tracer === undefined ? call.begin() : this.tracer.run(call, () => call.begin())),
        audit: (call, approval) =>
          this.record(
            call.request,
            call.caller,
            {
              door: call.door,
              kind: call.tool.definition.kind,
              success: approval.decision === 'approve',
              error_code: approval.decision === 'approve' ? null : 'tool_denied',
              duration_ms: approval.wait_ms,
              input_bytes: 0,
              output_bytes: 0,
            },
            approval,
          ),
      });
    }
  }

  /**
   * The limits of a call with this timeout. Calls nearly always share one timeout: the object made for the
   * last one is reused (calls only read it); a reload makes a new one.
   */
  private callLimits(timeoutMs: number): CallLimits {
    const last = this.lastCallLimits;
    if (last !== undefined && last.timeoutMs === timeoutMs) return last;
    return (this.lastCallLimits = Object.freeze({
      timeoutMs,
      maxOutputBytes: this.limits.maxOutputBytes,
      maxEvents: this.limits.maxEvents,
      maxBufferedEvents: this.limits.maxBufferedEvents,
      maxEventBytes: this.limits.maxEventBytes ?? 8 * MiB,
      retainedEventBytes: this.limits.retainedEventBytes ?? MiB,
      eventBudget: this.eventBudget,
    }));
  }

  /** The tools new calls are resolved against. */
  get registry(): ToolRegistry {
    return this.tools;
  }

  /**
   * Swap the tools and per-call limits for calls started from now on (a config reload). A running call
   * keeps the tool and limits it started with.
   */
  reconfigure(settings: EngineSettings): void {
    this.tools = settings.registry;
    this.limits = { ...settings.limits, eventsTotalBytes: this.limits.eventsTotalBytes };
    this.lastCallLimits = undefined;
    this.toolList.changed(true);
  }

  /** The registry re-read its plugins' tools (one changed its list): watchers hear of it if the list differs. */
  toolsRebuilt(): void {
    this.toolList.changed();
  }

  /** Bytes of events held by running calls now (for metrics and tests). */
  get eventBytes(): number {
    return this.eventBudget.used;
  }

  /** Tools visible to `caller` for this list/search request, best match first in search mode. */
  list(req: ToolListRequest, caller: Caller): ToolDefinition[] {
    const query = req.query.trim();
    const candidates = this.registry.all().filter((t) => {
      const d = t.definition;
      if (d.defer_loading && !(query && req.include_deferred)) return false;
      if (req.filter_kind && d.kind !== req.filter_kind) return false;
      for (const tag of req.filter_tags) if (!d.tags.includes(tag)) return false;
      return this.policy(caller, d).allow;
    });
    if (!query) return candidates.map((t) => t.definition);
    return this.registry.search(query, req.filter_tags, candidates);
  }

  /**
   * Check and start a call. Throws a GatewayError (unknown_tool, tool_denied,
   * invalid_arguments, unavailable) before anything runs; refusals are audited too.
   */
  start(req: ToolCallRequest, caller: Caller, options: StartOptions = {}): Call {
    let tool: RegisteredTool | undefined;
    let release: (() => void) | undefined;
    try {
      if (this.closing) {
        throw new GatewayError('unavailable', 'the gateway is shutting down; retry against another instance or later', {
          retryable: true,
        });
      }
      release = options.admitted ? this.admission.adopt(options.admitted) : this.admission.admit(caller);
      tool = this.resolve(req.tool_name, caller);
      const args = this.checkArguments(tool, req.arguments);
      const call = new Call(
        req,
        tool,
        args,
        caller,
        this.callLimits(Math.min(req.timeout, this.limits.maxTimeoutS) * 1000),
        options.logger ?? this.logger,
        // `running` is set just below: a call settles at the earliest in begin(), after it is listed.
        (c) => this.settled(c, release, running),
        this.deadlines,
      );
      const running = this.inflight.add(call);
      call.inputBytes = options.inputBytes ?? 0;
      const door = options.door ?? caller.door;
      if (door !== undefined) call.door = door;
      // Reported before it runs: a tool that settles at once must not be seen finishing before it started.
      // Held first, so the watchers of activity see it awaiting_approval.
      const approval = this.approvals?.need(call, args);
      if (approval !== undefined) this.approvals!.hold(call, args, approval);
      if (this.activity.active) this.activity.started(call);
      if (approval !== undefined) return call;
      if (this.tracer === undefined) call.begin();
      else this.tracer.run(call, () => call.begin());
      return call;
    } catch (err) {
      if (release) release();
      else if (options.admitted && 'release' in options.admitted) options.admitted.release(); // refused before adopting it
      if (err instanceof GatewayError) {
        (options.logger ?? this.logger).info(
          { tool: req.tool_name.slice(0, 200), kind: tool?.definition.kind ?? null, outcome: err.code, req_id: req.id },
          `call refused: ${err.code}`,
        );
        this.record(req, caller, {
          door: options.door ?? caller.door ?? 'rest',
          kind: (tool ?? this.registry.get(req.tool_name))?.definition.kind ?? null,
          success: false,
          error_code: err.code,
          duration_ms: 0,
          input_bytes: options.inputBytes ?? 0,
          output_bytes: 0,
        });
        this.tracer?.refused({
          tool_name: req.tool_name,
          kind: (tool ?? this.registry.get(req.tool_name))?.definition.kind ?? null,
          door: options.door ?? caller.door ?? 'rest',
          error_code: err.code,
        });
        if (this.activity.active) {
          this.activity.refused({
            req_id: req.id,
            tool_name: req.tool_name.slice(0, 200),
            kind: tool?.definition.kind ?? null,
            principal: caller.principal,
            session_id: caller.sessionId,
            error_code: err.code,
          });
        }
      }
      throw err;
    }
  }

  /** The arguments as the tool takes them (defaults filled in); throws invalid_arguments. */
  private checkArguments(tool: RegisteredTool, raw: Record<string, unknown>): Record<string, unknown> {
    const shape = checkShape(raw, this.admission.limits);
    if (shape) {
      const tooBig = capProblem(shape); // its path may hold a hostile key
      throw new GatewayError(
        'invalid_arguments',
        `invalid arguments for tool "${tool.definition.name}": ${tooBig.path}: ${tooBig.message}`,
        {
          detail: { problems: [tooBig] },
        },
      );
    }
    const checked = tool.validate(raw);
    if (!checked.ok) {
      const list = formatProblems(checked.problems);
      throw new GatewayError('invalid_arguments', `invalid arguments for tool "${tool.definition.name}": ${list}`, {
        detail: { problems: checked.problems },
      });
    }
    return checked.value;
  }

  private resolve(name: string, caller: Caller): RegisteredTool {
    const tool = this.registry.get(name);
    if (!tool) throw this.unknownTool(name, caller);
    const decision = this.policy(caller, tool.definition);
    if (!decision.allow) {
      if (decision.hidden) throw this.unknownTool(name, caller);
      throw new GatewayError('tool_denied', `tool "${name}" is not allowed: ${decision.reason}`, {
        detail: { tool_name: name },
      });
    }
    return tool;
  }

  /** The refusal of a tool that does not exist for `caller`; suggestions name only tools it may call. */
  private unknownTool(name: string, caller: Caller): GatewayError {
    // A tool its plugin cannot offer on this host: say why, to a caller the policy would let call it.
    const unavailable = this.registry.unavailable(name);
    if (unavailable && this.policy(caller, unavailable.definition).allow) {
      return new GatewayError('unknown_tool', `no tool named "${name}" here: ${unavailable.reason}`, {
        detail: { tool_name: name, unavailable: unavailable.reason },
      });
    }
    const similar = this.registry.similarNames(name).filter((n) => this.allowed(caller, n));
    const hint = similar.length ? ` Did you mean ${similar.map((n) => `"${n}"`).join(' or ')}?` : ` ${LIST_TOOLS_HINT}`;
    return new GatewayError('unknown_tool', `no tool named "${name}".${hint}`, { detail: { tool_name: name } });
  }

  private allowed(caller: Caller, name: string): boolean {
    const t = this.registry.get(name);
    return t !== undefined && this.policy(caller, t.definition).allow;
  }

  private settled(call: Call, release: (() => void) | undefined, running: Entry<Call>): void {
    this.inflight.remove(running);
    release?.();
    if (this.approvals !== undefined && this.approvals.size !== 0) this.approvals.settled(call);
    if (this.activity.active) this.activity.finished(call);
    // The door answering the call may carry its outcome line on its own access line (call-line.ts).
    if (!lineCarried(call) && levelEnabled(call.logger, 'info')) writeCallLine(call);
    this.settledTurn.add(call);
    const r = call.response!.data;
    this.record(call.request, call.caller, {
      door: call.door,
      kind: call.tool.definition.kind,
      success: r.success,
      error_code: r.error_code,
      duration_ms: r.duration_ms,
      input_bytes: call.inputBytes,
      output_bytes: call.outputBytes,
    });
  }

  /**
   * Audit a call attempt refused before it reached the engine: no valid
   * token or session, a foreign Host or Origin. `tool_name` is "" when the
   * body was never read (the gate refuses before reading it).
   */
  recordRefused(attempt: {
    tool_name: string;
    req_id: string;
    error_code: string;
    correlation_id?: string;
    session_id?: string;
    principal?: string | null;
    input_bytes?: number;
    /** The door the attempt came through ("rest" when not given). */
    door?: string;
  }): void {
    this.record(
      { id: attempt.req_id, tool_name: attempt.tool_name, correlation_id: attempt.correlation_id ?? '' },
      { sessionId: attempt.session_id ?? '', principal: attempt.principal ?? null },
      {
        door: attempt.door ?? 'rest',
        kind: null,
        success: false,
        error_code: attempt.error_code,
        duration_ms: 0,
        input_bytes: attempt.input_bytes ?? 0,
        output_bytes: 0,
      },
    );
  }

  private record(
    req: Pick<ToolCallRequest, 'id' | 'tool_name' | 'correlation_id'>,
    caller: Caller,
    outcome: Pick<
      AuditRecord,
      'door' | 'kind' | 'success' | 'error_code' | 'duration_ms' | 'input_bytes' | 'output_bytes'
    >,
    approval?: AuditRecord['approval'],
  ): void {
    try {
      this.audit({
        ts: nowTs(),
        session_id: caller.sessionId,
        principal: caller.principal,
        req_id: req.id,
        correlation_id: req.correlation_id,
        tool_name: req.tool_name,
        door: outcome.door,
        kind: outcome.kind,
        success: outcome.success,
        error_code: outcome.error_code,
        duration_ms: outcome.duration_ms,
        input_bytes: outcome.input_bytes,
        output_bytes: outcome.output_bytes,
        ...(approval ? { approval } : {}),
      });
    } catch (err) {
      this.logger.error({ err }, 'audit sink failed');
    }
  }

  /** The calls running now. */
  runningCalls(): Iterable<Call> {
    return this.inflight;
  }

  /** Calls currently running. */
  /** True once close() began: no new calls are admitted. */
  get stopping(): boolean {
    return this.closing;
  }

  get running(): number {
    return this.inflight.size;
  }

  /**
   * Stop accepting calls, give running ones `graceMs` to finish, then stop
   * the rest. Resolves when every call has settled.
   */
  async shutdown(graceMs: number): Promise<void> {
    this.closing = true;
    if (this.inflight.size === 0) return;
    const all = Promise.all([...this.inflight].map((c) => c.result));
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([all, grace]);
    clearTimeout(timer);
    for (const call of [...this.inflight]) call.stop('shutdown');
    await all;
  }
}
