/**
 * Messages between the gateway and the privilege-separated file tools worker (worker.ts, worker-main.ts):
 * ToWorker on the IPC channel, FromWorker on a pipe of their own (answer-stream.ts).
 */
import type { FsLimits } from '../dispatch.js';

/** The descriptor number the worker finds the workspace root at (stdio slot 4 of the fork). */
export const ROOT_FD = 4;

/** The descriptor the worker writes its messages to, framed (answer-stream.ts): stdio slot 5 of the fork, a pipe. */
export const ANSWER_FD = 5;

export type ToWorker =
  | { type: 'init'; root: string; realRoot: string; limits: FsLimits; quotaLimit: number | null }
  | {
      type: 'call';
      id: number;
      name: string;
      args: Record<string, unknown>;
      used: number | null;
      streaming: boolean;
      /** The quota now, when it may have changed since init (a principal's token quota); else init's. */
      quotaLimit?: number | null;
    }
  | { type: 'cancel'; id: number }
  /** The call's readers have caught up with its events (the answer to a `pace`). */
  | { type: 'paced'; id: number };

/**
 * A tool's answer: a ToolOutput's fields (its data as JSON text, which the gateway answers with as it is:
 * utils/json-text.ts), a plain value, a ToolError's fields, or an unexpected failure. The JSON text is a
 * string where the worker writes it (`Answer`) and its UTF-8 bytes where the gateway reads it
 * (`Answer<Uint8Array>`, answer-stream.ts).
 */
export type Answer<Json extends string | Uint8Array = string> =
  | { kind: 'output'; json: Json; summary: unknown; exitCode: number | null; truncated: boolean }
  | { kind: 'value'; value: unknown }
  | { kind: 'tool_error'; message: string; data: unknown; exitCode: number | null; truncated: boolean }
  | { kind: 'failure'; message: string };

/** What the worker sends (its JSON text a string there); `FromWorker<Uint8Array>` as the gateway reads it. */
export type FromWorker<Json extends string | Uint8Array = string> =
  | { type: 'ready' }
  | { type: 'event'; id: number; kind: string; data: unknown }
  /** The call awaits `eventsTaken()`: answered with `paced` once its readers have caught up. */
  | { type: 'pace'; id: number }
  | { type: 'done'; id: number; answer: Answer<Json>; used: number | null };
