/**
 * Worker thread of eval_js: runs one piece of code in a fresh QuickJS
 * (WebAssembly) runtime with a memory limit, a stack limit and an interrupt
 * deadline. The only host function the code can reach is a console shim that
 * posts lines back. The parent terminates this thread if it overruns.
 *
 * Every evaluation gets a fresh WebAssembly instance (its own memory), made
 * ready ahead of time: a worker serves evaluations one at a time, and is
 * reused only after one that ended normally.
 */
import { parentPort, workerData } from 'node:worker_threads';
import releaseSync from '@jitl/quickjs-wasmfile-release-sync';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSSyncVariant,
  type QuickJSContext,
  type QuickJSRuntime,
  type QuickJSHandle,
} from 'quickjs-emscripten-core';
import type { EvalFailure, EvalJob, EvalSetup, WorkerMessage } from './protocol.js';

const setup = workerData as EvalSetup;
/** Deadline of the evaluation running now (none runs before its code arrives). */
let deadline = Infinity;
/** WebAssembly memory beyond the heap limit, for the interpreter's own stack, tables and atoms. */
const INTERPRETER_HEADROOM = 16 * 1024 * 1024;
const post = (m: WorkerMessage) => parentPort!.postMessage(m);

let consoleBytes = 0;
let consoleTruncated = false;

function installConsole(vm: QuickJSContext): void {
  const consoleObj = vm.newObject();
  const levels = { log: 'info', info: 'info', debug: 'debug', warn: 'warn', error: 'error' } as const;
  for (const [method, level] of Object.entries(levels)) {
    const fn = vm.newFunction(method, (...args: QuickJSHandle[]) => {
      if (consoleTruncated) return;
      const message = args.map((h) => show(vm, h)).join(' ');
      consoleBytes += Buffer.byteLength(message) + 1;
      if (consoleBytes > setup.maxConsoleBytes) {
        consoleTruncated = true;
        post({ type: 'log', level: 'warn', message: `console output passed ${setup.maxConsoleBytes} bytes; the rest is dropped` });
        return;
      }
      post({ type: 'log', level, message });
    });
    vm.setProp(consoleObj, method, fn);
    fn.dispose();
  }
  vm.setProp(vm.global, 'console', consoleObj);
  consoleObj.dispose();
}

/** How a console argument is shown: strings as they are, everything else as JSON (or its type). */
function show(vm: QuickJSContext, h: QuickJSHandle): string {
  const type = vm.typeof(h);
  if (type === 'string') return vm.getString(h);
  if (type === 'undefined' || type === 'function' || type === 'symbol' || type === 'bigint') {
    const toString = vm.getProp(vm.global, 'String');
    const s = vm.callFunction(toString, vm.undefined, h);
    toString.dispose();
    if (s.error) {
      s.error.dispose();
      return `[${type}]`;
    }
    const text = vm.getString(s.value);
    s.value.dispose();
    return text;
  }
  try {
    return JSON.stringify(vm.dump(h)) ?? String(vm.dump(h));
  } catch {
    return `[${type}]`;
  }
}

/** Classify an error thrown inside QuickJS (dumped to a plain object). */
function failure(dumped: unknown): { failure: EvalFailure; message: string } {
  const e = (dumped ?? {}) as { name?: unknown; message?: unknown; stack?: unknown };
  const name = typeof e.name === 'string' ? e.name : 'Error';
  const message = typeof e.message === 'string' ? e.message : String(dumped);
  if (name === 'InternalError' && /interrupted/i.test(message)) return { failure: 'timeout', message };
  if (/out of memory|string too long/i.test(message)) return { failure: 'memory', message };
  if (/stack overflow|call stack size/i.test(message)) return { failure: 'stack', message };
  const where = typeof e.stack === 'string' ? e.stack.trim().split('\n')[0]?.trim() : '';
  return { failure: 'exception', message: `${name}: ${message}${where ? ` (${where})` : ''}` };
}

