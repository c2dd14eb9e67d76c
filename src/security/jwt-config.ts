/**
 * The `auth.jwt` section: bearer tokens issued by an identity provider
 * (OIDC/JWT), verified against its published keys. Referenced from
 * AuthConfig in config.ts.
 */
import { z } from 'zod';
import { ApprovalRule } from './approvals-config.js';

/** Signature algorithms with a public key. Shared-secret (HS*) and "none" are never accepted. */
export const ASYMMETRIC_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;

const Algorithm = z.string().refine((a) => (ASYMMETRIC_ALGORITHMS as readonly string[]).includes(a), {
  message:
    `must be one of ${ASYMMETRIC_ALGORITHMS.join(', ')}; shared-secret algorithms (HS256, HS384, HS512) and "none" ` +
    'are never accepted, because anyone who has the published key could sign tokens',
});

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** An https URL (http only to this machine, e.g. a test IdP). */
const KeyUrl = z.url().refine(
  (u) => {
    const url = new URL(u);
    return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
  },
  { message: 'must be an https:// URL (http:// only to 127.0.0.1 or localhost), so keys cannot be swapped in transit' },
);

/** A claim condition: the claim equals the value, or contains it (an array, or a space-separated string like `scope`). */
const ClaimValue = z.union([z.string(), z.number(), z.boolean()]);

export const JwtRuleConfig = z.strictObject({
  /** Every claim listed must match for the rule to apply. */
  when: z
    .record(z.string().min(1), ClaimValue)
    .refine((w) => Object.keys(w).length > 0, { message: 'name at least one claim' }),
  /** Tool rules (globs, tag:NAME, kind:NAME) this rule makes callable; matching rules' lists add up. */
  allow: z.array(z.string().min(1)).default([]),
  /** Tool rules refused to tokens this rule matches; wins over allow. */
  deny: z.array(z.string().min(1)).default([]),
  /** Calls of tokens this rule matches that wait for a person's approval (approval rules, as approvals.require). */
  approve: z.array(ApprovalRule).optional(),
  /** Tokens this rule matches may decide approvals (approvals.approvers). */
  approver: z.boolean().optional(),
  /**
   * Disk bytes the workspace of a principal this rule matches may hold, instead of tools.fs.max_workspace_bytes
   * (with one workspace per principal; docs/tenants.md). When several matching rules set it, the largest applies.
   */
  quota_bytes: z.int().positive().optional(),
});
export type JwtRuleConfig = z.output<typeof JwtRuleConfig>;

export const JwtConfig = z.strictObject({
  /** The `iss` every token must carry; discovery reads `<issuer>/.well-known/openid-configuration`. */
  issuer: KeyUrl,
  /** The `aud` every token must carry (one of, when the token lists several). */
  audience: z.string().min(1),
  /**
   * The identity provider's JSON Web Key Set; unset: the `jwks_uri` of the issuer's discovery document, which must
   * be on the issuer's origin (set this when the provider publishes its keys elsewhere).
   */
  jwks_url: KeyUrl.optional(),
  /** Signature algorithms accepted (allow list). */
  algorithms: z.array(Algorithm).min(1).default(['RS256', 'ES256', 'EdDSA']),
  /**
   * Refuse tokens without an `exp` claim, which would otherwise be good forever. Set false only for an identity
   * provider that cannot issue expiring tokens.
   */
  require_exp: z.boolean().default(true),
  /** Leeway for exp, nbf and iat, seconds. */
  clock_skew_s: z.number().min(0).max(600).default(30),
  /** The claim that names the principal in logs, audit, sessions and rate limits. */
  name_claim: z.string().min(1).default('sub'),
  /**
   * Claims → tool rules, like a static token's allow/deny. Without rules a token may call every tool the policy
   * allows; with rules, a token that matches none may call nothing.
   */
  rules: z.array(JwtRuleConfig).optional(),
  /** Least time between two key-set fetches when a token names an unknown key id (`kid`), seconds. */
  jwks_cooldown_s: z.number().min(0).default(30),
  /** Key set kept this long before it is fetched again, seconds. */
  jwks_cache_s: z.number().positive().default(600),
});
export type JwtConfig = z.output<typeof JwtConfig>;
