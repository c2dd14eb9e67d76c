/**
 * The code-evaluation tool group: `eval_js` runs JavaScript in QuickJS
 * compiled to WebAssembly, inside a worker thread per evaluation. The code
 * sees no host functions but a console shim; memory, stack and time are
 * bounded inside QuickJS, and the worker is terminated if it overruns anyway
 * or the call is stopped. (node:vm is not a sandbox and is not used.)
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ToolError, ToolOutput, type ToolContext, type ToolPlugin } from '../../engine/index.js';
import { distFile } from '../../package-root.js';
import type { ToolDefinitionInput } from '../../protocol/index.js';
import type { NativeContext } from '../native-context.js';
import type { EvalConfig } from './config.js';
import type { EvalFailure, EvalJob, EvalSetup, WorkerMessage } from './protocol.js';
import { markStack } from './stack-mark.js';

const EVAL_JS: ToolDefinitionInput = {
  name: 'eval_js',
  // Runs in QuickJS with no file, network or process access: it changes nothing outside the call.
  mcp: { annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false } },
  description:
    'Evaluate JavaScript (ES2023, QuickJS) in an isolated WebAssembly sandbox and return the JSON value of the last ' +
    'expression. No I/O, network, timers, modules or host objects; console.log lines stream as log events and are ' +
    'returned in "console". Memory, stack depth and run time are limited.',
  input_parameters: [
    {
      name: 'code',
      type: 'string',
      description: 'Script to run; its last expression is the result (a settled promise is unwrapped)',
      required: true,
    },
    {
      name: 'timeout',
      type: 'number',
      description: 'Seconds before the evaluation is stopped (default tools.eval.timeout_s)',
    },
  ],
  output_parameters: [
    {
      name: 'result',
      type: 'object',
      description: 'JSON value of the last expression (null when undefined or not representable)',
    },
    { name: 'type', type: 'string', description: 'typeof the last expression' },
    { name: 'console', type: 'array', description: 'console output lines' },
  ],
  tags: ['code', 'javascript', 'eval', 'compute'],
  idempotent: true,
  streaming: true,
  kind: 'native',
};

/** How far the interpreter's deadline trails the call's own, so the engine's timeout answers first. */
const CALL_DEADLINE_SLACK_MS = 250;

/** Extra time the worker gets past the interpreter's own deadline before it is terminated from outside. */
const TERMINATE_GRACE_MS = 1000;

/** The worker, built to its own file in dist/ (`npm test` builds it before the tests run the sources). */
const workerUrl = (): URL => pathToFileURL(distFile('tools/eval/worker.mjs'));

export function evalPlugin(config: EvalConfig, _native: NativeContext): ToolPlugin {
  return new EvalPlugin(config);
}

/** An evaluation waiting for a slot. */
interface Waiter {
  principal: string | null;
  grant(): void;
}

/** Idle workers kept for reuse, each with a runtime ready for the next evaluation. */
const MAX_IDLE_WORKERS = 2;

class EvalPlugin implements ToolPlugin {
  readonly name = 'eval';
  private readonly url = workerUrl();
  private readonly busy = new Set<Worker>();
  private readonly idle: Worker[] = [];
  private setup: EvalSetup | undefined;
  private preparing: Promise<void> | undefined;
  private stopped = false;
  private slotsInUse = 0;
  /** Evaluations running per principal (null, anonymous, is not capped). */
  private readonly runningBy = new Map<string | null, number>();
  private readonly waiting: Waiter[] = [];
  private readonly perPrincipal: number;

  constructor(private readonly config: EvalConfig) {
    this.perPrincipal = config.max_running_per_principal ?? Math.ceil(config.max_running / 2);
  }

  listTools() {
    return [EVAL_JS];
  }

  async start(): Promise<void> {
    if (!existsSync(fileURLToPath(this.url))) {
      throw new Error('tools.eval: the evaluator worker is missing; run "npm run build"');
    }
  }

