/** A real OpenID identity provider on 127.0.0.1 for tests: discovery document, key set, and tokens signed with its key. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

export class TestIdp {
  issuer = '';
  readonly audience = 'a2e-gateway';
  private server!: Server;
  private key!: { privateKey: CryptoKey; publicJwk: JWK };

  async start(): Promise<void> {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    this.key = { privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' } };
    this.server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/.well-known/openid-configuration')
        res.end(JSON.stringify({ issuer: this.issuer, jwks_uri: `${this.issuer}/keys` }));
      else if (req.url === '/keys') res.end(JSON.stringify({ keys: [this.key.publicJwk] }));
      else {
        res.statusCode = 404;
        res.end('{}');
      }
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.issuer = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** A token with these claims, valid for five minutes. */
  sign(claims: Record<string, unknown>): Promise<string> {
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuedAt()
      .setIssuer(this.issuer)
      .setAudience(this.audience)
      .setExpirationTime(Math.floor(Date.now() / 1000) + 300)
      .sign(this.key.privateKey);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
