/**
 * The identity provider's documents are read at most 1 MiB each
 * (security/bounded-fetch.ts): anyone can make the gateway fetch them with a
 * made-up JWT, so an endless discovery document or an oversized key set
 * from a hostile or broken endpoint is cut off, the token is refused (401,
 * the reason in the log) and the gateway goes on. Real gateway, real HTTP
 * peers on 127.0.0.1.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { callBody } from '../helpers/server.js';
import { post, startSecureGateway, type SecureGateway } from './helpers.js';

const MiB = 1024 * 1024;

/** Writes `x` for as long as the client reads (an endless JSON string). */
function endless(res: ServerResponse, sent: { bytes: number }): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"issuer":"');
  const chunk = Buffer.alloc(64 * 1024, 0x78);
  const more = () => {
    while (!res.destroyed) {
      sent.bytes += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', more);
    }
  };
  more();
}

describe('identity-provider documents larger than 1 MiB', () => {
  let idp: Server;
  let issuer = '';
  const sent = { bytes: 0 };
  let endlessDiscovery: SecureGateway;
  let bigKeys: SecureGateway;
  /** A token for each issuer: one naming another issuer is refused before anything is fetched. */
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    idp = createServer((req, res) => {
      if (req.url === '/endless/.well-known/openid-configuration') return endless(res, sent);
      if (req.url === '/big/.well-known/openid-configuration') {
        return void res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ issuer: `${issuer}/big`, jwks_uri: `${issuer}/big/keys` }));
      }
      // A key set with the right key, padded past the limit (and saying so in content-length).
      if (req.url === '/big/keys')
        return void res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ keys: [jwk], pad: 'p'.repeat(2 * MiB) }));
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
    const gateway = (path: string) =>
      startSecureGateway({
        config: {
          auth: { jwt: { issuer: `${issuer}/${path}`, audience: 'a2e', jwks_cooldown_s: 0 } },
          sessions: { required: false },
        },
      });
    [endlessDiscovery, bigKeys] = await Promise.all([gateway('endless'), gateway('big')]);
    for (const path of ['endless', 'big']) {
      tokens[path] = await new SignJWT({ sub: 'alice' })
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setIssuer(`${issuer}/${path}`)
        .setAudience('a2e')
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey);
    }
  }, 60_000);
  afterAll(async () => {
    await Promise.all([endlessDiscovery?.close(), bigKeys?.close()]);
    idp?.closeAllConnections();
    await new Promise((resolve) => idp?.close(resolve));
  });

  const refusal = (gw: SecureGateway) => gw.log.records.find((r) => r.msg.startsWith('JWT refused'))?.msg;

  it('an endless discovery document is cut off after 1 MiB: the token is refused saying why, the gateway goes on', async () => {
    const r = await post(`${endlessDiscovery.url}/tool/call`, callBody('echo', { text: 'hi' }), {
      Authorization: `Bearer ${tokens.endless}`,
    });
    expect(r.status).toBe(401);
    expect(refusal(endlessDiscovery)).toBe(
      `JWT refused: could not check the token: ${issuer}/endless/.well-known/openid-configuration answered with more than ${MiB} bytes, more than a discovery document or key set has; check the identity provider's URL`,
    );
    // The peer stopped being read soon after the limit (what is in flight in socket buffers aside).
    expect(sent.bytes).toBeLessThan(16 * MiB);
    expect((await fetch(`${endlessDiscovery.url}/healthz`)).status).toBe(200);
  }, 60_000);

  it('a key set over 1 MiB is not read: the token it would check is refused saying why', async () => {
    const r = await post(`${bigKeys.url}/tool/call`, callBody('echo', { text: 'hi' }), {
      Authorization: `Bearer ${tokens.big}`,
    });
    expect(r.status).toBe(401);
    expect(refusal(bigKeys)).toBe(
      `JWT refused: could not check the token: ${issuer}/big/keys answered with more than ${MiB} bytes, more than a discovery document or key set has; check the identity provider's URL`,
    );
  }, 60_000);
});
