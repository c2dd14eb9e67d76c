/**
 * Redis restarted without its data while the instance holding a transport
 * session's stream died with it: the session is put back by an instance that
 * ran a call for it, which knows only the frames it pushed itself. The client
 * saw more (answers the lost holder's instance pushed after them) and resumes
 * elsewhere with a Last-Event-ID past everything the session was put back
 * with: the frames after it carry ids after that Last-Event-ID, never ids the
 * client already had (it would take them for frames it saw again). Real
 * gateway processes, one real redis-server restarted empty. And a session
 * quiet at that moment (no stream, no call) is put back by an instance that
 * served it lately; a session only one instance served, lost with Redis
 * together with that instance, is put back by one that never served it: it
 * heard the session open, or read it at its own start (with the calls it
 * runs, which it then answers as lost).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { A2eTestClient } from '../helpers/a2e-client.js';
import { startCluster, type Cluster, type Instance } from '../helpers/instances.js';
import { openSession, restartRedisEmpty } from '../helpers/redis-faults.js';

let cluster: Cluster;
let a: Instance;
let b: Instance;
let c: Instance;
beforeAll(async () => {
  cluster = await startCluster({
    count: 4,
    prefix: 'resume-after-loss:',
    config: 'calls:\n  owner_lease_s: 2\ntransport:\n  handshake_timeout_s: 2',
  });
  [a, b, c] = cluster.instances.slice(1) as [Instance, Instance, Instance];
}, 120_000);
afterAll(() => cluster?.dispose());

/** The transport's sweep runs every half handshake_timeout_s (here). */
const TRANSPORT_SWEEP_MS = 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('holder lost with Redis, session put back by the instance running its call from the frames it pushed: a stream resumed with a later Last-Event-ID gets ids after it', async () => {
  const client = await openSession(b, b, 'resume');
  // A runs a long call (its event is the last frame A pushed) ...
  client.sendTo = `${a.url}/a2e/v1`;
  expect(
    (
      await client.send({
        type: 'tool/call/req',
        id: 'long',
        tool_name: 'hold',
        arguments: { ms: 120_000 },
        streaming: true,
      })
    ).status,
  ).toBe(202);
  await client.waitFor((m) => m.req_id === 'long' && m.type === 'tool/event', 20_000, 'the hold event');
  // ... then B answers pings: the client sees frames A never pushed.
  client.sendTo = `${b.url}/a2e/v1`;
  for (let i = 0; i < 5; i++) expect((await client.request({ type: 'ping' })).response.type).toBe('pong');
  const seen = Number(client.lastEventId);

  await restartRedisEmpty(cluster.redis, b);

  client.streamFrom = `${c.url}/a2e/v1`;
  client.sendTo = `${c.url}/a2e/v1`;
  const idsBefore = client.frameIds.length;
  for (const until = Date.now() + 20_000; ; await sleep(200)) {
    const res = await client.openStream({ lastEventId: String(seen) });
    if (res.status === 200) break;
    expect(res.status).toBe(503);
    expect(Date.now()).toBeLessThan(until);
  }
  // A new frame on the resumed stream: the answer to another ping.
  let pong;
  for (const until = Date.now() + 20_000; !pong; await sleep(300)) {
    pong = (await client.request({ type: 'ping' }, 5_000).catch(() => undefined))?.response;
    if (pong?.type !== 'pong') pong = undefined;
    expect(Date.now()).toBeLessThan(until);
  }
  const after = client.frameIds.slice(idsBefore).map(Number);
  expect(after.length).toBeGreaterThan(0);
  expect(after.filter((id) => id <= seen)).toEqual([]);
  await client.dropStream();
}, 90_000);

it('a quiet session (no stream attached, no call running) that C served: Redis restarted empty → C puts it back, and its stream reopens (not 404)', async () => {
  const client = await openSession(a, a, 'quiet');
  client.sendTo = `${c.url}/a2e/v1`;
  expect((await client.request({ type: 'ping' })).response.type).toBe('pong');
  await client.dropStream();
  // C forgets its handle of the session at its next sweep (nothing left to do): only what C read of it remains.
  await sleep(TRANSPORT_SWEEP_MS * 2 + 500);

  await restartRedisEmpty(cluster.redis, a);

  client.streamFrom = `${c.url}/a2e/v1`;
  let status = 0;
  for (const until = Date.now() + 20_000; Date.now() < until; await sleep(200)) {
    status = (await client.openStream({ lastEventId: client.lastEventId })).status;
    if (status !== 503) break;
  }
  expect(status).toBe(200);
  await client.dropStream();
}, 90_000);

it('sessions only C served, C lost with Redis: an instance that never served them puts them back, one heard open, one read at its start (not 404), and answers the call C ran as lost', async () => {
  const open = async (agent: string) => {
    const client = await A2eTestClient.open(`${c.url}/a2e/v1`);
    client.streamFrom = `${c.url}/a2e/v1`;
    client.sendTo = `${c.url}/a2e/v1`;
    expect((await client.openStream()).status).toBe(200);
    expect(
      (await client.request({ type: 'handshake/req', agent_id: agent, agent_caps: ['tools'], auth_token: '' }))
        .response,
    ).toMatchObject({ ok: true });
    return client;
  };
  const before = await open('before-e'); // opened before E started: E reads it at its start
  // A call running on C, begun before E started: E reads it at its start too, and answers it once C is lost.
  expect(
    (await before.send({ type: 'tool/call/req', id: 'held-on-c', tool_name: 'hold', arguments: { ms: 60_000 } }))
      .status,
  ).toBe(202);
  const lost = before.waitFor((m) => m.req_id === 'held-on-c' && m.type === 'tool/call/resp', 30_000, 'its answer');
  const e = await cluster.add();
  await sleep(1000); // E reads the open sessions once its control channel is up, a moment after it listens
  const after = await open('after-e'); // opened while E runs: E hears it open
  await sleep(300); // the announcement reaches E
  // Every other instance that could know them goes too: only E is left, which never served either.
  await cluster.instances[0]!.kill();
  await cluster.redis.kill();
  await c.kill();
  await sleep(300);
  await cluster.redis.start();

  for (const client of [before, after]) {
    client.streamFrom = `${e.url}/a2e/v1`;
    let status = 0;
    for (const until = Date.now() + 20_000; Date.now() < until; await sleep(200)) {
      status = (await client.openStream({ lastEventId: client.lastEventId })).status;
      if (status !== 503) break;
    }
    expect(status, `the session of ${client === before ? 'before-e' : 'after-e'} on E`).toBe(200);
    if (client === before) {
      const r = await lost;
      expect(r.data).toMatchObject({ success: false, error_code: 'tool_error', tool_name: 'hold' });
      expect(r.data.error).toMatch(/^the gateway instance running tool "hold" was lost/);
    }
    await client.dropStream();
  }
}, 90_000);
