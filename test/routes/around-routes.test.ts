/**
 * The request step (id, logger, access line, the guard's check) inside each route's own handler
 * (src/routes/http/around-routes.ts) rather than a Hono middleware in front of every route: a route takes Hono's
 * direct dispatch, and every request is still entered and checked once, matched or not, whoever registered the route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, defineConfig } from '../../src/index.js';
import { waitFor } from '../helpers/a2a-stub.js';
import { LogCapture } from '../helpers/log-capture.js';
import { postJson } from '../helpers/server.js';
import { sha256, testTools } from '../security/helpers.js';

const TOKEN = 'around-routes-token-0a1b2c3d4e5f6071';
const AUTH = { Authorization: `Bearer ${TOKEN}` };

let url: string;
let log: LogCapture;
let close: () => Promise<void>;
let app: Awaited<ReturnType<typeof createGateway>>['app'];

beforeAll(async () => {
  log = new LogCapture();
  const gateway = await createGateway({
    config: defineConfig({
      server: { port: 0 },
      auth: { tokens: [{ name: 'a', token_sha256: sha256(TOKEN) }] },
      sessions: { required: false },
      tools: { fs: { enabled: false }, shell: { enabled: false }, http: { enabled: false }, eval: { enabled: false } },
    }),
    plugins: [testTools()],
    logger: log.logger,
    env: {},
  });
  app = gateway.app;
  // Routes added after createApp (as an embedder or a later door would) are entered and checked the same way.
  app.get('/late/ok', (c) => c.text('late'));
  app.get('/late/throws', () => {
    throw new Error('boom at /home/someone/secret/path');
  });
  ({ url } = await gateway.listen());
  close = () => gateway.close();
});
afterAll(() => close());

/** The access lines (or call lines carrying one) logged for the request that was answered with `requestId`. */
const linesOf = (requestId: string | null) => log.records.filter((r) => r.request_id === requestId && 'status' in r);

/** Wait for the request's line, then for a later request's too, so any second line for the first would be there. */
async function oneLine(requestId: string | null): Promise<Record<string, any>> {
  expect(requestId).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
  await waitFor(`the line of ${requestId}`, () => linesOf(requestId).length > 0);
  const later = await fetch(`${url}/healthz`);
  await waitFor('the later line', () => log.records.some((r) => r.request_id === later.headers.get('x-request-id')));
  expect(linesOf(requestId)).toHaveLength(1);
  return linesOf(requestId)[0]!;
}

describe('the request step inside each route', () => {
  it("a route is one handler to Hono: its direct dispatch, no middleware step in front (no '*' middleware route)", async () => {
    const ok = await postJson(
      `${url}/tool/call`,
      { type: 'tool/call/req', tool_name: 'echo', arguments: { text: 'x' } },
      AUTH,
    );
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
    for (const [method, path] of [
      ['POST', '/tool/call'],
      ['POST', '/tool/list'],
      ['GET', '/healthz'],
      ['GET', '/late/ok'],
    ]) {
      // What Hono's dispatch checks: exactly one matched handler takes the path without compose.
      expect(app.router.match(method!, path!)[0], `${method} ${path}`).toHaveLength(1);
    }
    expect(app.routes.some((r) => r.method === 'ALL' && r.path === '/*')).toBe(false);
    const line = await oneLine(ok.headers.get('x-request-id'));
    expect(line).toMatchObject({ msg: 'call succeeded', method: 'POST', path: '/tool/call', status: 200 });
  });

  it('a path no route matches is checked first: 401 without a token, 404 with one, each with its id and one line', async () => {
    const refused = await fetch(`${url}/no/such/route`);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ type: 'error', code: 'unauthorized' });
    expect(await oneLine(refused.headers.get('x-request-id'))).toMatchObject({ status: 401, path: '/no/such/route' });

    const missing = await fetch(`${url}/no/such/route`, { headers: { ...AUTH, 'X-Request-Id': 'client-id-1' } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('x-request-id')).toBe('client-id-1');
    expect((await missing.json()).message).toMatch(/no route GET \/no\/such\/route; GET \/openapi\.json lists/);
    expect(await oneLine('client-id-1')).toMatchObject({ status: 404, msg: 'request finished' });

    // A method the path does not serve is still a 405 naming the allowed ones.
    const wrong = await fetch(`${url}/tool/call`, { method: 'DELETE', headers: AUTH });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('x-request-id')).toBeTruthy();
  });

  it('a route added after createApp is guarded, and its thrown error is an internal error with the id, no path leaked', async () => {
    expect((await fetch(`${url}/late/ok`)).status).toBe(401);
    const ok = await fetch(`${url}/late/ok`, { headers: AUTH });
    expect(await ok.text()).toBe('late');
    expect(await oneLine(ok.headers.get('x-request-id'))).toMatchObject({ status: 200, path: '/late/ok' });

    const failed = await fetch(`${url}/late/throws`, { headers: AUTH });
    expect(failed.status).toBe(500);
    const text = await failed.text();
    expect(text).toContain('"internal"');
    expect(text).not.toContain('/home/someone');
    const id = failed.headers.get('x-request-id');
    expect(await oneLine(id)).toMatchObject({ status: 500, path: '/late/throws' });
    expect(log.records.some((r) => r.request_id === id && r.msg === 'unhandled error')).toBe(true);
  });

  it('a path with several handlers (POST /mcp: its POST and ALL routes) enters once: one id, one line', async () => {
    expect(app.router.match('POST', '/mcp')[0].length).toBeGreaterThan(1);
    const res = await postJson(
      `${url}/mcp`,
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      {
        ...AUTH,
        Accept: 'application/json, text/event-stream',
      },
    );
    expect(res.status).toBe(200);
    expect(await oneLine(res.headers.get('x-request-id'))).toMatchObject({ method: 'POST', path: '/mcp', status: 200 });
    expect((await fetch(`${url}/mcp`, { method: 'POST', body: '{}' })).status).toBe(401);
  });
});
