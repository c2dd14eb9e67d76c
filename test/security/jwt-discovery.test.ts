/**
 * OIDC discovery (auth.jwt without jwks_url) against real local servers on
 * 127.0.0.1: the key set must come from the issuer's own origin (or be
 * configured as auth.jwt.jwks_url), no redirect to another origin is
 * followed, and made-up tokens cannot make the gateway fetch at will.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { callBody } from '../helpers/server.js';
import { post, startSecureGateway, type SecureGateway } from './helpers.js';

const AUDIENCE = 'a2e-gateway';

/** A plain HTTP server on 127.0.0.1 answering with `handle`, counting the requests per path. */
class Site {
  url = '';
  readonly hits = new Map<string, number>();
  private server!: Server;
  constructor(private readonly handle: (req: IncomingMessage, res: ServerResponse, site: Site) => void) {}
  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      this.hits.set(req.url ?? '', (this.hits.get(req.url ?? '') ?? 0) + 1);
      this.handle(req, res, this);
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }
  count(path: string): number {
    return this.hits.get(path) ?? 0;
  }
  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const json = (res: ServerResponse, body: unknown) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
};

let key: { privateKey: CryptoKey; publicJwk: JWK };
async function signingKey() {
  if (!key) {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    key = { privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' } };
  }
  return key;
}
const keySet = async () => ({ keys: [(await signingKey()).publicJwk] });
const sign = async (issuer: string, sub = 'alice', expires = true) => {
  const jwt = new SignJWT({ sub })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setIssuedAt()
    .setIssuer(issuer)
    .setAudience(AUDIENCE);
  if (expires) jwt.setExpirationTime('5m');
  return jwt.sign((await signingKey()).privateKey);
};

const sites: Site[] = [];
let gw: SecureGateway | undefined;
const site = async (handle: ConstructorParameters<typeof Site>[0]) => {
  const s = await new Site(handle).start();
  sites.push(s);
  return s;
};
const gateway = async (issuer: string, extra: Record<string, unknown> = {}) => {
  gw = await startSecureGateway({
    config: {
      auth: { jwt: { issuer, audience: AUDIENCE, jwks_cooldown_s: 0, ...extra } },
      sessions: { required: false },
    },
  });
  return gw;
};
const echo = (token: string) =>
  post(`${gw!.url}/tool/call`, callBody('echo', { text: 'hi' }), { Authorization: `Bearer ${token}` });

afterEach(async () => {
  await gw?.close();
  gw = undefined;
});
afterAll(async () => {
  await Promise.all(sites.map((s) => s.close()));
});

describe('OIDC discovery', () => {
  it('refuses a jwks_uri on another origin than the issuer, and fetches nothing from it', async () => {
    const elsewhere = await site(async (_req, res) => json(res, await keySet()));
    const idp = await site((req, res, self) => {
      if (req.url === '/.well-known/openid-configuration')
        return json(res, { issuer: self.url, jwks_uri: `${elsewhere.url}/keys` });
      res.statusCode = 404;
      res.end();
    });
    await gateway(idp.url);
    const r = await echo(await sign(idp.url));
    expect(r.status).toBe(401);
    expect(elsewhere.count('/keys')).toBe(0);
    expect(gw!.log.text).toMatch(/jwks_uri .* is not on the issuer's origin .*auth\.jwt\.jwks_url/);
  });

  it('accepts the same key set when the operator names it in auth.jwt.jwks_url', async () => {
    const elsewhere = await site(async (_req, res) => json(res, await keySet()));
    const idp = await site((_req, res) => {
      res.statusCode = 404;
      res.end();
    });
    await gateway(idp.url, { jwks_url: `${elsewhere.url}/keys` });
    expect((await echo(await sign(idp.url))).status).toBe(200);
    expect(idp.hits.size).toBe(0);
  });

  it('accepts a token without exp only when the operator opted out with auth.jwt.require_exp: false', async () => {
    const idp = await site(async (req, res, self) => {
      if (req.url === '/.well-known/openid-configuration')
        return json(res, { issuer: self.url, jwks_uri: `${self.url}/keys` });
      json(res, await keySet());
    });
    await gateway(idp.url);
    expect((await echo(await sign(idp.url, 'alice', false))).status).toBe(401);
    await gw!.close();
    await gateway(idp.url, { require_exp: false });
    expect((await echo(await sign(idp.url, 'alice', false))).status).toBe(200);
  });

  it('follows no redirect to another origin, and follows one on the issuer origin', async () => {
    const evil = await site(async (req, res, self) => {
      if (req.url === '/.well-known/openid-configuration')
        return json(res, { issuer: idp.url, jwks_uri: `${self.url}/keys` });
      json(res, await keySet());
    });
    const idp: Site = await site(async (req, res, self) => {
      if (req.url === '/.well-known/openid-configuration') {
        res.statusCode = 302;
        res.setHeader('location', `${evil.url}/.well-known/openid-configuration`);
        return res.end();
      }
      if (req.url === '/moved/openid-configuration')
        return json(res, { issuer: self.url, jwks_uri: `${self.url}/keys` });
      if (req.url === '/keys') return json(res, await keySet());
      res.statusCode = 404;
      res.end();
    });
    await gateway(idp.url);
    expect((await echo(await sign(idp.url))).status).toBe(401);
    expect(evil.hits.size).toBe(0);
    expect(gw!.log.text).toMatch(/redirects to another origin/);
    await gw!.close();

    // A redirect within the issuer's origin is followed.
    const moving = await site(async (req, res, self) => {
      if (req.url === '/.well-known/openid-configuration') {
        res.statusCode = 301;
        res.setHeader('location', '/moved/openid-configuration');
        return res.end();
      }
      if (req.url === '/moved/openid-configuration')
        return json(res, { issuer: self.url, jwks_uri: `${self.url}/keys` });
      if (req.url === '/keys') return json(res, await keySet());
      res.statusCode = 404;
      res.end();
    });
    await gateway(moving.url);
    expect((await echo(await sign(moving.url))).status).toBe(200);
  });

  it('made-up tokens do not make it fetch: another issuer fetches nothing, failures are retried at most every 10 s', async () => {
    let up = false;
    const idp = await site(async (req, res, self) => {
      if (!up) {
        res.statusCode = 503;
        return res.end();
      }
      if (req.url === '/.well-known/openid-configuration')
        return json(res, { issuer: self.url, jwks_uri: `${self.url}/keys` });
      json(res, await keySet());
    });
    await gateway(idp.url);
    // Not even shaped as this issuer's token: nothing is fetched.
    for (let i = 0; i < 5; i++) expect((await echo(await sign('https://someone-else.example.com'))).status).toBe(401);
    expect(idp.hits.size).toBe(0);
    // This issuer's, while discovery fails: one attempt, then none until the retry delay has passed.
    for (let i = 0; i < 10; i++) expect((await echo(await sign(idp.url, `u${i}`))).status).toBe(401);
    expect(idp.count('/.well-known/openid-configuration')).toBe(1);
    up = true;
    expect((await echo(await sign(idp.url))).status).toBe(401);
    expect(idp.count('/.well-known/openid-configuration')).toBe(1);
  });
});
