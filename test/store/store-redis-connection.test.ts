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

test('every store listens through one pub/sub connection: a channel is subscribed once, each listener hears it, and it is unsubscribed with its last listener', async () => {
  const store = new RedisConnection({
    url: redis.url,
    prefix: 'conn-sub:',
    commandTimeoutMs: 2000,
    logger: createLogger('silent'),
  });
  expect(await store.connect()).toBe(true);
  const raw = await redis.client();
  try {
    const heard: string[] = [];
    const first = (m: string) => heard.push(`first:${m}`);
    const second = (m: string) => heard.push(`second:${m}`);
    const other = (m: string) => heard.push(`other:${m}`);
    const channel = store.key('one');
    await Promise.all([store.subscribe(channel, first), store.subscribe(channel, second)]);
    await store.subscribe(channel, first); // the same listener again: heard once
    await store.subscribe(store.key('two'), other);
    const numsub = async (c: string) =>
      Number(((await raw.sendCommand(['PUBSUB', 'NUMSUB', c])) as [string, number])[1]);
    expect(await numsub(channel)).toBe(1);
    const subscribers = String(await raw.sendCommand(['CLIENT', 'LIST']))
      .trim()
      .split('\n')
      .filter((line) => / sub=[1-9]/.test(line));
    expect(subscribers.map((line) => / sub=(\d+)/.exec(line)![1])).toEqual(['2']); // one connection, both channels
    expect(await raw.publish(channel, 'a')).toBe(1);
    expect(await raw.publish(store.key('two'), 'b')).toBe(1);
    await expect.poll(() => heard.length).toBe(3);
    expect(heard.sort()).toEqual(['first:a', 'other:b', 'second:a']);

    await store.unsubscribe(channel, first);
    expect(await numsub(channel)).toBe(1);
    await store.unsubscribe(channel, second);
    await expect.poll(() => numsub(channel)).toBe(0);
    expect(await numsub(store.key('two'))).toBe(1);
  } finally {
    await raw.close();
    await store.close();
  }
});
