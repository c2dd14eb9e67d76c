/**
 * `server.trust_proxy` and the per-address session quota, through real nginx. Anonymous handshakes count against
 * the client's address (sessions.max_per_principal); behind a proxy that address must be the one the trusted proxy
 * saw, never one the client wrote into X-Forwarded-For itself. The regression: behind the documented nginx block
 * (which did not set the header) 60 spoofed addresses filled sessions.max_sessions and every other anonymous
 * caller got 503.
 *
 * Clients connect from different loopback addresses (127.0.0.2, 127.0.0.3: Linux routes all of 127/8 to lo), so
 * nginx's $remote_addr tells them apart.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docsNginxBlocks } from '../helpers/docs-nginx.js';
import { startNginx, type Nginx } from '../helpers/nginx.js';
import { definePlugin, echoTool } from '../helpers/plugins.js';
import { callBody, startGateway, type TestGateway } from '../helpers/server.js';

const EDGE_HEADER = 'proxy_set_header X-Forwarded-For $remote_addr;';

interface Answer {
  status: number;
  json: any;
}

/** POST JSON to `url` from the local address `from`, with extra headers. */
function post(url: string, body: unknown, from: string, headers: Record<string, string> = {}): Promise<Answer> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', localAddress: from, headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, json: text ? JSON.parse(text) : null }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const handshake = (base: string, from: string, headers: Record<string, string> = {}) =>
  post(`${base}/handshake`, { type: 'handshake/req', agent_caps: ['tools'] }, from, headers);

/** Whether a session still works (a session closed to make room answers 401). */
async function alive(base: string, sessionId: string): Promise<boolean> {
  const res = await post(`${base}/tool/list`, { type: 'tool/list/req', session_id: sessionId }, '127.0.0.1');
  if (res.status !== 200 && res.status !== 401)
    throw new Error(`tool/list answered ${res.status}: ${JSON.stringify(res.json)}`);
  return res.status === 200;
}

/**
 * Whether two handshakes count against the same per-address quota: with `max_per_principal: 1`, the second of the
 * same owner closes the first.
 */
async function sameQuota(
  base: string,
  first: [string, Record<string, string>?],
  second: [string, Record<string, string>?],
): Promise<boolean> {
  const a = await handshake(base, first[0], first[1]);
  expect(a.status).toBe(200);
  const b = await handshake(base, second[0], second[1]);
  expect(b.status).toBe(200);
  const shared = !(await alive(base, a.json.session_id));
  expect(await alive(base, b.json.session_id)).toBe(true);
  return shared;
}

/** The docs' nginx blocks that put the gateway under /a2e/ on 127.0.0.1:8080. */
async function gatewayBlocks() {
  return (await docsNginxBlocks()).filter((b) => b.text.includes('proxy_pass http://127.0.0.1:8080/'));
}

describe('the nginx blocks in docs/*.md', () => {
  it('each one that proxies to the gateway replaces X-Forwarded-For with the address nginx saw', async () => {
    const blocks = await gatewayBlocks();
    expect(blocks.length, 'docs/deployment.md has the documented nginx block').toBeGreaterThan(0);
    for (const b of blocks)
      expect({ file: b.file, sets: b.text.includes(EDGE_HEADER) }).toEqual({ file: b.file, sets: true });
  });
});

describe('server.trust_proxy: true behind the documented nginx block', () => {
  let gw: TestGateway;
  let nginx: Nginx;
  beforeAll(async () => {
    gw = await startGateway({
      plugins: [definePlugin('t', [echoTool])],
      config: {
        server: { base_path: '/a2e', trust_proxy: true },
        sessions: { max_sessions: 20, max_per_principal: 3 },
        transport: { max_sessions: 10, max_sessions_per_address: 2 },
      },
    });
    const [block] = await gatewayBlocks();
    nginx = await startNginx({
      server: block!.text.replaceAll('http://127.0.0.1:8080/', `http://127.0.0.1:${gw.port}/`),
    });
  });
  afterAll(async () => {
    await nginx?.stop();
    await gw?.close();
  });

  it("60 handshakes with spoofed X-Forwarded-For count against the spoofer's own address; another caller still gets a session", async () => {
    const base = `${nginx.url}/a2e`;
    const spoofed: Answer[] = [];
    for (let i = 0; i < 60; i++)
      spoofed.push(await handshake(base, '127.0.0.2', { 'x-forwarded-for': `10.0.${i >> 8}.${i & 255}` }));
    // max_per_principal: each handshake beyond 3 closed the spoofer's own least recently used session.
    expect(spoofed.map((r) => r.status)).toEqual(Array(60).fill(200));
    const stillOpen = [];
    for (const r of spoofed) if (await alive(base, r.json.session_id)) stillOpen.push(r.json.session_id);
    expect(stillOpen).toEqual(spoofed.slice(-3).map((r) => r.json.session_id));

    const other = await handshake(base, '127.0.0.3');
    expect(other.status, JSON.stringify(other.json)).toBe(200);
    expect(await alive(base, other.json.session_id)).toBe(true);
  });

  it("A2E transport sessions: 30 opened with spoofed X-Forwarded-For count against the spoofer's address; another caller still opens one", async () => {
    const open = (from: string, headers: Record<string, string> = {}) =>
      post(`${nginx.url}/a2e/a2e/v1/session`, {}, from, headers);
    const spoofed: Answer[] = [];
    for (let i = 0; i < 30; i++) spoofed.push(await open('127.0.0.2', { 'x-forwarded-for': `10.1.0.${i}` }));
    // max_sessions_per_address: each one beyond 2 closed the spoofer's own oldest; the gateway's 10 never filled.
    expect(spoofed.map((r) => r.status)).toEqual(Array(30).fill(200));
    const other = await open('127.0.0.3');
    expect(other.status, JSON.stringify(other.json)).toBe(200);
    expect(other.json.session_id).toEqual(expect.any(String));
  });

  it('two callers on different addresses keep separate quotas through nginx', async () => {
    const base = `${nginx.url}/a2e`;
    const one = await Promise.all([1, 2, 3].map(() => handshake(base, '127.0.0.4')));
    const two = await handshake(base, '127.0.0.5');
    expect(two.status).toBe(200);
    for (const r of one) expect(await alive(base, r.json.session_id)).toBe(true);
  });
});

