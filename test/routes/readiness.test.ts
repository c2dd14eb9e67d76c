/**
 * What an operator and a first-time visitor expect of the gateway's address:
 * GET / sends a browser to the docs and tells a JSON client where to go,
 * every JSON answer ends with a newline (curl's prompt starts on its own
 * line), and GET /readyz is 503 until the A2A agents have loaded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStub, type Stub, type StubRequest } from '../helpers/a2a-stub.js';
import { deferred, definePlugin, echoTool } from '../helpers/plugins.js';
import { callBody, startGateway, type TestGateway } from '../helpers/server.js';

const plugins = [definePlugin('newline', [echoTool])];

describe('GET /', () => {
  let gw: TestGateway;
  let proxied: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ plugins });
    proxied = await startGateway({ plugins, config: { server: { base_path: '/a2e' } } });
  });
  afterAll(async () => {
    await gw?.close();
    await proxied?.close();
  });

  it('redirects a browser (Accept: text/html) to /docs, under the base path too', async () => {
    const accept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'; // what Chromium sends
    const r = await fetch(`${gw.url}/`, { headers: { Accept: accept }, redirect: 'manual' });
    expect(r.status).toBe(302);
    expect(r.headers.get('location')).toBe('/docs');
    const followed = await fetch(`${gw.url}/`, { headers: { Accept: accept } });
    expect(followed.status).toBe(200);
    expect(await followed.text()).toContain('swagger-ui');
    const p = await fetch(`${proxied.url}`, { headers: { Accept: accept }, redirect: 'manual' });
    expect(p.status).toBe(302);
    expect(p.headers.get('location')).toBe('/a2e/docs');
  });

  it('answers a JSON client with where to go', async () => {
    const r = await fetch(`${gw.url}/`);
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({
      name: 'a2e-gateway',
      console: '/ui',
      docs: '/docs',
      openapi: '/openapi.json',
      tools: 'POST /tool/list',
      mcp: 'POST /mcp',
    });
    expect(await (await fetch(`${proxied.url}`)).json()).toMatchObject({
      console: '/a2e/ui',
      docs: '/a2e/docs',
      call: 'POST /a2e/tool/call',
      mcp: 'POST /a2e/mcp',
    });
    // A door that is off is not in the index; the A2A agent card is, when that door is on.
    const other = await startGateway({
      plugins,
      config: { ui: { enabled: false }, mcp: { serve: { enabled: false } }, a2a_server: { enabled: true } },
    });
    try {
      const index = (await (await fetch(`${other.url}/`)).json()) as Record<string, string>;
      expect(index).not.toHaveProperty('console');
      expect(index).not.toHaveProperty('mcp');
      expect(index.a2a_agent_card).toBe('/.well-known/agent-card.json');
    } finally {
      await other.close();
    }
  });

  it('every JSON answer ends with a newline: list, call (the hot path), call resources, errors, health, readiness', async () => {
    const post = (path: string, body: unknown) =>
      fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    const answers: [string, Response][] = [
      ['POST /tool/list', await post('/tool/list', {})],
      ['POST /tool/call', await post('/tool/call', callBody('echo', { text: 'x' }))],
      ['POST /tool/calls', await post('/tool/calls', callBody('echo', { text: 'x' }))],
      ['unknown tool', await post('/tool/call', callBody('ehco', {}))],
      ['bad JSON', await post('/tool/call', '{')],
      ['GET /healthz', await fetch(`${gw.url}/healthz`)],
      ['GET /readyz', await fetch(`${gw.url}/readyz`)],
      ['GET /', await fetch(`${gw.url}/`)],
      ['no route', await fetch(`${gw.url}/nope`)],
      ['POST /a2e/v1/session', await fetch(`${gw.url}/a2e/v1/session`, { method: 'POST' })],
    ];
    for (const [what, res] of answers) {
      expect(res.headers.get('content-type'), what).toMatch(/^application\/json/);
      const text = await res.text();
      expect(text.endsWith('}\n'), `${what}: ${JSON.stringify(text.slice(-20))}`).toBe(true);
      expect(() => JSON.parse(text), what).not.toThrow();
      expect(Number(res.headers.get('content-length') ?? Buffer.byteLength(text)), what).toBe(Buffer.byteLength(text));
    }
  });
});

describe('GET /readyz', () => {
  const card = deferred();
  let peer: Stub;
  let gw: TestGateway;
  beforeAll(async () => {
    // An agent whose card comes only when the test says so: the gateway starts without waiting for it.
    peer = await startStub(async (r: StubRequest) => {
      if (r.path !== '/.well-known/agent-card.json') return undefined;
      await card.promise;
      return { json: { name: 'slow', skills: [{ id: 'think', description: 'think skill' }] } };
    });
    gw = await startGateway({ plugins, config: { agents: { slow: { card: peer.url } }, a2a: { start_wait_ms: 50 } } });
  });
  afterAll(async () => {
    card.resolve();
    await gw?.close();
    await peer?.close();
  });

  it('is 503 with what is pending while an agent loads, 200 once it has; /healthz is 200 throughout', async () => {
    const before = await fetch(`${gw.url}/readyz`);
    expect(before.status).toBe(503);
    expect(before.headers.get('retry-after')).toBe('1');
    expect(await before.json()).toMatchObject({
      type: 'error',
      code: 'unavailable',
      message: 'not ready: 1 A2A agent is still loading its card (GET /agents has details); retry shortly',
      detail: { status: 'starting', pending: ['1 A2A agent is still loading its card (GET /agents has details)'] },
    });
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);

    card.resolve();
    await expect.poll(async () => (await fetch(`${gw.url}/readyz`)).status, { timeout: 15_000 }).toBe(200);
    expect(await (await fetch(`${gw.url}/readyz`)).json()).toEqual({ status: 'ready' });
    const tools = (await (await fetch(`${gw.url}/tool/list`, { method: 'POST', body: '{}' })).json()) as {
      tools: { name: string }[];
    };
    expect(tools.tools.map((t) => t.name)).toContain('slow_think');
  });

  it('is public like /healthz when auth is on (probes carry no token)', async () => {
    const secured = await startGateway({
      plugins,
      config: { auth: { tokens: [{ name: 'ops', token_sha256: 'a'.repeat(64) }] } },
    });
    try {
      expect((await fetch(`${secured.url}/readyz`)).status).toBe(200);
      expect((await fetch(`${secured.url}/tool/list`, { method: 'POST', body: '{}' })).status).toBe(401);
    } finally {
      await secured.close();
    }
  });
});
