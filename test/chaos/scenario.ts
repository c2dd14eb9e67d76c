/**
 * One variant of the chaos run: the stage started, the three kinds of
 * traffic and the faults run side by side until the run's time is up, the
 * calls still open followed to their end (bounded by `answerWithinMs`), then
 * every process stopped (on failure too) and the books closed.
 */
import { jsonCalls } from './json-calls.js';
import { callResources } from './call-resources.js';
import { runFaults, seeded, type FaultLog } from './faults.js';
import { Ledger } from './ledger.js';
import type { VariantResult } from './report.js';
import { startStage } from './stage.js';
import type { Traffic } from './traffic.js';
import { transportSessions } from './transport-sessions.js';

export interface VariantOptions {
  name: string;
  persist: boolean;
  seconds: number;
  seed: number;
  instances: number;
  leaseS: number;
  killEveryS: number;
}

export async function runVariant(o: VariantOptions): Promise<VariantResult> {
  const stage = await startStage({ persist: o.persist, instances: o.instances, leaseS: o.leaseS });
  const ledger = new Ledger();
  let faults: FaultLog | undefined;
  try {
    const random = seeded(o.seed);
    const t0 = Date.now();
    ledger.t0 = t0;
    const traffic: Traffic = {
      url: stage.url,
      ledger,
      untilMs: t0 + o.seconds * 1000,
      // The owner's lease lapses, a sweep (every half lease, on an instance whose Redis link has been up a whole lease) fails its calls.
      answerWithinMs: o.leaseS * 4_000 + 10_000,
      random: seeded(o.seed + 1),
      at: (ms) => `+${((ms - t0) / 1000).toFixed(1)} s`,
    };
    const load = Promise.allSettled([jsonCalls(traffic, 2), callResources(traffic, 2), transportSessions(traffic, 2)]);
    let faultError: unknown;
    try {
      faults = await runFaults(
        stage,
        {
          t0,
          untilMs: traffic.untilMs,
          killEveryMs: o.killEveryS * 1000,
          redisAtMs: Math.round(o.seconds * 450),
          redisDownMs: 2_000,
          instanceDownMs: 1_000,
          random,
        },
        (at, pid) => {
          ledger.killedAt.push(at);
          ledger.killedPids.set(pid, at);
        },
      );
    } catch (err) {
      faultError = err;
    }
    // A fault that could not be made ends the traffic too (no new calls); what is open is followed to its end.
    traffic.untilMs = Math.min(traffic.untilMs, Date.now());
    const settled = await load;
    if (faultError) throw faultError;
    for (const r of settled) if (r.status === 'rejected') throw r.reason;
  } finally {
    await stage.dispose();
  }
  const log = await gatewayLog(stage.all);
  return {
    name: o.name,
    persistence: o.persist ? '`appendonly yes`' : 'no persistence',
    seconds: o.seconds,
    ledger,
    faults: faults!,
    gatewayLog: log.counts,
    gatewayLines: log.lines,
  };
}

/** Warnings and errors in the instances' JSON log lines (stderr): counted by message, and the lines themselves. */
async function gatewayLog(
  instances: { proc: PromiseLike<{ stderr?: unknown }> }[],
): Promise<{ counts: Map<string, number>; lines: string[] }> {
  const counts = new Map<string, number>();
  const lines: string[] = [];
  for (const instance of instances) {
    const { stderr } = await instance.proc;
    for (const line of String(stderr ?? '').split('\n')) {
      let entry: { level?: number; msg?: string } | undefined;
      try {
        entry = JSON.parse(line);
      } catch {
        if (line.trim()) counts.set(line.slice(0, 200), (counts.get(line.slice(0, 200)) ?? 0) + 1);
        continue;
      }
      if ((entry?.level ?? 0) >= 40) {
        const msg = entry?.msg ?? '(no msg)';
        counts.set(msg, (counts.get(msg) ?? 0) + 1);
        lines.push(line);
      }
    }
  }
  return { counts, lines };
}
