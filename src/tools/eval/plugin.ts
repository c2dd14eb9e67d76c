/**
 * The code-evaluation tool group: `eval_js` runs JavaScript in QuickJS
 * compiled to WebAssembly, inside a worker thread per evaluation. The code
 * sees no host functions but a console shim; memory, stack and time are
 * bounded inside QuickJS, and the worker is terminated if it overruns anyway
 * or the call is stopped. (node:vm is not a sandbox and is not used.)
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ToolError, ToolOutput, type ToolContext, type ToolPlugin } from '../../engine/index.js';
import type { ToolDefinitionInput } from '../../protocol/index.js';
import type { NativeContext } from '../index.js';
import type { EvalConfig } from './config.js';
import type { EvalFailure, EvalJob, WorkerMessage } from './protocol.js';

const EVAL_JS: ToolDefinitionInput = {
  name: 'eval_js',
  description:
    'Evaluate JavaScript (ES2023, QuickJS) in an isolated WebAssembly sandbox and return the JSON value of the last ' +
    'expression. No I/O, network, timers, modules or host objects; console.log lines stream as log events and are ' +
    'returned in "console". Memory, stack depth and run time are limited.',
  input_parameters: [
    { name: 'code', type: 'string', description: 'Script to run; its last expression is the result (a settled promise is unwrapped)', required: true },
    { name: 'timeout', type: 'number', description: 'Seconds before the evaluation is stopped (default tools.eval.timeout_s)' },
  ],
  output_parameters: [
    { name: 'result', type: 'object', description: 'JSON value of the last expression (null when undefined or not representable)' },
    { name: 'type', type: 'string', description: 'typeof the last expression' },
    { name: 'console', type: 'array', description: 'console output lines' },
  ],
  tags: ['code', 'javascript', 'eval', 'compute'],
  idempotent: true,
  streaming: true,
  kind: 'native',
};

/** Extra time the worker gets past the interpreter's own deadline before it is terminated from outside. */
const TERMINATE_GRACE_MS = 1000;

/**
 * The compiled worker next to this module; when running from the TypeScript
 * sources (the test runner), the one in dist/ (`npm test` builds it first).
 */
function workerUrl(): URL {
  const here = new URL('./worker.js', import.meta.url);
  if (existsSync(fileURLToPath(here))) return here;
  return new URL('../../../dist/tools/eval/worker.js', import.meta.url);
}

export function evalPlugin(config: EvalConfig, _native: NativeContext): ToolPlugin {
  const url = workerUrl();
  const running = new Set<Worker>();
  return {
    name: 'eval',
    listTools: () => [EVAL_JS],
    start() {
      if (!existsSync(fileURLToPath(url))) {
        throw new Error('tools.eval: the evaluator worker is missing; run "npm run build"');
      }
    },
    async stop() {
      await Promise.allSettled([...running].map((w) => w.terminate()));
    },
    executeTool(_name, args, ctx) {
      const timeoutS = args.timeout === undefined ? config.timeout_s : Number(args.timeout);
      if (!(timeoutS > 0)) throw new ToolError('timeout must be a positive number of seconds');
      const job: EvalJob = {
        code: String(args.code),
        memoryBytes: config.memory_mb * 1024 * 1024,
        stackBytes: config.max_stack_kb * 1024,
        deadline: Math.min(Date.now() + timeoutS * 1000, ctx.deadline),
        maxConsoleBytes: config.max_console_bytes,
      };
      return evaluate(url, job, config, ctx, running);
    },
  };
}

function evaluate(url: URL, job: EvalJob, config: EvalConfig, ctx: ToolContext, running: Set<Worker>): Promise<ToolOutput> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(url, {
      workerData: job,
      // The QuickJS heap lives in WebAssembly memory; this caps the worker's own JS heap as a backstop.
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 },
      stdout: true,
      stderr: true,
      env: {},
    });
    running.add(worker);
    const consoleLines: string[] = [];
    let settled = false;
    let outsideTimeout = false;

    const finish = (outcome: () => ToolOutput) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
      running.delete(worker);
      void worker.terminate();
      try {
        resolve(outcome());
      } catch (err) {
        reject(err);
      }
    };
    const fail = (failure: EvalFailure, message: string) =>
      finish(() => {
        throw new ToolError(explain(failure, message, config, job), { data: { console: consoleLines } });
      });

    // The interpreter stops itself at the deadline; this catches what it cannot interrupt.
    const timer = setTimeout(() => {
      outsideTimeout = true;
      fail('timeout', 'terminated');
    }, Math.max(0, job.deadline - Date.now()) + TERMINATE_GRACE_MS);
    const onAbort = () => fail('timeout', 'stopped');
    if (ctx.signal.aborted) onAbort();
    else ctx.signal.addEventListener('abort', onAbort, { once: true });

    worker.on('message', (m: WorkerMessage) => {
      if (m.type === 'log') {
        consoleLines.push(m.message);
        ctx.emit('log', { level: m.level, message: m.message });
        return;
      }
      if (!m.ok) return fail(m.failure, m.message);
      finish(
        () =>
          new ToolOutput({
            data: { result: m.value, type: m.valueType, console: consoleLines },
            summary: m.valueType,
            truncated: m.consoleTruncated,
          }),
      );
    });
    worker.on('error', (err) => {
      // resourceLimits exceeded, or the WebAssembly engine itself failed.
      const oom = (err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
      fail(oom ? 'memory' : 'exception', oom ? 'worker out of memory' : `evaluator crashed: ${err.message}`);
    });
    worker.on('exit', (code) => {
      if (!settled && !outsideTimeout) fail('exception', `evaluator exited unexpectedly (code ${code})`);
    });
  });
}

function explain(failure: EvalFailure, message: string, config: EvalConfig, job: EvalJob): string {
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
      void job;
      return `code threw ${message}`;
  }
}
