/**
 * The privilege-separated file tools worker: a process the gateway forks with
 * the workspace owner's uid and gid (never root) when it runs as root. It gets
 * the workspace root as an inherited descriptor and runs the file tools on it
 * with the same code as the gateway (dispatch.ts), so a race that somehow won
 * would find only what that user — the one commands run as — can reach anyway.
 */
import { ToolError, ToolOutput } from '../../../engine/index.js';
import { IdTable } from '../../../utils/id-table.js';
import { JsonText } from '../../../utils/json-text.js';
import { runFsTool, type FsContext, type FsLimits } from '../dispatch.js';
import { WorkspaceQuota } from '../confinement/quota.js';
import { Workspace } from '../confinement/workspace.js';
import { answerOnThisThread } from '../threads/sync-threads.js';
import { Socket } from 'node:net';
import { batchedSender, eachMessage, type Batch } from './ipc-batch.js';
import { frameOf } from './answer-stream.js';
import { ANSWER_FD, ROOT_FD, type Answer, type FromWorker, type ToWorker } from './worker-protocol.js';

// Drop to the workspace owner before anything else runs: every module this process needs is loaded (static
// imports only), so from here on it can reach only what that user can. Groups first, uid last (after it, no
// capability is left to change the others).
{
  const uid = Number(process.argv[2]);
  const gid = Number(process.argv[3]);
  if (!Number.isInteger(uid) || !Number.isInteger(gid) || uid === 0) {
    process.stderr.write(
      'file tools worker: started without the workspace owner uid and gid; refusing to run as root\n',
    );
    process.exit(2);
  }
  if (process.getuid?.() === 0) {
    process.setgroups?.([]);
    process.setgid?.(gid);
    process.setuid?.(uid);
  }
  if (process.getuid?.() !== uid || process.getgid?.() !== gid) {
    process.stderr.write(`file tools worker: could not switch to uid ${uid} gid ${gid}\n`);
    process.exit(2);
  }
}

// This process's event loop serves nothing but file tool calls: it makes their system calls itself, without the
// helper thread the gateway's event loop needs (sync-threads.ts), until one of them shows a slow file system.
answerOnThisThread();

let ws: Workspace;
let limits: FsLimits;
let quotaLimit: number | null = null;
/** The calls running here, under the ids the gateway gave them (an IdTable: see there for why not a Map). */
const running = new IdTable<RunningCall>();

// Answers and events go to the gateway framed on their own pipe (answer-stream.ts), a turn's in one write
// (ipc-batch.ts). The pipe fails only when the gateway is gone: so is the worker then.
const answers = new Socket({ fd: ANSWER_FD, readable: false, writable: true });
answers.on('error', () => process.exit(0));
const send = batchedSender<FromWorker>((m) => {
  let frames = '';
  eachMessage(m, (one) => {
    frames += frameOf(one);
  });
  answers.write(frames);
});

function answerOf(value: unknown): Answer {
  if (value instanceof ToolOutput) {
    // list_dir's answer is JSON text already (listing-json.ts).
    const json = value.data instanceof JsonText ? value.data.json : (JSON.stringify(value.data) ?? 'null');
    return { kind: 'output', json, summary: value.summary, exitCode: value.exitCode, truncated: value.truncated };
  }
  return { kind: 'value', value };
}

function failureOf(err: unknown): Answer {
  if (err instanceof ToolError)
    return {
      kind: 'tool_error',
      message: err.message,
      data: err.data,
      exitCode: err.exitCode,
      truncated: err.truncated,
    };
  return { kind: 'failure', message: (err as Error)?.message ?? String(err) };
}

/**
 * One call running here: what its tool gets (FsContext) and its stop state. Its AbortController is made only
 * when the tool reads `signal` (most quick calls never do, see stoppedOf): a controller per call was a large
 * part of a small read's cost here too. A class, not an object literal with a getter: V8 gives each such
 * literal a hidden class of its own, which kept every call's objects alive past the young generation.
 */
class RunningCall implements FsContext {
  private controller: AbortController | undefined;
  private paced: (() => void) | undefined;
  stopped = false;

  constructor(
    private readonly id: number,
    private readonly streaming: boolean,
  ) {}

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.stopped) this.controller.abort(new Error('canceled'));
    return this.controller.signal;
  }

  emit(kind: string, data: unknown): void {
    if (this.streaming && !this.stopped) send({ type: 'event', id: this.id, kind, data });
  }

  /** Asks the gateway whether the call's readers have caught up; resolves on its answer (or a stop). */
  eventsTaken(): Promise<void> {
    if (!this.streaming || this.stopped) return Promise.resolve();
    send({ type: 'pace', id: this.id });
    return new Promise((resolve) => (this.paced = resolve));
  }

  /** The gateway's answer to the last `pace`. */
  resume(): void {
    const paced = this.paced;
    this.paced = undefined;
    paced?.();
  }

  stop(): void {
    this.stopped = true;
    this.controller?.abort(new Error('canceled'));
    this.resume();
  }
}

async function call(m: Extract<ToWorker, { type: 'call' }>): Promise<void> {
  const ctx = new RunningCall(m.id, m.streaming);
  running.set(m.id, ctx);
  const quota = new WorkspaceQuota(ws, m.quotaLimit === undefined ? quotaLimit : m.quotaLimit);
  quota.seed(m.used);
  let answer: Answer;
  try {
    answer = answerOf(await runFsTool(ws, quota, limits, m.name, m.args, ctx));
  } catch (err) {
    answer = failureOf(err);
  }
  running.take(m.id);
  send({ type: 'done', id: m.id, answer, used: quota.known });
}

process.on('message', (m: ToWorker | Batch<ToWorker>) => eachMessage(m, handle));

function handle(m: ToWorker): void {
  switch (m.type) {
    case 'init':
      ws = new Workspace(m.root);
      limits = m.limits;
      quotaLimit = m.quotaLimit;
      ws.adopt(`/proc/self/fd/${ROOT_FD}`, m.realRoot).then(
        () => send({ type: 'ready' }),
        (err: Error) => {
          process.stderr.write(`a2e-gateway fs worker: cannot open the workspace (${err.message})\n`);
          process.exit(1);
        },
      );
      break;
    case 'call':
      void call(m);
      break;
    case 'cancel':
      running.get(m.id)?.stop();
      break;
    case 'paced':
      running.get(m.id)?.resume();
      break;
  }
}
// The gateway went away: so does the worker.
process.on('disconnect', () => process.exit(0));
