/**
 * Worker thread of eval_js: runs one piece of code in a fresh QuickJS
 * (WebAssembly) runtime with a memory limit, a stack limit and an interrupt
 * deadline. The only host function the code can reach is a console shim that
 * posts lines back. The parent terminates this thread if it overruns.
 *
 * Every evaluation gets a fresh QuickJS runtime and context in a WebAssembly
 * instance whose memory holds the bytes of a new one: each instance makes its
 * runtime and context once and keeps its memory as it was then (sealed.ts);
 * after an evaluation that ended normally, the memory is put back to those
 * bytes (memory-reset.ts; of the stack, what the evaluation used, when the
 * module records its lowest stack pointer: stack-mark.ts) once the answer is
 * posted, so the next evaluation
 * starts in the runtime and context as they were made, with a Math.random
 * seed of its own; after one that hit a limit or failed, or that grew the
 * memory, a new instance is made instead. A worker serves evaluations one at a
 * time, and is reused only after one that reported back.
 */
import { parentPort, workerData } from 'node:worker_threads';
import releaseSync from '@jitl/quickjs-wasmfile-release-sync';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
  type QuickJSContext,
  type QuickJSRuntime,
  type QuickJSHandle,
} from 'quickjs-emscripten-core';
import { learn, reset, type PristineMemory } from './memory-reset.js';
import { learnSeedAddress, seal, type Sealed } from './sealed.js';
import { STACK_LOW_EXPORT } from './stack-mark.js';
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
        post({
          type: 'log',
          level: 'warn',
          message: `console output passed ${setup.maxConsoleBytes} bytes; the rest is dropped`,
        });
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

/** A QuickJS instance (its own WebAssembly memory) and how to put that memory back as it was when new. */
interface Instance {
  quickjs: QuickJSWASMModule;
  memory: WebAssembly.Memory;
  /** Undefined when this build's layout is not the one memory-reset.ts knows: then it serves one evaluation. */
  pristine: PristineMemory | undefined;
  /** The memory with the instance's one runtime and context made, when it can be put back to it (else undefined). */
  sealed: Sealed | undefined;
  /** The whole memory the reset puts back, to check each reset against (tools.eval tests only: EvalSetup.checkReset). */
  checkCopy: Uint8Array | undefined;
  /** The next evaluation's runtime and context, made ahead while no evaluation runs (sealed: always this one). */
  ready: Evaluator | undefined;
  /** The lowest stack pointer since the last reset, or since the instance was new (when the module records it). */
  stackLow: WebAssembly.Global | undefined;
}

/** A runtime and context, with the context's own JSON.stringify (what the code sets JSON.stringify to is not used). */
type Evaluator = { runtime: QuickJSRuntime; vm: QuickJSContext; stringify: QuickJSHandle };

/** What the last instance's memory looked like when new: the next instance of the module starts the same. */
let layout: PristineMemory | undefined;

async function newInstance(): Promise<Instance> {
  // QuickJS's own memory limit only counts a few bytes per allocation in this build (it cannot see
  // allocation sizes), so the hard limit is the WebAssembly memory itself: it cannot grow past the limit
  // plus room for the interpreter, and an allocation beyond it fails inside QuickJS as "out of memory".
  const pages = (bytes: number) => Math.ceil(bytes / 65536);
  const memory = new WebAssembly.Memory({
    initial: pages(16 * 1024 * 1024),
    maximum: pages(setup.memoryBytes + INTERPRETER_HEADROOM),
  });
  let exports: WebAssembly.Exports | undefined;
  const variant = newVariant(releaseSync as unknown as QuickJSSyncVariant, {
    wasmMemory: memory,
    // Instantiated here rather than by quickjs-emscripten (its wasmModule option), to keep the instance's exports.
    emscriptenModule: {
      instantiateWasm(imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance) => void) {
        void WebAssembly.instantiate(setup.wasmModule, imports).then((instance) => {
          exports = instance.exports;
          done(instance);
        });
        return {};
      },
    } as never,
  });
  const quickjs = await newQuickJSWASMModuleFromVariant(variant);
  const mark = setup.stackLeafReach === undefined ? undefined : exports?.[STACK_LOW_EXPORT];
  const pristine = learn(memory, layout);
  layout = pristine;
  const reach = setup.stackBytes + STACK_REACH_MARGIN;
  // Once per worker: where a context keeps its Math.random seed (learnt from two contexts made apart).
  if (pristine && seedAddress === undefined) {
    seedAddress = learnSeedAddress(memory, pristine, reach, () => newEvaluator(quickjs)) ?? null;
  }
  const sealing = pristine !== undefined && seedAddress !== null && seedAddress !== undefined;
  // Checked resets compare with what the reset puts back: the new memory, or (sealed) the memory as sealed.
  let checkCopy = setup.checkReset && pristine && !sealing ? new Uint8Array(memory.buffer).slice() : undefined;
  const ready = newEvaluator(quickjs);
  const sealed = sealing ? seal(memory, pristine, reach, ready.runtime, seedAddress as number) : undefined;
  if (setup.checkReset && sealing) checkCopy = sealed ? new Uint8Array(memory.buffer).slice() : undefined;
  return {
    quickjs,
    memory,
    pristine,
    sealed,
    checkCopy,
    ready,
    stackLow: mark instanceof WebAssembly.Global ? mark : undefined,
  };
}

