/**
 * Identity-provider bearer tokens (OIDC/JWT): verify a token against the
 * issuer's published keys (jose: key set cached, refetched on an unknown
 * `kid` at most once per cooldown) and turn its claims into a principal
 * with allow/deny rules, the same shape a static token has. A refusal is
 * logged with its reason at warn; the caller only learns "not valid".
 */
import { createHash } from 'node:crypto';
import type * as Jose from 'jose';
import type { JWTPayload } from 'jose';
import type { Logger } from '../engine/index.js';
import { loadPackage } from '../load-package.js';
import { boundedFetch, MAX_IDP_DOCUMENT_BYTES } from './bounded-fetch.js';
import type { Principal } from './principal.js';
import type { JwtConfig, JwtRuleConfig } from './jwt-config.js';
import type { ApprovalRule } from './approvals-config.js';

/** What the claim rules a JWT matched say of it (its principal's allow/deny, approvals and workspace quota). */
export interface JwtRules {
  allow: readonly string[] | undefined;
  deny: readonly string[];
  /** Approval rules of its calls (approvals). */
  approve?: readonly ApprovalRule[];
  /** May decide approvals. */
  approver?: boolean;
  /** Its workspace quota (the largest of the matching rules' quota_bytes), or undefined. */
  quotaBytes?: number;
}

type KeySet = ReturnType<typeof Jose.createRemoteJWKSet>;

let jose: Promise<typeof Jose> | undefined;
/** jose (some 180 modules) is loaded when the first JWT is checked, not at every gateway's start-up. */
const loadJose = () => (jose ??= loadPackage<typeof Jose>('jose'));

/** Three base64url segments (the last empty for an unsigned token): what a compact JWS looks like. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
export const looksLikeJwt = (token: string): boolean => JWT_SHAPE.test(token);

/** Wait this long before trying a failed discovery again, so bad tokens cannot make us hammer the IdP. */
const DISCOVERY_RETRY_MS = 10_000;
const FETCH_TIMEOUT_MS = 5_000;
/** Discovery and key-set fetches read at most this much (bounded-fetch.ts). */
const idpFetch = boundedFetch(MAX_IDP_DOCUMENT_BYTES);

/** Redirects followed to the discovery document, each within the issuer's origin. */
const MAX_REDIRECTS = 3;

