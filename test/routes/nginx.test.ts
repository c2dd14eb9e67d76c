/**
 * End to end through a real nginx, configured with the docs/reverse-proxy.md's `location`
 * block (nginx's default proxy_buffering on): events arrive while the tool
 * runs, a cut stream resumes with Last-Event-ID, heartbeats outlast
 * proxy_read_timeout, and the URLs the gateway returns are the proxy's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatedPlugin } from '../helpers/gated.js';
import { readmeLocationBlock, startNginx, type Nginx } from '../helpers/nginx.js';
import {
  callBody,
  openSse,
  postJson,
  startGateway,
  type ReceivedEvent,
  type SseStream,
  type TestGateway,
} from '../helpers/server.js';

const gates = gatedPlugin();
let gw: TestGateway;
let nginx: Nginx;
beforeAll(async () => {
  gw = await startGateway({
    plugins: [gates.plugin],
    config: { server: { base_path: '/a2e', trust_proxy: true, heartbeat_s: 0.2 }, calls: { retry_ms: 100 } },
  });
  nginx = await startNginx({ server: await readmeLocationBlock(Number(new URL(gw.url).port)) });
});
afterAll(async () => {
  await nginx?.stop();
  await gw?.close();
});

/** The next event, failing with `what` instead of hanging when it does not come. */
async function nextEvent(s: SseStream, what: string, ms = 10_000): Promise<ReceivedEvent> {
  let timer: NodeJS.Timeout | undefined;
  const e = await Promise.race([
    s.next(),
    new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: nothing arrived within ${ms} ms`)), ms)),
    ),
  ]).finally(() => clearTimeout(timer));
  if (!e) throw new Error(`${what}: the stream ended`);
  return e;
}

let keys = 0;
async function startGated(steps: number, base = `${nginx.url}/a2e`) {
  const key = `n${keys++}`;
  const res = await postJson(`${base}/tool/calls`, callBody('gated', { key, steps }));
  expect(res.status).toBe(202);
  return { key, ...(res.json as { call_id: string; events_url: string; result_url: string }) };
}

const state = async (url: string) => (await (await fetch(url)).json()) as { state: string; events: number };

describe('through nginx (docs/reverse-proxy.md location block, default proxy_buffering)', () => {
  it('returns URLs of the proxy (X-Forwarded-Proto/-Host, base path)', async () => {
    const c = await startGated(1);
    expect(c.result_url).toBe(`${nginx.url}/a2e/tool/calls/${c.call_id}`);
    expect(c.events_url).toBe(`${c.result_url}/events`);
    gates.open(c.key, 0);
    const doc = (await (await fetch(`${nginx.url}/a2e/openapi.json`)).json()) as { servers: unknown };
    expect(doc.servers).toEqual([{ url: '/a2e', description: 'This gateway' }]);
  });

  it('events arrive through nginx while the tool is still running', async () => {
    const steps = 5;
    const c = await startGated(steps);
    const s = await openSse(c.events_url);
    expect(s.status).toBe(200);
    const arrived: number[] = [];
    for (let i = 0; i < steps; i++) {
      // The tool is blocked until gate i opens, which happens only after event i came through nginx.
      const e = await nextEvent(s, `event ${i} through nginx (is the proxy buffering the stream?)`);
      expect(e.json).toMatchObject({ kind: 'progress', seq: i });
      arrived.push(e.at);
      gates.open(c.key, i);
    }
    const rest = await s.rest();
    expect(rest.map((e) => e.event)).toEqual(['tool/call/resp']);
    const emitted = gates.emittedAt(c.key);
    expect(emitted).toHaveLength(steps);
    for (let i = 0; i < steps; i++) {
      expect(arrived[i]).toBeGreaterThanOrEqual(emitted[i]!);
      if (i + 1 < steps) expect(arrived[i]).toBeLessThan(emitted[i + 1]!); // arrived before the tool went on
    }
    expect(rest[0]!.at).toBeGreaterThan(arrived.at(-1)!);
    const latency = arrived.map((t, i) => (t - emitted[i]!).toFixed(1));
    console.log(`[nginx] emit→arrival latency per event (ms): ${latency.join(', ')}`);
  });

  it('a stream cut mid-way and resumed with Last-Event-ID yields every event exactly once, in order', async () => {
    const c = await startGated(6);
    const first = await openSse(c.events_url);
    const seen: number[] = [];
    for (let i = 0; i < 3; i++) {
      seen.push((await nextEvent(first, `event ${i}`)).json.seq);
      if (i < 2) gates.open(c.key, i);
    }
    first.abort(); // the client's connection to nginx is gone
    // The call runs on: event 3 is emitted while nobody watches.
    gates.open(c.key, 2);
    await expect.poll(() => state(c.result_url)).toMatchObject({ state: 'running', events: 4 });

    const resumed = await openSse(c.events_url, { headers: { 'Last-Event-ID': String(seen.at(-1)) } });
    for (let i = 3; i < 6; i++) {
      const e = await nextEvent(resumed, `resumed event ${i}`);
      seen.push(e.json.seq);
      expect(e.id).toBe(String(e.json.seq));
      gates.open(c.key, i);
    }
    const rest = await resumed.rest();
    expect(seen).toEqual([0, 1, 2, 3, 4, 5]);
    expect(rest.map((e) => [e.event, e.id])).toEqual([['tool/call/resp', '6']]);
    expect(rest[0]!.json.data).toMatchObject({ success: true, data: { steps: 6 } });

    const after = await fetch(c.events_url, { headers: { 'Last-Event-ID': '6' } });
    expect(after.status).toBe(204);
  });

  it('disconnecting from the one-shot POST /tool/call stream through nginx still stops the tool', async () => {
    const key = `n${keys++}`;
    const s = await openSse(`${nginx.url}/a2e/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(callBody('gated', { key, steps: 3 }, { streaming: true })),
    });
    expect((await nextEvent(s, 'first event of the one-shot stream')).json.seq).toBe(0);
    s.abort();
    expect(await gates.aborted(key)).toContain('client disconnected');
  });
});