/** The Math.random seed's address in a new context (the same in every instance), null when it cannot be found. */
let seedAddress: number | null | undefined;

/**
 * How far below the stack's touched top an evaluation can have written, when the module does not record
 * its stack pointer (and for sealing, once per instance): QuickJS checks its stack limit
 * before each JavaScript call and in its parser and regular expressions; the margin covers the C frames
 * between two checks.
 */
const STACK_REACH_MARGIN = 1024 * 1024;

/** Set when a checked reset (EvalSetup.checkReset) found a byte it missed: every later evaluation fails with it. */
let checkFault: string | undefined;

/**
 * After an evaluation that ended normally (its runtime disposed): the instance's memory back to new, for
 * the next one. False when it cannot be reused (no known layout, memory grown).
 */
function resetInstance(instance: Instance): boolean {
  const to = instance.sealed?.memory ?? instance.pristine;
  if (!to) return false;
  if (!reset(instance.memory, to, stackReach(instance, to))) return false;
  // What the next reset zeroes is measured from here (the instance's start-up and sealing included before the first).
  if (instance.stackLow) instance.stackLow.value = -1;
  if (instance.checkCopy) {
    const now = Buffer.from(instance.memory.buffer);
    if (!now.equals(instance.checkCopy)) {
      checkFault = `the memory reset missed a byte at ${now.findIndex((b, i) => b !== instance.checkCopy![i])}`;
    }
  }
  instance.sealed?.restored();
  return true;
}

/**
 * How far below its touched top the last evaluation wrote on the stack: down to the lowest stack pointer
 * it reached and the frames that do not move it, when the module records it; else all it could reach.
 */
function stackReach(instance: Instance, to: PristineMemory): number {
  const low = (instance.stackLow?.value as number | undefined) ?? -1;
  if (low === -1 || setup.stackLeafReach === undefined) return setup.stackBytes + STACK_REACH_MARGIN;
  return to.stackTouched - ((low >>> 0) - setup.stackLeafReach - STACK_MARK_SLACK);
}

/**
 * Bytes past the largest frame the rewrite found that does not move the stack pointer: for any such frame it
 * did not recognize (it looks for `global.get sp; i32.const N; i32.sub`). Zeroing them costs well under 1 µs.
 */
const STACK_MARK_SLACK = 16 * 1024;

/** A fresh runtime and context, with the limits and the console, in the instance. */
function newEvaluator(quickjs: QuickJSWASMModule): Evaluator {
  const runtime = quickjs.newRuntime();
  runtime.setMemoryLimit(setup.memoryBytes);
  runtime.setMaxStackSize(setup.stackBytes);
  runtime.setInterruptHandler(() => Date.now() > deadline);
  const vm = runtime.newContext();
  installConsole(vm);
  const json = vm.getProp(vm.global, 'JSON');
  const stringify = vm.getProp(json, 'stringify');
  json.dispose();
  return { runtime, vm, stringify };
}

