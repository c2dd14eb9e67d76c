import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, defineConfig, MemoryCallStore, type Call } from '../../src/index.js';
import { gatedPlugin } from '../helpers/gated.js';
import { startRedis } from '../helpers/redis.js';
import { callBody, openSse, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const gates = gatedPlugin();
const suiteConfig = { server: { heartbeat_s: 0.05 }, calls: { retry_ms: 1500, max_events: 10 } };

/**
 * Where the suite runs: calls are started on `gw`; they are read, followed and
 * canceled through `reader`. In memory that is the same gateway; with Redis it
 * is a second gateway sharing the store, so every read crosses instances.
 */
interface Setup {
  gw: TestGateway;
  reader: TestGateway;
  close(): Promise<void>;
}
const setups: Record<'memory' | 'redis', () => Promise<Setup>> = {
  async memory() {
    const gw = await startGateway({ plugins: [gates.plugin], config: suiteConfig });
    return { gw, reader: gw, close: () => gw.close() };
  },
  async redis() {
    const redis = await startRedis();
    const config = { ...suiteConfig, store: { kind: 'redis' as const, url: redis.url, prefix: 'calls-suite:' } };
    const gw = await startGateway({ plugins: [gates.plugin], config });
    const reader = await startGateway({ plugins: [gates.plugin], config });
    return {
      gw,
      reader,
      async close() {
        await Promise.all([gw.close(), reader.close()]);
        await redis.dispose();
      },
    };
  },
};

let gw: TestGateway;
/** A URL of `gw` as served by the reader gateway. */
let via: (url: string) => string;

let keys = 0;
/** Start a gated call resource; returns the 202 body, its headers and the call's key. */
async function startGated(steps: number) {
  const key = `k${keys++}`;
  const res = await postJson(`${gw.url}/tool/calls`, callBody('gated', { key, steps }, { id: `req-${key}` }));
  expect(res.status).toBe(202);
  const body = res.json as { events_url: string; result_url: string };
  return {
    key,
    ...res.json,
    events_url: via(body.events_url),
    result_url: via(body.result_url),
    location: res.headers.get('location'),
  } as {
    key: string;
    call_id: string;
    state: string;
    events_url: string;
    result_url: string;
    location: string;
  };
}

const getJson = async (url: string, init: RequestInit = {}) => {
  const res = await fetch(url, init);
  return { status: res.status, headers: res.headers, json: (await res.json()) as any };
};

/** The first bytes of a stream, as sent (to see the `retry:` line the parser consumes). */
async function firstChunk(url: string): Promise<string> {
  const controller = new AbortController();
  const res = await fetch(url, { signal: controller.signal });
  const reader = res.body!.getReader();
  const { value } = await reader.read();
  controller.abort();
  return new TextDecoder().decode(value);
}

describe.each(['memory', 'redis'] as const)('call resources (store: %s)', (kind) => {
  let setup: Setup;
  beforeAll(async () => {
    setup = await setups[kind]();
    gw = setup.gw;
    via = (url) => url.replace(setup.gw.url, setup.reader.url);
  });
  afterAll(() => setup?.close());

  it('POST /tool/calls answers 202 at once with the call URLs; the call runs in the background', async () => {
    const c = await startGated(2);
    expect(c.state).toBe('running');
    expect(c.location).toBe(`${gw.url}/tool/calls/${c.call_id}`);
    expect(c.result_url).toBe(via(c.location));
    expect(c.events_url).toBe(`${c.result_url}/events`);

    // Another instance sees an event once the owner has written it (batched per tick): wait for it, not for a time.
    await expect.poll(async () => (await getJson(c.result_url)).json.events).toBe(1);
    const running = await getJson(c.result_url);
    expect(running.status).toBe(200);
    expect(running.json).toMatchObject({
      call_id: c.call_id,
      req_id: `req-${c.key}`,
      tool_name: 'gated',
      state: 'running',
      events: 1,
    });
    expect(running.json.result).toBeUndefined();
    expect(typeof running.json.created_at).toBe('number');

    gates.open(c.key, 0);
    gates.open(c.key, 1);
    const s = await openSse(c.events_url);
    const events = await s.rest();
    expect(events.map((e) => [e.event, e.id])).toEqual([
      ['tool/event', '0'],
      ['tool/event', '1'],
      ['tool/call/resp', '2'],
    ]);
    const done = await getJson(c.result_url);
    expect(done.json).toMatchObject({
      state: 'completed',
      events: 2,
      result: {
        type: 'tool/call/resp',
        req_id: `req-${c.key}`,
        data: { success: true, data: { key: c.key, steps: 2 } },
      },
    });
    expect(done.json.result).toEqual(events[2]!.json);
  });

  it('the events stream starts with a retry hint, has SSE headers, and follows live events', async () => {
    const c = await startGated(3);
    expect(await firstChunk(c.events_url)).toMatch(/^retry: 1500\n: stream open\n\n/);
    const s = await openSse(c.events_url);
    expect(s.status).toBe(200);
    expect(s.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(s.headers.get('x-accel-buffering')).toBe('no');
    for (let i = 0; i < 3; i++) {
      const e = await s.next(); // the tool waits on gate i until this arrived
      expect(e!.id).toBe(String(i));
      expect(e!.json).toMatchObject({ type: 'tool/event', kind: 'progress', seq: i, data: { message: `step ${i}` } });
      gates.open(c.key, i);
    }
    const rest = await s.rest();
    expect(rest.map((e) => e.event)).toEqual(['tool/call/resp']);
    expect(rest[0]!.json.data).toMatchObject({ success: true });
  });

  it('several clients watch one call; one disconnecting neither cancels the call nor disturbs the other', async () => {
    const c = await startGated(3);
    const a = await openSse(c.events_url);
    const b = await openSse(c.events_url);
    expect((await a.next())!.id).toBe('0');
    expect((await b.next())!.id).toBe('0');
    a.abort();
    gates.open(c.key, 0);
    expect((await b.next())!.id).toBe('1');
    expect((await getJson(c.result_url)).json.state).toBe('running');
    gates.open(c.key, 1);
    gates.open(c.key, 2);
    const rest = await b.rest();
    expect(rest.map((e) => e.id)).toEqual(['2', '3']);
    expect(rest[1]!.json.data.success).toBe(true);
  });

  it('resumes after Last-Event-ID (or ?after=; the header wins): every event exactly once, in order', async () => {
    const c = await startGated(5);
    const first = await openSse(c.events_url);
    const seen: number[] = [];
    for (let i = 0; i < 2; i++) {
      const e = await first.next();
      seen.push(e!.json.seq);
      gates.open(c.key, i);
    }
    first.abort();
    // Event 2 is emitted while nobody watches; the call keeps running.
    await expect.poll(async () => (await getJson(c.result_url)).json.events).toBe(3);
    const resumed = await openSse(`${c.events_url}?after=0`, { headers: { 'Last-Event-ID': String(seen.at(-1)) } });
    for (let i = 2; i < 5; i++) {
      const e = await resumed.next();
      seen.push(e!.json.seq);
      gates.open(c.key, i);
    }
    const rest = await resumed.rest();
    expect(seen).toEqual([0, 1, 2, 3, 4]);
    expect(rest.map((e) => [e.event, e.id])).toEqual([['tool/call/resp', '5']]);

    // ?after= alone
    const fromQuery = await openSse(`${c.events_url}?after=2`);
    expect((await fromQuery.rest()).map((e) => e.id)).toEqual(['3', '4', '5']);
  });

  it('after the final response, a reconnect with its id gets 204 (EventSource stops); a late client gets the whole replay', async () => {
    const c = await startGated(1);
    gates.open(c.key, 0);
    const all = await (await openSse(c.events_url)).rest();
    expect(all.map((e) => e.id)).toEqual(['0', '1']);
    const again = await fetch(c.events_url, { headers: { 'Last-Event-ID': '1' } });
    expect(again.status).toBe(204);
    expect(await again.text()).toBe('');
    // One before the end: the response is still owed.
    const owed = await openSse(c.events_url, { headers: { 'Last-Event-ID': '0' } });
    expect((await owed.rest()).map((e) => e.event)).toEqual(['tool/call/resp']);
  });

  it('DELETE cancels: the tool is aborted, the state becomes canceled, watchers get the final response', async () => {
    const c = await startGated(3);
    const s = await openSse(c.events_url);
    expect((await s.next())!.id).toBe('0');
    const del = await getJson(c.result_url, { method: 'DELETE' });
    expect(del.status).toBe(200);
    expect(del.json).toMatchObject({
      state: 'canceled',
      result: { data: { success: false, error_code: 'tool_error' } },
    });
    expect(del.json.result.data.error).toContain('was canceled');
    expect(await gates.aborted(c.key)).toContain('was canceled');
    const rest = await s.rest();
    expect(rest.map((e) => e.event)).toEqual(['tool/call/resp']);
    expect(rest[0]!.json.data.error).toContain('was canceled');
    expect((await getJson(c.result_url)).json.state).toBe('canceled');
    // Cancelling again is harmless and says what the call is.
    expect((await getJson(c.result_url, { method: 'DELETE' })).json.state).toBe('canceled');
  });

  it('a finished call is not changed by DELETE', async () => {
    const res = await postJson(`${gw.url}/tool/calls`, callBody('echo', { text: 'hi' }));
    const url = via(res.json.result_url as string);
    await expect.poll(async () => (await getJson(url)).json.state).toBe('completed');
    const del = await getJson(url, { method: 'DELETE' });
    expect(del.json).toMatchObject({ state: 'completed', result: { data: { success: true, data: { text: 'hi' } } } });
  });

  it('a client resuming from an event that was dropped is told so by a status event naming the gap', async () => {
    // max_events is 10: of 100 events, the early ones are dropped.
    const res = await postJson(`${gw.url}/tool/calls`, callBody('burst', { count: 100 }));
    const [events_url, result_url] = [via(res.json.events_url), via(res.json.result_url)];
    await expect.poll(async () => (await getJson(result_url)).json.state).toBe('completed');
    const events = await (await openSse(events_url, { headers: { 'Last-Event-ID': '4' } })).rest();
    const notice = events[0]!;
    expect(notice.json.kind).toBe('status');
    const to = Number(notice.id);
    expect(notice.json.data.message).toBe(
      `events 5..${to} of this call are no longer kept and were skipped; the stream continues with event ${to + 1}`,
    );
    expect(to).toBeGreaterThan(5);
    const seqs = events.slice(1, -1).map((e) => e.json.seq);
    expect(seqs).toEqual(Array.from({ length: 100 - (to + 1) }, (_, i) => to + 1 + i));
    expect(events.at(-1)!.event).toBe('tool/call/resp');
  });

  it('errors: unknown call 404, bad or impossible Last-Event-ID 400, unsupported method 405, bad request 4xx', async () => {
    const unknown = await getJson(via(`${gw.url}/tool/calls/nope/events`));
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ type: 'error', code: 'not_found', detail: { call_id: 'nope' } });
    expect(unknown.json.message).toContain('no call "nope"');
    expect((await getJson(via(`${gw.url}/tool/calls/nope`))).status).toBe(404);
    expect((await getJson(via(`${gw.url}/tool/calls/nope`), { method: 'DELETE' })).status).toBe(404);

    const c = await startGated(2);
    await expect.poll(async () => (await getJson(c.result_url)).json.events).toBe(1);
    const bad = await getJson(c.events_url, { headers: { 'Last-Event-ID': 'abc' } });
    expect(bad.status).toBe(400);
    expect(bad.json.message).toBe('Last-Event-ID must be an event seq (an integer ≥ -1), got "abc"');
    const badQuery = await getJson(`${c.events_url}?after=1.5`);
    expect(badQuery.json.message).toContain('after must be an event seq');
    // Ahead of the call where it runs (another instance's view can lag, and waits: test/store/redis-resume-ahead.test.ts).
    const ahead = await getJson(c.events_url.replace(setup.reader.url, gw.url), { headers: { 'Last-Event-ID': '7' } });
    expect(ahead.status).toBe(400);
    expect(ahead.json.message).toContain('is ahead of this call: it has emitted 1 event(s) so far');

    const put = await fetch(c.result_url, { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, DELETE');

    expect((await postJson(`${gw.url}/tool/calls`, callBody('nope', {}))).status).toBe(404);
    expect((await postJson(`${gw.url}/tool/calls`, callBody('gated', { key: 1 }))).status).toBe(422);
    expect((await postJson(`${gw.url}/tool/calls`, '{')).status).toBe(400);
    gates.open(c.key, 0);
    gates.open(c.key, 1);
  });
});

describe('retention of finished calls', () => {
  it('keeps at most calls.max_retained finished calls, dropping the oldest', async () => {
    const small = await startGateway({ plugins: [gates.plugin], config: { calls: { max_retained: 2 } } });
    try {
      const urls: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await postJson(`${small.url}/tool/calls`, callBody('echo', { text: String(i) }));
        urls.push(r.json.result_url);
        await expect.poll(async () => (await getJson(r.json.result_url)).json.state).toBe('completed');
      }
      const statuses = [];
      for (const url of urls) statuses.push((await fetch(url)).status);
      expect(statuses).toEqual([404, 200, 200]);
    } finally {
      await small.close();
    }
  });

  it('MemoryCallStore drops finished calls after retainMs, keeps running ones', async () => {
    let now = 1_000_000;
    const store = new MemoryCallStore({ retainMs: 5000, maxRetained: 100, now: () => now });
    const fake = (id: string, settled: boolean) => {
      let finish!: () => void;
      const result = new Promise<void>((r) => (finish = r));
      const call = {
        id,
        get settled() {
          return settled;
        },
        result,
      } as unknown as Call;
      return {
        call,
        finish: async () => {
          settled = true;
          finish();
          await result;
          await Promise.resolve();
        },
      };
    };
    const a = fake('a', false);
    const b = fake('b', false);
    store.put(a.call);
    store.put(b.call);
    await a.finish();
    now += 4999;
    expect(store.get('a')).toBe(a.call);
    now += 2;
    expect(store.get('a')).toBeUndefined();
    now += 1_000_000;
    expect(store.get('b')).toBe(b.call); // running calls are never expired
    expect([...store.list()].map((c) => c.id)).toEqual(['b']);
  });
});

describe('server.base_path and server.trust_proxy', () => {
  let proxied: TestGateway;
  let direct: TestGateway;
  beforeAll(async () => {
    proxied = await startGateway({
      plugins: [gates.plugin],
      config: { server: { base_path: '/a2e/', trust_proxy: true } },
    });
    direct = await startGateway({ plugins: [gates.plugin], config: { server: { base_path: '/a2e' } } });
  });
  afterAll(async () => {
    await proxied?.close();
    await direct?.close();
  });
  const forwarded = { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'tools.example.com:8443, inner.example' };

  it('every route is under the base path; the docs and OpenAPI servers carry it', async () => {
    expect(proxied.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/a2e$/);
    const origin = proxied.url.replace(/\/a2e$/, '');
    expect((await fetch(`${proxied.url}/healthz`)).status).toBe(200);
    const outside = await getJson(`${origin}/healthz`);
    expect(outside.status).toBe(404);
    expect(outside.json.message).toBe('no route GET /healthz; GET /a2e/openapi.json lists the routes');
    const doc = (await getJson(`${proxied.url}/openapi.json`)).json;
    expect(doc.servers).toEqual([{ url: '/a2e', description: 'This gateway' }]);
    expect(Object.keys(doc.paths)).toContain('/tool/calls/{id}/events');
    const docs = await fetch(`${proxied.url}/docs`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('src="docs/swagger-ui-bundle.js"'); // relative: resolves under /a2e/docs
    expect((await fetch(`${proxied.url}/docs/swagger-ui-bundle.js`)).status).toBe(200);
    const put = await fetch(`${proxied.url}/tool/calls/x`, { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, DELETE');
    const list = await postJson(`${proxied.url}/tool/list`, {});
    expect(list.json.tools.map((t: { name: string }) => t.name)).toContain('gated');
  });

  it('trust_proxy: returned URLs use X-Forwarded-Proto and X-Forwarded-Host (first value) and the base path', async () => {
    const r = await postJson(`${proxied.url}/tool/calls`, callBody('echo', { text: 'x' }), forwarded);
    const id = r.json.call_id;
    expect(r.json.result_url).toBe(`https://tools.example.com:8443/a2e/tool/calls/${id}`);
    expect(r.headers.get('location')).toBe(r.json.result_url);
    expect(r.json.events_url).toBe(`https://tools.example.com:8443/a2e/tool/calls/${id}/events`);
    const got = await getJson(`${proxied.url}/tool/calls/${id}`, {
      headers: { 'X-Forwarded-Proto': 'gopher', 'X-Forwarded-Host': 'bad host/x' },
    });
    expect(got.json.result_url).toBe(`${proxied.url}/tool/calls/${id}`); // unusable values are ignored
  });

  it('without trust_proxy the forwarded headers are ignored', async () => {
    const r = await postJson(`${direct.url}/tool/calls`, callBody('echo', { text: 'x' }), forwarded);
    expect(r.json.result_url).toBe(`${direct.url}/tool/calls/${r.json.call_id}`);
    const events = await (await openSse(r.json.events_url)).rest();
    expect(events.at(-1)!.json.data.data).toEqual({ text: 'x' });
  });

  it('a base_path that is not a path is a config error naming the key', () => {
    expect(() => defineConfig({ server: { base_path: 'a2e' } })).toThrow(ConfigError);
    expect(() => defineConfig({ server: { base_path: '/a 2e' } })).toThrow(/server\.base_path/);
    expect(defineConfig({ server: { base_path: '/' } }).server.base_path).toBe('');
    expect(defineConfig({}).server).toMatchObject({ base_path: '', trust_proxy: false });
    expect(defineConfig({}).calls).toMatchObject({
      retain_s: 300,
      max_retained: 10_000,
      max_retained_per_principal: 1000,
      retry_ms: 2000,
    });
  });
});
