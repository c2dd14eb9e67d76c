/**
 * The gateway's side of the privilege-separated file tools worker
 * (worker-main.ts). When the gateway runs as root and the workspace belongs to
 * another user (the shell sandbox's, once run_command is configured), the file
 * tools do not run as root: each call goes to a child process forked with that
 * user's uid and gid, which works on the workspace root's descriptor handed
 * down to it. The child is started on first use and again after it dies.
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { ToolError, ToolOutput, type Logger, type ToolContext } from '../../../engine/index.js';
import { IdTable } from '../../../utils/id-table.js';
import { JsonText } from '../../../utils/json-text.js';
import { distFile } from '../../../package-root.js';
import type { FsContext, FsLimits } from '../dispatch.js';
import type { Owner, Workspace } from '../confinement/workspace.js';
import { handOut } from '../threads/hand-out.js';
import { batchedSender } from './ipc-batch.js';
import { FrameReader } from './answer-stream.js';
import { ANSWER_FD, ROOT_FD, type Answer, type FromWorker, type ToWorker } from './worker-protocol.js';

/** The worker, built to its own file in dist/ (`npm test` builds it before the tests run the sources). */
const workerPath = (): string => distFile('tools/fs/worker/worker-main.js');

interface Pending {
  ctx: FsContext;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

export class FsWorker {
  private child: ChildProcess | null = null;
  /** Sends to the running child, a turn's messages at a time (ipc-batch.ts). */
  private post: (m: ToWorker) => void = () => {};
  private ready: Promise<void> | null = null;
  /** Calls waiting for their answer, by the id the worker answers with (an IdTable: see there for why not a Map). */
  private readonly pending = new IdTable<Pending>();

  constructor(
    private readonly ws: Workspace,
    private readonly owner: NonNullable<Owner>,
    private readonly limits: FsLimits,
    private readonly quotaLimit: number | null,
    private readonly logger: Logger,
  ) {}

  /**
   * Run one file tool call in the worker; `used` is the workspace usage for the quota (null: no quota), `quotaLimit`
   * the quota when it may differ from the one the worker started with.
   */
  async run(
    name: string,
    args: Record<string, unknown>,
    ctx: FsContext & Pick<ToolContext, 'onStop' | 'streaming'>,
    used: number | null,
    quotaLimit?: number | null,
  ): Promise<{ result: unknown; used: number | null }> {
    await (this.ready ??= this.spawn());
    if (!this.child?.connected) throw new ToolError('the file tools worker stopped unexpectedly; try the call again');
    const post = this.post;
    let id = -1;
    const answered = new Promise<{ answer: Answer<Uint8Array>; used: number | null }>((resolve, reject) => {
      id = this.pending.add({ ctx, resolve: resolve as (v: unknown) => void, reject });
    });
    // onStop, not ctx.signal: reading the signal makes the call's AbortController (and aborts it when the call
    // settles), a large part of a quick call's cost; a stopped call is told to the worker either way.
    const stopListening = ctx.onStop(() => post({ type: 'cancel', id }));
    post({
      type: 'call',
      id,
      name,
      args,
      used,
      streaming: ctx.streaming,
      ...(quotaLimit !== undefined && { quotaLimit }),
    });
    try {
      const done = await answered;
      return { result: fromAnswer(done.answer), used: done.used };
    } finally {
      stopListening();
    }
  }