  /**
   * QuickJS is compiled, and the first worker started, at the first evaluation: a gateway that never
   * evaluates never pays for it, and start-up does not wait for it.
   */
  private prepare(): Promise<void> {
    this.preparing ??= (async () => {
      // Compiled once; each worker instantiates it, and again after an evaluation that hit a limit.
      const wasmPath = createRequire(import.meta.url).resolve('@jitl/quickjs-wasmfile-release-sync/wasm');
      const wasm = await readFile(wasmPath);
      const marked = markStack(wasm);
      this.setup = {
        memoryBytes: this.config.memory_mb * 1024 * 1024,
        stackBytes: this.config.max_stack_kb * 1024,
        maxConsoleBytes: this.config.max_console_bytes,
        wasmModule: await WebAssembly.compile(marked?.bytes ?? wasm),
        stackLeafReach: marked?.leafReach,
        checkReset: process.env.A2E_EVAL_CHECK_RESET === '1',
      };
    })().catch((err: unknown) => {
      this.preparing = undefined;
      throw err;
    });
    return this.preparing;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const all = [...this.busy, ...this.idle.splice(0)];
    await Promise.allSettled(all.map((w) => w.terminate()));
  }

  async executeTool(_name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput> {
    const timeoutS = args.timeout === undefined ? this.config.timeout_s : Number(args.timeout);
    if (!(timeoutS > 0)) throw new ToolError('timeout must be a positive number of seconds');
    await this.acquireSlot(ctx.principal ?? null, ctx.signal);
    try {
      if (!this.stopped) await this.prepare();
      if (this.stopped || !this.setup) throw new ToolError('the evaluator is not running (the gateway is stopping)');
      // When the call's own timeout comes first, the engine reports it (and aborts us); the interpreter's
      // deadline trails it a little so the two do not race to answer with different messages.
      const job: EvalJob = {
        code: String(args.code),
        deadline: Math.min(Date.now() + timeoutS * 1000, ctx.deadline + CALL_DEADLINE_SLACK_MS),
      };
      // The worker parked longest: after its evaluation each resets its instance's memory, or makes a new
      // instance after one that hit a limit (several milliseconds), so the one released last may still be busy.
      const worker = this.idle.shift() ?? this.newWorker();
      if (this.idle.length === 0) this.release(this.newWorker()); // keep one ready for the next call
      return await this.evaluate(worker, job, ctx);
    } finally {
      this.releaseSlot(ctx.principal ?? null);
    }
  }

  /** Whether `principal` may take a slot now: one is free and it is under its own share. */
  private mayRun(principal: string | null): boolean {
    if (this.slotsInUse >= this.config.max_running) return false;
    return principal === null || (this.runningBy.get(principal) ?? 0) < this.perPrincipal;
  }

  private take(principal: string | null): void {
    this.slotsInUse++;
    this.runningBy.set(principal, (this.runningBy.get(principal) ?? 0) + 1);
  }

  /** Wait for one of `max_running` slots within the principal's share (or the call's end). */
  private acquireSlot(principal: string | null, signal: AbortSignal): Promise<void> {
    if (this.mayRun(principal)) {
      this.take(principal);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        principal,
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          this.take(principal);
          resolve();
        },
      };
      const onAbort = () => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        const share = principal !== null && (this.runningBy.get(principal) ?? 0) >= this.perPrincipal;
        reject(
          new ToolError(
            share
              ? `evaluation was stopped while waiting: this token already runs tools.eval.max_running_per_principal (${this.perPrincipal}) evaluations`
              : `evaluation was stopped while waiting for one of tools.eval.max_running (${this.config.max_running}) slots`,
          ),
        );
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  /** Free a slot and hand free slots out: to the waiting principal running the fewest, earliest waiter first. */
  private releaseSlot(principal: string | null): void {
    this.slotsInUse--;
    const left = (this.runningBy.get(principal) ?? 1) - 1;
    if (left > 0) this.runningBy.set(principal, left);
    else this.runningBy.delete(principal);
    while (this.waiting.length > 0 && this.slotsInUse < this.config.max_running) {
      let best = -1;
      let fewest = Infinity;
      for (let i = 0; i < this.waiting.length; i++) {
        const p = this.waiting[i]!.principal;
        const running = this.runningBy.get(p) ?? 0;
        if (running < fewest && this.mayRun(p)) {
          best = i;
          fewest = running;
        }
      }
      if (best < 0) return;
      this.waiting.splice(best, 1)[0]!.grant();
    }
  }

  private newWorker(): Worker {
    return new Worker(this.url, {
      workerData: this.setup,
      // The QuickJS heap lives in WebAssembly memory; this caps the worker's own JS heap as a backstop.
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 },
      stdout: true,
      stderr: true,
      env: {},
    });
  }

