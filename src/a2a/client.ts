/**
 * Calling one remote A2A agent: JSON-RPC in either dialect (switching once
 * when the peer says the method or version is unknown), then polling or
 * streaming a task to its end, and cancelling it when the call is stopped.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../engine/index.js';
import type { ToolEventDataMap, ToolEventKind } from '../protocol/index.js';
import type { ResolvedCard } from './card.js';
import { agentHeaders, type AgentDescriptor } from './config.js';
import {
  A2A_ERRORS,
  DIALECTS,
  artifactChunk,
  artifactMime,
  classify,
  isFinal,
  otherDialect,
  partsText,
  type Answer,
  type Artifact,
  type DialectName,
  type TaskState,
} from '../wire/a2a.js';
import { JSONRPC, RpcError } from '../wire/jsonrpc.js';
import { PeerError, type PeerHttp } from './http.js';

const CANCEL_TIMEOUT_MS = 5000;
/** How long before the call's deadline a run gives up on its own, to answer with the task's data. */
const DEADLINE_MARGIN_MS = 100;
/** Shortest pause between polls; the pause grows with the task's age up to poll_ms. */
const MIN_POLL_MS = 10;

/** What a run needs from the tool call. */
export interface RunContext {
  signal?: AbortSignal;
  /** Epoch ms by which the call must be over. */
  deadline?: number;
  /** Forward the peer's progress as events (status and artifact events as they arrive). */
  streaming?: boolean;
  emit?<K extends ToolEventKind>(kind: K, data: ToolEventDataMap[K]): void;
  /** Back-pressure: resolves once the readers of the emitted events have caught up (see ToolContext). */
  eventsTaken?(): Promise<void>;
}

export interface RunMetadata {
  agent: string;
  taskId: string | null;
  state: TaskState;
  polls: number;
  ms: number;
}

/** The outcome of one skill invocation; `data` of the tool result. */
export interface RunResult {
  success: boolean;
  output: string;
  state: TaskState;
  artifacts: Artifact[];
  metadata: RunMetadata;
  /** Why it failed (the remote status message's text when there is one). */
  error?: string;
}

/** Mutable progress of one run, so an abort can still report and cancel what it knows. */
interface Progress {
  taskId: string;
  state: TaskState;
  statusText: string;
  artifacts: Artifact[];
  polls: number;
  /** Text of a direct message answer. */
  messageText: string | undefined;
  /** The state last reported in a status event. */
  reported: TaskState | undefined;
}

export class AgentClient {
  private dialect: DialectName;
  private switched = false;
  /** The card offers streaming but the peer answered its streaming method with "method not found". */
  private noStreaming = false;

  constructor(
    readonly agent: AgentDescriptor,
    readonly resolved: ResolvedCard,
    private readonly http: PeerHttp,
    private readonly logger: Logger,
  ) {
    this.dialect = resolved.dialect;
  }

  /** The dialect in use (after any switch). */
  get dialectName(): DialectName {
    return this.dialect;
  }

