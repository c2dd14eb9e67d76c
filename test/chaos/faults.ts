/**
 * The faults of a chaos run, one at a time on one timeline: every
 * `killEveryMs` one gateway instance (chosen at random) is SIGKILLed and
 * started again on its port a second later; once, at `redisAtMs`, the
 * redis-server is stopped and started again (its data kept or not, as the
 * variant's persistence decides). Ends by itself at `untilMs`, with every
 * instance and Redis up.
 */
import type { Stage } from './stage.js';

export interface FaultPlan {
  /** When the run started (Date.now()). */
  t0: number;
  /** No new fault after this (Date.now() scale). */
  untilMs: number;
  killEveryMs: number;
  /** Redis restart, ms after t0. */
  redisAtMs: number;
  /** How long Redis stays down. */
  redisDownMs: number;
  /** How long a killed instance stays down before it is started again. */
  instanceDownMs: number;
  random: () => number;
}

export interface FaultLog {
  kills: number;
  /** ms each restarted instance took to listen again. */
  restartMs: number[];
  redisRestarts: number;
  /** Lines like "+12.0 s SIGKILL instance 2 (pid 1234)". */
  timeline: string[];
}

export async function runFaults(
  stage: Stage,
  plan: FaultPlan,
  onKill: (at: number, pid: number) => void,
): Promise<FaultLog> {
  const redis = stage.cluster.redis;
  const log: FaultLog = { kills: 0, restartMs: [], redisRestarts: 0, timeline: [] };
  const at = () => `+${((Date.now() - plan.t0) / 1000).toFixed(1)} s`;
  let nextKill = plan.t0 + plan.killEveryMs;
  let redisDone = false;
  for (;;) {
    const redisDue = redisDone ? Infinity : plan.t0 + plan.redisAtMs;
    const next = Math.min(nextKill, redisDue);
    if (next >= plan.untilMs) break;
    await sleep(next - Date.now());
    if (next === redisDue) {
      redisDone = true;
      log.timeline.push(`${at()} redis-server stopped`);
      await redis.stop();
      await sleep(plan.redisDownMs);
      await redis.start();
      log.redisRestarts++;
      log.timeline.push(`${at()} redis-server started again`);
      continue;
    }
    nextKill += plan.killEveryMs;
    const i = Math.floor(plan.random() * stage.slots.length);
    const pid = stage.slots[i]!.pid;
    await stage.kill(i);
    onKill(Date.now(), pid);
    log.kills++;
    log.timeline.push(`${at()} SIGKILL instance ${i} (pid ${pid})`);
    await sleep(plan.instanceDownMs);
    const began = Date.now();
    await stage.restart(i);
    log.restartMs.push(Date.now() - began);
    log.timeline.push(`${at()} instance ${i} listening again (pid ${stage.slots[i]!.pid})`);
  }
  return log;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** A small seeded generator (mulberry32), so a run's choices can be replayed with its seed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
