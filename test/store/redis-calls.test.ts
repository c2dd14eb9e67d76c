/**
 * Call resources across real gateway processes sharing one real redis-server
 * (store.kind: redis): a call runs on the instance that received it, and any
 * instance reads, follows, resumes and cancels it; an instance that dies
 * takes no call down silently.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster, type Instance } from '../helpers/instances.js';
import type { RedisClient } from '../helpers/redis.js';
import { callBody, openSse, postJson } from '../helpers/server.js';

const TOKEN = 'redis-calls-test-token-1';
const auth = { Authorization: `Bearer ${TOKEN}` };
const LEASE_S = 2;
const RETAIN_S = 3;
const MAX_EVENTS = 50;

let cluster: Cluster;
let a: Instance;
let b: Instance;
let redis: RedisClient;
beforeAll(async () => {
  cluster = await startCluster({
    count: 3,
    prefix: 'calls-x:',
    env: { CALLS_TEST_TOKEN: TOKEN },
    config: [
      `calls:\n  owner_lease_s: ${LEASE_S}\n  retain_s: ${RETAIN_S}\n  max_events: ${MAX_EVENTS}`,
      'auth:\n  tokens:\n    - {name: tester, token_env: CALLS_TEST_TOKEN}',
      'sessions:\n  required: false',
    ].join('\n'),
  });
  [a, b] = cluster.instances as [Instance, Instance];
  redis = await cluster.redis.client();
}, 60_000);
afterAll(() => cluster?.dispose());

/** Start a call resource on `on`; its URLs as served by `on` and, rewritten, by `other`. */
async function start(on: Instance, tool: string, args: Record<string, unknown>) {
  const res = await postJson(`${on.url}/tool/calls`, callBody(tool, args), auth);
  expect(res.status, JSON.stringify(res.json)).toBe(202);
  const body = res.json as { call_id: string; events_url: string; result_url: string };
  const at = (other: Instance, url: string) => url.replace(on.url, other.url);
  return { ...body, at };
}

const getJson = async (url: string, init: RequestInit = {}) => {
  const res = await fetch(url, { ...init, headers: { ...auth, ...init.headers } });
  return { status: res.status, headers: res.headers, json: (await res.json().catch(() => undefined)) as any };
};

