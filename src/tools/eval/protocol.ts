/** Messages between the eval plugin and its worker thread. */

export interface EvalJob {
  code: string;
  memoryBytes: number;
  stackBytes: number;
  /** Epoch ms after which the interpreter is interrupted. */
  deadline: number;
  maxConsoleBytes: number;
}

export type EvalFailure = 'timeout' | 'memory' | 'stack' | 'exception' | 'result';

export type WorkerMessage =
  | { type: 'log'; level: 'info' | 'warn' | 'error' | 'debug'; message: string }
  | { type: 'result'; ok: true; value: unknown; valueType: string; consoleTruncated: boolean }
  | { type: 'result'; ok: false; failure: EvalFailure; message: string; consoleTruncated: boolean };
