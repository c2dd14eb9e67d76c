/**
 * The A2A JSON-RPC methods, independent of the web framework: a request in,
 * a result or a stream of results out. Every task is a Call started through
 * the one engine (validation, policy, timeouts, events, audit), kept in the
 * CallStore like the call resources of POST /tool/calls.
 *
 *   SendMessage / message/send                  start; answer at once (non-blocking) or with the result
 *   SendStreamingMessage / message/stream       start; the task, its updates while it runs, the result
 *   GetTask / tasks/get                         the task now
 *   CancelTask / tasks/cancel                   stop it
 *   SubscribeToTask / tasks/resubscribe         the task now, then its updates
 *   ListTasks / tasks/list                      the caller's tasks, filtered, a page at a time
 *   GetExtendedAgentCard /
 *     agent/getAuthenticatedExtendedCard        the card with the caller's skills
 *   the push notification config methods        -32003: push notifications are not offered
 */
import { DIALECTS, otherDialect, type DialectName } from '../wire/a2a.js';
import {
  asGatewayError,
  type Admitted,
  type Call,
  type CallStore,
  type Caller,
  type Engine,
  type Logger,
  type Watcher,
} from '../engine/index.js';
import {
  PROTOCOL_VERSION,
  newId,
  nowTs,
  type ToolCallRequest,
  type ToolDefinition,
  type ToolEvent,
} from '../protocol/index.js';
import { RPC, asRpcError, type RpcRequest } from './jsonrpc.js';
import { RpcError } from '../wire/jsonrpc.js';
import { listTasks, readListQuery } from './list.js';
import { checkMessage, readToolRequest } from './message.js';
import { chunkArtifact, eventText, resultArtifact, snapshot, taskState } from './tasks.js';
import { WIRES, type Wire } from './wire.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface A2AHandlerDeps {
  engine: Engine;
  store: CallStore;
  logger: Logger;
  /** Timeout of a call when the message's metadata does not set one, seconds (the engine caps it). */
  callTimeoutS: number;
  /** How long finished calls are kept (calls.retain_s), for error messages. */
  retainS: number;
  /** The skill of a message that names none (a2a_server.default_skill). */
  defaultSkill?: string;
}

/** What the web adapter knows about the request. */
export interface RpcContext {
  /** From the A2A-Version header: "1.0" when it names 1.x, else "0.3". */
  dialect: DialectName;
  caller: Caller;
  /** Whether this request may see a task (auth on: the token that started it). */
  owns(call: Call): boolean;
  inputBytes: number;
  logger: Logger;
  /** Run `fn` if the client goes away before the answer is sent; returns a function that stops watching. */
  onClientGone(fn: () => void): () => void;
  /** A call's shared admission (store.kind redis), taken before it starts; undefined when it needs none. */
  admit?(): Promise<Admitted> | undefined;
  /** The agent card this caller reads (its skills), for GetExtendedAgentCard; unset when auth is off (the public card lists every skill). */
  card?(skills: ToolDefinition[]): Record<string, unknown>;
}

/** Results of one stream, followed live; `close()` stops following (the task runs on). */
export interface RpcStream {
  items: AsyncIterable<unknown>;
  close(): void;
}

export type RpcOutcome = { result: unknown } | { stream: RpcStream };

type ClientMethod = 'send' | 'stream' | 'get' | 'cancel' | 'subscribe';
type Method = ClientMethod | 'list' | 'card' | 'push';
/** Methods named in the A2A client's dialect table (src/wire/a2a.ts). */
const CLIENT_METHODS: ClientMethod[] = ['send', 'stream', 'get', 'cancel', 'subscribe'];
/** Methods only this server answers, per dialect. */
const SERVER_METHODS: Record<DialectName, Record<string, Method>> = {
  '1.0': {
    ListTasks: 'list',
    GetExtendedAgentCard: 'card',
    CreateTaskPushNotificationConfig: 'push',
    GetTaskPushNotificationConfig: 'push',
    ListTaskPushNotificationConfigs: 'push',
    DeleteTaskPushNotificationConfig: 'push',
  },
  '0.3': {
    'tasks/list': 'list',
    'agent/getAuthenticatedExtendedCard': 'card',
    'tasks/pushNotificationConfig/set': 'push',
    'tasks/pushNotificationConfig/get': 'push',
    'tasks/pushNotificationConfig/list': 'push',
    'tasks/pushNotificationConfig/delete': 'push',
  },
};
const methodNames = (dialect: DialectName): string[] => [
  ...CLIENT_METHODS.map((m) => DIALECTS[dialect][m]),
  ...Object.keys(SERVER_METHODS[dialect]),
];
const methodOf = (dialect: DialectName, name: string): Method | undefined =>
  CLIENT_METHODS.find((m) => DIALECTS[dialect][m] === name) ??
  (Object.hasOwn(SERVER_METHODS[dialect], name) ? SERVER_METHODS[dialect][name] : undefined);

