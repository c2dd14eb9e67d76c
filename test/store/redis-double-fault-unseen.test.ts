/**
 * A double fault no stream saw coming: an A2E transport call that sent no
 * event yet (so no stream carried a frame naming it) runs on A while Redis
 * restarts without its data and A is SIGKILLed. Its lease and the session's
 * record of it went with Redis, its owner with A. The instances heard of the
 * call when it was accepted (announced on the transport's control channel):
 * one of them puts its lease back with the session, nobody renews it, and the
 * one sweep of the lease board answers it as lost, once. Real gateway
 * processes, one real redis-server restarted empty. Also when the instance
 * that dies holds the session's stream too: another instance serving the
 * session (running another call of it) puts the session back with the lease
 * of the call it heard of. (An instance that only heard of the call puts its
 * lease back once one serving the session put the session back.) And a
 * call resource nobody read before the fault: every instance heard of it
 * when it started, and puts it back if its owner does not.
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
  cluster = await startCluster({
    count: 4,
    prefix: 'double-fault-unseen:',
    config: `calls:\n  owner_lease_s: ${LEASE_S}`,
  });
  [a, b, c, d] = cluster.instances as [Instance, Instance, Instance, Instance];
}, 120_000);
afterAll(() => cluster?.dispose());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('a transport call on A that sent no event, streamed by B: Redis restarted empty while A is SIGKILLed → B streams a failed tool/call/resp for it, once', async () => {
  const client = await openSession(b, a, 'double-fault'); // the call runs on A, the session's stream is held by B
  const id = 'unseen-across-a-double-fault';
  // streaming: false: no event of it passes through B's stream before the fault.
  const { answered } = await sendHold(client, id, false);
  await sleep(300);
  expect(client.received.filter((m) => m.req_id === id)).toEqual([]);

  await restartRedisEmpty(cluster.redis, a);

  await followUntilAnswered(client, answered);
  expectLostHold((await answered).data);
  await expectAnsweredOnce(client, id, LEASE_S);
  await client.dropStream();
}, 90_000);

it("a transport call on C, whose stream C holds too: Redis restarted empty while C is SIGKILLed → B (running another call of the session, told of the call when it was accepted) puts the session and the call's lease back: one failed tool/call/resp", async () => {
  const client = await openSession(c, c, 'double-fault');
  const id = 'unseen-holder-and-owner';
  const { answered } = await sendHold(client, id, false);
  // Another call of the session runs on B: B serves the session and puts it back.
  client.sendTo = `${b.url}/a2e/v1`;
  const other = 'unseen-other-call';
  const otherAnswered = client.waitFor(
    (m) => m.req_id === other && m.type === 'tool/call/resp',
    60_000,
    'the other answer',
  );
  expect(
    (
      await client.send({
        type: 'tool/call/req',
        id: other,
        tool_name: 'hold',
        arguments: { ms: 6_000 },
        streaming: false,
      })
    ).status,
  ).toBe(202);
  await sleep(300);

  await restartRedisEmpty(cluster.redis, c);

  client.streamFrom = `${b.url}/a2e/v1`;
  await followUntilAnswered(client, answered, { reopenFirst: true }); // C's stream went with C
  expectLostHold((await answered).data);
  expect((await otherAnswered).data).toMatchObject({ success: true });
  await expectAnsweredOnce(client, id, LEASE_S);
  await client.dropStream();
}, 90_000);

it('a call resource running on D that no other instance read: Redis restarted empty while D is SIGKILLed → B (told of it when it started) puts it back, its lease lapses, and readers get its failed response (never 404)', async () => {
  const res = await postJson(`${d.url}/tool/calls`, callBody('hold', { ms: 120_000 }));
  expect(res.status).toBe(202);
  const onB = (res.json as { result_url: string }).result_url.replace(d.url, b.url);
  await sleep(300);

  await restartRedisEmpty(cluster.redis, d);

  const body = await readUntilSettled(onB);
  expect(body.state).toBe('failed');
  expectLostHold(body.result.data);
}, 90_000);