  /** Park a healthy worker for reuse (or end it when enough are parked). */
  private release(worker: Worker): void {
    if (this.stopped || this.idle.length >= MAX_IDLE_WORKERS) {
      void worker.terminate();
      return;
    }
    worker.unref(); // an idle worker must not keep the process alive
    const drop = () => {
      const i = this.idle.indexOf(worker);
      if (i >= 0) this.idle.splice(i, 1);
    };
    worker.once('error', drop);
    worker.once('exit', drop);
    this.idle.push(worker);
  }

  private evaluate(worker: Worker, job: EvalJob, ctx: ToolContext): Promise<ToolOutput> {
    const config = this.config;
    worker.removeAllListeners('error');
    worker.removeAllListeners('exit');
    worker.ref();
    this.busy.add(worker);
    return new Promise((resolve, reject) => {
      const consoleLines: string[] = [];
      let settled = false;

      const finish = (healthy: boolean, outcome: () => ToolOutput) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        ctx.signal.removeEventListener('abort', onAbort);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        this.busy.delete(worker);
        if (healthy) this.release(worker);
        else void worker.terminate();
        try {
          resolve(outcome());
        } catch (err) {
          reject(err);
        }
      };
      const fail = (healthy: boolean, failure: EvalFailure, message: string) =>
        finish(healthy, () => {
          throw new ToolError(explain(failure, message, config), { data: { console: consoleLines } });
        });

      const onMessage = (m: WorkerMessage) => {
        if (m.type === 'log') {
          consoleLines.push(m.message);
          ctx.emit('log', { level: m.level, message: m.message });
          return;
        }
        // The worker reported back itself, so it is fine to reuse (the next evaluation gets a new runtime in memory as new).
        if (!m.ok) return fail(true, m.failure, m.message);
        finish(
          true,
          () =>
            new ToolOutput({
              data: { result: m.value, type: m.valueType, console: consoleLines },
              summary: m.valueType,
              truncated: m.consoleTruncated,
            }),
        );
      };
      const onError = (err: Error) => {
        // resourceLimits exceeded, or the WebAssembly engine itself failed.
        const oom = (err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
        fail(false, oom ? 'memory' : 'exception', oom ? 'worker out of memory' : `evaluator crashed: ${err.message}`);
      };
      const onExit = (code: number) => fail(false, 'exception', `evaluator exited unexpectedly (code ${code})`);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);

      // The interpreter stops itself at the deadline; this catches what it cannot interrupt.
      const timer = setTimeout(
        () => fail(false, 'timeout', 'terminated'),
        Math.max(0, job.deadline - Date.now()) + TERMINATE_GRACE_MS,
      );
      const onAbort = () => fail(false, 'timeout', 'stopped');
      if (ctx.signal.aborted) onAbort();
      else ctx.signal.addEventListener('abort', onAbort, { once: true });

      worker.postMessage(job);
    });
  }
}

function explain(failure: EvalFailure, message: string, config: EvalConfig): string {
  switch (failure) {
    case 'timeout':
      return `code ran past its deadline and was stopped (${message}); make it finish sooner or pass a larger "timeout" (seconds)`;
    case 'memory':
      return `code ran out of memory (limit tools.eval.memory_mb = ${config.memory_mb} MiB): ${message}`;
    case 'stack':
      return `code overflowed the stack (limit tools.eval.max_stack_kb = ${config.max_stack_kb} KiB), e.g. by recursing too deeply: ${message}`;
    case 'result':
      return message;
    case 'exception':
      return `code threw ${message}`;
  }
}
