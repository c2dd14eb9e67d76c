/**
 * Bearer-token authentication: token → principal, or null. Tokens are kept
 * only as SHA-256 digests and compared in constant time, so neither the
 * config nor the timing of a refusal gives a token away. Transport-agnostic:
 * the REST routes and the A2E transport both call `authenticate`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AuthConfig, TokenConfig } from './config.js';
import { ConfigError } from '../utils/config-error.js';
import { looksLikeJwt, type JwtVerifier } from './jwt.js';
import type { Principal } from './principal.js';

export type { Principal } from './principal.js';

/**
 * A static token is answered at once; an identity-provider token (JWT) is
 * verified asynchronously, so only that path pays for a promise.
 */
export type Authenticate = ((token: string | null | undefined) => Principal | null | Promise<Principal | null>) & {
  /** What the holder of a refused token may be told about it (e.g. a JWT without exp), or undefined. */
  explain?: (token: string) => string | undefined;
};

/** `fallback` for a refused `token`, with what is wrong with it when the authenticator can tell the holder. */
export function refusal(
  authenticate: Authenticate | undefined,
  token: string | null | undefined,
  fallback: string,
): string {
  const why = token ? authenticate?.explain?.(token) : undefined;
  return why ? `${fallback.split(';')[0]}: ${why}` : fallback;
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** The credential id of static token `name` whose secret has SHA-256 `digest` (Principal.credential). */
export const staticCredential = (name: string, digest: Buffer): string =>
  `t.${createHash('sha256').update(name).update('\u0000').update(digest).digest('hex').slice(0, 32)}`;

/** The digest a token's config stands for; throws naming the token when its variable is unset. */
export function digestOf(t: TokenConfig, env: NodeJS.ProcessEnv): Buffer {
  if (t.token_sha256) return Buffer.from(t.token_sha256, 'hex');
  const value = env[t.token_env!];
  if (!value) {
    throw new ConfigError(
      `auth.tokens "${t.name}": environment variable ${t.token_env} is not set or empty; set it to the token`,
    );
  }
  return sha256(value);
}

/**
 * Build the authenticator of an `auth` section. Every configured digest is
 * compared (no early exit), so the time taken does not reveal which token
 * was closest or where it sits in the list.
 */
export function createAuthenticator(
  auth: AuthConfig,
  env: NodeJS.ProcessEnv,
): (token: string | null | undefined) => Principal | null;
export function createAuthenticator(auth: AuthConfig, env: NodeJS.ProcessEnv, jwt?: JwtVerifier): Authenticate;
export function createAuthenticator(auth: AuthConfig, env: NodeJS.ProcessEnv, jwt?: JwtVerifier): Authenticate {
  const entries = auth.tokens.map((t) => {
    const digest = digestOf(t, env);
    return {
      digest,
      principal: Object.freeze({
        name: t.name,
        credential: staticCredential(t.name, digest),
        allow: t.allow,
        deny: t.deny,
      }) as Principal,
    };
  });
  const authenticate: Authenticate = (token) => {
    if (!token) return null;
    const digest = sha256(token);
    let found: Principal | null = null;
    for (const e of entries) if (timingSafeEqual(digest, e.digest) && !found) found = e.principal;
    if (found || !jwt || !looksLikeJwt(token)) return found;
    return jwt.verify(token);
  };
  if (jwt) authenticate.explain = (token) => (looksLikeJwt(token) ? jwt.explain(token) : undefined);
  return authenticate;
}

/** The token of an `Authorization: Bearer …` header, or null. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer[ ]+([^\s]+)[ ]*$/i.exec(header);
  return m ? m[1]! : null;
}

/** The challenge sent with every 401. */
export const WWW_AUTHENTICATE = 'Bearer realm="a2e-gateway"';