  /** Ask the agent to run skill `skillId` on `task` and wait for the outcome. Never throws for remote failures. */
  async run(skillId: string, task: string, ctx: RunContext = {}): Promise<RunResult> {
    const started = performance.now();
    // Stop a little before the call's own deadline, so the answer still carries the task's data.
    const callLeft = ctx.deadline === undefined ? Infinity : ctx.deadline - Date.now() - DEADLINE_MARGIN_MS;
    const byCall = callLeft < this.agent.timeout_ms;
    const budget = Math.max(1, Math.min(this.agent.timeout_ms, callLeft));
    const timer = new AbortController();
    const timeout = setTimeout(() => timer.abort(new DOMException('agent timeout', 'TimeoutError')), budget);
    const signal = ctx.signal ? AbortSignal.any([ctx.signal, timer.signal]) : timer.signal;
    const p: Progress = {
      taskId: '',
      state: 'submitted',
      statusText: '',
      artifacts: [],
      polls: 0,
      messageText: undefined,
      reported: undefined,
    };
    const emit = ctx.streaming && ctx.emit ? ctx.emit.bind(ctx) : undefined;
    const taken = emit && ctx.eventsTaken ? ctx.eventsTaken.bind(ctx) : undefined;
    const finish = (error?: string): RunResult => {
      const success = error === undefined && p.state === 'completed';
      return {
        success,
        // Artifacts' text; a direct message's text; else the final status message's text.
        output: p.messageText ?? artifactsText(p.artifacts) ?? p.statusText,
        state: p.state,
        artifacts: p.artifacts,
        metadata: {
          agent: this.agent.name,
          taskId: p.taskId || null,
          state: p.state,
          polls: p.polls,
          ms: Math.round(performance.now() - started),
        },
        ...(success ? {} : { error: error ?? this.failureMessage(p) }),
      };
    };
    try {
      // One streaming request ends with the task: a task that finishes at once costs one round trip, not a send and a poll.
      if (this.agent.mode === 'auto' && this.resolved.streaming && !this.noStreaming)
        await this.runStreaming(skillId, task, p, signal, emit, taken);
      else await this.runPolling(skillId, task, p, signal, emit);
      return finish();
    } catch (err) {
      if (signal.aborted) {
        if (p.taskId && !isFinal(p.state)) this.cancel(p.taskId);
        const timedOut = timer.signal.aborted && !ctx.signal?.aborted;
        const reason = ctx.signal?.reason as { name?: string } | undefined;
        const name = this.agent.name;
        const task = p.taskId ? `a cancel was sent for its task ${p.taskId}` : 'no remote task had been started yet';
        const why = timedOut
          ? byCall
            ? `agent "${name}" timed out: the call's timeout ran out before the agent finished (${task}); raise the request's "timeout" if it needs longer`
            : `agent "${name}" timed out after ${budget} ms (agents.${name}.timeout_ms; ${task}); raise it if the agent needs longer`
          : reason?.name === 'TimeoutError'
            ? `agent "${name}" timed out: the call's timeout ran out (${task})`
            : `the call to agent "${name}" was canceled (${task})`;
        p.state = timedOut ? 'timeout' : 'canceled';
        return finish(why);
      }
      if (p.state === 'submitted') p.state = 'error';
      return finish(this.transportMessage(err));
    } finally {
      clearTimeout(timeout);
    }
  }

  private async runPolling(
    skillId: string,
    task: string,
    p: Progress,
    signal: AbortSignal,
    emit: RunContext['emit'],
  ): Promise<void> {
    const sentAt = performance.now();
    const first = await this.rpc('send', (d) => DIALECTS[d].sendParams(task, skillId, false), signal);
    if (this.absorb(classify(first), p, emit)) return;
    if (!p.taskId)
      throw new PeerError(`agent "${this.agent.name}" answered the message with neither a task nor a message`);
    await this.pollUntilFinal(p, signal, emit, sentAt);
  }

  /**
   * Poll GetTask until the task is terminal or interrupted. The first poll
   * at once, then backing off toward poll_ms: the next poll is due when the task is 1/10
   * older than at the previous one (+10%), counted from send times so that round
   * trips do not add up; a task finishing at t is seen by about 1.1·t.
   */
  private async pollUntilFinal(
    p: Progress,
    signal: AbortSignal,
    emit: RunContext['emit'],
    startedAt: number,
  ): Promise<void> {
    let lastSent = startedAt;
    while (!isFinal(p.state)) {
      // The first poll goes out at once: a task that finishes right after the send costs one round trip, not MIN_POLL_MS.
      const gap = p.polls === 0 ? 0 : Math.min(this.agent.poll_ms, Math.max(MIN_POLL_MS, (lastSent - startedAt) / 10));
      // Nothing left to wait: no timer (even a 0 ms setTimeout costs a millisecond or more), only one turn of the
      // event loop, so the connection that carried the last answer is back in the pool and carries this one too.
      const wait = lastSent + gap - performance.now();
      if (wait > 0) await sleep(wait, signal);
      else await nextTurn(signal);
      lastSent = performance.now();
      p.polls++;
      const answer = classify(await this.rpc('get', () => ({ id: p.taskId }), signal));
      if (answer.kind !== 'task')
        throw new PeerError(`agent "${this.agent.name}" answered ${DIALECTS[this.dialect].get} without a task`);
      this.absorb(answer, p, emit);
    }
  }