describe('heartbeats and proxy_read_timeout', () => {
  let short: Nginx;
  let quiet: TestGateway;
  let quietNginx: Nginx;
  beforeAll(async () => {
    const block = (port: number) =>
      readmeLocationBlock(port).then((b) => b.replace('proxy_read_timeout 60s;', 'proxy_read_timeout 1s;'));
    short = await startNginx({ server: await block(Number(new URL(gw.url).port)) });
    // Control: the same proxy in front of a gateway whose heartbeats are too rare.
    quiet = await startGateway({
      plugins: [gates.plugin],
      config: { server: { base_path: '/a2e', heartbeat_s: 600 } },
    });
    quietNginx = await startNginx({ server: await block(Number(new URL(quiet.url).port)) });
  });
  afterAll(async () => {
    await short?.stop();
    await quietNginx?.stop();
    await quiet?.close();
  });

  it('an idle stream outlives a 1 s proxy_read_timeout thanks to heartbeats (0.2 s)', async () => {
    const c = await startGated(2, `${short.url}/a2e`);
    const s = await openSse(c.events_url);
    expect((await nextEvent(s, 'event 0')).json.seq).toBe(0);
    const base = s.comments.filter((x) => x.includes('heartbeat')).length;
    // Idle for 10 heartbeats (≈2 s, twice nginx's timeout) before the tool goes on.
    while (s.comments.filter((x) => x.includes('heartbeat')).length < base + 10)
      await new Promise((r) => setTimeout(r, 50));
    gates.open(c.key, 0);
    expect((await nextEvent(s, 'event 1 after the idle time')).json.seq).toBe(1);
    gates.open(c.key, 1);
    expect((await s.rest()).map((e) => e.event)).toEqual(['tool/call/resp']);
  });

  it('control: without heartbeats nginx cuts the idle stream at its timeout (and the call survives it)', async () => {
    const c = await startGated(1, `${quietNginx.url}/a2e`);
    const s = await openSse(c.events_url);
    expect((await nextEvent(s, 'event 0')).json.seq).toBe(0);
    expect(await s.next()).toBeNull(); // cut by nginx, no tool/call/resp
    expect(await nginxLogMentionsTimeout(quietNginx)).toBe(true);
    expect((await state(`${quiet.url}/tool/calls/${c.call_id}`)).state).toBe('running');
    gates.open(c.key, 0);
  });
});

async function nginxLogMentionsTimeout(n: Nginx): Promise<boolean> {
  return /upstream timed out/.test(await n.errorLog());
}
