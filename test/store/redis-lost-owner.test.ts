/**
 * A call on any door outlives the instance running it only as a final
 * answer: three real gateway processes on one real redis-server, the
 * instance running a call killed with SIGKILL, and every watcher elsewhere
 * gets a failed `tool/call/resp` saying the instance was lost within
 * `calls.owner_lease_s` — call resources (test/store/redis-calls.test.ts) and,
 * here, A2E transport calls whose session streams from another instance,
 * including one accepted while Redis failed its lease write (it takes the
 * lease once Redis is back).
 */
import { createClient } from '@redis/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { A2eTestClient } from '../helpers/a2e-client.js';
import { startCluster, type Cluster } from '../helpers/instances.js';

const LEASE_S = 2;
let cluster: Cluster;
const at = (i: number) => `${cluster.instances[i]!.url}/a2e/v1`;

beforeAll(async () => {
  cluster = await startCluster({ count: 3, prefix: 'lost-owner:', config: `calls:\n  owner_lease_s: ${LEASE_S}` });
}, 120_000);
afterAll(() => cluster?.dispose());

it('an A2E transport call running on A, its session streaming from B: A killed (SIGKILL) → B streams a failed tool/call/resp for it within the lease, once', async () => {
  const client = await A2eTestClient.open(at(1));
  client.sendTo = at(0); // the calls run on A
  client.streamFrom = at(1);
  expect((await client.openStream()).status).toBe(200);
  const hs = await client.request({
    type: 'handshake/req',
    agent_id: 'lost-owner',
    agent_caps: ['tools'],
    auth_token: '',
  });
  expect(hs.response).toMatchObject({ ok: true });

  const doomed = cluster.instances[0]!;
  const plain = 'held-without-events';
  const streamed = 'held-with-events';
  const answers = [plain, streamed].map((id) =>
    client.waitFor((m) => m.req_id === id && m.type === 'tool/call/resp', 30_000, `the answer to ${id}`),
  );
  expect(
    (await client.send({ type: 'tool/call/req', id: plain, tool_name: 'hold', arguments: { ms: 60_000 } })).status,
  ).toBe(202);
  expect(
    (
      await client.send({
        type: 'tool/call/req',
        id: streamed,
        tool_name: 'hold',
        arguments: { ms: 60_000 },
        streaming: true,
      })
    ).status,
  ).toBe(202);
  // Both run on A: the streamed one says so; the plain one is admitted before it (one message at a time, in order).
  expect(
    (await client.waitFor((m) => m.req_id === streamed && m.type === 'tool/event', 20_000, 'the hold event')).data.pid,
  ).toBe(doomed.pid);

  const killedAt = performance.now();
  await doomed.kill();
  const responses = await Promise.all(answers);
  const afterMs = performance.now() - killedAt;
  for (const r of responses) {
    expect(r.data).toMatchObject({ success: false, error_code: 'tool_error', tool_name: 'hold', data: null });
    expect(r.data.error).toMatch(/^the gateway instance running tool "hold" was lost/);
    expect(r.data.error).toContain('calls.owner_lease_s');
  }
  // A lease lapses LEASE_S after its last renewal (a third of it before the kill at most); sweeps run every half lease.
  expect(afterMs).toBeLessThan((LEASE_S * 1.5 + 1.5) * 1000);

  // The session goes on (from another instance), and no second answer comes for either call.
  client.sendTo = at(2);
  expect((await client.request({ type: 'ping' })).response.type).toBe('pong');
  await new Promise((r) => setTimeout(r, LEASE_S * 1000));
  for (const id of [plain, streamed])
    expect(client.received.filter((m) => m.req_id === id && m.type === 'tool/call/resp')).toHaveLength(1);
  await client.dropStream();
}, 60_000);

it('a transport call that finishes normally gets its own answer only (no lost-instance answer after it)', async () => {
  const client = await A2eTestClient.open(at(1));
  client.sendTo = at(2);
  expect((await client.openStream()).status).toBe(200);
  await client.request({ type: 'handshake/req', agent_id: 'lost-owner', agent_caps: ['tools'], auth_token: '' });
  const who = await client.request({ type: 'tool/call/req', tool_name: 'whoami', arguments: {} });
  expect(who.response.data).toMatchObject({ success: true, data: { pid: cluster.instances[2]!.pid } });
  await new Promise((r) => setTimeout(r, LEASE_S * 1500));
  expect(who.late()).toEqual([]);
  await client.dropStream();
});

it('POST /send answers 202 once the call holds its lease: the instance killed right after the 202, the call is still answered', async () => {
  const client = await A2eTestClient.open(at(1));
  client.sendTo = at(2);
  expect((await client.openStream()).status).toBe(200);
  await client.request({ type: 'handshake/req', agent_id: 'lost-owner', agent_caps: ['tools'], auth_token: '' });
  const id = 'killed-right-after-202';
  const answer = client.waitFor((m) => m.req_id === id && m.type === 'tool/call/resp', 30_000, 'the answer');
  expect((await client.send({ type: 'tool/call/req', id, tool_name: 'hold', arguments: { ms: 60_000 } })).status).toBe(
    202,
  );
  await cluster.instances[2]!.kill();
  const r = await answer;
  expect(r.data).toMatchObject({ success: false, error_code: 'tool_error', tool_name: 'hold' });
  expect(r.data.error).toMatch(/^the gateway instance running tool "hold" was lost/);
  await client.dropStream();
}, 60_000);

it('a transport call accepted while Redis fails its lease write takes the lease once Redis is back: its instance then killed, the watcher gets the lost answer', async () => {
  const redis = createClient({ url: cluster.redis.url });
  await redis.connect();
  try {
    const runner = await cluster.add();
    const client = await A2eTestClient.open(at(1));
    client.sendTo = runner.url + '/a2e/v1';
    expect((await client.openStream()).status).toBe(200);
    await client.request({ type: 'handshake/req', agent_id: 'lost-owner', agent_caps: ['tools'], auth_token: '' });
    // Redis fails the lease's write (as when it goes down right then), while the session's own records still work:
    // the leases' sorted set holds a string, so every script writing a lease errs.
    const LEASES = 'lost-owner:calls:leases';
    await redis.set(LEASES, 'not a sorted set');
    const id = 'accepted-as-redis-fails';
    const answer = client.waitFor((m) => m.req_id === id && m.type === 'tool/call/resp', 60_000, 'the answer');
    expect(
      (await client.send({ type: 'tool/call/req', id, tool_name: 'hold', arguments: { ms: 60_000 } })).status,
    ).toBe(202);
    await redis.del(LEASES); // Redis back
    const prefix = `a2e:${client.sessionId}:`;
    const until = Date.now() + LEASE_S * 3000;
    let leased = false;
    while (!leased && Date.now() < until) {
      leased = (await redis.zRange(LEASES, 0, -1)).some((m) => m.startsWith(prefix));
      if (!leased) await new Promise((r) => setTimeout(r, 100));
    }
    expect(leased, 'the call took its lease once Redis was back').toBe(true);
    await runner.kill();
    const r = await answer;
    expect(r.data).toMatchObject({ success: false, error_code: 'tool_error', tool_name: 'hold' });
    expect(r.data.error).toMatch(/^the gateway instance running tool "hold" was lost/);
    await client.dropStream();
  } finally {
    await redis.close();
  }
}, 90_000);