  /**
   * Follow the task through the peer's streaming method: one request whose events end with the task.
   * A peer that does not know the method (or this dialect's version) is asked by send and poll instead,
   * where the dialect switch happens; if it then answers in the same dialect, its card's streaming
   * claim is wrong and this agent polls from then on.
   *
   * Back-pressure: while the caller's readers are behind (`taken` pending), the stream is not read, so the
   * peer's writes wait on TCP instead of its updates being dropped here.
   */
  private async runStreaming(
    skillId: string,
    task: string,
    p: Progress,
    signal: AbortSignal,
    emit: RunContext['emit'],
    taken: (() => Promise<void>) | undefined,
  ): Promise<void> {
    const sentAt = performance.now();
    const d = DIALECTS[this.dialect];
    const body = { jsonrpc: '2.0', id: randomUUID(), method: d.stream, params: d.sendParams(task, skillId, true) };
    let seen = 0;
    const headers = await this.headers();
    for await (const item of this.http.postStream(this.resolved.endpoint, body, headers, signal)) {
      const rpcError = errorOf(item);
      if (rpcError) {
        if (
          seen === 0 &&
          (rpcError.code === JSONRPC.METHOD_NOT_FOUND || rpcError.code === A2A_ERRORS.VERSION_NOT_SUPPORTED)
        ) {
          await this.runPolling(skillId, task, p, signal, emit);
          if (this.dialect === d.name && rpcError.code === JSONRPC.METHOD_NOT_FOUND) this.streamingUnserved(d.stream);
          return;
        }
        throw rpcError;
      }
      seen++;
      if (this.absorb(classify((item as { result?: unknown }).result), p, emit) || isFinal(p.state)) return;
      if (taken) await caughtUp(taken, signal);
    }
    // The stream ended before the task did: follow it by polling.
    if (!p.taskId) throw new PeerError(`agent "${this.agent.name}" ended its stream before naming a task`);
    await this.pollUntilFinal(p, signal, emit, sentAt);
  }

  private streamingUnserved(method: string): void {
    if (this.noStreaming) return;
    this.noStreaming = true;
    this.logger.warn(
      { agent: this.agent.name, method },
      `agent "${this.agent.name}" offers streaming in its card but does not serve ${method}; polling it from now on`,
    );
  }

  /** Fold one answer into the progress, emitting events. Returns true when the answer ends the run (a direct message). */
  private absorb(answer: Answer, p: Progress, emit: RunContext['emit']): boolean {
    switch (answer.kind) {
      case 'message':
        p.messageText = answer.text;
        p.statusText = answer.text;
        if (answer.taskId) p.taskId = answer.taskId;
        this.setState(p, 'completed', emit);
        return true;
      case 'task': {
        const t = answer.task;
        if (t.id) p.taskId = t.id;
        if (t.artifacts.length) p.artifacts = t.artifacts;
        p.statusText = t.statusText;
        this.setState(p, t.state, emit);
        return false;
      }
      case 'status':
        if (answer.taskId) p.taskId = answer.taskId;
        p.statusText = answer.text;
        this.setState(p, answer.state, emit, answer.text);
        return false;
      case 'artifact':
        if (answer.taskId) p.taskId = answer.taskId;
        mergeArtifact(p.artifacts, answer.artifact, answer.append);
        emit?.('artifact', {
          name: answer.artifact.name || answer.artifact.artifactId,
          mime: artifactMime(answer.artifact),
          chunk: artifactChunk(answer.artifact),
          final: answer.lastChunk,
        });
        return false;
      case 'unknown':
        throw new PeerError(
          `agent "${this.agent.name}" sent an answer that is neither a task, a message nor a task update`,
        );
    }
  }

  private setState(p: Progress, state: TaskState, emit: RunContext['emit'], text?: string): void {
    p.state = state;
    if (!emit || (state === p.reported && !text)) return;
    p.reported = state;
    emit('status', {
      message: `${this.agent.name}: task ${state}${text || p.statusText ? `: ${text || p.statusText}` : ''}`,
      state,
      task_id: p.taskId || null,
    });
  }

