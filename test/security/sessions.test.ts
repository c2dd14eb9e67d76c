/**
 * Handshake and sessions over real HTTP: negotiation, required sessions, capability gating, max_parallel, expiry.
 * Run against both session stores: memory, and a real Redis (store.kind redis).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A2E_CAPABILITIES } from '../../src/index.js';
import { callBody } from '../helpers/server.js';
import { STORE_KINDS, storeConfigs } from '../helpers/stores.js';
import { post, releaseHeld, sha256, startSecureGateway, type SecureGateway } from './helpers.js';

const TOKEN = 'sessions-test-token-0123456789';
const OTHER = 'another-token-abcdefghijklmnop';
const auth = { Authorization: `Bearer ${TOKEN}` };

async function handshake(url: string, body: Record<string, unknown>, headers: Record<string, string> = auth) {
  return post(`${url}/handshake`, { type: 'handshake/req', id: 'hs-1', ...body }, headers);
}

const storeOf = storeConfigs();

describe.each(STORE_KINDS)('sessions (%s store)', (kind) => {
  describe('handshake', () => {
    let gw: SecureGateway;
    beforeAll(async () => {
      gw = await startSecureGateway({
        config: {
          ...(await storeOf(kind)),
          auth: {
            tokens: [
              { name: 'alice', token_sha256: sha256(TOKEN) },
              { name: 'bob', token_sha256: sha256(OTHER) },
            ],
          },
          sessions: { max_parallel: 2 },
        },
      });
    });
    afterAll(() => gw.close());

    it('answers handshake/resp with only asked-for A2E capabilities, tools enabled', async () => {
      const r = await handshake(gw.url, {
        agent_id: 'agent-7',
        agent_caps: ['tools', 'memory', 'teleport', '__proto__'],
      });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ type: 'handshake/resp', req_id: 'hs-1', ok: true, reason: '', max_parallel: 2 });
      expect(r.json.session_id).toMatch(/^[0-9a-f]{32}$/);
      expect(r.json.accepted_caps).toEqual([
        { capability: 'tools', enabled: true, metadata: {} },
        { capability: 'memory', enabled: false, metadata: {} },
      ]);
      for (const c of r.json.accepted_caps) expect(A2E_CAPABILITIES).toContain(c.capability);
    });

    it('takes the token from auth_token as well as from the Authorization header', async () => {
      const r = await handshake(gw.url, { agent_caps: ['tools'], auth_token: TOKEN }, {});
      expect(r.status).toBe(200);
      expect(r.json.ok).toBe(true);
    });

    it('refuses a missing or wrong token with 401, WWW-Authenticate and a reason', async () => {
      const cases: { body: Record<string, unknown>; headers: Record<string, string>; reason: RegExp }[] = [
        { body: { agent_caps: ['tools'] }, headers: {}, reason: /requires a token/ },
        { body: { agent_caps: ['tools'], auth_token: 'wrong' }, headers: {}, reason: /not valid/ },
        { body: { agent_caps: ['tools'] }, headers: { Authorization: 'Bearer wrong' }, reason: /not valid/ },
        {
          body: { agent_caps: ['tools'], auth_token: TOKEN },
          headers: { Authorization: 'Bearer wrong' },
          reason: /not valid/,
        },
      ];
      for (const { body, headers, reason } of cases) {
        const r = await handshake(gw.url, body, headers);
        expect(r.status).toBe(401);
        expect(r.headers.get('www-authenticate')).toBe('Bearer realm="a2e-gateway"');
        expect(r.json).toMatchObject({ type: 'error', code: 'unauthorized' });
        expect(r.json.message).toMatch(reason);
        expect(JSON.stringify(r.json)).not.toContain(TOKEN);
      }
    });

    it('refuses /tool/list and /tool/call without a session when auth is configured (sessions.required default)', async () => {
      const list = await post(`${gw.url}/tool/list`, {}, auth);
      expect(list.status).toBe(401);
      expect(list.json.code).toBe('unauthorized');
      expect(list.json.message).toMatch(/POST \/handshake/);
      const call = await post(`${gw.url}/tool/call`, callBody('echo', { text: 'x' }), auth);
      expect(call.status).toBe(401);
      expect(call.headers.get('www-authenticate')).toContain('Bearer');
    });

    it("serves list and call within a session, and refuses unknown session ids and another token's session", async () => {
      const { json: hs } = await handshake(gw.url, { agent_caps: ['tools'] });
      const list = await post(`${gw.url}/tool/list`, { session_id: hs.session_id }, auth);
      expect(list.status).toBe(200);
      expect(list.json.tools.map((t: { name: string }) => t.name)).toContain('echo');
      const call = await post(
        `${gw.url}/tool/call`,
        callBody('echo', { text: 'hi' }, { session_id: hs.session_id }),
        auth,
      );
      expect(call.status).toBe(200);
      expect(call.json.data.data).toEqual({ text: 'hi' });

      const unknown = await post(
        `${gw.url}/tool/call`,
        callBody('echo', { text: 'x' }, { session_id: 'f'.repeat(32) }),
        auth,
      );
      expect(unknown.status).toBe(401);
      expect(unknown.json.message).toMatch(/unknown or expired/);
      const foreign = await post(
        `${gw.url}/tool/call`,
        callBody('echo', { text: 'x' }, { session_id: hs.session_id }),
        {
          Authorization: `Bearer ${OTHER}`,
        },
      );
      expect(foreign.status).toBe(401);
      expect(foreign.json.message).toBe(unknown.json.message);
    });

    it('gates on the tools capability: a session without it lists nothing and gets tool_denied', async () => {
      const { json: hs } = await handshake(gw.url, { agent_caps: ['memory'] });
      expect(hs.ok).toBe(true);
      const list = await post(`${gw.url}/tool/list`, { session_id: hs.session_id }, auth);
      expect(list.status).toBe(200);
      expect(list.json.tools).toEqual([]);
      const search = await post(
        `${gw.url}/tool/list`,
        { session_id: hs.session_id, query: 'echo', include_deferred: true },
        auth,
      );
      expect(search.json.tools).toEqual([]);
      const call = await post(
        `${gw.url}/tool/call`,
        callBody('echo', { text: 'x' }, { session_id: hs.session_id }),
        auth,
      );
      expect(call.status).toBe(403);
      expect(call.json.code).toBe('tool_denied');
      expect(call.json.message).toMatch(/"tools" capability/);
    });

    it('enforces max_parallel per session with 429 and Retry-After, and frees the slot when a call ends', async () => {
      const { json: hs } = await handshake(gw.url, { agent_caps: ['tools'] });
      const { json: other } = await handshake(gw.url, { agent_caps: ['tools'] });
      const hold = (session: string) =>
        post(`${gw.url}/tool/call`, callBody('hold', { ms: 20_000 }, { session_id: session }), auth);
      const running = [hold(hs.session_id), hold(hs.session_id)];
      await expect.poll(() => gw.gateway.engine.running, { timeout: 10_000 }).toBe(2);
      const third = await hold(hs.session_id);
      expect(third.status).toBe(429);
      expect(third.json.code).toBe('rate_limited');
      expect(third.headers.get('retry-after')).toBe('1');
      expect(third.json.message).toMatch(/max_parallel/);
      // Another session is not affected.
      const elsewhere = post(
        `${gw.url}/tool/call`,
        callBody('echo', { text: 'ok' }, { session_id: other.session_id }),
        auth,
      );
      expect((await elsewhere).status).toBe(200);
      releaseHeld();
      for (const r of await Promise.all(running)) expect(r.json.data.success).toBe(true);
      const again = await post(
        `${gw.url}/tool/call`,
        callBody('echo', { text: 'x' }, { session_id: hs.session_id }),
        auth,
      );
      expect(again.status).toBe(200);
    });
  });

  describe('sessions without auth', () => {
    it('are optional by default, but a session still gates capabilities', async () => {
      const gw = await startSecureGateway({ config: await storeOf(kind) });
      try {
        expect((await post(`${gw.url}/tool/list`, {})).status).toBe(200);
        const { json: hs } = await handshake(gw.url, { agent_caps: [] }, {});
        expect(hs.ok).toBe(true);
        const call = await post(`${gw.url}/tool/call`, callBody('echo', { text: 'x' }, { session_id: hs.session_id }));
        expect(call.json.code).toBe('tool_denied');
      } finally {
        await gw.close();
      }
    });

    it('can be required without auth (sessions.required: true)', async () => {
      const gw = await startSecureGateway({ config: { ...(await storeOf(kind)), sessions: { required: true } } });
      try {
        expect((await post(`${gw.url}/tool/list`, {})).status).toBe(401);
        const { json: hs } = await handshake(gw.url, { agent_caps: ['tools'] }, {});
        expect((await post(`${gw.url}/tool/list`, { session_id: hs.session_id })).status).toBe(200);
      } finally {
        await gw.close();
      }
    });

    it('expire after ttl_s of idleness', async () => {
      const gw = await startSecureGateway({
        config: { ...(await storeOf(kind)), sessions: { required: true, ttl_s: 0.5 } },
      });
      try {
        const { json: hs } = await handshake(gw.url, { agent_caps: ['tools'] }, {});
        expect((await post(`${gw.url}/tool/list`, { session_id: hs.session_id })).status).toBe(200);
        // Wait for expiry on the observable outcome, not a fixed sleep (ttl is 0.5 s; bound generous).
        await expect
          .poll(async () => (await post(`${gw.url}/tool/list`, { session_id: hs.session_id })).status, {
            timeout: 15_000,
            interval: 700,
          })
          .toBe(401);
        const r = await post(`${gw.url}/tool/call`, callBody('echo', { text: 'x' }, { session_id: hs.session_id }));
        expect(r.json.message).toMatch(/unknown or expired/);
      } finally {
        await gw.close();
      }
    });

    it('caps live sessions (sessions.max_sessions) with 503 and Retry-After, freeing room as they expire', async () => {
      const gw = await startSecureGateway({
        config: { ...(await storeOf(kind)), sessions: { max_sessions: 3, ttl_s: 1 } },
      });
      try {
        for (let i = 0; i < 3; i++) expect((await handshake(gw.url, { agent_caps: ['tools'] }, {})).json.ok).toBe(true);
        const over = await handshake(gw.url, { agent_caps: ['tools'] }, {});
        expect(over.status).toBe(503);
        expect(over.json.code).toBe('unavailable');
        expect(over.headers.get('retry-after')).toBe('1');
        expect(over.json.message).toMatch(/sessions\.max_sessions/);
        await expect
          .poll(async () => (await handshake(gw.url, { agent_caps: ['tools'] }, {})).status, {
            timeout: 15_000,
            interval: 300,
          })
          .toBe(200);
      } finally {
        await gw.close();
      }
    });
  });
});