/** The unverified claims of a compact JWT, or undefined when its payload is not a JSON object. */
function unverifiedClaims(token: string): Record<string, unknown> | undefined {
  try {
    const claims: unknown = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
    return claims !== null && typeof claims === 'object' && !Array.isArray(claims)
      ? (claims as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** GET `url` as JSON, following redirects only within `origin` (a redirect elsewhere could hand us another party's keys). */
async function fetchSameOrigin(url: string, origin: string): Promise<Response> {
  let at = url;
  for (let hop = 0; ; hop++) {
    const res = await idpFetch(at, {
      redirect: 'manual',
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      headers: { accept: 'application/json' },
    });
    const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null;
    if (location === null) return res;
    await res.body?.cancel();
    const next = new URL(location, at);
    if (next.origin !== origin)
      throw new Error(`discovery ${url} redirects to another origin (${next.origin}); not followed`);
    if (hop >= MAX_REDIRECTS) throw new Error(`discovery ${url} redirects more than ${MAX_REDIRECTS} times`);
    at = next.href;
  }
}

const digest = (...parts: string[]) => createHash('sha256').update(parts.join('\u0000')).digest('hex');

/**
 * The prefix of the credential ids of one issuer's tokens, named by one claim (Principal.credential):
 * `j.<digest of the issuer and name claim>.`
 */
export const jwtCredentialPrefix = (config: Pick<JwtConfig, 'issuer' | 'name_claim'>): string =>
  `j.${digest(config.issuer, config.name_claim).slice(0, 16)}.`;

/** Does a claim match a `when` value: equal, an array containing it, or a space-separated list (scope) containing it. */
function claimMatches(claim: unknown, expected: string | number | boolean): boolean {
  if (Array.isArray(claim)) return claim.some((c) => c === expected);
  if (claim === expected) return true;
  return typeof claim === 'string' && typeof expected === 'string' && claim.split(' ').includes(expected);
}

export interface JwtVerifier {
  /** The principal of a valid token, or null (the reason is logged). Never throws. */
  verify(token: string): Promise<Principal | null>;
  /** What a refused token's holder may be told about it (what the token itself lacks), or undefined. */
  explain(token: string): string | undefined;
  /**
   * The rules of a JWT principal, from its most recently verified token (every request presents its token,
   * so this is current); a name not seen lately gets none allowed. Undefined for a static token's name.
   */
  rulesFor(name: string): JwtRules | undefined;
}

/** JWT principals whose rules are remembered; beyond it the least recently seen is forgotten (and denied until seen again). */
const MAX_REMEMBERED_PRINCIPALS = 10_000;
const NOTHING_ALLOWED = Object.freeze({
  allow: Object.freeze([]) as readonly string[],
  deny: Object.freeze([]) as readonly string[],
});

/**
 * `staticNames`: static token names; a JWT naming one of them is refused,
 * so no identity-provider subject can take on a static token's rights.
 */
export function createJwtVerifier(config: JwtConfig, logger: Logger, staticNames: ReadonlySet<string>): JwtVerifier {
  let keySet: KeySet | undefined;
  let discovering: Promise<KeySet> | undefined;
  let discoveryFailedAt = -Infinity;
  const keySetFor = async (url: string) => {
    const { createRemoteJWKSet, customFetch } = await loadJose();
    return createRemoteJWKSet(new URL(url), {
      cooldownDuration: config.jwks_cooldown_s * 1000,
      cacheMaxAge: config.jwks_cache_s * 1000,
      timeoutDuration: FETCH_TIMEOUT_MS,
      [customFetch]: idpFetch,
    });
  };
  let fixedKeySet: Promise<KeySet> | undefined;

  const discover = async (): Promise<KeySet> => {
    const url = `${config.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    const origin = new URL(config.issuer).origin;
    const res = await fetchSameOrigin(url, origin);
    if (!res.ok) throw new Error(`discovery ${url} answered HTTP ${res.status}`);
    const doc = (await res.json()) as { issuer?: unknown; jwks_uri?: unknown };
    if (doc.issuer !== config.issuer)
      throw new Error(
        `discovery ${url} names issuer ${JSON.stringify(doc.issuer)}, not the configured auth.jwt.issuer`,
      );
    if (typeof doc.jwks_uri !== 'string') throw new Error(`discovery ${url} has no jwks_uri`);
    const jwks = new URL(doc.jwks_uri);
    // Keys from anywhere the document names would let whoever altered it sign tokens; elsewhere must be configured.
    if (jwks.origin !== origin) {
      throw new Error(
        `discovery ${url}: jwks_uri ${jwks.href} is not on the issuer's origin (${origin}); if the identity provider publishes its keys there, set auth.jwt.jwks_url to it`,
      );
    }
    return keySetFor(jwks.href);
  };
  const getKeySet = async (): Promise<KeySet> => {
    if (keySet) return keySet;
    if (config.jwks_url) return (fixedKeySet ??= keySetFor(config.jwks_url));
    if (!discovering) {
      if (Date.now() - discoveryFailedAt < DISCOVERY_RETRY_MS)
        throw new Error('OIDC discovery failed moments ago; retrying shortly');
      discovering = discover().then(
        (ks) => (keySet = ks),
        (err: unknown) => {
          discoveryFailedAt = Date.now();
          discovering = undefined;
          throw err;
        },
      );
    }
    return discovering;
  };

  // Principals are frozen per combination of matched rules, so tokens alike share one object.
  const byRules = new Map<string, JwtRules>();
  const rulesOf = (payload: JWTPayload): JwtRules => {
    const rules = config.rules;
    if (!rules) return { allow: undefined, deny: [] as readonly string[] };
    const matched: JwtRuleConfig[] = [];
    const key: number[] = [];
    rules.forEach((r, i) => {
      if (Object.entries(r.when).every(([claim, value]) => claimMatches(payload[claim], value))) {
        matched.push(r);
        key.push(i);
      }
    });
    const k = key.join(',');
    let set = byRules.get(k);
    if (!set) {
      const quotas = matched.flatMap((r) => (r.quota_bytes === undefined ? [] : [r.quota_bytes]));
      set = Object.freeze({
        allow: matched.flatMap((r) => r.allow),
        deny: matched.flatMap((r) => r.deny),
        approve: matched.flatMap((r) => r.approve ?? []),
        approver: matched.some((r) => r.approver === true),
        ...(quotas.length > 0 && { quotaBytes: Math.max(...quotas) }),
      });
      byRules.set(k, set);
    }
    return set;
  };

  const credentialPrefix = jwtCredentialPrefix(config);
  const seen = new Map<string, JwtRules>();
  const refuse = (reason: string): null => {
    logger.warn({ reason }, `JWT refused: ${reason}`);
    return null;
  };

  return {
    async verify(token) {
      let payload: JWTPayload;
      // Another issuer's token is refused before anything is fetched, so made-up tokens cannot drive discovery.
      const iss = unverifiedClaims(token)?.iss;
      if (iss !== config.issuer) return refuse(`claim "iss" is ${JSON.stringify(iss)}, not auth.jwt.issuer`);
      try {
        const { jwtVerify } = await loadJose();
        const { payload: p } = await jwtVerify(token, await getKeySet(), {
          issuer: config.issuer,
          audience: config.audience,
          algorithms: config.algorithms,
          clockTolerance: config.clock_skew_s,
          requiredClaims: config.require_exp ? ['exp'] : [],
        });
        payload = p;
      } catch (err) {
        if (err instanceof (await loadJose()).errors.JOSEError) return refuse(`${err.code}: ${err.message}`);
        return refuse(`could not check the token: ${err instanceof Error ? err.message : String(err)}`);
      }
      const name = payload[config.name_claim];
      if (typeof name !== 'string' || name === '')
        return refuse(`claim "${config.name_claim}" (auth.jwt.name_claim) is missing or not a string`);
      if (staticNames.has(name))
        return refuse(`claim "${config.name_claim}" is "${name}", the name of a static token in auth.tokens`);
      const rules = rulesOf(payload);
      seen.delete(name);
      seen.set(name, rules);
      if (seen.size > MAX_REMEMBERED_PRINCIPALS) seen.delete(seen.keys().next().value!);
      return {
        name,
        credential: credentialPrefix + digest(String(payload.sub ?? ''), name).slice(0, 32),
        allow: rules.allow,
        deny: rules.deny,
      };
    },
    explain(token) {
      if (config.require_exp && unverifiedClaims(token)?.exp === undefined) {
        return 'the token has no "exp" claim, so it would never expire; this gateway accepts only identity-provider tokens that expire (auth.jwt.require_exp)';
      }
      return undefined;
    },
    rulesFor(name) {
      if (staticNames.has(name)) return undefined;
      return seen.get(name) ?? NOTHING_ALLOWED;
    },
  };
}
