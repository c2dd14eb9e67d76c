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
 */
import { DIALECTS, otherDialect, type DialectName } from '../a2a/dialect.js';
import { asGatewayError, type Admitted, type Call, type CallStore, type Caller, type Engine, type Logger, type Watcher } from '../engine/index.js';
import { PROTOCOL_VERSION, newId, nowTs, type ToolCallRequest, type ToolDefinition, type ToolEvent } from '../protocol/index.js';
import { RPC, RpcError, asRpcError, type RpcRequest } from './jsonrpc.js';
import { readToolRequest } from './message.js';
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
}

/** Results of one stream, followed live; `close()` stops following (the task runs on). */
export interface RpcStream {
  items: AsyncIterable<unknown>;
  close(): void;
}

export type RpcOutcome = { result: unknown } | { stream: RpcStream };

type Method = 'send' | 'stream' | 'get' | 'cancel' | 'subscribe';
const METHODS: Method[] = ['send', 'stream', 'get', 'cancel', 'subscribe'];

export class A2AHandler {
  constructor(private readonly deps: A2AHandlerDeps) {}

  /** Answer one request. Throws RpcError (anything else thrown is an internal error, to be logged). */
  async handle(req: RpcRequest, ctx: RpcContext): Promise<RpcOutcome> {
    const method = this.method(req.method, ctx.dialect);
    const admitting = (method === 'send' || method === 'stream') && ctx.admit?.();
    const admitted = admitting ? await admitting.catch((err: unknown) => ({ refused: asGatewayError(err) })) : undefined;
    switch (method) {
      case 'send':
        return this.send(req.params, ctx, admitted);
      case 'stream':
        return { stream: this.follow(this.start(req.params, ctx, true, admitted), WIRES[ctx.dialect], -1, true) };
      case 'get':
        return { result: WIRES[ctx.dialect].task(snapshot(WIRES[ctx.dialect], this.find(req.params, ctx))) };
      case 'cancel':
        return { result: this.cancel(req.params, ctx) };
      case 'subscribe': {
        const call = this.find(req.params, ctx);
        return { stream: this.follow(call, WIRES[ctx.dialect], call.eventCount - 1, false) };
      }
    }
  }

  private method(name: string, dialect: DialectName): Method {
    const d = DIALECTS[dialect];
    const found = METHODS.find((m) => d[m] === name);
    if (found) return found;
    const other = DIALECTS[otherDialect(dialect)];
    const names = METHODS.map((m) => d[m]).join(', ');
    const hint = METHODS.some((m) => other[m] === name)
      ? dialect === '1.0'
        ? ` "${name}" is the A2A 0.3 name; with A2A-Version: 1.0 the methods are ${names}`
        : ` "${name}" is an A2A 1.0 method: send the header A2A-Version: 1.0 (without it this endpoint speaks A2A 0.3: ${names})`
      : ` This endpoint answers ${names}${dialect === '0.3' ? ' (A2A 0.3; send A2A-Version: 1.0 for the 1.0 names)' : ''}`;
    throw new RpcError(RPC.METHOD_NOT_FOUND, `no method "${name}".${hint}`);
  }

  private async send(params: Json, ctx: RpcContext, admitted: Admitted | undefined): Promise<RpcOutcome> {
    const configuration = isObject(params.configuration) ? params.configuration : {};
    const returnImmediately = ctx.dialect === '1.0' ? configuration.returnImmediately === true : configuration.blocking === false;
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
      wanted = readToolRequest(
        params,
        (name) => engine.registry.get(name)?.definition,
        () => this.skills(ctx.caller).map((t) => t.name),
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
    if (kept) kept.catch((err: unknown) => ctx.logger.warn({ err, call_id: call.id }, 'A2A task not shared through the store'));
    return call;
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
    return this.deps.engine.list({ type: 'tool/list/req', id: '', version: PROTOCOL_VERSION, ts: 0, session_id: '', filter_kind: '', filter_tags: [], query: '', include_deferred: false }, caller);
  }

  private find(params: Json, ctx: RpcContext): Call {
    const id = params.id;
    if (typeof id !== 'string' || !id) throw new RpcError(RPC.INVALID_PARAMS, 'params.id must be the id of a task this agent returned');
    const call = this.deps.store.get(id);
    if (!call || !ctx.owns(call)) {
      throw new RpcError(
        RPC.TASK_NOT_FOUND,
        `no task "${id.slice(0, 100)}": it was never started here, or it finished more than ${this.deps.retainS} s ago (calls.retain_s) and was dropped`,
        { id },
      );
    }
    return call;
  }

  private cancel(params: Json, ctx: RpcContext): unknown {
    const call = this.find(params, ctx);
    const wire = WIRES[ctx.dialect];
    if (call.settled) {
      throw new RpcError(RPC.TASK_NOT_CANCELABLE, `task "${call.id}" is already ${taskState(call)}; only a working task can be canceled`, {
        id: call.id,
        state: taskState(call),
      });
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
    yield wire.taskResult({ ...t, state: 'working', statusText: '', artifacts: [], metadata: { tool_name: call.tool.definition.name } });
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