async function prepare(): Promise<{ runtime: QuickJSRuntime; vm: QuickJSContext }> {
  // QuickJS's own memory limit only counts a few bytes per allocation in this build (it cannot see
  // allocation sizes), so the hard limit is the WebAssembly memory itself: it cannot grow past the limit
  // plus room for the interpreter, and an allocation beyond it fails inside QuickJS as "out of memory".
  const pages = (bytes: number) => Math.ceil(bytes / 65536);
  const wasmMemory = new WebAssembly.Memory({
    initial: pages(16 * 1024 * 1024),
    maximum: pages(setup.memoryBytes + INTERPRETER_HEADROOM),
  });
  const variant = newVariant(releaseSync as unknown as QuickJSSyncVariant, { wasmMemory, wasmModule: setup.wasmModule });
  const QuickJS = await newQuickJSWASMModuleFromVariant(variant);
  const runtime = QuickJS.newRuntime();
  runtime.setMemoryLimit(setup.memoryBytes);
  runtime.setMaxStackSize(setup.stackBytes);
  runtime.setInterruptHandler(() => Date.now() > deadline);
  const vm = runtime.newContext();
  installConsole(vm);
  return { runtime, vm };
}

async function run(job: EvalJob, prepared: Promise<{ runtime: QuickJSRuntime; vm: QuickJSContext }>): Promise<void> {
  const { runtime, vm } = await prepared;
  deadline = job.deadline;
  const evaluated = vm.evalCode(job.code, 'eval.js');
  if (evaluated.error) {
    const f = failure(vm.dump(evaluated.error));
    evaluated.error.dispose();
    return post({ type: 'result', ok: false, ...f, consoleTruncated });
  }
  // A promise result: run the jobs queued so far (there are no timers or I/O) and take its value.
  runtime.executePendingJobs();
  const state = vm.getPromiseState(evaluated.value);
  let value: QuickJSHandle;
  if (state.type === 'pending') {
    evaluated.value.dispose();
    return post({
      type: 'result',
      ok: false,
      failure: 'result',
      message: 'the result is a promise that never settled (the sandbox has no timers or I/O to wait for)',
      consoleTruncated,
    });
  } else if (state.type === 'rejected') {
    const f = failure(vm.dump(state.error));
    state.error.dispose();
    evaluated.value.dispose();
    return post({ type: 'result', ok: false, ...f, consoleTruncated });
  } else {
    value = state.value;
    if (!state.notAPromise) evaluated.value.dispose();
  }

  const valueType = vm.typeof(value);
  // The JSON value, converted inside the VM (so its limits apply to a huge result too).
  const JSONObj = vm.getProp(vm.global, 'JSON');
  const stringify = vm.getProp(JSONObj, 'stringify');
  const json = vm.callFunction(stringify, vm.undefined, value);
  stringify.dispose();
  JSONObj.dispose();
  value.dispose();
  if (json.error) {
    const f = failure(vm.dump(json.error));
    json.error.dispose();
    const message = f.failure === 'exception' ? `the result cannot be converted to JSON: ${f.message}` : f.message;
    return post({ type: 'result', ok: false, failure: f.failure === 'exception' ? 'result' : f.failure, message, consoleTruncated });
  }
  const text = vm.typeof(json.value) === 'string' ? vm.getString(json.value) : undefined;
  json.value.dispose();
  post({ type: 'result', ok: true, value: text === undefined ? null : JSON.parse(text), valueType, consoleTruncated });
  vm.dispose();
  runtime.dispose();
}

let next = prepare();
next.catch(() => {}); // reported when the code arrives
parentPort!.on('message', (job: EvalJob) => {
  const prepared = next;
  consoleBytes = 0;
  consoleTruncated = false;
  run(job, prepared)
    .catch((err: unknown) => {
      post({ type: 'result', ok: false, failure: 'exception', message: `evaluator failed: ${(err as Error).message}`, consoleTruncated });
    })
    .finally(() => {
      deadline = Infinity;
      next = prepare();
      next.catch(() => {});
    });
});
