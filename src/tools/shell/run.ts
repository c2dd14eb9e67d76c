/**
 * Runs one process to completion with bounded output, streaming its output
 * line by line, and kills it on timeout, abort or output flood. The process
 * starts its own process group and the whole group is killed: with bwrap,
 * that group holds bwrap and its PID-1 child (whose death tears the sandbox's
 * PID namespace down), even in the instant before that child could arm
 * --die-with-parent; unconfined, it holds whatever did not leave the group.
 */
import { spawn } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';

export type StreamName = 'stdout' | 'stderr';

export interface RunOptions {
  file: string;
  args: readonly string[];
  /** Environment of the spawned process itself. */
  env: Record<string, string>;
  /** Host working directory of the spawned process. */
  cwd: string;
  /** Written to stdin, which is then closed; without it stdin is /dev/null. */
  stdin?: string;
  /** Bytes of stdout + stderr kept; beyond it output is dropped, and the process is killed after as much again. */
  maxOutputBytes: number;
  timeoutMs: number;
  signal: AbortSignal;
  /** Called with each complete line (or long chunk) while the process runs; null to skip line splitting. */
  onLine: ((stream: StreamName, line: string) => void) | null;
}

export interface RunResult {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  signal: string | null;
  truncated: boolean;
  /** Why the gateway killed the process, if it did. */
  killed: 'timeout' | 'abort' | 'output' | null;
  /** The process could not be started at all (e.g. spawn failed). */
  spawnError: Error | null;
}

/** Lines longer than this are streamed in pieces. */
const MAX_LINE = 16 * 1024;
/** After the process exited, how long its pipes may stay open (held by an escaped child) before they are cut. */
const DRAIN_MS = 2000;

export function runProcess(o: RunOptions): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(o.file, o.args, {
      cwd: o.cwd,
      env: o.env,
      stdio: [o.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      detached: true, // own process group, so the group can be killed
    });
    const kept: Record<StreamName, Buffer[]> = { stdout: [], stderr: [] };
    let keptBytes = 0;
    let droppedBytes = 0;
    let killed: RunResult['killed'] = null;
    let spawnError: Error | null = null;
    let exit: { code: number | null; signal: string | null } | undefined;
    let done = false;

    const kill = (why: NonNullable<RunResult['killed']>) => {
      killed ??= why;
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };

    const lines = (name: StreamName) => {
      if (!o.onLine) return { push: (_b: Buffer) => {}, end: () => {} };
      const onLine = o.onLine;
      const decoder = new StringDecoder('utf8');
      let pending = '';
      return {
        push(b: Buffer) {
          pending += decoder.write(b);
          let nl: number;
          while ((nl = pending.indexOf('\n')) >= 0) {
            onLine(name, pending.slice(0, nl));
            pending = pending.slice(nl + 1);
          }
          while (pending.length > MAX_LINE) {
            onLine(name, pending.slice(0, MAX_LINE));
            pending = pending.slice(MAX_LINE);
          }
        },
        end() {
          pending += decoder.end();
          if (pending) onLine(name, pending);
          pending = '';
        },
      };
    };

    const collect = (name: StreamName) => {
      const stream = child[name]!;
      const liner = lines(name);
      stream.on('data', (chunk: Buffer) => {
        const room = o.maxOutputBytes - keptBytes;
        if (room > 0) {
          const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
          kept[name].push(part);
          keptBytes += part.length;
          liner.push(part);
        }
        if (chunk.length > room) {
          droppedBytes += chunk.length - Math.max(0, room);
          if (droppedBytes > o.maxOutputBytes) kill('output');
        }
      });
      stream.on('end', () => liner.end());
      stream.on('error', () => {});
    };
    collect('stdout');
    collect('stderr');

    if (o.stdin !== undefined && child.stdin) {
      child.stdin.on('error', () => {}); // EPIPE when the command does not read its input
      child.stdin.end(o.stdin);
    }

    const timer = setTimeout(() => kill('timeout'), o.timeoutMs);
    const onAbort = () => kill('abort');
    if (o.signal.aborted) onAbort();
    else o.signal.addEventListener('abort', onAbort, { once: true });

    let drainTimer: NodeJS.Timeout | undefined;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(drainTimer);
      o.signal.removeEventListener('abort', onAbort);
      // Whatever the command left behind in its group goes with it.
      if (child.pid) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // none left
        }
      }
      resolve({
        stdout: decode(kept.stdout),
        stderr: decode(kept.stderr),
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? null,
        truncated: droppedBytes > 0,
        killed,
        spawnError,
      });
    };

    child.on('error', (err) => {
      spawnError = err;
      finish();
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // Pipes normally close right after; a process that escaped with them open must not hold the call.
      drainTimer = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish();
      }, DRAIN_MS);
    });
    child.on('close', finish);
  });
}

function decode(chunks: Buffer[]): string {
  // A cut in the middle of a UTF-8 sequence becomes one U+FFFD, not an error.
  return Buffer.concat(chunks).toString('utf8');
}