describe('server.trust_proxy as a hop count: two proxies in front of the gateway', () => {
  let gw: TestGateway;
  let inner: Nginx;
  let edge: Nginx;
  beforeAll(async () => {
    gw = await startGateway({
      config: { server: { base_path: '/a2e', trust_proxy: 2 }, sessions: { max_per_principal: 1 } },
    });
    // The inner proxy appends what it saw (the edge's address) to the edge's header.
    inner = await startNginx({
      server: `location /a2e/ {
    proxy_pass http://127.0.0.1:${gw.port}/a2e/;
    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
}`,
    });
    const [block] = await gatewayBlocks();
    edge = await startNginx({
      server: block!.text.replaceAll('http://127.0.0.1:8080/', `http://127.0.0.1:${inner.port}/`),
    });
  });
  afterAll(async () => {
    await edge?.stop();
    await inner?.stop();
    await gw?.close();
  });

  it('the address is what the edge proxy saw: a spoofed header changes nothing, another address is another quota', async () => {
    const base = `${edge.url}/a2e`;
    expect(
      await sameQuota(
        base,
        ['127.0.0.2', { 'x-forwarded-for': '10.1.1.1' }],
        ['127.0.0.2', { 'x-forwarded-for': '10.2.2.2' }],
      ),
    ).toBe(true);
    expect(await sameQuota(base, ['127.0.0.2'], ['127.0.0.3'])).toBe(false);
  });
});

describe('server.trust_proxy as a list of proxy addresses', () => {
  let gw: TestGateway;
  let nginx: Nginx;
  beforeAll(async () => {
    gw = await startGateway({
      plugins: [definePlugin('t', [echoTool])],
      config: {
        server: { base_path: '/a2e', trust_proxy: ['127.0.0.1', '192.168.0.0/16'] },
        sessions: { max_per_principal: 1 },
      },
    });
    const [block] = await gatewayBlocks();
    nginx = await startNginx({
      server: block!.text.replaceAll('http://127.0.0.1:8080/', `http://127.0.0.1:${gw.port}/`),
    });
  });
  afterAll(async () => {
    await nginx?.stop();
    await gw?.close();
  });

  it('through the listed proxy the address is the one it saw', async () => {
    const base = `${nginx.url}/a2e`;
    expect(
      await sameQuota(
        base,
        ['127.0.0.2', { 'x-forwarded-for': '10.1.1.1' }],
        ['127.0.0.2', { 'x-forwarded-for': '10.2.2.2' }],
      ),
    ).toBe(true);
    expect(await sameQuota(base, ['127.0.0.2'], ['127.0.0.3'])).toBe(false);
  });

  it('a request whose peer is not a listed proxy is taken as is: its forwarded headers are not believed', async () => {
    const base = gw.url; // straight to the gateway (its URL has the base path)
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/a2e$/);
    expect(
      await sameQuota(
        base,
        ['127.0.0.2', { 'x-forwarded-for': '10.1.1.1' }],
        ['127.0.0.2', { 'x-forwarded-for': '10.2.2.2' }],
      ),
    ).toBe(true);
    const started = await post(`${base}/tool/calls`, callBody('echo', { text: 'x' }), '127.0.0.2', {
      'x-forwarded-host': 'evil.example',
      'x-forwarded-proto': 'https',
    });
    expect(started.status).toBe(202);
    expect(started.json.result_url).toBe(`${gw.url}/tool/calls/${started.json.call_id}`);
    // Through the proxy, the same headers are believed.
    const proxied = await post(`${nginx.url}/a2e/tool/calls`, callBody('echo', { text: 'x' }), '127.0.0.2');
    expect(proxied.json.result_url).toBe(`${nginx.url}/a2e/tool/calls/${proxied.json.call_id}`);
  });
});
