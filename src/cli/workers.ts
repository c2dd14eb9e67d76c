/**
 * `a2e-gateway serve --workers N`: N gateway processes on one machine, one
 * port (Node's cluster, with the workers accepting from the shared socket
 * themselves: SCHED_NONE. Round-robin through the primary costs an IPC hop per
 * connection, and a connection handed to a worker as it dies hangs forever —
 * from the shared socket, another worker takes it). The primary runs no gateway; it starts the workers,
 * restarts one that dies (with backoff), forwards SIGHUP, and on SIGTERM or
 * SIGINT lets every worker drain and exits when they have. Workers share
 * state through the Redis store, which is why more than one needs it.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../engine/index.js';

/** What a worker tells the primary once it listens. */
interface ListeningMessage {
  a2e: 'listening';
  url: string;
}

const isListening = (m: unknown): m is ListeningMessage => (m as ListeningMessage | null)?.a2e === 'listening';

/** In a worker: tell the primary the gateway listens (the primary prints the one listening line). */
export function reportListening(url: string): void {
  process.send?.({ a2e: 'listening', url } satisfies ListeningMessage);
}

export const isWorker = (): boolean => cluster.isWorker;

export interface PrimaryOptions {
  count: number;
  logger: Logger;
  /** Where the listening line goes (stdout). */
  out: NodeJS.WritableStream;
}

/** A worker that lived at least this long resets the restart backoff, ms. */
const STABLE_MS = 30_000;
const MAX_BACKOFF_MS = 30_000;

/**
 * Run the primary until it is told to stop. Resolves with the exit code:
 * 0 after a drain, or the first worker's code when none ever listened
 * (a config or bind error: the worker printed why).
 */
export function runPrimary(options: PrimaryOptions): Promise<number> {
  const { count, logger } = options;
  const startedAt = new Map<Worker, number>();
  let listening = false;
  let stopping = false;
  let crashes = 0;

  cluster.schedulingPolicy = cluster.SCHED_NONE;
  return new Promise((resolve) => {
    const fork = () => {
      const worker = cluster.fork();
      startedAt.set(worker, Date.now());
      worker.on('message', (m: unknown) => {
        if (!isListening(m) || listening) return;
        listening = true;
        options.out.write(`a2e-gateway listening on ${m.url}\n`);
        logger.info({ url: m.url, workers: count, pid: process.pid }, 'gateway started with several worker processes');
      });
    };

    cluster.on('exit', (worker, code, signal) => {
      const lived = Date.now() - (startedAt.get(worker) ?? Date.now());
      startedAt.delete(worker);
      if (stopping) {
        if (startedAt.size === 0) resolve(0);
        return;
      }
      if (!listening) {
        // It never started (the worker printed why): the others would fail alike.
        stopping = true;
        for (const w of startedAt.keys()) w.process.kill('SIGTERM');
        if (startedAt.size === 0) resolve(code || 1);
        else cluster.on('exit', () => startedAt.size === 0 && resolve(code || 1));
        return;
      }
      crashes = lived >= STABLE_MS ? 1 : crashes + 1;
      const delay = Math.min(MAX_BACKOFF_MS, 250 * 2 ** (crashes - 1));
      logger.error(
        { worker_pid: worker.process.pid, code, signal, restart_in_ms: delay },
        'a worker process died; starting another',
      );
      setTimeout(() => stopping || fork(), delay).unref();
    });

    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        logger.warn({ signal }, 'second signal: killing the workers');
        for (const w of startedAt.keys()) w.process.kill('SIGKILL');
        process.exit(1);
      }
      stopping = true;
      logger.info({ signal, workers: startedAt.size }, 'shutting down: the workers drain their calls');
      if (startedAt.size === 0) resolve(0);
      // A terminal's Ctrl-C already reached the workers (same process group); a supervisor's SIGTERM did not.
      for (const w of startedAt.keys()) w.process.kill('SIGTERM');
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    process.on('SIGHUP', () => {
      for (const w of startedAt.keys()) w.process.kill('SIGHUP');
    });

    for (let i = 0; i < count; i++) fork();
  });
}
