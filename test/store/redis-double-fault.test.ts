/**
 * A double fault: Redis restarted without its data while the instance running
 * an A2E transport call is SIGKILLed, so the call's lease is gone with Redis
 * and its owner is not there to put it back. The instance holding the
 * session's stream saw the call's events pass without an answer: it puts the
 * call's lease back with the session, nobody renews it, and the one sweep of
 * the lease board answers the call as lost, once. Real gateway processes,
 * one real redis-server restarted empty. A stream resumed on an instance
 * after the call's events (Last-Event-ID past them) learns of the call from
 * the frames Redis keeps before that id.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startCluster, type Cluster, type Instance } from '../helpers/instances.js';
import {
  expectAnsweredOnce,
  expectLostHold,
  followUntilAnswered,
  openSession,
  readUntilSettled,
  restartRedisEmpty,
  sendHold,
} from '../helpers/redis-faults.js';
import { callBody, postJson } from '../helpers/server.js';

const LEASE_S = 2;
let cluster: Cluster;
let a: Instance;
let b: Instance;
let c: Instance;
let d: Instance;
beforeAll(async () => {
  cluster = await startCluster({ count: 4, prefix: 'double-fault:', config: `calls:\n  owner_lease_s: ${LEASE_S}` });
  [a, b, c, d] = cluster.instances as [Instance, Instance, Instance, Instance];
}, 120_000);
afterAll(() => cluster?.dispose());

it('a transport call running on A, streamed by B: Redis restarted empty while A is SIGKILLed → B streams a failed tool/call/resp for it, once', async () => {
  const client = await openSession(b, a, 'double-fault'); // the call runs on A, its events pass through B
  const id = 'held-across-a-double-fault';
  const { answered } = await sendHold(client, id, true);
  expect(
    (await client.waitFor((m) => m.req_id === id && m.type === 'tool/event', 20_000, 'the hold event')).data.pid,
  ).toBe(a.pid);

  await restartRedisEmpty(cluster.redis, a);

  await followUntilAnswered(client, answered);
  expectLostHold((await answered).data);
  await expectAnsweredOnce(client, id, LEASE_S);
  await client.dropStream();
}, 90_000);

it("the same when the stream was resumed after the call's events: C runs it, B streams it from a Last-Event-ID past its events; Redis restarted empty while C is SIGKILLed → one failed answer", async () => {
  const client = await openSession(b, c, 'double-fault'); // the call runs on C, its events pass through B
  const id = 'held-across-a-double-fault-resumed';
  const { answered } = await sendHold(client, id, true);
  expect(
    (await client.waitFor((m) => m.req_id === id && m.type === 'tool/event', 20_000, 'the hold event')).data.pid,
  ).toBe(c.pid);
  // A new stream (on B again: a new holder, which did not see the event pass) from after the event.
  await client.dropStream();
  expect((await client.openStream({ lastEventId: client.lastEventId })).status).toBe(200);
  expect((await client.request({ type: 'ping' })).response.type).toBe('pong');

  await restartRedisEmpty(cluster.redis, c);

  await followUntilAnswered(client, answered);
  expectLostHold((await answered).data);
  await expectAnsweredOnce(client, id, LEASE_S);
  await client.dropStream();
}, 90_000);

it('a call resource running on D, read on B: Redis restarted empty while D is SIGKILLed → B puts it back, its lease lapses, and readers get its failed response (never 404)', async () => {
  const res = await postJson(`${d.url}/tool/calls`, callBody('hold', { ms: 120_000 }));
  expect(res.status).toBe(202);
  const { result_url } = res.json as { result_url: string };
  const onB = result_url.replace(d.url, b.url);
  await expect.poll(async () => (await (await fetch(onB)).json()).events, { timeout: 10_000 }).toBe(1); // B served it running

  await restartRedisEmpty(cluster.redis, d);

  const body = await readUntilSettled(onB);
  expect(body.state).toBe('failed');
  expectLostHold(body.result.data);
}, 90_000);

it('an instance started after Redis lost its data waits for a missing call like the others (its owner, or an instance that served or heard of it, may still put it back) instead of answering 404', async () => {
  const owner = await cluster.add();
  const res = await postJson(`${owner.url}/tool/calls`, callBody('hold', { ms: 120_000 }));
  expect(res.status).toBe(202);
  const path = new URL(res.json.result_url as string).pathname;

  await cluster.redis.kill();
  await owner.kill();
  await cluster.redis.start();
  // B is back on the empty Redis (it set the new epoch when it reconnected, before it could register a call).
  await expect
    .poll(async () => (await postJson(`${b.url}/tool/calls`, callBody('whoami', {}))).status, {
      timeout: 20_000,
      interval: 100,
    })
    .toBe(202);

  const fresh = await cluster.add();
  const started = performance.now();
  const r = await fetch(`${fresh.url}${path}`);
  const waitedMs = performance.now() - started;
  // Nobody read it, but the instances up when it started heard of it and put it back a lease after the loss: the
  // new instance (which did not hear of it) waited for that instead of answering 404 (test/store/redis-double-fault-unseen.test.ts).
  expect(r.status).toBe(200);
  expect(waitedMs).toBeLessThan(2 * LEASE_S * 1000 + 2000);
}, 90_000);