export class A2AHandler {
  constructor(private readonly deps: A2AHandlerDeps) {}

  /** Answer one request. Throws RpcError (anything else thrown is an internal error, to be logged). */
  async handle(req: RpcRequest, ctx: RpcContext): Promise<RpcOutcome> {
    const method = this.method(req.method, ctx.dialect);
    const admitting = (method === 'send' || method === 'stream') && ctx.admit?.();
    const admitted = admitting
      ? await admitting.catch((err: unknown) => ({ refused: asGatewayError(err) }))
      : undefined;
    switch (method) {
      case 'send':
        return this.send(req.params, ctx, admitted);
      case 'stream':
        return { stream: this.follow(this.start(req.params, ctx, true, admitted), WIRES[ctx.dialect], -1, true) };
      case 'get':
        return { result: this.get(req.params, ctx) };
      case 'cancel':
        return { result: this.cancel(req.params, ctx) };
      case 'subscribe':
        return { stream: this.subscribe(req.params, ctx) };
      case 'list': {
        const query = readListQuery(req.params);
        const own = [...this.deps.store.list()].filter((call) => call.caller.door === 'a2a' && ctx.owns(call));
        return { result: listTasks(own, query, WIRES[ctx.dialect]) };
      }
      case 'card':
        if (!ctx.card) {
          throw new RpcError(
            RPC.EXTENDED_CARD_NOT_CONFIGURED,
            `${req.method}: this agent has no extended card: without auth (bearer tokens) every caller is the same, and the public card (/.well-known/agent-card.json) already lists every skill`,
          );
        }
        return { result: ctx.card(this.skills(ctx.caller)) };
      case 'push':
        throw new RpcError(
          RPC.PUSH_NOTIFICATION_NOT_SUPPORTED,
          `${req.method}: this agent does not send push notifications (its card says capabilities.pushNotifications: false); follow a task with ${DIALECTS[ctx.dialect].subscribe} or ${DIALECTS[ctx.dialect].get}`,
        );
    }
  }

  private method(name: string, dialect: DialectName): Method {
    const found = methodOf(dialect, name);
    if (found) return found;
    const names = methodNames(dialect).join(', ');
    const hint = methodOf(otherDialect(dialect), name)
      ? dialect === '1.0'
        ? ` "${name}" is the A2A 0.3 name; with A2A-Version: 1.0 the methods are ${names}`
        : ` "${name}" is an A2A 1.0 method: send the header A2A-Version: 1.0 (without it this endpoint speaks A2A 0.3: ${names})`
      : ` This endpoint answers ${names}${dialect === '0.3' ? ' (A2A 0.3; send A2A-Version: 1.0 for the 1.0 names)' : ''}`;
    throw new RpcError(RPC.METHOD_NOT_FOUND, `no method "${name}".${hint}`);
  }

  private async send(params: Json, ctx: RpcContext, admitted: Admitted | undefined): Promise<RpcOutcome> {
    const configuration = isObject(params.configuration) ? params.configuration : {};
    const returnImmediately =
      ctx.dialect === '1.0' ? configuration.returnImmediately === true : configuration.blocking === false;
    const wire = WIRES[ctx.dialect];
    // A blocking send reports no updates, so its call records none.
    const call = this.start(params, ctx, returnImmediately, admitted);
    if (!returnImmediately) {
      // Nobody else knows the task id yet: a client that goes away takes the task with it.
      const stop = ctx.onClientGone(() => call.stop('disconnect'));
      await call.result;
      stop();
    }
    return { result: wire.taskResult(snapshot(wire, call)) };
  }

