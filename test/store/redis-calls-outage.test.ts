/**
 * Redis down under call resources (store.kind: redis): reading or starting a
 * call answers 503 unavailable with Retry-After, the gateway stays up, a
 * running call finishes on its instance, and once Redis is back (with its
 * data) every event and the final response reach the other instance — nothing
 * the store accepted is lost, nothing the owner emitted meanwhile either.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SCALE_TOOLS } from '../helpers/instances.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { callBody, openSse, postJson, startGateway, type TestGateway } from '../helpers/server.js';

let redis: RedisServer;
let a: TestGateway;
let b: TestGateway;
beforeAll(async () => {
  redis = await startRedis({ persist: true });
  const config = {
    plugins: [{ module: SCALE_TOOLS }],
    store: { kind: 'redis' as const, url: redis.url, prefix: 'outage:', command_timeout_ms: 500 },
    calls: { owner_lease_s: 2 },
  };
  a = await startGateway({ config });
  b = await startGateway({ config });
});
afterAll(async () => {
  await Promise.allSettled([a?.close(), b?.close()]);
  await redis?.dispose();
});

it('Redis down: 503 with Retry-After, the call finishes where it runs; Redis back: the other instance gets every event and the result', async () => {
  const count = 30;
  const res = await postJson(`${a.url}/tool/calls`, callBody('ticker', { count, every_ms: 100 }));
  expect(res.status).toBe(202);
  const onB = (res.json.result_url as string).replace(a.url, b.url);
  await expect
    .poll(async () => ((await (await fetch(onB)).json()) as { events: number }).events)
    .toBeGreaterThanOrEqual(3);

  await redis.stop();
  const down = await fetch(onB);
  expect(down.status).toBe(503);
  expect(down.headers.get('retry-after')).toBe('1');
  const body = (await down.json()) as { code: string; retryable: boolean; message: string };
  expect(body).toMatchObject({ code: 'unavailable', retryable: true });
  expect(body.message).toContain(
    'the shared store (Redis) is unavailable, so reading a call resource cannot be done right now',
  );
  const refused = await postJson(`${a.url}/tool/calls`, callBody('whoami', {}));
  expect(refused.status).toBe(503);
  expect(refused.headers.get('retry-after')).toBe('1');
  // The owner still serves its own call from memory, and it runs to the end.
  await expect
    .poll(async () => ((await (await fetch(res.json.result_url)).json()) as { state: string }).state, {
      timeout: 10_000,
    })
    .toBe('completed');
  // A plain call needs no shared state.
  expect((await postJson(`${a.url}/tool/call`, callBody('whoami', {}))).status).toBe(200);

  await redis.start();
  await expect.poll(async () => (await fetch(onB)).status, { timeout: 10_000 }).toBe(200);
  await expect
    .poll(async () => ((await (await fetch(onB)).json()) as { state: string }).state, { timeout: 10_000 })
    .toBe('completed');
  const events = await (await openSse(`${onB}/events`)).rest();
  expect(events.slice(0, -1).map((e) => e.json.seq)).toEqual(Array.from({ length: count }, (_, i) => i));
  expect(events.at(-1)!.event).toBe('tool/call/resp');
  expect(events.at(-1)!.json.data).toMatchObject({ success: true, data: { ticks: count } });
});
