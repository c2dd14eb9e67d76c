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
import { startCluster, type Cluster, type Instance } from './helpers/instances.js';
import { callBody, openSse, postJson } from './helpers/server.js';

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
    config: [`calls:\n  owner_lease_s: ${LEASE_S}`, 'auth:\n  tokens:\n    - {name: tester, token_env: VOLATILE_TOKEN}', 'sessions:\n  required: false'].join('\n'),
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

  await cluster.redis.kill();
  await sleep(300);
  await cluster.redis.start();
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

  for (const url of [result_url, onB(result_url)]) {
    const r = await fetch(url, { headers: auth });
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ state: 'completed', result: { data: { success: true } } });
  }

  // A said what happened, and did not take the lost hash for a call another instance failed.
  await a.stop();
  const log = String((await a.proc).stderr);
  expect(log).not.toContain('failed by another instance');
  expect(log).toContain('Redis lost a running call resource; re-created it');
}, 90_000);