describe('call resources across instances (store.kind: redis)', () => {
  it('started on A, followed on B, cut, resumed on A with Last-Event-ID: every event exactly once, in order', async () => {
    const count = 40;
    const c = await start(a, 'ticker', { count, every_ms: 20 });
    const onB = await openSse(c.at(b, c.events_url), { headers: auth });
    expect(onB.status).toBe(200);
    const seen: number[] = [];
    for (let i = 0; i < 15; i++) {
      const e = await onB.next();
      expect(e!.event).toBe('tool/event');
      expect(Number(e!.id)).toBe(e!.json.seq);
      seen.push(e!.json.seq);
    }
    onB.abort();
    const onA = await openSse(c.events_url, { headers: { ...auth, 'Last-Event-ID': String(seen.at(-1)) } });
    const rest = await onA.rest();
    const final = rest.at(-1)!;
    for (const e of rest.slice(0, -1)) seen.push(e.json.seq);
    expect(seen).toEqual(Array.from({ length: count }, (_, i) => i));
    expect(final.event).toBe('tool/call/resp');
    expect(final.id).toBe(String(count));
    expect(final.json.data).toMatchObject({ success: true, data: { pid: a.pid, ticks: count } });

    // B reads the same finished call (and the same answer) from Redis.
    const fromB = await getJson(c.at(b, c.result_url));
    expect(fromB.json).toMatchObject({ call_id: c.call_id, state: 'completed', events: count, tool_name: 'ticker' });
    expect(fromB.json.result).toEqual(final.json);
    const replayOnB = await (
      await openSse(c.at(b, c.events_url), { headers: { ...auth, 'Last-Event-ID': '29' } })
    ).rest();
    expect(replayOnB.map((e) => e.id)).toEqual([
      ...Array.from({ length: 10 }, (_, i) => String(30 + i)),
      String(count),
    ]);
  });

  it('DELETE on B stops the tool on A within a second: its side effect never happens, every watcher gets the final response', async () => {
    const file = join(cluster.dir, 'hold-side-effect.txt');
    const holdMs = 1500;
    const startedAt = Date.now();
    const c = await start(a, 'hold', { ms: holdMs, file });
    const watcherOnA = await openSse(c.events_url, { headers: auth });
    expect((await watcherOnA.next())!.json.data.pid).toBe(a.pid); // the tool runs on A
    const t0 = performance.now();
    const del = await getJson(c.at(b, c.result_url), { method: 'DELETE' });
    const tookMs = performance.now() - t0;
    expect(del.status).toBe(200);
    expect(del.json).toMatchObject({
      state: 'canceled',
      result: { data: { success: false, error_code: 'tool_error' } },
    });
    expect(del.json.result.data.error).toBe('tool "hold" was canceled');
    // The owner settled (and so aborted ctx.signal) before B answered.
    expect(tookMs).toBeLessThan(1000);
    const rest = await watcherOnA.rest();
    expect(rest.map((e) => e.event)).toEqual(['tool/call/resp']);
    expect(rest[0]!.json.data.error).toBe('tool "hold" was canceled');
    // Past the time the tool would have written its file: nothing was written.
    await new Promise((r) => setTimeout(r, Math.max(0, startedAt + holdMs + 500 - Date.now())));
    expect(existsSync(file)).toBe(false);
    expect((await getJson(c.result_url)).json.state).toBe('canceled');
  });

  it('a per-call access token minted on A opens the events on B (no bearer token); a forged one is refused', async () => {
    const c = await start(a, 'ticker', { count: 3 });
    expect(c.events_url).toMatch(/\?access_token=[\w-]{43}$/);
    const onB = await openSse(c.at(b, c.events_url));
    expect(onB.status).toBe(200);
    const events = await onB.rest();
    expect(events.map((e) => e.event)).toEqual(['tool/event', 'tool/event', 'tool/event', 'tool/call/resp']);
    const forged = c
      .at(b, c.events_url)
      .replace(/access_token=(.)/, (_, ch: string) => `access_token=${ch === 'A' ? 'B' : 'A'}`);
    const refused = await fetch(forged);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { message: string }).message).toContain(
      'needs the events_url returned by POST /tool/calls',
    );
  });

  it('retention is enforced in Redis: the stream is trimmed to calls.max_events (readers get a gap notice), and a finished call expires after calls.retain_s', async () => {
    const count = 200;
    const c = await start(a, 'ticker', { count });
    await expect
      .poll(async () => (await getJson(c.at(b, c.result_url))).json.state, { timeout: 10_000 })
      .toBe('completed');
    const hash = `calls-x:call:${c.call_id}`;
    const stream = `${hash}:events`;
    expect(await redis.xLen(stream)).toBe(MAX_EVENTS + 1); // the kept events and the final response
    const ttl = await redis.ttl(hash);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(RETAIN_S);
    expect(await redis.ttl(stream)).toBeGreaterThan(0);

    const events = await (await openSse(c.at(b, c.events_url), { headers: { ...auth, 'Last-Event-ID': '9' } })).rest();
    const first = count - MAX_EVENTS;
    expect(events[0]!.json.kind).toBe('status');
    expect(events[0]!.id).toBe(String(first - 1));
    expect(events[0]!.json.data.message).toBe(
      `events 10..${first - 1} of this call are no longer kept and were skipped; the stream continues with event ${first}`,
    );
    expect(events.slice(1, -1).map((e) => e.json.seq)).toEqual(Array.from({ length: MAX_EVENTS }, (_, i) => first + i));
    expect(events.at(-1)!.event).toBe('tool/call/resp');

    await expect
      .poll(async () => (await getJson(c.at(b, c.result_url))).status, {
        timeout: (RETAIN_S + 5) * 1000,
        interval: 250,
      })
      .toBe(404);
    expect(await redis.exists([hash, stream])).toBe(0);
  });

  it('the watchers of one instance share one blocking Redis connection, however many calls they follow', async () => {
    const calls = await Promise.all([0, 1, 2].map(() => start(a, 'hold', { ms: 30_000 })));
    const watchers = await Promise.all(
      [...calls, ...calls].map((c) => openSse(c.at(b, c.events_url), { headers: auth })),
    );
    for (const w of watchers) expect((await w.next())!.json.kind).toBe('status');
    // Six streams on B over three calls: one XREAD BLOCK connection (B's), blocked on all of them.
    await expect.poll(async () => (await redis.sendCommand(['CLIENT', 'LIST'])) as string).toMatch(/cmd=xread/);
    const blocked = String(await redis.sendCommand(['CLIENT', 'LIST']))
      .split('\n')
      .filter((l) => /cmd=xread/.test(l));
    expect(blocked).toHaveLength(1);
    for (const w of watchers) w.abort();
    await Promise.all(calls.map((c) => getJson(c.result_url, { method: 'DELETE' })));
  });

  it('an instance killed mid-call (SIGKILL): the watcher on B gets a failed final response within the lease', async () => {
    const doomed = cluster.instances[2]!;
    const c = await start(doomed, 'hold', { ms: 60_000 });
    const onB = await openSse(c.at(b, c.events_url), { headers: auth });
    expect((await onB.next())!.json.data.pid).toBe(doomed.pid);
    const killedAt = performance.now();
    await doomed.kill();
    const final = await onB.next();
    const afterMs = performance.now() - killedAt;
    expect(final!.event).toBe('tool/call/resp');
    expect(final!.id).toBe('1');
    expect(final!.json.data).toMatchObject({ success: false, error_code: 'tool_error', tool_name: 'hold' });
    expect(final!.json.data.error).toMatch(/^the gateway instance running tool "hold" was lost/);
    // A lease lapses LEASE_S after its last renewal; sweeps run every half lease.
    expect(afterMs).toBeLessThan((LEASE_S * 1.5 + 1.5) * 1000);
    expect(await onB.next()).toBeNull();
    const onA = await getJson(c.at(a, c.result_url));
    expect(onA.json).toMatchObject({ state: 'failed', result: final!.json });
  });
});
