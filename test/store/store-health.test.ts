/**
 * GET /healthz reports the shared store: 200 with `store.ok` while Redis
 * answers, 503 "degraded" with Retry-After while it does not (the gateway
 * stays up and calls that need no shared state keep working), and 200 again
 * once Redis is back — no restart.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { postJson, startGateway, type TestGateway } from '../helpers/server.js';
import { definePlugin } from '../helpers/plugins.js';

const echoPlugin = () =>
  definePlugin('health-test', [
    [
      {
        name: 'echo',
        description: 'Echo the text',
        input_parameters: [{ name: 'text', type: 'string', description: 'text', required: true }],
      },
      (args) => args,
    ],
  ]);

let redis: RedisServer;
let gw: TestGateway;
beforeAll(async () => {
  redis = await startRedis();
  gw = await startGateway({
    config: { store: { kind: 'redis', url: redis.url, command_timeout_ms: 500 } },
    plugins: [echoPlugin()],
  });
});
afterAll(async () => {
  await gw?.close();
  await redis?.dispose();
});

const health = async () => {
  const res = await fetch(`${gw.url}/healthz`);
  return { status: res.status, retryAfter: res.headers.get('retry-after'), json: (await res.json()) as any };
};

it('memory store: always ok', async () => {
  const mem = await startGateway();
  try {
    const res = await fetch(`${mem.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok', store: { kind: 'memory', ok: true } });
  } finally {
    await mem.close();
  }
});

it('redis store: degraded (503) while Redis is down, ok again when it is back', async () => {
  expect(await health()).toMatchObject({ status: 200, json: { status: 'ok', store: { kind: 'redis', ok: true } } });

  await redis.stop();
  await expect.poll(async () => (await health()).status, { timeout: 15_000 }).toBe(503);
  const down = await health();
  expect(down.retryAfter).toBe('1');
  expect(down.json).toMatchObject({ status: 'degraded', store: { kind: 'redis', ok: false } });
  expect(down.json.store.error).toMatch(/refused|closed|socket|timed out/i);
  expect(JSON.stringify(down.json)).not.toContain(String(redis.port));
  // A plain call needs no shared state: it still runs.
  const call = await postJson(`${gw.url}/tool/call`, { tool_name: 'echo', arguments: { text: 'still here' } });
  expect(call.status).toBe(200);
  expect(call.json.data.success).toBe(true);

  await redis.start();
  await expect.poll(async () => (await health()).status, { timeout: 15_000 }).toBe(200);
  expect((await health()).json.store).toEqual({ kind: 'redis', ok: true });
});