/** What an evaluation posts back, and whether it ended so that its instance may serve the next one. */
type Outcome = { message: WorkerMessage; reusable: boolean };

function evaluate({ vm, runtime, stringify }: Evaluator, job: EvalJob): Outcome {
  const failed = (f: { failure: EvalFailure; message: string }): Outcome => ({
    message: { type: 'result', ok: false, ...f, consoleTruncated },
    // An exception the code threw leaves QuickJS as it was; after hitting a limit, the instance is replaced.
    reusable: f.failure === 'exception' || f.failure === 'result',
  });
  deadline = job.deadline;
  const evaluated = vm.evalCode(job.code, 'eval.js');
  if (evaluated.error) {
    const f = failure(vm.dump(evaluated.error));
    evaluated.error.dispose();
    return failed(f);
  }
  // A promise result: run the jobs queued so far (there are no timers or I/O) and take its value.
  if (runtime.hasPendingJob()) runtime.executePendingJobs();
  const state = vm.getPromiseState(evaluated.value);
  let value: QuickJSHandle;
  if (state.type === 'pending') {
    evaluated.value.dispose();
    return failed({
      failure: 'result',
      message: 'the result is a promise that never settled (the sandbox has no timers or I/O to wait for)',
    });
  } else if (state.type === 'rejected') {
    const f = failure(vm.dump(state.error));
    state.error.dispose();
    evaluated.value.dispose();
    return failed(f);
  } else {
    value = state.value;
    if (!state.notAPromise) evaluated.value.dispose();
  }

  const valueType = vm.typeof(value);
  // The JSON value, converted inside the VM (so its limits apply to a huge result too).
  const json = vm.callFunction(stringify, vm.undefined, value);
  value.dispose();
  if (json.error) {
    const f = failure(vm.dump(json.error));
    json.error.dispose();
    const message = f.failure === 'exception' ? `the result cannot be converted to JSON: ${f.message}` : f.message;
    return failed({ failure: f.failure === 'exception' ? 'result' : f.failure, message });
  }
  const text = vm.typeof(json.value) === 'string' ? vm.getString(json.value) : undefined;
  json.value.dispose();
  return {
    message: {
      type: 'result',
      ok: true,
      value: text === undefined ? null : JSON.parse(text),
      valueType,
      consoleTruncated,
    },
    reusable: true,
  };
}

/** Run one job in `instance`; whether the instance may serve the next one (its memory reset after answering). */
function run(job: EvalJob, instance: Instance): boolean {
  consoleBytes = 0;
  consoleTruncated = false;
  const evaluator = instance.ready ?? newEvaluator(instance.quickjs);
  const { runtime, vm } = evaluator;
  let outcome: Outcome;
  try {
    outcome = evaluate(evaluator, job);
  } finally {
    deadline = Infinity;
  }
  if (instance.sealed) {
    // Nothing to free: the reset, after answering, puts the runtime and context back as they were made.
    post(outcome.message);
    return outcome.reusable && resetInstance(instance);
  }
  instance.ready = undefined;
  let reusable = outcome.reusable;
  try {
    evaluator.stringify.dispose();
    vm.dispose();
    runtime.dispose();
  } catch {
    reusable = false; // QuickJS failed while freeing: this instance is not used again
  }
  post(outcome.message);
  if (!reusable || !resetInstance(instance)) return false;
  // After answering, so off the call's path: the next evaluation starts at its code.
  instance.ready = newEvaluator(instance.quickjs);
  return true;
}

/** The instance for the next evaluation: the last one, reset, or a new one made while none is running. */
let next: Promise<Instance> = newInstance();
next.catch(() => {}); // reported when the code arrives
parentPort!.on('message', (job: EvalJob) => {
  void next
    .then((instance) => {
      if (checkFault) throw new Error(checkFault);
      let reused = false;
      try {
        reused = run(job, instance);
      } finally {
        if (!reused) {
          next = newInstance();
          next.catch(() => {});
        }
      }
    })
    .catch((err: unknown) => {
      post({
        type: 'result',
        ok: false,
        failure: 'exception',
        message: `evaluator failed: ${(err as Error).message}`,
        consoleTruncated,
      });
    });
});
