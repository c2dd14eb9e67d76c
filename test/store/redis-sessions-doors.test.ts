/**
 * Shared handshake sessions (store.kind redis) through the other doors and
 * under a Redis outage, with two in-process gateways on one real
 * redis-server: a handshake made on the A2E transport of A serves REST calls
 * on B until its shutdown closes it everywhere; with Redis stopped, what
 * needs a session answers 503 with Retry-After while a plain call still runs,
 * and the same session works again once Redis is back, without a restart.
 * A plain call sends Redis nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A2eTestClient } from '../helpers/a2e-client.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { callBody } from '../helpers/server.js';
import { post, sha256, startSecureGateway, type SecureGateway } from '../security/helpers.js';

const TOKEN = 'redis-doors-token-0123456789abcdef';
const auth = { Authorization: `Bearer ${TOKEN}` };

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis({ persist: true });
}, 30_000);
afterAll(async () => redis?.dispose());

const store = (prefix: string) => ({ kind: 'redis' as const, url: redis.url, prefix, command_timeout_ms: 500 });

describe('a handshake on the A2E transport of one instance', () => {
  let a: SecureGateway;
  let b: SecureGateway;
  beforeAll(async () => {
    const config = {
      store: store('doors:'),
      auth: { tokens: [{ name: 'alice', token_sha256: sha256(TOKEN) }] },
      sessions: { max_parallel: 1 },
    };
    a = await startSecureGateway({ config });
    b = await startSecureGateway({ config });
  });
  afterAll(async () => Promise.all([a?.close(), b?.close()]));

  it('serves calls on both doors of both instances, and its shutdown closes it everywhere', async () => {
    const { client, handshake } = await A2eTestClient.connect(`${a.url}/a2e/v1`, { auth_token: TOKEN }, auth);
    expect(handshake.response).toMatchObject({ type: 'handshake/resp', ok: true, max_parallel: 1 });
    const session = handshake.response.session_id as string;

    const onTransport = await client.request({
      type: 'tool/call/req',
      session_id: session,
      tool_name: 'echo',
      arguments: { text: 'a2e' },
    });
    expect(onTransport.response).toMatchObject({
      type: 'tool/call/resp',
      data: { success: true, data: { text: 'a2e' } },
    });
    const onB = await post(`${b.url}/tool/call`, callBody('echo', { text: 'rest' }, { session_id: session }), auth);
    expect(onB.status).toBe(200);
    expect(onB.json.data.data).toEqual({ text: 'rest' });

    await client.send({ type: 'shutdown', timeout: 0 });
    await expect
      .poll(
        async () =>
          (await post(`${b.url}/tool/call`, callBody('echo', { text: 'x' }, { session_id: session }), auth)).status,
        { timeout: 10_000, interval: 100 },
      )
      .toBe(401);
    const refused = await post(`${b.url}/tool/list`, { session_id: session }, auth);
    expect(refused.status).toBe(401);
    expect(refused.json.message).toMatch(/unknown or expired/);
  });
});

describe("a token's rate limit on every door", () => {
  it("one bucket in Redis for REST on A, MCP and A2A on B: refusals are the doors' usual rate_limited", async () => {
    const config = {
      store: store('rate-doors:'),
      auth: { tokens: [{ name: 'alice', token_sha256: sha256(TOKEN) }] },
      sessions: { required: false },
      limits: { rate_per_s: 0.01, rate_burst: 2 },
    };
    const a = await startSecureGateway({ config });
    const b = await startSecureGateway({ config });
    try {
      for (let i = 0; i < 2; i++)
        expect((await post(`${a.url}/tool/call`, callBody('echo', { text: 'x' }), auth)).status).toBe(200);
      const rest = await post(`${b.url}/tool/call`, callBody('echo', { text: 'x' }), auth);
      expect(rest.status).toBe(429);
      expect(rest.json.message).toMatch(/too many calls for token "alice"/);

      const mcp = await fetch(`${b.url}/mcp`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...auth },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'echo', arguments: { text: 'x' } },
        }),
      });
      const mcpJson = (await mcp.json()) as { error?: { message: string; data?: unknown } };
      expect(mcpJson.error?.message).toMatch(/too many calls for token "alice" \(limits\.rate_per_s\)/);

      const a2a = await post(
        `${b.url}/a2a`,
        {
          jsonrpc: '2.0',
          id: 'r1',
          method: 'message/send',
          params: {
            message: {
              kind: 'message',
              messageId: 'm1',
              role: 'user',
              parts: [{ kind: 'data', data: { text: 'x' } }],
              metadata: { skillId: 'echo' },
            },
          },
        },
        auth,
      );
      expect(a2a.json.error?.message).toMatch(/too many calls for token "alice" \(limits\.rate_per_s\)/);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

describe('a Redis outage', () => {
  it('answers 503 with Retry-After where a session is needed, keeps plain calls running, and recovers on its own', async () => {
    const gw = await startSecureGateway({ config: { store: store('outage:') } });
    try {
      const { json: hs } = await post(`${gw.url}/handshake`, { type: 'handshake/req', agent_caps: ['tools'] });
      expect(hs.ok).toBe(true);
      const withSession = () =>
        post(`${gw.url}/tool/call`, callBody('echo', { text: 's' }, { session_id: hs.session_id }));
      expect((await withSession()).status).toBe(200);

      // A plain call (no session, no token to rate limit) sends Redis nothing: only the two INFO commands are counted.
      const processed = async () =>
        Number(/total_commands_processed:(\d+)/.exec(await gw.gateway.stores.redis!.client.info('stats'))![1]);
      const before = await processed();
      for (let i = 0; i < 20; i++)
        expect((await post(`${gw.url}/tool/call`, callBody('echo', { text: 'p' }))).status).toBe(200);
      expect((await processed()) - before).toBe(1);

      await redis.stop();
      for (const r of [
        await withSession(),
        await post(`${gw.url}/tool/list`, { session_id: hs.session_id }),
        await post(`${gw.url}/handshake`, { type: 'handshake/req', agent_caps: ['tools'] }),
      ]) {
        expect(r.status).toBe(503);
        expect(r.json).toMatchObject({ type: 'error', code: 'unavailable', retryable: true });
        expect(r.json.message).toMatch(/shared store \(Redis\) is unavailable/);
        expect(r.json.message).not.toContain(redis.url);
        expect(r.headers.get('retry-after')).toBe('1');
      }
      // A call that needs no shared state does not notice.
      const plain = await post(`${gw.url}/tool/call`, callBody('echo', { text: 'plain' }));
      expect(plain.status).toBe(200);
      expect(plain.json.data.data).toEqual({ text: 'plain' });

      await redis.start();
      await expect.poll(async () => (await withSession()).status, { timeout: 15_000, interval: 200 }).toBe(200);
    } finally {
      await gw.close();
    }
  });
});