  /** Start the call a message asks for, and keep it as a task. */
  private start(params: Json, ctx: RpcContext, recordEvents: boolean, admitted?: Admitted): Call {
    const { engine } = this.deps;
    let wanted: ReturnType<typeof readToolRequest>;
    try {
      checkMessage(params.message, ctx.dialect);
      this.refuseFollowUp(params, ctx);
      wanted = readToolRequest(
        params,
        (name) => engine.registry.get(name)?.definition,
        () => this.skills(ctx.caller).map((t) => t.name),
        this.deps.defaultSkill,
      );
    } catch (err) {
      if (admitted && 'release' in admitted) admitted.release(); // refused before it started
      throw err;
    }
    const timeout = wanted.metadata.timeout;
    const request: ToolCallRequest = {
      type: 'tool/call/req',
      id: wanted.messageId || newId(),
      version: PROTOCOL_VERSION,
      ts: nowTs(),
      session_id: '',
      tool_name: wanted.toolName,
      arguments: wanted.arguments,
      correlation_id: wanted.contextId || newId(),
      streaming: recordEvents,
      timeout: Number.isInteger(timeout) && (timeout as number) > 0 ? (timeout as number) : this.deps.callTimeoutS,
    };
    let call: Call;
    try {
      call = engine.start(request, ctx.caller, { inputBytes: ctx.inputBytes, logger: ctx.logger, admitted });
    } catch (err) {
      throw this.refusal(err, ctx);
    }
    // A shared store (store.kind: redis) that cannot take the task now: it is still served by this instance.
    const kept = this.deps.store.put(call);
    if (kept)
      kept.catch((err: unknown) => ctx.logger.warn({ err, call_id: call.id }, 'A2A task not shared through the store'));
    return call;
  }

  /**
   * A message naming a task (`message.taskId`) would continue it, but a tool
   * takes all its input when it starts: an unknown task is not found, a
   * finished one takes no more messages (A2A: UnsupportedOperationError), nor
   * does a running one.
   */
  private refuseFollowUp(params: Json, ctx: RpcContext): void {
    const taskId = isObject(params.message) ? params.message.taskId : undefined;
    if (taskId === undefined || taskId === null || taskId === '') return;
    if (typeof taskId !== 'string')
      throw new RpcError(RPC.INVALID_PARAMS, 'message.taskId must be the id (a string) of a task this agent returned');
    const call = this.find({ id: taskId }, ctx);
    const state = taskState(call);
    const why = call.settled
      ? `task "${call.id}" is already ${state} and takes no more messages`
      : `task "${call.id}" is still ${state}: a tool takes all its input when it starts, so a running task takes no more messages (wait for it with ${DIALECTS[ctx.dialect].subscribe}, or stop it with ${DIALECTS[ctx.dialect].cancel})`;
    throw new RpcError(
      RPC.UNSUPPORTED_OPERATION,
      `${why}; send the message without message.taskId to start a new task (it may keep the contextId)`,
      {
        id: call.id,
        state,
      },
    );
  }

  /** An engine refusal as a JSON-RPC error; an unknown skill lists the ones this caller may call. */
  private refusal(err: unknown, ctx: RpcContext): RpcError {
    const e = asRpcError(err);
    if (e.code !== RPC.METHOD_NOT_FOUND) return e;
    const skills = this.skills(ctx.caller).map((t) => t.name);
    return new RpcError(
      e.code,
      `${e.message.replace(/ POST \/tool\/list to see the available tools\.$/, '')} This agent's skills: ${skills.map((s) => `"${s}"`).join(', ') || '(none)'}`,
      { ...e.data, skills },
    );
  }

  /** The tools this caller may call (the skills of its agent card). */
  skills(caller: Caller): ToolDefinition[] {
    return this.deps.engine.list(
      {
        type: 'tool/list/req',
        id: '',
        version: PROTOCOL_VERSION,
        ts: 0,
        session_id: '',
        filter_kind: '',
        filter_tags: [],
        query: '',
        include_deferred: false,
      },
      caller,
    );
  }

  private find(params: Json, ctx: RpcContext): Call {
    const id = params.id;
    if (typeof id !== 'string' || !id)
      throw new RpcError(RPC.INVALID_PARAMS, 'params.id must be the id of a task this agent returned');
    const call = this.deps.store.get(id);
    if (!call || !ctx.owns(call)) {
      throw new RpcError(
        RPC.TASK_NOT_FOUND,
        `task "${id.slice(0, 100)}" not found: it was never started here, or it finished more than ${this.deps.retainS} s ago (calls.retain_s) and was dropped`,
        { id },
      );
    }
    return call;
  }

