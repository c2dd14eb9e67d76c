/**
 * A reload that removes a token, or gives its name a new secret, ends every
 * session and stream opened with the old credential, on every door, with a
 * last frame saying why, and counts them in `sessions_ended`; what the name's
 * next holder does never reaches the old holder, and the old holder's calls do
 * not become the new holder's. A real gateway over real HTTP, a real reload
 * (POST /admin/reload) of a config whose token secrets change. The same with
 * store.kind redis: test/store/redis-credential-rotation.test.ts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { createGateway, createLogger, defineConfig, type Gateway, type GatewayConfigInput } from '../../src/index.js';
import { A2eTestClient } from '../helpers/a2e-client.js';
import { callBody, openSse, type SseStream } from '../helpers/server.js';
import { post, releaseHeld, testTools } from './helpers.js';

const OPS = 'ops-rotation-token-0123456789abcdef';
const OLD = 'alice-old-token-0123456789abcdef';
const NEW = 'alice-new-token-0123456789abcdef';
const BOB = 'bob-rotation-token-0123456789abcdef';
const as = (token: string) => ({ Authorization: `Bearer ${token}` });
const REVOKED = /removed or changed by a configuration reload/;

let gw: { url: string; gateway: Gateway } | undefined;
afterEach(async () => {
  releaseHeld();
  await gw?.gateway.close();
  gw = undefined;
});

/** A gateway whose config comes from `current()` at start and at every reload, with `env` holding the token secrets. */
async function start(current: () => GatewayConfigInput, env: NodeJS.ProcessEnv) {
  const load = async () =>
    defineConfig({
      ...current(),
      server: { port: 0 },
      tools: { fs: { enabled: false }, shell: { enabled: false }, http: { enabled: false }, eval: { enabled: false } },
    });
  const gateway = await createGateway({
    config: await load(),
    plugins: [testTools()],
    logger: createLogger('silent'),
    env,
    loadConfig: load,
  });
  const { url } = await gateway.listen();
  gw = { url, gateway };
  return gw;
}

const tokens = (alice: boolean) => ({
  auth: {
    tokens: [
      { name: 'ops', token_env: 'OPS', admin: true },
      { name: 'bob', token_env: 'BOB' },
      ...(alice ? [{ name: 'alice', token_env: 'ALICE' }] : []),
    ],
  },
  sessions: { required: false },
  a2a_server: { name: 'rotation' },
});

async function reload(url: string) {
  const r = await post(`${url}/admin/reload`, {}, as(OPS));
  expect(r.status).toBe(200);
  expect(r.json.status).toBe('reloaded');
  return r.json as { sessions_ended: number };
}

