/**
 * Identity-provider bearer tokens (auth.jwt) against a real gateway and a
 * local JWKS + OIDC discovery server on 127.0.0.1 whose keys rotate mid-test.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { defineConfig } from '../../src/index.js';
import { A2eTestClient } from '../helpers/a2e-client.js';
import { callBody } from '../helpers/server.js';
import { post, sha256, startSecureGateway, type SecureGateway } from './helpers.js';

const AUDIENCE = 'a2e-gateway';
const STATIC = 'static-token-5e6f7a8b9c0d1e2f3a4b';

interface Key {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function makeKey(kid: string, alg: 'RS256' | 'ES256' | 'EdDSA' = 'ES256'): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** The identity provider: discovery document and key set, with the keys a test sets and a count of key-set fetches. */
class Idp {
  keys: Key[] = [];
  jwksFetches = 0;
  issuer = '';
  private server!: Server;
  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      if (req.url === '/.well-known/openid-configuration') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ issuer: this.issuer, jwks_uri: `${this.issuer}/keys` }));
      } else if (req.url === '/keys') {
        this.jwksFetches++;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ keys: this.keys.map((k) => k.publicJwk) }));
      } else {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.issuer = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const now = () => Math.floor(Date.now() / 1000);

async function sign(
  key: Key,
  claims: Record<string, unknown>,
  opts: { iss?: string; aud?: string; exp?: number | null; nbf?: number; alg?: string } = {},
): Promise<string> {
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: opts.alg ?? (key.publicJwk.alg as string), kid: key.kid })
    .setIssuedAt()
    .setIssuer(opts.iss ?? idp.issuer)
    .setAudience(opts.aud ?? AUDIENCE);
  // null: a token that never expires.
  if (opts.exp !== null) jwt.setExpirationTime(opts.exp ?? now() + 300);
  if (opts.nbf !== undefined) jwt.setNotBefore(opts.nbf);
  return jwt.sign(key.privateKey);
}

const b64url = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

const idp = new Idp();
let gw: SecureGateway;

const call = (token: string, tool: string, args: Record<string, unknown> = {}) =>
  post(`${gw.url}/tool/call`, callBody(tool, args), { Authorization: `Bearer ${token}` });
const echo = (token: string) => call(token, 'echo', { text: 'hi' });

/** Send a token that must be refused: 401, a generic message, and the reason only in the log (warn). */
async function expectRefused(token: string, reason: RegExp): Promise<void> {
  const before = gw.log.lines.length;
  const r = await echo(token);
  expect(r.status).toBe(401);
  expect(r.json.code).toBe('unauthorized');
  expect(r.json.message).toBe(
    'the bearer token is not valid; check the token you send in Authorization: Bearer <token>',
  );
  expect(JSON.stringify(r.json)).not.toMatch(reason);
  const logged = gw.log.lines.slice(before).map((l) => JSON.parse(l) as { level: number; msg: string });
  const refusal = logged.find((l) => l.msg.startsWith('JWT refused'));
  expect(refusal, `log after the refusal: ${JSON.stringify(logged)}`).toBeDefined();
  expect(refusal!.level).toBe(40);
  expect(refusal!.msg).toMatch(reason);
  expect(gw.log.text).not.toContain(token);
}

let k1: Key;

beforeAll(async () => {
  await idp.start();
  k1 = await makeKey('k1');
  idp.keys = [k1, await makeKey('k-rsa', 'RS256'), await makeKey('k-ed', 'EdDSA')];
  gw = await startSecureGateway({
    config: {
      auth: {
        tokens: [{ name: 'ops', token_sha256: sha256(STATIC) }],
        jwt: {
          issuer: idp.issuer,
          audience: AUDIENCE,
          // No jwks_url: found through the issuer's discovery document.
          jwks_cooldown_s: 0,
          rules: [
            { when: { scope: 'tools:read' }, allow: ['read_*'] },
            { when: { groups: 'admins' }, allow: ['*'] },
          ],
        },
      },
      sessions: { required: false },
    },
  });
});
afterAll(async () => {
  await gw?.close();
  await idp.close();
});

