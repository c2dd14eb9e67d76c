/**
 * The chaos run (issue 51): three gateway processes on one redis-server
 * behind nginx, one instance SIGKILLed every few seconds and restarted, one
 * Redis restart, while JSON calls, call resources (with Last-Event-ID
 * resumes) and A2E transport sessions run; in a volatile and an
 * `appendonly yes` variant. It passes when no call is lost, no event or frame
 * is duplicated, missing or out of order, and every error a client saw is
 * retryable and says what happened.
 *
 *   npm run chaos                        long form: 120 s per variant, writes CHAOS.md
 *   CHAOS_SECONDS=25 npx vitest run --config test/chaos/vitest.config.ts
 *                                        short form (CI): report in test-artifacts/chaos/CHAOS.md
 * CHAOS_SEED replays a run's choices; CHAOS_VARIANTS=volatile (or appendonly) runs one variant.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { renderReport, verdict, type RunInfo, type VariantResult } from './report.js';
import { runVariant } from './scenario.js';
import { INSTANCES, KILL_EVERY_S, LEASE_S, LONG_SECONDS, VARIANTS as ALL_VARIANTS } from './settings.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SECONDS = Number(process.env.CHAOS_SECONDS ?? LONG_SECONDS);
const LONG = SECONDS >= LONG_SECONDS;
const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);
const VARIANTS = ALL_VARIANTS.filter(
  (v) => !process.env.CHAOS_VARIANTS || process.env.CHAOS_VARIANTS.split(',').includes(v.name),
);
if (!(SECONDS >= 10))
  throw new Error(`CHAOS_SECONDS must be a number of seconds ≥ 10 (got "${process.env.CHAOS_SECONDS}")`);
if (VARIANTS.length === 0)
  throw new Error(
    `CHAOS_VARIANTS names no variant (got "${process.env.CHAOS_VARIANTS}"): use volatile, appendonly or both`,
  );

const results: VariantResult[] = [];
const run: RunInfo = {
  seed: SEED,
  commit: commit(),
  startedAt: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  form: LONG ? 'long' : 'short',
  instances: INSTANCES,
  leaseS: LEASE_S,
  killEveryS: KILL_EVERY_S,
};
const reportPath = LONG ? join(ROOT, 'CHAOS.md') : join(ROOT, 'test-artifacts', 'chaos', 'CHAOS.md');

afterAll(async () => {
  if (results.length === 0) return;
  await mkdir(dirname(reportPath), { recursive: true });
  await writeFile(reportPath, renderReport(run, results));
  console.log(`chaos report: ${reportPath}`);
});

describe(`chaos run, ${SECONDS} s per variant (seed ${SEED})`, () => {
  for (const v of VARIANTS) {
    it(`${v.name}: nothing lost, nothing out of order, every error retryable and saying what happened`, async () => {
      const result = await runVariant({
        ...v,
        seconds: SECONDS,
        seed: SEED,
        instances: INSTANCES,
        leaseS: LEASE_S,
        killEveryS: KILL_EVERY_S,
      });
      results.push(result);
      const l = result.ledger;
      // The run did what it claims: faults happened and every door carried calls.
      expect(result.faults.kills).toBeGreaterThan(0);
      expect(result.faults.redisRestarts).toBe(1);
      for (const door of Object.values(l.doors)) expect(door.started).toBeGreaterThan(0);
      expect(l.events.resumes).toBeGreaterThan(0);
      expect(
        verdict(result).reasons,
        JSON.stringify(
          {
            lost: DOORS(l),
            errors: l.unacceptableErrors.slice(0, 5),
            notes: [...l.events.notes, ...l.frames.notes].slice(0, 5),
          },
          null,
          1,
        ),
      ).toEqual([]);
    });
  }
});

const DOORS = (l: VariantResult['ledger']) =>
  Object.fromEntries(Object.entries(l.doors).map(([k, t]) => [k, t.lostNotes.slice(0, 3).map((n) => n.note)]));

function commit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: ROOT,
      encoding: 'utf8',
    }).trim();
    return dirty ? `${head} (with uncommitted changes)` : head;
  } catch {
    return 'unknown';
  }
}