/** Read `s` to its end; the events it carried. */
async function ended(s: SseStream, what: string) {
  const events = await Promise.race([
    s.rest(),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} did not end`)), 15_000)),
  ]);
  return events;
}

/** Everything alice holds open with `token`: a session, every kind of stream, running calls. */
async function openEverything(url: string, token: string) {
  const hs = await post(`${url}/handshake`, { type: 'handshake/req', agent_id: 't', agent_caps: ['tools'] }, as(token));
  expect(hs.json.ok).toBe(true);
  const activity = await openSse(`${url}/admin/events`, { headers: as(token) });
  expect(activity.status).toBe(200);
  expect((await activity.next())?.event).toBe('snapshot');

  const resource = await post(`${url}/tool/calls`, callBody('hold', { ms: 60_000 }), as(token));
  expect(resource.status).toBe(202);
  const byAccessToken = await openSse(resource.json.events_url);
  const byBearer = await openSse(resource.json.events_url.split('?')[0], { headers: as(token) });
  const sseCall = await openSse(`${url}/tool/call`, {
    method: 'POST',
    headers: { ...as(token), 'Content-Type': 'application/json' },
    body: JSON.stringify(callBody('hold', { ms: 60_000 }, { streaming: true })),
  });
  const mcp = await openSse(`${url}/mcp`, {
    method: 'POST',
    headers: { ...as(token), 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'hold', arguments: { ms: 60_000 }, _meta: { progressToken: 'p' } },
    }),
  });
  const a2a = await openSse(`${url}/a2a`, {
    method: 'POST',
    headers: { ...as(token), 'Content-Type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'message/stream',
      params: {
        message: {
          kind: 'message',
          messageId: 'm1',
          role: 'user',
          parts: [{ kind: 'data', data: { ms: 60_000 } }],
          metadata: { skillId: 'hold' },
        },
      },
    }),
  });
  for (const s of [byAccessToken, byBearer, sseCall, mcp, a2a]) expect(s.status).toBe(200);
  const { client: transport, handshake } = await A2eTestClient.connect(`${url}/a2e/v1`, {}, as(token));
  expect(handshake.response.ok).toBe(true);
  return {
    session: hs.json.session_id as string,
    activity,
    resource: resource.json,
    byAccessToken,
    byBearer,
    sseCall,
    mcp,
    a2a,
    transport,
  };
}

describe('a reload that rotates or removes a token', () => {
  for (const change of ['rotated', 'removed'] as const) {
    it(`${change}: every session and stream of the old credential ends with a frame saying why, and counts in sessions_ended`, async () => {
      const env: NodeJS.ProcessEnv = { OPS, BOB, ALICE: OLD };
      let alice = true;
      const { url } = await start(() => tokens(alice), env);
      const old = await openEverything(url, OLD);
      // Bob's stream is not touched by alice's token changing.
      const bobs = await openSse(`${url}/admin/events`, { headers: as(BOB) });

      if (change === 'rotated') env.ALICE = NEW;
      else alice = false;
      const { sessions_ended } = await reload(url);

      const named = {
        activity: old.activity,
        byAccessToken: old.byAccessToken,
        byBearer: old.byBearer,
        sseCall: old.sseCall,
        mcp: old.mcp,
        a2a: old.a2a,
      };
      for (const [what, s] of Object.entries(named)) {
        const last = (await ended(s, what)).at(-1);
        expect(last?.data, what).toMatch(REVOKED);
        expect(last?.json?.code ?? last?.json?.error?.code, what).toBe('unauthorized');
      }
      const transportLast = await Promise.race([
        old.transport.waitFor((m) => m.type === 'error', 15_000, "the transport stream's last frame"),
        old.transport.streamEnded(),
      ]);
      expect(transportLast).toMatchObject({ type: 'error', code: 'unauthorized' });
      expect((transportLast as unknown as { message: string }).message).toMatch(REVOKED);
      await old.transport.streamEnded();
      // The REST handshake session, the transport session and its handshake session, and the seven streams.
      expect(sessions_ended).toBe(10);

      // The old secret opens nothing; its session and transport session are gone, whoever asks.
      expect((await post(`${url}/tool/call`, callBody('echo', { text: 'x' }), as(OLD))).status).toBe(401);
      const withSession = await post(
        `${url}/tool/call`,
        callBody('echo', { text: 'x' }, { session_id: old.session }),
        as(change === 'rotated' ? NEW : BOB),
      );
      expect(withSession.status).toBe(401);
      const reuse = await old.transport.send(
        { type: 'tool/call/req', id: 'r1', tool_name: 'echo', arguments: { text: 'x' } },
        {
          ...as(change === 'rotated' ? NEW : BOB),
          'X-Session-Id': old.transport.sessionId,
        },
      );
      expect([403, 404]).toContain(reuse.status);
      // The old credential's call resource: its access token no longer reads it, the name's new holder does not own it.
      const viaToken = await fetch(old.resource.events_url);
      expect(viaToken.status).toBe(401);
      if (change === 'rotated') {
        expect((await fetch(old.resource.result_url, { headers: as(NEW) })).status).toBe(404);
        // The new holder's calls reach the new holder's stream only.
        const fresh = await openSse(`${url}/admin/events`, { headers: as(NEW) });
        const snapshot = await fresh.next();
        expect(snapshot?.json.calls.map((c: { call_id: string }) => c.call_id)).not.toContain(old.resource.call_id);
        const started = await post(`${url}/tool/calls`, callBody('echo', { text: 'new' }), as(NEW));
        expect(started.status).toBe(202);
        const seen = await fresh.next();
        expect(seen?.json).toMatchObject({ call_id: started.json.call_id, principal: 'alice' });
        fresh.abort();
      }
      // Bob's stream goes on: it sees his next call.
      expect((await bobs.next())?.event).toBe('snapshot');
      const bobCall = await post(`${url}/tool/calls`, callBody('echo', { text: 'bob' }), as(BOB));
      expect((await bobs.next())?.json).toMatchObject({ call_id: bobCall.json.call_id, principal: 'bob' });
      bobs.abort();
    });
  }

  it('an unchanged token keeps its sessions and streams; sessions_ended is 0', async () => {
    const env: NodeJS.ProcessEnv = { OPS, BOB, ALICE: OLD };
    const { url } = await start(() => tokens(true), env);
    const activity = await openSse(`${url}/admin/events`, { headers: as(OLD) });
    expect((await activity.next())?.event).toBe('snapshot');
    expect((await reload(url)).sessions_ended).toBe(0);
    const c = await post(`${url}/tool/calls`, callBody('echo', { text: 'still' }), as(OLD));
    expect((await activity.next())?.json).toMatchObject({ call_id: c.json.call_id });
    activity.abort();
  });
});

describe('a reload that changes the identity provider (auth.jwt)', () => {
  it("ends the streams and sessions of the old issuer's subjects when the issuer or name_claim changes; a reload that keeps them keeps them", async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' };
    const keys: Server = createServer((_req, res) => res.end(JSON.stringify({ keys: [jwk] })));
    await new Promise<void>((resolve) => keys.listen(0, '127.0.0.1', resolve));
    const keysUrl = `http://127.0.0.1:${(keys.address() as AddressInfo).port}/keys`;
    try {
      let issuer = 'https://idp-one.example.com';
      let nameClaim = 'sub';
      let staticCarol = false;
      const env: NodeJS.ProcessEnv = { OPS, CAROL: 'static-carol-token-0123456789abcdef' };
      const { url } = await start(
        () => ({
          auth: {
            tokens: [
              { name: 'ops', token_env: 'OPS', admin: true },
              ...(staticCarol ? [{ name: 'carol', token_env: 'CAROL' }] : []),
            ],
            jwt: { issuer, audience: 'gw', jwks_url: keysUrl, name_claim: nameClaim },
          },
          sessions: { required: false },
        }),
        env,
      );
      const openWith = async () => {
        const token = await new SignJWT({ sub: 'carol', email: 'carol@example.com' })
          .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
          .setIssuer(issuer)
          .setAudience('gw')
          .setExpirationTime('5m')
          .sign(privateKey);
        const hs = await post(
          `${url}/handshake`,
          { type: 'handshake/req', agent_id: 't', agent_caps: ['tools'] },
          as(token),
        );
        expect(hs.json.ok).toBe(true);
        const activity = await openSse(`${url}/admin/events`, { headers: as(token) });
        expect((await activity.next())?.event).toBe('snapshot');
        return { token, session: hs.json.session_id as string, activity };
      };

      let carol = await openWith();
      expect((await reload(url)).sessions_ended).toBe(0);
      // Another claim names the principals: the same token would now be someone else.
      nameClaim = 'email';
      expect((await reload(url)).sessions_ended).toBe(2);
      expect((await ended(carol.activity, 'the activity stream')).at(-1)?.data).toMatch(REVOKED);

      carol = await openWith();
      issuer = 'https://idp-two.example.com';
      expect((await reload(url)).sessions_ended).toBe(2);
      expect((await ended(carol.activity, 'the activity stream')).at(-1)?.data).toMatch(REVOKED);
      expect((await post(`${url}/tool/list`, { session_id: carol.session }, as(carol.token))).status).toBe(401);

      // A static token takes the subject's name: its identity-provider tokens are refused from now on, so what they opened ends.
      nameClaim = 'sub';
      expect((await reload(url)).sessions_ended).toBe(0);
      carol = await openWith();
      staticCarol = true;
      expect((await reload(url)).sessions_ended).toBe(2);
      expect((await ended(carol.activity, 'the activity stream')).at(-1)?.data).toMatch(REVOKED);
    } finally {
      keys.closeAllConnections();
      await new Promise((resolve) => keys.close(resolve));
    }
  });
});