describe('JWT bearer tokens', () => {
  it('accepts a valid token (RS256, ES256 and EdDSA) found through discovery, and maps claims to allow lists', async () => {
    const admin = await sign(k1, { sub: 'alice', groups: ['staff', 'admins'] });
    for (const tool of ['echo', 'read_notes', 'run_cmd'])
      expect((await call(admin, tool, tool === 'echo' ? { text: 'hi' } : {})).status, tool).toBe(200);

    const reader = await sign(k1, { sub: 'bob', scope: 'openid tools:read' });
    expect((await call(reader, 'read_notes')).status).toBe(200);
    for (const tool of ['run_cmd', 'echo', 'write_notes']) {
      const r = await call(reader, tool, tool === 'echo' ? { text: 'hi' } : {});
      expect(r.status, tool).toBe(403);
      expect(r.json.code).toBe('tool_denied');
    }
    const listed = await post(`${gw.url}/tool/list`, {}, { Authorization: `Bearer ${reader}` });
    expect(listed.json.tools.map((t: { name: string }) => t.name)).toEqual(['read_notes']);

    // A token that matches no rule may call nothing.
    const nobody = await sign(k1, { sub: 'carol', scope: 'openid' });
    expect((await call(nobody, 'read_notes')).status).toBe(403);

    for (const kid of ['k-rsa', 'k-ed']) {
      const key = idp.keys.find((k) => k.kid === kid)!;
      expect((await echo(await sign(key, { sub: `dave-${kid}`, groups: 'admins' }))).status, kid).toBe(200);
    }
  });

  it('names the principal by its claim in the audit, and binds sessions to it', async () => {
    const token = await sign(k1, { sub: 'erin', groups: ['admins'] });
    const hs = await post(`${gw.url}/handshake`, { agent_caps: ['tools'] }, { Authorization: `Bearer ${token}` });
    expect(hs.json.ok).toBe(true);
    const r = await post(`${gw.url}/tool/call`, callBody('echo', { text: 'x' }, { session_id: hs.json.session_id }), {
      Authorization: `Bearer ${token}`,
    });
    expect(r.status).toBe(200);
    // Another subject cannot use erin's session.
    const other = await sign(k1, { sub: 'frank', groups: ['admins'] });
    const foreign = await post(
      `${gw.url}/tool/call`,
      callBody('echo', { text: 'x' }, { session_id: hs.json.session_id }),
      { Authorization: `Bearer ${other}` },
    );
    expect(foreign.status).toBe(401);
    // The handshake's auth_token goes through the same check.
    const byBody = await post(`${gw.url}/handshake`, { agent_caps: ['tools'], auth_token: token });
    expect(byBody.json.ok).toBe(true);
  });

  it('works the same on the A2E transport: the bearer opens the session, a handshake auth_token JWT is checked', async () => {
    const reader = await sign(k1, { sub: 'ivan', scope: 'tools:read' });
    const { client, handshake } = await A2eTestClient.connect(
      `${gw.url}/a2e/v1`,
      {},
      { Authorization: `Bearer ${reader}` },
    );
    try {
      expect(handshake.response.ok).toBe(true);
      const again = await client.request({ type: 'handshake/req', agent_caps: ['tools'], auth_token: reader });
      expect(again.response.ok).toBe(true);
      const read = await client.request({ type: 'tool/call/req', tool_name: 'read_notes', arguments: {} });
      expect(read.response.data.success).toBe(true);
      const run = await client.request({ type: 'tool/call/req', tool_name: 'run_cmd', arguments: {} });
      expect(run.response.code ?? run.response.data?.error?.code).toBe('tool_denied');
      // Another subject's token cannot take the session over.
      const other = await client.request({
        type: 'handshake/req',
        agent_caps: ['tools'],
        auth_token: await sign(k1, { sub: 'judy', groups: 'admins' }),
      });
      expect(other.response.ok).toBe(false);
    } finally {
      await client.dropStream();
    }
  });

  it('works the same on the MCP door: claims decide which tools/call succeed, a bad token is 401', async () => {
    const mcp = (token: string, name: string) =>
      fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json', Authorization: `Bearer ${token}` },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name, arguments: name === 'echo' ? { text: 'x' } : {} },
        }),
      });
    const reader = await sign(k1, { sub: 'kate', scope: 'tools:read' });
    const read = await mcp(reader, 'read_notes');
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ result: { structuredContent: { notes: 'n' } } });
    const run = (await (await mcp(reader, 'run_cmd')).json()) as { result?: { isError?: boolean }; error?: unknown };
    expect(run.result?.isError ?? run.error !== undefined).toBe(true);
    const admin = await sign(k1, { sub: 'kate', groups: 'admins' });
    expect(await (await mcp(admin, 'run_cmd')).json()).toMatchObject({ result: { structuredContent: { ran: true } } });
    expect((await mcp(await sign(k1, { sub: 'kate', groups: 'admins' }, { aud: 'other' }), 'echo')).status).toBe(401);
  });

  it('keeps static tokens working alongside', async () => {
    expect((await echo(STATIC)).status).toBe(200);
    expect((await echo(`${STATIC}x`)).status).toBe(401);
  });

  it('refuses expired, not-yet-valid, wrong issuer, audience or algorithm, unknown kid, tampered, alg none and HS256-with-the-public-key tokens', async () => {
    const claims = { sub: 'mallory', groups: 'admins' };
    await expectRefused(await sign(k1, claims, { exp: now() - 120 }), /ERR_JWT_EXPIRED/);
    await expectRefused(await sign(k1, claims, { nbf: now() + 120 }), /ERR_JWT_CLAIM_VALIDATION_FAILED.*nbf/);
    await expectRefused(
      await sign(k1, claims, { iss: 'https://evil.example.com' }),
      /claim "iss" is "https:\/\/evil.example.com", not auth.jwt.issuer/,
    );
    await expectRefused(await sign(k1, claims, { aud: 'someone-else' }), /ERR_JWT_CLAIM_VALIDATION_FAILED.*aud/);
    // Within clock_skew_s (30 s) an expired token still passes.
    expect((await echo(await sign(k1, { sub: 'skew', groups: 'admins' }, { exp: now() - 5 }))).status).toBe(200);

    // ES384 is a valid asymmetric algorithm, but not in the allow list.
    const es384 = await generateKeyPair('ES384');
    idp.keys.push({
      kid: 'k-384',
      privateKey: es384.privateKey,
      publicJwk: { ...(await exportJWK(es384.publicKey)), kid: 'k-384', alg: 'ES384' },
    });
    await expectRefused(
      await sign({ kid: 'k-384', privateKey: es384.privateKey, publicJwk: { alg: 'ES384' } }, claims),
      /ERR_JOSE_ALG_NOT_ALLOWED/,
    );
    idp.keys.pop();

    const stranger = await makeKey('k-unknown');
    await expectRefused(await sign(stranger, claims), /ERR_JWKS_NO_MATCHING_KEY/);

    // Tampered: claims swapped after signing.
    const [h, , s] = (await sign(k1, { sub: 'mallory', scope: 'tools:read' })).split('.');
    await expectRefused(
      `${h}.${b64url({ sub: 'mallory', groups: 'admins', iss: idp.issuer, aud: AUDIENCE, exp: now() + 300 })}.${s}`,
      /ERR_JWS_SIGNATURE_VERIFICATION_FAILED/,
    );
    // Signed with a different key under k1's kid.
    const forger = await makeKey('k1');
    await expectRefused(await sign(forger, claims), /ERR_JWS_SIGNATURE_VERIFICATION_FAILED/);

    const body = b64url({ ...claims, iss: idp.issuer, aud: AUDIENCE, exp: now() + 300 });
    await expectRefused(`${b64url({ alg: 'none', typ: 'JWT' })}.${body}.`, /ERR_JOSE_ALG_NOT_ALLOWED|ERR_JWS_INVALID/);

    // HS256 with the published public key as the HMAC secret (the classic key-confusion attack).
    const { createHmac } = await import('node:crypto');
    const rsa = idp.keys.find((k) => k.kid === 'k-rsa')!;
    const header = b64url({ alg: 'HS256', typ: 'JWT', kid: 'k-rsa' });
    const secret = JSON.stringify(rsa.publicJwk);
    const mac = createHmac('sha256', secret).update(`${header}.${body}`).digest('base64url');
    await expectRefused(`${header}.${body}.${mac}`, /ERR_JOSE_ALG_NOT_ALLOWED/);

    // A subject named like a static token cannot take on its rights.
    await expectRefused(await sign(k1, { sub: 'ops' }), /static token/);
  });

  it('refuses a token without exp (it would be good forever), telling the caller what is missing', async () => {
    const forever = await sign(k1, { sub: 'olga', groups: 'admins' }, { exp: null });
    for (const r of [
      await echo(forever),
      await post(`${gw.url}/handshake`, { agent_caps: ['tools'], auth_token: forever }),
    ]) {
      expect(r.status).toBe(401);
      expect(r.json.code).toBe('unauthorized');
      expect(r.json.message).toMatch(/no "exp" claim.*auth\.jwt\.require_exp/);
    }
    const { client, handshake } = await A2eTestClient.connect(
      `${gw.url}/a2e/v1`,
      { auth_token: forever },
      { Authorization: `Bearer ${STATIC}` },
    );
    try {
      expect(handshake.response.ok).toBe(false);
      expect(handshake.response.reason).toMatch(/no "exp" claim/);
    } finally {
      await client.dropStream();
    }
    expect(gw.log.text).toContain('JWT refused: ERR_JWT_CLAIM_VALIDATION_FAILED: missing required \\"exp\\" claim');
    // The same token with an expiry passes.
    expect((await echo(await sign(k1, { sub: 'olga', groups: 'admins' }))).status).toBe(200);
  });

  it('follows a key rotation: a new kid is fetched, the removed key is refused', async () => {
    const before = await sign(k1, { sub: 'gina', groups: 'admins' });
    expect((await echo(before)).status).toBe(200);
    const k2 = await makeKey('k2');
    idp.keys = [k2];
    const fetches = idp.jwksFetches;
    expect((await echo(await sign(k2, { sub: 'gina', groups: 'admins' }))).status).toBe(200);
    expect(idp.jwksFetches).toBeGreaterThan(fetches);
    // k1 is gone from the key set the gateway now holds.
    await expectRefused(before, /ERR_JWKS_NO_MATCHING_KEY/);
    // A key set is reused, not fetched per token.
    const settled = idp.jwksFetches;
    for (let i = 0; i < 5; i++)
      expect((await echo(await sign(k2, { sub: `h${i}`, groups: 'admins' }))).status).toBe(200);
    expect(idp.jwksFetches).toBe(settled);
  });
});

describe('auth.jwt config', () => {
  const base = { issuer: 'https://idp.example.com/', audience: 'a2e' };
  it('refuses HS* and none, non-https key URLs, and a missing issuer or audience, saying why', () => {
    for (const alg of ['HS256', 'HS512', 'none']) {
      expect(() => defineConfig({ auth: { jwt: { ...base, algorithms: [alg] } } }), alg).toThrow(/never accepted/);
    }
    expect(() => defineConfig({ auth: { jwt: { ...base, jwks_url: 'http://idp.example.com/keys' } } })).toThrow(
      /https/,
    );
    expect(() => defineConfig({ auth: { jwt: { audience: 'a2e' } } as never })).toThrow(/issuer/);
    expect(() => defineConfig({ auth: { jwt: { issuer: base.issuer } } as never })).toThrow(/audience/);
    expect(() => defineConfig({ auth: {} })).toThrow(/at least one token, or configure auth.jwt/);
    expect(defineConfig({ auth: { jwt: base } }).auth!.jwt!.algorithms).toEqual(['RS256', 'ES256', 'EdDSA']);
  });
});
