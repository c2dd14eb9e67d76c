/**
 * Redis restarted without persistence (SIGKILL, then started empty) under
 * running work, with two real gateway processes sharing it: the instance
 * running a call re-creates what Redis lost (the call, its events, its lease,
 * the key of the events_url tokens) and the call runs to its end; a watcher
 * on the other instance that looks for the call meanwhile waits for that
 * instead of answering 404, and gets every event once, in order, and the
 * final response.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startCluster, type Cluster, type Instance } from '../helpers/instances.js';
import { followUntilAnswered, openSession, restartRedisEmpty } from '../helpers/redis-faults.js';
import { callBody, openSse, postJson } from '../helpers/server.js';

const TOKEN = 'volatile-restart-token-1';
const auth = { Authorization: `Bearer ${TOKEN}` };
const LEASE_S = 2;

let cluster: Cluster;
let a: Instance;
let b: Instance;
beforeAll(async () => {
  cluster = await startCluster({
    count: 2,
    prefix: 'volatile:',
    env: { VOLATILE_TOKEN: TOKEN, LOG_LEVEL: 'warn' },
    config: [
      `calls:\n  owner_lease_s: ${LEASE_S}`,
      'auth:\n  tokens:\n    - {name: tester, token_env: VOLATILE_TOKEN}',
      'sessions:\n  required: false',
    ].join('\n'),
  });
  [a, b] = cluster.instances as [Instance, Instance];
}, 120_000);
afterAll(() => cluster?.dispose());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('a call resource running while Redis is SIGKILLed and restarted empty completes; the watcher on the other instance gets every event and its final response', async () => {
  const count = 60;
  const res = await postJson(`${a.url}/tool/calls`, callBody('ticker', { count, every_ms: 100 }), auth);
  expect(res.status).toBe(202);
  const { events_url, result_url } = res.json as { events_url: string; result_url: string };
  const onB = (url: string) => url.replace(a.url, b.url);
  expect(events_url).toContain('access_token='); // minted before the restart, used after it

  // A watcher on B, with the call's access token only.
  const seen: number[] = [];
  let last: string | undefined;
  let final: any;
  const follow = async () => {
    const stream = await openSse(onB(events_url), { headers: last === undefined ? {} : { 'Last-Event-ID': last } });
    if (stream.status !== 200) return stream.status;
    for (let e = await stream.next(); e; e = await stream.next()) {
      if (e.event === 'tool/call/resp') final = e.json;
      else if (e.event === 'tool/event' && e.json.kind === 'progress') seen.push(e.json.seq);
      else if (e.event === 'tool/error') expect(e.json.retryable).toBe(true);
      if (e.id) last = e.id;
    }
    return 200;
  };
  const firstWatch = follow();
  await expect.poll(() => seen.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(5);
  // And a call that finished before: A keeps it in memory (calls.max_retained), so it comes back too.
  const finished = await postJson(`${a.url}/tool/calls`, callBody('whoami', {}), auth);
  expect(finished.status).toBe(202);
  const finishedOnB = onB(finished.json.result_url as string);
  await expect
    .poll(async () => (await (await fetch(finishedOnB, { headers: auth })).json()).state, { timeout: 10_000 })
    .toBe('completed');

  await restartRedisEmpty(cluster.redis);
  await firstWatch; // ended with a retryable tool/error when Redis went away

  // Whatever B answers while Redis comes back and A restores the call: never 404 (503 while it reconnects).
  const statuses = new Set<number>();
  for (const until = Date.now() + LEASE_S * 1000; Date.now() < until; await sleep(50)) {
    const r = await fetch(onB(result_url), { headers: auth });
    statuses.add(r.status);
    await r.body?.cancel();
  }
  expect([...statuses].filter((s) => s !== 200 && s !== 503)).toEqual([]);
  expect(statuses.has(200)).toBe(true);

  // The watcher resumes on B with Last-Event-ID until the final response.
  for (const until = Date.now() + 30_000; final === undefined && Date.now() < until; ) {
    const status = await follow();
    if (final === undefined) {
      expect([200, 503]).toContain(status);
      await sleep(200);
    }
  }
  expect(final?.data).toMatchObject({ success: true, data: { pid: a.pid, ticks: count } });
  expect(seen).toEqual(Array.from({ length: count }, (_, i) => i));

  const retained = await fetch(finishedOnB, { headers: auth });
  expect(retained.status).toBe(200);
  expect(await retained.json()).toMatchObject({
    state: 'completed',
    result: { data: { success: true, data: { pid: a.pid } } },
  });

  for (const url of [result_url, onB(result_url)]) {
    const r = await fetch(url, { headers: auth });
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ state: 'completed', result: { data: { success: true } } });
  }
}, 90_000);

it('an A2E transport session with a call running while Redis is SIGKILLed and restarted empty goes on: the call answers on the stream with every event, frame ids go on without a skip', async () => {
  const client = await openSession(b, a, 'volatile', auth); // the call runs on A, the stream is held by B
  const id = 'ticker-across-a-redis-loss';
  const count = 40;
  const answered = client.waitFor((m) => m.req_id === id && m.type === 'tool/call/resp', 60_000, 'the ticker answer');
  expect(
    (
      await client.send({
        type: 'tool/call/req',
        id,
        tool_name: 'ticker',
        arguments: { count, every_ms: 100 },
        streaming: true,
      })
    ).status,
  ).toBe(202);
  await client.waitFor((m) => m.req_id === id && m.seq === 5, 20_000, 'tick 5');

  await restartRedisEmpty(cluster.redis);

  // The client keeps (or re-opens, with Last-Event-ID) its stream until the answer comes.
  await followUntilAnswered(client, answered);
  const response = await answered;
  expect(response.data).toMatchObject({ success: true, data: { pid: a.pid, ticks: count } });

  const ticks = client.received.filter((m) => m.req_id === id && m.type === 'tool/event').map((m) => m.seq as number);
  expect(ticks).toEqual([...ticks].sort((x, y) => x - y));
  expect(new Set(ticks).size).toBe(ticks.length);
  // The session was put back with every frame A had pushed (also those pushed just before the kill, which B may
  // not have read yet: A pushed them again at their ids), so nothing is lost and no notice says otherwise.
  expect(ticks).toEqual([...Array(count).keys()]);
  expect(client.received.filter((m) => m.type === 'error')).toEqual([]);
  expect(new Set(client.received.map((m) => m.id)).size).toBe(client.received.length);
  const frameIds = client.frameIds.map(Number);
  expect(frameIds).toEqual(frameIds.map((_, i) => frameIds[0]! + i));

  // The session goes on from any instance. Its handshake session was lost with Redis: a call says so, retryable
  // (a client that retries after a new handshake succeeds); a new handshake, and it works.
  client.sendTo = `${b.url}/a2e/v1`;
  expect((await client.request({ type: 'ping' })).response.type).toBe('pong');
  const refused = await client.request({ type: 'tool/call/req', tool_name: 'whoami', arguments: {} });
  expect(refused.response).toMatchObject({
    type: 'error',
    code: 'unauthorized',
    retryable: true,
    detail: { store: 'redis' },
  });
  expect(refused.response.message).toMatch(
    /^the shared store \(Redis\) lost its data .*the handshake of this session.*send handshake\/req again, then send this request again$/,
  );
  expect(
    (await client.request({ type: 'handshake/req', agent_id: 'volatile', agent_caps: ['tools'], auth_token: '' }))
      .response,
  ).toMatchObject({ ok: true });
  const who = await client.request({ type: 'tool/call/req', tool_name: 'whoami', arguments: {} });
  expect(who.response.data).toMatchObject({ success: true, data: { pid: b.pid } });
  await client.dropStream();
}, 90_000);

it('the instance that ran them said what happened, and took no lost call for one another instance failed', async () => {
  await a.stop();
  const log = String((await a.proc).stderr);
  expect(log).not.toContain('failed by another instance');
  expect(log).not.toContain('answered by another instance');
  expect(log).toContain('Redis lost its data');
  expect(log).toContain('Redis lost a running call resource; re-created it');
});
