/**
 * Runs one process to completion with bounded output, streaming its output
 * line by line, and kills it on timeout, abort or output flood. The process
 * starts its own process group and the whole group is killed: with bwrap,
 * that group holds bwrap and its PID-1 child (whose death tears the sandbox's
 * PID namespace down), even in the instant before that child could arm
 * --die-with-parent; unconfined, it holds whatever did not leave the group.
 *
 * Back-pressure: lines are passed on in small bursts, and while their readers
 * are behind the pipe is not read, so the command blocks on a full pipe
 * instead of having its lines dropped. SIGKILL still ends a blocked process;
 * a stopped call stops the holding so the pipes drain and close.
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
  /** Back-pressure for `onLine`'s readers: awaited between bursts of lines; the pipe is not read meanwhile. */
  linesTaken?: () => Promise<void>;
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
/**
 * Lines passed on between two waits for their readers, in bytes, counting each line as its length plus
 * LINE_COST (a log event's envelope). Well under a quarter of the smallest `limits.call_events_bytes` (64 KiB),
 * so a burst never pushes a reader that was caught up past what the call keeps.
 */
const BURST_BYTES = 12 * 1024;
const LINE_COST = 1024;

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
    /** Pipes not read while their lines' readers catch up. */
    const held = new Set<NodeJS.ReadableStream>();
    const stopped = () => killed === 'abort';

    const kill = (why: NonNullable<RunResult['killed']>) => {
      killed ??= why;
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      // A stopped call's lines have no reader left: read what remains at once, so the pipes close. (After a
      // timeout or flood kill the call goes on, and its last lines still wait for their reader.)
      if (why === 'abort') {
        for (const stream of held) stream.resume();
        held.clear();
      }
    };

    /** Lines still being passed on, paced; the result waits for them. */
    const passing = new Set<Promise<void>>();

    const collect = (name: StreamName) => {
      const stream = child[name]!;
      const onLine = o.onLine;
      const liner = onLine && lineSplitter();
      // Chunks' lines not passed on yet, in order. Node resumes a child's pipes itself when the child exits, so
      // chunks can still arrive while the pipe is held: they queue behind the ones being passed on.
      const queued: string[][] = [];
      let pacing = false;

      /** Pass a chunk's lines on; with back-pressure, the pipe is not read until their readers have caught up. */
      const passOn = (chunkLines: string[]) => {
        const taken = o.linesTaken;
        if (!taken || stopped()) {
          for (const line of chunkLines) onLine!(name, line);
          return;
        }
        queued.push(chunkLines);
        stream.pause();
        held.add(stream);
        if (pacing) return;
        pacing = true;
        const run = (async () => {
          try {
            let burst = 0;
            while (queued.length > 0) {
              for (const line of queued.shift()!) {
                if (stopped()) return;
                onLine!(name, line);
                burst += line.length + LINE_COST;
                if (burst >= BURST_BYTES) {
                  burst = 0;
                  await taken();
                }
              }
              if (queued.length === 0) await taken();
            }
          } finally {
            // In the same turn as the last check of the queue: a chunk arriving later starts a new run.
            pacing = false;
            queued.length = 0; // not empty only after a stop
            if (held.delete(stream)) stream.resume(); // else a stop let it go already
          }
        })();
        passing.add(run);
        void run.finally(() => passing.delete(run));
      };

      stream.on('data', (chunk: Buffer) => {
        const room = o.maxOutputBytes - keptBytes;
        if (room > 0) {
          const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
          kept[name].push(part);
          keptBytes += part.length;
          if (liner) passOn(liner.split(part));
        }
        if (chunk.length > room) {
          droppedBytes += chunk.length - Math.max(0, room);
          if (droppedBytes > o.maxOutputBytes) kill('output');
        }
      });
      stream.on('end', () => {
        const last = liner?.end();
        if (last) passOn([last]);
      });
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
      const result: RunResult = {
        stdout: decode(kept.stdout),
        stderr: decode(kept.stderr),
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? null,
        truncated: droppedBytes > 0,
        killed,
        spawnError,
      };
      // The last lines may still be waiting for their readers (a stop ends that at once).
      if (passing.size === 0) resolve(result);
      else void Promise.all(passing).then(() => resolve(result));
    };

    child.on('error', (err) => {
      spawnError = err;
      finish();
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // Pipes normally close right after; a process that escaped with them open must not hold the call.
      // A pipe held for a slow reader is not such a pipe: its last lines are still to be passed on (the call's
      // own deadline bounds that: the call then ends, and so does the holding).
      const cut = () => {
        if (held.size > 0) {
          drainTimer = setTimeout(cut, DRAIN_MS);
          return;
        }
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish();
      };
      drainTimer = setTimeout(cut, DRAIN_MS);
    });
    child.on('close', finish);
  });
}

/** Splits a stream's bytes into lines (long ones in pieces of MAX_LINE), across chunk boundaries. */
function lineSplitter() {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  return {
    split(b: Buffer): string[] {
      pending += decoder.write(b);
      const out: string[] = [];
      let start = 0;
      for (let nl: number; (nl = pending.indexOf('\n', start)) >= 0; start = nl + 1) out.push(pending.slice(start, nl));
      pending = pending.slice(start);
      while (pending.length > MAX_LINE) {
        out.push(pending.slice(0, MAX_LINE));
        pending = pending.slice(MAX_LINE);
      }
      return out;
    },
    /** What is left after the last newline, at the end of the stream. */
    end(): string {
      const last = pending + decoder.end();
      pending = '';
      return last;
    },
  };
}

function decode(chunks: Buffer[]): string {
  // A cut in the middle of a UTF-8 sequence becomes one U+FFFD, not an error.
  return Buffer.concat(chunks).toString('utf8');
}
