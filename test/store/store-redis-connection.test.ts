/**
 * The Redis connection under an outage: commands fail fast as the retryable
 * `unavailable` error (never hang, never crash), health says why, and it all
 * comes back on its own when Redis does — with the data Redis kept.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { RedisConnection } from '../../src/store/redis/index.js';
import { GatewayError } from '../../src/engine/index.js';
import { createLogger } from '../../src/logger.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis({ persist: true });
});
afterAll(async () => redis?.dispose());

test('a Redis outage is a retryable 503-class error, and the connection recovers by itself with its data', async () => {
  const store = new RedisConnection({
    url: redis.url,
    prefix: 'conn-test:',
    commandTimeoutMs: 500,
    logger: createLogger('silent'),
  });
  expect(await store.connect()).toBe(true);
  try {
    await store.run('write', (c) => c.set(store.key('k'), 'v'));
    expect(store.health).toEqual({ kind: 'redis', ok: true });

    await redis.stop();
    const err = await store.run('read the key', (c) => c.get(store.key('k'))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe('unavailable');
    expect((err as GatewayError).retryable).toBe(true);
    expect((err as GatewayError).message).toMatch(
      /shared store \(Redis\) is unavailable, so read the key cannot be done/,
    );
    expect((err as GatewayError).message).not.toContain(redis.url);
    expect(store.health.ok).toBe(false);
    expect(store.health.error).toBeTruthy();

    await redis.start();
    await expect.poll(() => store.health.ok, { timeout: 10_000 }).toBe(true);
    expect(await store.run('read', (c) => c.get(store.key('k')))).toBe('v');
  } finally {
    await store.close();
  }
});

test('an unreachable Redis at start degrades instead of failing, and health says why without the URL', async () => {
  const store = new RedisConnection({
    url: 'redis://user:secret@127.0.0.1:1/0',
    prefix: 'x:',
    commandTimeoutMs: 500,
    logger: createLogger('silent'),
  });
  try {
    expect(await store.connect()).toBe(false);
    expect(store.health.ok).toBe(false);
    expect(store.health.error).toMatch(/connection refused/);
    expect(JSON.stringify(store.health)).not.toContain('secret');
    const err = await store
      .run('start a call', (c) => c.get('k'))
      .then(
        () => undefined,
        (e: unknown) => e as GatewayError,
      );
    expect(err).toBeInstanceOf(GatewayError);
    expect(err?.code).toBe('unavailable');
  } finally {
    await store.close();
  }
});
