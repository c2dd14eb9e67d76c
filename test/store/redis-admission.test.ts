/**
 * The shared admission's client side (RedisSessions against a real
 * redis-server): a slot given back reaches Redis before any later admission
 * of its session, even one started in the same turn of the event loop (the
 * release goes with that admission's script), and a Redis that stops
 * answering (SIGSTOP) fails an admission as the retryable `unavailable`
 * error within store.command_timeout_ms instead of hanging the call, and
 * gives back the slot if Redis runs the script later. Admissions asked in one
 * turn go to Redis as one script: on two instances at once, max_parallel and
 * the rate limit still hold exactly, and Redis going away with a batch out
 * fails every call in it with the retryable error.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { RedisConnection, RedisSessions, type RedisSessionOptions } from '../../src/store/redis/index.js';
import { GatewayError, type Admitted } from '../../src/engine/index.js';
import { createLogger } from '../../src/logger.js';

const OPTIONS: RedisSessionOptions = {
  ttlS: 600,
  maxParallel: 1,
  maxSessions: 0,
  maxPerOwner: 0,
  ratePerS: 0,
  rateBurst: 1,
  leaseS: 10,
};
const TIMEOUT_MS = 400;

let redis: RedisServer;
let connection: RedisConnection;
let sessions: RedisSessions;
beforeAll(async () => {
  redis = await startRedis();
  connection = new RedisConnection({
    url: redis.url,
    prefix: 'admission-test:',
    commandTimeoutMs: TIMEOUT_MS,
    logger: createLogger('silent'),
  });
  expect(await connection.connect()).toBe(true);
  sessions = new RedisSessions(connection, OPTIONS, TIMEOUT_MS);
});
afterAll(async () => {
  await connection?.close();
  await redis?.dispose();
});

async function openSession(id: string, store: RedisSessions = sessions): Promise<void> {
  const now = Date.now();
  expect(
    await store.open({
      id,
      agentId: 't',
      capabilities: new Set(['tools']),
      principal: 'alice',
      createdAt: now,
      lastSeen: now,
      owner: 'principal:alice',
    }),
  ).toBe(true);
}

function released(admitted: Admitted | undefined): () => void {
  if (!admitted || 'refused' in admitted)
    throw new Error(
      `not admitted: ${admitted && 'refused' in admitted ? admitted.refused.message : 'unknown session'}`,
    );
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
    expect((err as GatewayError).message).toMatch(
      /shared store \(Redis\) is unavailable, so admitting the call cannot be done/,
    );
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

/** A second gateway instance on the same Redis (its own connection and admission batches). */
async function secondInstance(
  options: RedisSessionOptions,
): Promise<{ connection: RedisConnection; sessions: RedisSessions }> {
  const other = new RedisConnection({
    url: redis.url,
    prefix: 'admission-test:',
    commandTimeoutMs: TIMEOUT_MS,
    logger: createLogger('silent'),
  });
  expect(await other.connect()).toBe(true);
  return { connection: other, sessions: new RedisSessions(other, options, TIMEOUT_MS) };
}

test('many admissions asked in one turn on two instances: max_parallel and the rate limit hold exactly, refusals worded as before', async () => {
  const id = 'c'.repeat(32);
  await openSession(id);
  const options = { ...OPTIONS, maxParallel: 7 };
  const one = new RedisSessions(connection, options, TIMEOUT_MS);
  const two = await secondInstance(options);
  try {
    // 40 admissions asked in one turn, half on each instance: 7 admitted, 33 refused for max_parallel.
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 ? two.sessions : one).admitCall('alice', id)),
    );
    const admitted = outcomes.filter((o) => o && 'release' in o.admitted);
    const refused = outcomes.map((o) => o?.admitted).filter((a) => a && 'refused' in a);
    expect(admitted).toHaveLength(7);
    expect(refused).toHaveLength(33);
    for (const a of refused) {
      const err = (a as { refused: GatewayError }).refused;
      expect(err.code).toBe('rate_limited');
      expect(err.message).toBe('this session already runs 7 calls (its max_parallel); wait for one to finish');
    }
    for (const o of outcomes) expect(o?.session?.principal).toBe('alice');
    expect(await connection.client.zCard(connection.key('session-calls', id))).toBe(7);
    // Released in one turn, admitted again in the same turn: the releases go first, so 7 fit again, not 8.
    for (const o of admitted) (o!.admitted as { release: () => void }).release();
    const again = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? two.sessions : one).admitCall('alice', id)),
    );
    expect(again.filter((o) => o && 'release' in o.admitted)).toHaveLength(7);
    for (const o of again) if (o && 'release' in o.admitted) o.admitted.release();

    // The rate limit (burst 5, 1/s) across both instances, without a session: 5 admitted, the rest refused.
    const limited = { ...OPTIONS, ratePerS: 1, rateBurst: 5 };
    const a = new RedisSessions(connection, limited, TIMEOUT_MS);
    const b = new RedisSessions(two.connection, limited, TIMEOUT_MS);
    const rated = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? b : a).admitCall('bob', '')));
    const ok = rated.filter((o) => o && 'release' in o.admitted);
    const no = rated.map((o) => o?.admitted).filter((x) => x && 'refused' in x) as { refused: GatewayError }[];
    expect(ok).toHaveLength(5);
    expect(no).toHaveLength(7);
    for (const { refused } of no) {
      expect(refused.code).toBe('rate_limited');
      expect(refused.message).toBe('too many calls for token "bob" (limits.rate_per_s); retry after 1 s');
      expect(refused.retryable).toBe(true);
    }
    // An unknown session in the same batch as known ones: only it is undefined (nothing taken).
    const mixed = await Promise.all([
      one.admitCall('alice', 'd'.repeat(32)),
      one.admitCall('alice', id),
      one.admitCall('mallory', id),
    ]);
    expect(mixed[0]).toBeUndefined();
    expect(mixed[1] && 'release' in mixed[1].admitted).toBe(true);
    expect(mixed[2]).toBeUndefined(); // another principal's session
    if (mixed[1] && 'release' in mixed[1].admitted) mixed[1].admitted.release();
  } finally {
    await two.connection.close();
  }
});

test('Redis going away with a batch of admissions out gives every waiting call the retryable unavailable error', async () => {
  const other = await startRedis();
  const conn = new RedisConnection({
    url: other.url,
    prefix: 'admission-test:',
    commandTimeoutMs: 5_000,
    logger: createLogger('silent'),
  });
  expect(await conn.connect()).toBe(true);
  const local = new RedisSessions(conn, { ...OPTIONS, maxParallel: 64 }, 5_000);
  try {
    const id = 'e'.repeat(32);
    await openSession(id, local);
    const pid = Number(/process_id:(\d+)/.exec(await conn.client.info('server'))?.[1]);
    process.kill(pid, 'SIGSTOP'); // the batch is sent but not answered
    const calls = Array.from({ length: 20 }, () => local.admitCall('alice', id).catch((e: unknown) => e));
    await new Promise((resolve) => setImmediate(resolve)); // the batch is flushed,
    await new Promise((resolve) => setImmediate(resolve)); // and written
    process.kill(pid, 'SIGKILL'); // gone, well before the 5 s deadline
    const errors = await Promise.all(calls);
    for (const err of errors) {
      expect(err).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).code).toBe('unavailable');
      expect((err as GatewayError).retryable).toBe(true);
      expect((err as GatewayError).message).toMatch(
        /shared store \(Redis\) is unavailable, so admitting the call cannot be done right now; retry shortly/,
      );
    }
  } finally {
    await conn.close();
    await other.dispose();
  }
});
