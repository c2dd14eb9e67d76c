/** `server.workers`: how many gateway processes `serve` runs on one machine. */
import { availableParallelism } from 'node:os';
import { z } from 'zod';

/** A count, or "auto" (one per CPU). More than one needs `store.kind: redis`. */
export const Workers = z.union([z.int().min(1).max(256), z.literal('auto')]);
export type Workers = z.output<typeof Workers>;

/** The number of processes `workers` asks for. */
export function workerCount(workers: Workers): number {
  return workers === 'auto' ? availableParallelism() : workers;
}

/** Parse `--workers` / A2E_WORKERS: a positive integer or "auto". */
export function parseWorkers(value: string, source: string): Workers {
  if (value === 'auto') return 'auto';
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 256)
    throw new Error(`${source} must be a number of processes from 1 to 256, or "auto" (one per CPU); got "${value}"`);
  return n;
}