  private spawn(): Promise<void> {
    // stdin, stdout ignored; stderr shared (start-up failures); the IPC channel (calls to the worker); the
    // workspace root's descriptor; the pipe its answers and events come back on (answer-stream.ts).
    const stdio: (string | number)[] = ['ignore', 'ignore', 'inherit', 'ipc'];
    stdio[ROOT_FD] = this.ws.dir.fd;
    stdio[ANSWER_FD] = 'pipe';
    // Forked as root and dropping to the owner itself once its code is loaded (worker-main.ts), so the
    // gateway's installation need not be readable by that user (a clone in a 0700 directory works).
    const child = fork(workerPath(), [String(this.owner.uid), String(this.owner.gid)], {
      execArgv: [],
      env: { NODE_ENV: process.env.NODE_ENV ?? 'production' },
      // JSON: every call is JSON-shaped (tool arguments from a request), and it costs the gateway about a third
      // less per call than the structured-clone serializer.
      serialization: 'json',
      stdio: stdio as ('ignore' | 'inherit' | 'ipc' | number)[],
    });
    this.child = child;
    this.post = batchedSender<ToWorker>((m) => {
      // Gone since: its exit rejects what is pending.
      if (child.connected) child.send(m);
    });
    return new Promise<void>((resolve, reject) => {
      const onMessage = (m: FromWorker<Uint8Array>) => {
        if (m.type === 'ready') return resolve();
        if (m.type === 'event') {
          this.pending.get(m.id)?.ctx.emit(m.kind as never, m.data as never);
        } else if (m.type === 'pace') {
          // The worker's walk waits until the call's readers have caught up (a call gone meanwhile was canceled).
          void this.pending
            .get(m.id)
            ?.ctx.eventsTaken()
            .then(() => this.post({ type: 'paced', id: m.id }));
        } else {
          const p = this.pending.take(m.id);
          if (!p) return;
          // One read of the answer pipe can hold many answers: a few are resumed per event-loop turn (hand-out.ts).
          handOut(() => p.resolve(m));
        }
      };
      const frames = new FrameReader(onMessage, answerLineLimit(this.limits));
      const answers = (child.stdio as unknown as Readable[])[ANSWER_FD]!;
      answers.on('data', (chunk: Buffer) => {
        try {
          frames.push(chunk);
        } catch (err) {
          // Not what the worker writes: it is not to be trusted any more (its exit fails what is pending).
          this.logger.error({ err }, 'file tools worker sent a malformed answer; stopping it');
          answers.destroy();
          child.kill('SIGKILL');
        }
      });
      // Closed when the worker exits (which fails what is pending): nothing to add.
      answers.on('error', () => {});
      child.on('exit', (code, signal) => {
        if (this.child === child) {
          this.child = null;
          this.ready = null;
        }
        const err = new ToolError('the file tools worker stopped unexpectedly; try the call again');
        for (const p of this.pending.takeAll()) p.reject(err);
        if (code !== 0) this.logger.warn({ code, signal }, 'file tools worker exited');
        reject(this.cannotStart());
      });
      child.on('error', (err) => {
        this.logger.error({ err }, 'file tools worker could not be started');
        if (this.child === child) {
          this.child = null;
          this.ready = null;
        }
        reject(this.cannotStart());
      });
      this.post({
        type: 'init',
        root: this.ws.root,
        realRoot: this.ws.real,
        limits: this.limits,
        quotaLimit: this.quotaLimit,
      });
    });
  }

  private cannotStart(): ToolError {
    return new ToolError(
      `the file tools worker (uid ${this.owner.uid}, the workspace owner) could not start (see the gateway log); ` +
        'try the call again, or set tools.fs.privilege_separation: false',
    );
  }

  /** Stop the worker (gateway shutdown). */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = null;
    this.ready = null;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    if (child.connected) child.disconnect();
    else child.kill('SIGKILL');
    await exited;
  }
}

/**
 * Longest answer line taken from the worker: far above what an answer within the file tools' own limits takes
 * (read_file at most max_read_bytes, JSON-escaped; listings and matches at most 10,000 entries, match lines cut
 * at 400 characters), so only a worker gone wrong meets it, and the gateway's memory stays bounded when one does.
 */
const answerLineLimit = (limits: FsLimits) => 64 * 1024 * 1024 + 8 * limits.max_read_bytes;

function fromAnswer(a: Answer<Uint8Array>): unknown {
  switch (a.kind) {
    case 'output':
      return new ToolOutput({
        data: new JsonText(a.json),
        summary: a.summary,
        exitCode: a.exitCode,
        truncated: a.truncated,
      });
    case 'value':
      return a.value;
    case 'tool_error':
      throw new ToolError(a.message, { data: a.data, exitCode: a.exitCode, truncated: a.truncated });
    case 'failure':
      throw new Error(`file tools worker: ${a.message}`);
  }
}