  /** GetTask: the task now, with at most `historyLength` messages of its history. */
  private get(params: Json, ctx: RpcContext): unknown {
    const call = this.find(params, ctx);
    const n = params.historyLength;
    if (n !== undefined && n !== null && (!Number.isInteger(n) || (n as number) < 0)) {
      throw new RpcError(
        RPC.INVALID_PARAMS,
        'params.historyLength must be an integer of 0 or more (unset: the whole history)',
      );
    }
    const wire = WIRES[ctx.dialect];
    return wire.task(snapshot(wire, call), { historyLength: (n ?? undefined) as number | undefined });
  }

  /**
   * SubscribeToTask: the task as it is, then its updates. A finished task has
   * none to follow: A2A 1.0 answers UnsupportedOperationError; 0.3 readers get
   * the final task and the end of the stream.
   */
  private subscribe(params: Json, ctx: RpcContext): RpcStream {
    const call = this.find(params, ctx);
    if (call.settled && ctx.dialect === '1.0') {
      throw new RpcError(
        RPC.UNSUPPORTED_OPERATION,
        `task "${call.id}" is already ${taskState(call)}: there are no updates to follow; read it with GetTask`,
        {
          id: call.id,
          state: taskState(call),
        },
      );
    }
    return this.follow(call, WIRES[ctx.dialect], call.eventCount - 1, false);
  }

  private cancel(params: Json, ctx: RpcContext): unknown {
    const call = this.find(params, ctx);
    const wire = WIRES[ctx.dialect];
    if (call.settled) {
      throw new RpcError(
        RPC.TASK_NOT_CANCELABLE,
        `task "${call.id}" is already ${taskState(call)}; only a working task can be canceled`,
        {
          id: call.id,
          state: taskState(call),
        },
      );
    }
    call.stop('cancel');
    return wire.task(snapshot(wire, call));
  }

  /**
   * The task, then an update per event after `afterSeq`, then the result and
   * the final state. A new task (`fresh`) starts as `working` and has all its
   * updates replayed, even when the tool finished before the stream began;
   * a subscription starts with the task as it is now (and ends there when it
   * has finished).
   */
  private follow(call: Call, wire: Wire, afterSeq: number, fresh: boolean): RpcStream {
    const watcher = call.watch(afterSeq);
    return { items: updates(call, wire, watcher, fresh), close: () => watcher.close() };
  }
}

async function* updates(call: Call, wire: Wire, watcher: Watcher, fresh: boolean): AsyncGenerator<unknown> {
  const t = { id: call.id, contextId: call.request.correlation_id };
  if (fresh) {
    yield wire.taskResult({
      ...t,
      state: 'working',
      statusText: '',
      artifacts: [],
      metadata: { tool_name: call.tool.definition.name },
    });
  } else {
    yield wire.taskResult(snapshot(wire, call));
    if (call.settled) return;
  }
  const seen = new Set<string>(); // artifacts already started: later chunks append
  for await (const batch of watcher) {
    if (batch.gap) yield eventUpdate(wire, t, call.gapNotice(batch.gap), seen);
    for (const ev of batch.events) yield eventUpdate(wire, t, ev, seen);
  }
  const response = call.response;
  if (!response) return; // the watcher was closed: the client went away
  const r = response.data;
  const state = taskState(call);
  if (r.success) yield wire.artifactUpdate(t, resultArtifact(wire, r), false, true);
  const metadata = r.success ? undefined : { error_code: r.error_code };
  yield wire.statusUpdate(t, state, r.success ? '' : (r.error ?? ''), { final: true, metadata });
}

function eventUpdate(wire: Wire, t: { id: string; contextId: string }, ev: ToolEvent, seen: Set<string>): unknown {
  if (ev.kind === 'artifact') {
    const append = seen.has(ev.data.name);
    seen.add(ev.data.name);
    return wire.artifactUpdate(t, chunkArtifact(wire, ev), append, ev.data.final);
  }
  return wire.statusUpdate(t, 'working', eventText(ev), { metadata: { event: ev.kind, seq: ev.seq, ...ev.data } });
}