  /** One JSON-RPC call; switches dialect once (for good) when the peer does not know the method or version. */
  private async rpc(
    kind: 'send' | 'get' | 'cancel',
    params: (d: DialectName) => Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<unknown> {
    for (;;) {
      const d = DIALECTS[this.dialect];
      const body = { jsonrpc: '2.0', id: randomUUID(), method: d[kind], params: params(this.dialect) };
      const answer = await this.http.postJson(this.resolved.endpoint, body, await this.headers(), signal);
      const error = errorOf(answer);
      if (error) {
        if (this.maybeSwitch(error)) continue;
        throw error;
      }
      if (typeof answer !== 'object' || answer === null || !('result' in answer)) {
        throw new PeerError(`agent "${this.agent.name}" answered ${d[kind]} with neither "result" nor "error"`);
      }
      return (answer as { result: unknown }).result;
    }
  }

  private maybeSwitch(error: RpcError): boolean {
    if (this.switched || (error.code !== JSONRPC.METHOD_NOT_FOUND && error.code !== A2A_ERRORS.VERSION_NOT_SUPPORTED))
      return false;
    this.switched = true;
    const from = this.dialect;
    this.dialect = otherDialect(from);
    this.logger.info(
      { agent: this.agent.name, from, to: this.dialect },
      `agent "${this.agent.name}" does not speak A2A ${from}; using ${this.dialect}`,
    );
    return true;
  }

  /** Ask the peer to cancel a task; best effort, never awaited by the caller. */
  cancel(taskId: string): void {
    this.rpc('cancel', () => ({ id: taskId }), AbortSignal.timeout(CANCEL_TIMEOUT_MS)).then(
      () => this.logger.info({ agent: this.agent.name, task_id: taskId }, 'remote task canceled'),
      (err: Error) =>
        this.logger.warn(
          { agent: this.agent.name, task_id: taskId, error: err.message },
          'could not cancel the remote task',
        ),
    );
  }

  private headers(): Promise<Record<string, string>> {
    return agentHeaders(this.agent, { ...DIALECTS[this.dialect].headers, ...this.agent.headers });
  }

  private failureMessage(p: Progress): string {
    const remote = p.statusText ? `: ${p.statusText}` : '';
    switch (p.state) {
      case 'input-required':
        return `agent "${this.agent.name}" needs more input${remote || ' (it gave no question)'}`;
      case 'auth-required':
        return `agent "${this.agent.name}" needs authentication${remote}; configure agents.${this.agent.name}.headers`;
      default:
        return `agent "${this.agent.name}" task ${p.state}${remote || ' (the agent gave no reason)'}`;
    }
  }

  private transportMessage(err: unknown): string {
    if (err instanceof RpcError)
      return `agent "${this.agent.name}" answered with JSON-RPC error ${err.code}: ${err.message}`;
    if (err instanceof PeerError) return `agent "${this.agent.name}": ${err.message}`;
    return `agent "${this.agent.name}" could not be called: ${(err as Error).message}`;
  }
}

function errorOf(answer: unknown): RpcError | undefined {
  if (typeof answer !== 'object' || answer === null || !('error' in answer)) return undefined;
  const e = (answer as { error: unknown }).error as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'number' ? e.code : 0;
  const message = typeof e?.message === 'string' ? e.message : JSON.stringify(e);
  return new RpcError(code, message);
}

/**
 * Every text part of every artifact, in order; undefined when there is none.
 * An artifact's own parts are joined as they are (a streamed artifact arrives
 * as appended chunks, which a polled task keeps as separate parts: both give
 * the same text); artifacts are separated by a newline.
 */
function artifactsText(artifacts: Artifact[]): string | undefined {
  const texts = artifacts.map((a) => partsText(a.parts, '')).filter(Boolean);
  return texts.length ? texts.join('\n') : undefined;
}

/** Apply an artifact update: a new artifact, a replacement, or parts appended (text chunks joined). */
function mergeArtifact(list: Artifact[], update: Artifact, append: boolean): void {
  const i = update.artifactId ? list.findIndex((a) => a.artifactId === update.artifactId) : -1;
  if (i < 0) {
    list.push({ ...update, parts: [...update.parts] });
    return;
  }
  if (!append) {
    list[i] = { ...update, parts: [...update.parts] };
    return;
  }
  const target = list[i]!;
  for (const part of update.parts) {
    const last = target.parts.at(-1) as { text?: unknown } | undefined;
    const next = part as { text?: unknown };
    if (last && typeof last.text === 'string' && typeof next.text === 'string') {
      target.parts[target.parts.length - 1] = { ...last, text: last.text + next.text };
    } else {
      target.parts.push(part);
    }
  }
}

function nextTurn(signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  return new Promise((resolve) => setImmediate(resolve));
}

/** Wait for the caller's readers to catch up, or for the run to be stopped (then throw its reason). */
async function caughtUp(taken: () => Promise<void>, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  let onAbort: (() => void) | undefined;
  try {
    await Promise.race([
      taken(),
      new Promise<void>((resolve) => signal.addEventListener('abort', (onAbort = () => resolve()), { once: true })),
    ]);
  } finally {
    signal.removeEventListener('abort', onAbort!);
  }
  signal.throwIfAborted();
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason as Error);
    };
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
