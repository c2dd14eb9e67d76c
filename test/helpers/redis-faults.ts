/**
 * What the Redis fault tests (test/store/redis-*.test.ts) share, on a cluster of test/helpers/instances.ts: an A2E
 * transport session whose stream one instance holds while its calls run on another; Redis restarted empty, with
 * instances SIGKILLed at the same moment (a double fault); following a session's stream or a call resource until
 * the answer comes; and the failed answer a call gets when the instance running it was lost.
 */
import { expect } from 'vitest';
import { A2eTestClient, type A2eMessage } from './a2e-client.js';
import type { Instance } from './instances.js';
import type { RedisServer } from './redis.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How long a test follows a stream or a call resource for its answer after a fault. */
const FOLLOW_MS = 40_000;

/**
 * A handshaken A2E transport session, opened on `streamFrom`, whose stream (open) is read from `streamFrom` and
 * whose messages go to `sendTo`.
 */
export async function openSession(
  streamFrom: Instance,
  sendTo: Instance,
  agentId: string,
  headers: Record<string, string> = {},
): Promise<A2eTestClient> {
  const client = await A2eTestClient.open(`${streamFrom.url}/a2e/v1`, headers);
  client.sendTo = `${sendTo.url}/a2e/v1`;
  client.streamFrom = `${streamFrom.url}/a2e/v1`;
  expect((await client.openStream()).status).toBe(200);
  expect(
    (await client.request({ type: 'handshake/req', agent_id: agentId, agent_caps: ['tools'], auth_token: '' }))
      .response,
  ).toMatchObject({ ok: true });
  return client;
}

/**
 * Sends a `hold` call of 120 s as `id` (202 expected), `streaming` or not, and gives the promise of its answer
 * (within 60 s).
 */
export async function sendHold(
  client: A2eTestClient,
  id: string,
  streaming: boolean,
): Promise<{ answered: Promise<A2eMessage> }> {
  const answered = client.waitFor((m) => m.req_id === id && m.type === 'tool/call/resp', 60_000, 'the answer');
  expect(
    (await client.send({ type: 'tool/call/req', id, tool_name: 'hold', arguments: { ms: 120_000 }, streaming })).status,
  ).toBe(202);
  return { answered };
}

/**
 * Redis SIGKILLed and started again on its port 300 ms later — empty, as the cluster's Redis keeps no data — with
 * each of `lost` SIGKILLed while it is down: a call's lease and its owner gone together.
 */
export async function restartRedisEmpty(redis: RedisServer, ...lost: Instance[]): Promise<void> {
  await redis.kill();
  for (const instance of lost) await instance.kill();
  await sleep(300);
  await redis.start();
}

/**
 * Follows the session's stream until `answered` settles (at most 40 s): waits while the stream is open and
 * re-opens it with Last-Event-ID when it ends, every answer 200 or 503 (an instance not back on Redis yet).
 * `reopenFirst`: the stream the client had went with its instance, so re-open at once.
 */
export async function followUntilAnswered(
  client: A2eTestClient,
  answered: Promise<A2eMessage>,
  options: { reopenFirst?: boolean } = {},
): Promise<void> {
  let done = false;
  void answered.then(() => (done = true));
  for (const until = Date.now() + FOLLOW_MS; !done && Date.now() < until; ) {
    if (!options.reopenFirst) {
      await Promise.race([client.streamEnded(), answered, sleep(20_000)]);
      if (done) break;
    }
    const res = await client.openStream({ lastEventId: client.lastEventId });
    expect([200, 503]).toContain(res.status);
    if (res.status !== 200) await sleep(200);
    else if (options.reopenFirst) await Promise.race([client.streamEnded(), answered, sleep(20_000)]);
  }
}

/**
 * Reads a call resource every 200 ms until it is no longer running (at most 40 s): every answer must be 200 or 503
 * (never 404). Returns the last body.
 */
export async function readUntilSettled(url: string): Promise<any> {
  const statuses = new Set<number>();
  let body: any;
  for (const until = Date.now() + FOLLOW_MS; Date.now() < until; await sleep(200)) {
    const r = await fetch(url);
    statuses.add(r.status);
    body = await r.json();
    if (r.status === 200 && body.state !== 'running') break;
  }
  expect([...statuses].filter((s) => s !== 200 && s !== 503)).toEqual([]);
  return body;
}

/** The failed answer of a `hold` call whose instance was lost. */
export function expectLostHold(data: any): void {
  expect(data).toMatchObject({ success: false, error_code: 'tool_error', tool_name: 'hold' });
  expect(data.error).toMatch(/^the gateway instance running tool "hold" was lost/);
}

/** Exactly one tool/call/resp for `id`, a lease (`leaseS`) after the first: a second answer would come by then. */
export async function expectAnsweredOnce(client: A2eTestClient, id: string, leaseS: number): Promise<void> {
  await sleep(leaseS * 1000);
  expect(client.received.filter((m) => m.req_id === id && m.type === 'tool/call/resp')).toHaveLength(1);
}
