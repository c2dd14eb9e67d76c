/** Messages between the eval plugin and its worker thread. */

/** Fixed for a worker's life (workerData): the worker prepares its runtime from it before any code arrives. */
export interface EvalSetup {
  memoryBytes: number;
  stackBytes: number;
  maxConsoleBytes: number;
  /** The QuickJS WebAssembly module, compiled once by the plugin (instantiated afresh in each worker). */
  wasmModule: WebAssembly.Module;
  /**
   * Set when the module records its lowest stack pointer (stack-mark.ts): how far below it a frame that does
   * not move it can reach. A reset then zeroes the stack down to there instead of all an evaluation could reach.
   */
  stackLeafReach: number | undefined;
  /**
   * Compare the whole memory with the new instance's after each reset and fail every later evaluation if
   * a byte differs (A2E_EVAL_CHECK_RESET=1; for tests: it costs a full pass over the memory per evaluation).
   */
  checkReset: boolean;
}

/** The one piece of code a worker runs (its only message). */
export interface EvalJob {
  code: string;
  /** Epoch ms after which the interpreter is interrupted. */
  deadline: number;
}

export type EvalFailure = 'timeout' | 'memory' | 'stack' | 'exception' | 'result';

export type WorkerMessage =
  | { type: 'log'; level: 'info' | 'warn' | 'error' | 'debug'; message: string }
  | { type: 'result'; ok: true; value: unknown; valueType: string; consoleTruncated: boolean }
  | { type: 'result'; ok: false; failure: EvalFailure; message: string; consoleTruncated: boolean };
