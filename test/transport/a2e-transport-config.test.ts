/**
 * The A2E transport's configuration and lifecycle: idle expiry, the queue
 * bound, a pluggable handshake auth check, another path, switched off, and
 * gateway shutdown with streams attached.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { OpenAPIHono } from '@hono/zod-openapi';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createLogger,
  Engine,
  parseConfig,
  ToolRegistry,
  type AuditRecord,
  type ToolContext,
} from '../../src/index.js';
import { mountA2eTransport } from '../../src/routes/doors/a2e-transport.js';
import { DEFAULT_HTTP_LIMITS } from '../../src/routes/http/limits.js';
import { bearerTokenAuth, TransportConfig, type A2eHttpTransport } from '../../src/transport/a2e-http/index.js';
import { A2eTestClient } from '../helpers/a2e-client.js';
import { deferred, definePlugin, echoTool } from '../helpers/plugins.js';
import { startGateway, type TestGateway } from '../helpers/server.js';

let aborted = deferred<string>();
const burstDone = deferred();
const tools = definePlugin('transport-config-test', [
  echoTool,
  [
    {
      name: 'burst',
      description: 'Emits n events at once',
      input_parameters: [{ name: 'n', type: 'integer', description: 'events', required: true }],
    },
    (args, ctx: ToolContext) => {
      for (let i = 0; i < Number(args.n); i++) ctx.emit('status', { message: `event ${i}` });
      burstDone.resolve();
      // Finish only after the forwarder had a chance to fill the queue: the events stay inside the call.
      return new Promise((resolve) => setImmediate(() => resolve({ n: args.n })));
    },
  ],
  [
    { name: 'hang', description: 'Waits until stopped' },
    (_args, ctx: ToolContext) =>
      new Promise((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () => {
          aborted.resolve((ctx.signal.reason as Error).message);
          reject(ctx.signal.reason);
        });
      }),
  ],
]);

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});
async function gateway(transport: Record<string, unknown>, server: Record<string, unknown> = {}): Promise<TestGateway> {
  const gw = await startGateway({ plugins: [tools], config: { transport, server } });
  cleanup.push(() => gw.close());
  return gw;
}

describe('A2E transport configuration', () => {
  it('idle sessions expire, with their queued messages and running calls', async () => {
    // 1 s: room for two cold POST /send on a loaded machine before the session counts as idle.
    const gw = await gateway({ session_idle_s: 1 });
    const client = await A2eTestClient.open(`${gw.url}/a2e/v1`);
    aborted = deferred<string>();
    // No stream ever attaches: the answers wait in the queue.
    await client.send({ type: 'handshake/req', agent_caps: ['tools'] });
    await client.send({ type: 'tool/call/req', tool_name: 'hang', arguments: {}, timeout: 60 });
    expect(await aborted.promise).toContain('client disconnected');
    const send = await client.send({ type: 'ping' });
    expect(send.status).toBe(404);
    const stream = await client.openStream();
    expect(stream.status).toBe(404);
    expect((gw.gateway.transport as A2eHttpTransport).size).toBe(0);
  });

  it('a session with a stream attached does not expire, nor does its handshake', async () => {
    // 1 s, not less: the sweep that keeps an attached session's handshake alive must get to run on a loaded machine.
    const gw = await gateway({ session_idle_s: 1 });
    const { client } = await A2eTestClient.connect(`${gw.url}/a2e/v1`);
    cleanup.push(() => client.dropStream());
    // Nothing is sent for several idle periods; only the stream stays attached.
    // Waiting is the point here: the assertion is that time passing does not close the session.
    await new Promise((r) => setTimeout(r, 3500));
    expect((await client.request({ type: 'ping' })).response.type).toBe('pong');
    // Its handshake is still good too.
    const call = await client.request({ type: 'tool/call/req', tool_name: 'echo', arguments: { text: 'still here' } });
    expect(call.response.data).toMatchObject({ success: true, data: { text: 'still here' } });
  });

  it('max_queued bounds the messages waiting for a stream: POST /send → 429 beyond it, nothing lost', async () => {
    const gw = await gateway({ max_queued: 3 });
    const client = await A2eTestClient.open(`${gw.url}/a2e/v1`);
    for (const id of ['m1', 'm2', 'm3']) expect((await client.send({ type: 'ping', id })).status).toBe(202);
    const refused = await client.send({ type: 'ping', id: 'm4' });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(((await refused.json()) as { detail: string }).detail).toContain('transport.max_queued');
    await client.openStream();
    cleanup.push(() => client.dropStream());
    await client.waitFor((m) => m.req_id === 'm3');
    expect((await client.send({ type: 'ping', id: 'm4' })).status).toBe(202);
    await client.waitFor((m) => m.req_id === 'm4');
    expect(client.received.map((m) => m.req_id)).toEqual(['m1', 'm2', 'm3', 'm4']);
  });

  it('a flood of events waits inside the call while no stream reads; all arrive in order once one attaches', async () => {
    const gw = await gateway({ max_queued: 4 });
    const client = await A2eTestClient.open(`${gw.url}/a2e/v1`);
    await client.send({
      type: 'tool/call/req',
      id: 'flood',
      tool_name: 'burst',
      arguments: { n: 200 },
      streaming: true,
    });
    await burstDone.promise; // the tool has emitted all 200 events…
    await new Promise<void>((resolve) => {
      const settled = () => (gw.gateway.engine.running === 0 ? setImmediate(resolve) : setImmediate(settled));
      settled();
    });
    // …and finished, but only half of max_queued is queued for the stream: the rest waits inside the call.
    expect((gw.gateway.transport as A2eHttpTransport).session(client.sessionId).outbox.size).toBe(2);
    // The queue has room left for replies to requests.
    expect((await client.send({ type: 'ping', id: 'still-room' })).status).toBe(202);
    await client.openStream();
    cleanup.push(() => client.dropStream());
    const resp = await client.waitFor((m) => m.req_id === 'flood' && m.type === 'tool/call/resp');
    const events = client.received.filter((m) => m.req_id === 'flood' && m.type === 'tool/event');
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(client.received.indexOf(resp)).toBeGreaterThan(client.received.indexOf(events.at(-1)!));
    await client.waitFor((m) => m.req_id === 'still-room');
  });

  it('a body over server.body_limit_bytes → 413 {"detail": …}', async () => {
    const gw = await gateway({}, { body_limit_bytes: 64 });
    const client = await A2eTestClient.open(`${gw.url}/a2e/v1`);
    const res = await client.send({ type: 'tool/call/req', tool_name: 'echo', arguments: { text: 'x'.repeat(100) } });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { detail: string }).detail).toContain('server.body_limit_bytes');
  });

  it('serves under another path, under server.base_path, and not at all when disabled', async () => {
    const moved = await gateway({ path: '/agents/a2e' });
    expect(await (await fetch(`${moved.url}/agents/a2e/health`)).json()).toEqual({ status: 'ok' });
    expect((await fetch(`${moved.url}/a2e/v1/health`)).status).toBe(404);
    const based = await gateway({}, { base_path: '/gw' }); // the test URL includes the base path
    expect(new URL(based.url).pathname).toBe('/gw');
    const client = await A2eTestClient.open(`${based.url}/a2e/v1`);
    await client.openStream();
    cleanup.push(() => client.dropStream());
    expect((await client.request({ type: 'ping' })).response.type).toBe('pong');
    const off = await gateway({ enabled: false });
    expect((await fetch(`${off.url}/a2e/v1/session`, { method: 'POST' })).status).toBe(404);
    expect(off.gateway.transport).toBeUndefined();
  });

  it('config errors name the key', () => {
    expect(() => parseConfig({ transport: { max_queue: 5 } })).toThrow(/transport: unknown key "max_queue"/);
    expect(() => parseConfig({ transport: { path: 'a2e/' } })).toThrow(/transport\.path: must start with "\/"/);
    expect(parseConfig({}).transport).toEqual({
      enabled: true,
      path: '/a2e/v1',
      session_idle_s: 300,
      max_queued: 1000,
      max_sessions: 1000,
      handshake_timeout_s: 10,
      max_sessions_per_principal: 64,
      max_sessions_per_address: 16,
      resume_frames: 256,
    });
  });

  it('max_sessions bounds open sessions: POST /session → 503 beyond it', async () => {
    const gw = await gateway({ max_sessions: 2 });
    await A2eTestClient.open(`${gw.url}/a2e/v1`);
    await A2eTestClient.open(`${gw.url}/a2e/v1`);
    const res = await fetch(`${gw.url}/a2e/v1/session`, { method: 'POST' });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { detail: string }).detail).toContain('transport.max_sessions');
  });

  it('gateway shutdown: a running call still gets its response on the stream, then the stream ends', async () => {
    const gw = await startGateway({ plugins: [tools], config: { server: { shutdown_grace_s: 0 } } });
    const { client } = await A2eTestClient.connect(`${gw.url}/a2e/v1`);
    aborted = deferred<string>();
    const pending = client.request({ type: 'tool/call/req', id: 'at-shutdown', tool_name: 'hang', arguments: {} });
    await new Promise<void>((resolve) => {
      const check = () => (gw.gateway.engine.running > 0 ? resolve() : setImmediate(check));
      check();
    });
    await gw.close();
    const { response } = await pending;
    expect(response.data).toMatchObject({ success: false, error: expect.stringContaining('shutting down') });
    await client.streamEnded();
  });
});

describe('A2E transport: pluggable handshake auth', () => {
  it('checks auth_token with the given function; refusals are ok:false with a reason; tools need the handshake', async () => {
    const logger = createLogger('silent');
    const audit: AuditRecord[] = [];
    const engine = new Engine({
      registry: new ToolRegistry([tools], logger),
      logger,
      audit: (r) => audit.push(r),
      limits: { maxTimeoutS: 30, maxOutputBytes: 1 << 20, maxEvents: 100, maxBufferedEvents: 1000 },
    });
    engine.registry.rebuild();
    const app = new OpenAPIHono(); // the transport alone, on a bare app
    const seen: (string | null)[] = [];
    const transport = mountA2eTransport(app, {
      engine,
      logger,
      config: TransportConfig.parse({}),
      limits: { ...DEFAULT_HTTP_LIMITS, heartbeatS: 1 },
      authRequired: true,
      // A bearer-token authenticator (token → principal or null), as the gateway's auth module provides.
      authenticate: bearerTokenAuth((token) => {
        seen.push(token);
        return token === 's3cret' ? { name: 'ci-bot' } : null;
      }),
    })!;
    const server = createAdaptorServer({ fetch: app.fetch }) as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(async () => {
      await transport.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/a2e/v1`;

    const { client, handshake } = await A2eTestClient.connect(base, { auth_token: 'wrong' });
    cleanup.push(() => client.dropStream());
    expect(handshake.response).toMatchObject({
      type: 'handshake/resp',
      ok: false,
      reason: 'the token is not valid; check auth_token',
      session_id: '',
      accepted_caps: [],
    });
    const denied = await client.request({ type: 'tool/call/req', tool_name: 'echo', arguments: { text: 'x' } });
    expect(denied.response).toMatchObject({ type: 'error', code: 'unauthorized', capability_name: 'tools' });
    const list = await client.request({ type: 'tool/list/req' });
    expect(list.response).toMatchObject({ type: 'error', code: 'unauthorized' });

    const missing = await client.request({ type: 'handshake/req', agent_caps: ['tools'] });
    expect(missing.response).toMatchObject({
      ok: false,
      reason: 'this gateway requires a token; send it as auth_token in handshake/req',
    });
    const ok = await client.request({ type: 'handshake/req', agent_caps: ['tools'], auth_token: 's3cret' });
    expect(ok.response).toMatchObject({ ok: true, accepted_caps: [{ capability: 'tools', enabled: true }] });
    const call = await client.request({
      type: 'tool/call/req',
      id: 'authed',
      tool_name: 'echo',
      arguments: { text: 'x' },
    });
    expect(call.response.data.success).toBe(true);
    expect(seen).toEqual(['wrong', null, 's3cret']);
    // The engine saw the principal and the handshake's session: audit records both.
    expect(audit.find((r) => r.req_id === 'authed')).toMatchObject({
      principal: 'ci-bot',
      session_id: ok.response.session_id,
      success: true,
    });
    // Calls refused for want of a handshake never reached the engine.
    expect(audit.filter((r) => r.req_id !== 'authed')).toEqual([]);
  });
});
