/**
 * The shared admission's client side (RedisSessions against a real
 * redis-server): a slot given back reaches Redis before any later admission
 * of its session, even one started in the same turn of the event loop (the
 * release goes with that admission's script), and a Redis that stops
 * answering (SIGSTOP) fails an admission as the retryable `unavailable`
 * error within store.command_timeout_ms instead of hanging the call, and
 * gives back the slot if Redis runs the script later.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startRedis, type RedisServer } from './helpers/redis.js';
import { RedisConnection, RedisSessions, type RedisSessionOptions } from '../src/store/redis/index.js';
import { GatewayError, type Admitted } from '../src/engine/index.js';
import { createLogger } from '../src/logger.js';

const OPTIONS: RedisSessionOptions = { ttlS: 600, maxParallel: 1, maxSessions: 0, maxPerOwner: 0, ratePerS: 0, rateBurst: 1, leaseS: 10 };
const TIMEOUT_MS = 400;

let redis: RedisServer;
let connection: RedisConnection;
let sessions: RedisSessions;
beforeAll(async () => {
  redis = await startRedis();
  connection = new RedisConnection({ url: redis.url, prefix: 'admission-test:', commandTimeoutMs: TIMEOUT_MS, logger: createLogger('silent') });
  expect(await connection.connect()).toBe(true);
  sessions = new RedisSessions(connection, OPTIONS, TIMEOUT_MS);
});
afterAll(async () => {
  await connection?.close();
  await redis?.dispose();
});

async function openSession(id: string): Promise<void> {
  const now = Date.now();
  expect(await sessions.open({ id, agentId: 't', capabilities: new Set(['tools']), principal: 'alice', createdAt: now, lastSeen: now, owner: 'principal:alice' })).toBe(true);
}

function released(admitted: Admitted | undefined): () => void {
  if (!admitted || 'refused' in admitted) throw new Error(`not admitted: ${admitted && 'refused' in admitted ? admitted.refused.message : 'unknown session'}`);
  return admitted.release;
}

test('with max_parallel 1, a call started in the same turn as the last one ended is admitted, 200 times running', async () => {
  const id = 'a'.repeat(32);
  await openSession(id);
  let release = released((await sessions.admitCall('alice', id))?.admitted);
  for (let i = 0; i < 200; i++) {
    release(); // not flushed yet: the next admission carries it
    release = released((await sessions.admitCall('alice', id))?.admitted);
  }
  // The limit still holds: a second call while one runs is refused.
  const second = (await sessions.admitCall('alice', id))?.admitted;
  expect(second && 'refused' in second && second.refused.message).toMatch(/already runs 1 calls \(its max_parallel\)/);
  release();
  // The last release is flushed on its own (no admission follows it).
  await expect.poll(() => connection.client.zCard(connection.key('session-calls', id)), { timeout: 5_000 }).toBe(0);
});

test('a Redis that stops answering fails the admission as retryable unavailable within store.command_timeout_ms', async () => {
  const id = 'b'.repeat(32);
  await openSession(id);
  const info = await connection.client.info('server');
  const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
  expect(pid).toBeGreaterThan(0);
  process.kill(pid, 'SIGSTOP');
  try {
    const started = performance.now();
    const err = await sessions.admitCall('alice', id).catch((e: unknown) => e);
    const waited = performance.now() - started;
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe('unavailable');
    expect((err as GatewayError).retryable).toBe(true);
    expect((err as GatewayError).message).toMatch(/shared store \(Redis\) is unavailable, so admitting the call cannot be done/);
    expect(waited).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(waited).toBeLessThan(TIMEOUT_MS * 2 + 2_000); // the deadline is checked every timeout / 4
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  // Redis answers again: so does the admission (the session is still there), and the slot the timed-out
  // script took once Redis ran it was given back (max_parallel is 1).
  await expect.poll(() => connection.client.zCard(connection.key('session-calls', id)), { timeout: 5_000 }).toBe(0);
  released((await sessions.admitCall('alice', id))?.admitted)();
});
