/**
 * Runs grep's regular expression in a worker thread. A JavaScript regex cannot
 * be interrupted, and a pattern like /(a+)+$/ can backtrack for hours on a
 * short line; on the main thread that would freeze the whole gateway. In a
 * worker it only costs the worker, which is terminated when the call ends
 * (timeout, cancel, disconnect).
 */
import { Worker } from 'node:worker_threads';
import { ToolError } from '../../../engine/index.js';

export interface LineMatch {
  line: number;
  text: string;
}

/** Longest line text returned per match; longer lines are cut around the match. */
export const MAX_LINE_TEXT = 400;

// Plain JavaScript, evaluated in the worker (so it runs the same from src/ under the tests and from dist/).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const regex = new RegExp(workerData.pattern, workerData.flags);
const MAX = ${MAX_LINE_TEXT};
function excerpt(line, at) {
  if (line.length <= MAX) return line;
  const from = Math.max(0, Math.min(at - 100, line.length - MAX));
  return (from > 0 ? '\u2026' : '') + line.slice(from, from + MAX) + (from + MAX < line.length ? '\u2026' : '');
}
parentPort.on('message', ({ text, room }) => {
  const matches = [];
  let more = false;
  const lines = text.split('\\n');
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i];
    if (line.endsWith('\\r')) line = line.slice(0, -1);
    const m = regex.exec(line);
    if (!m) continue;
    if (matches.length >= room) { more = true; break; }
    matches.push({ line: i + 1, text: excerpt(line, m.index) });
  }
  parentPort.postMessage({ matches, more });
});
`;

export class LineMatcher {
  private readonly worker: Worker;
  private failure: Error | undefined;
  private pending:
    | { resolve: (v: { matches: LineMatch[]; more: boolean }) => void; reject: (e: Error) => void }
    | undefined;
  private readonly onAbort = () => this.fail(new ToolError('grep was stopped'));

  /** `pattern` must already be known to compile (checked by the caller for a clear error). */
  constructor(
    pattern: string,
    flags: string,
    private readonly signal: AbortSignal,
  ) {
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { pattern, flags },
      resourceLimits: { maxOldGenerationSizeMb: 256 },
      stdout: true,
      stderr: true,
    });
    this.worker.on('message', (msg: { matches: LineMatch[]; more: boolean }) => {
      const p = this.pending;
      this.pending = undefined;
      p?.resolve(msg);
    });
    this.worker.on('error', (err) => this.fail(new ToolError(`grep failed: ${err.message}`)));
    this.worker.on('exit', () => this.fail(new ToolError('grep worker ended unexpectedly')));
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Match every line of `text`; at most `room` matches, `more` when there were others. */
  match(text: string, room: number): Promise<{ matches: LineMatch[]; more: boolean }> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.worker.postMessage({ text, room });
    });
  }

  private fail(err: Error): void {
    this.failure ??= err;
    const p = this.pending;
    this.pending = undefined;
    p?.reject(this.failure);
    void this.worker.terminate();
  }

  /** Stop the worker (always call, also after a failure). */
  async close(): Promise<void> {
    this.signal.removeEventListener('abort', this.onAbort);
    this.failure ??= new ToolError('grep is finished');
    await this.worker.terminate();
  }
}
