/**
 * Config sections of the security layer: auth, sessions, policy, limits,
 * audit, plus the server keys that make a bind safe. Referenced from
 * src/config/schema.ts.
 */
import { z } from 'zod';
import { JwtConfig } from './jwt-config.js';
import { ApprovalRule, type ApprovalsConfig } from './approvals-config.js';

const MiB = 1024 * 1024;

/** Keys added to the `server` section. */
export const serverSecurityFields = {
  /** Allow binding a non-loopback address without `auth` (warned about at every start). */
  allow_insecure: z.boolean().default(false),
  /**
   * Host names (without port) accepted in the Host header on a loopback bind besides the loopback ones, e.g.
   * the public name a reverse proxy on this machine forwards. Case-insensitive.
   */
  allowed_hosts: z
    .array(z.string().regex(/^[A-Za-z0-9.-]+$|^\[[0-9A-Fa-f:.]+\]$/, 'must be a host name like gateway.example.com'))
    .default([]),
  /** Browser origins (scheme://host[:port]) allowed to call the gateway; others are refused. */
  cors_origins: z
    .array(z.string().regex(/^https?:\/\/[^/\s]+$/, 'must be an origin like https://app.example.com'))
    .default([]),
  /** Time allowed to receive a request's headers, seconds. */
  headers_timeout_s: z.number().positive().max(300).default(10),
  /** Time allowed to receive a whole request (headers and body), seconds. */
  request_timeout_s: z.number().positive().max(300).default(30),
};

/** A tool-name glob (`read_*`), `tag:NAME` or `kind:NAME`. */
const Rule = z.string().min(1);

export const TokenConfig = z
  .strictObject({
    /** Who this token is: shown in audit records and logs (never the token itself). */
    name: z.string().min(1),
    /** Name of the environment variable holding the token. */
    token_env: z.string().min(1).optional(),
    /** Hex SHA-256 of the token, so the config file holds no secret. */
    token_sha256: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex digits (sha256sum of the token)')
      .optional(),
    /** When set, only tools matching one of these rules are visible and callable with this token. */
    allow: z.array(Rule).optional(),
    /** Tools matching any of these rules are hidden from and refused to this token. */
    deny: z.array(Rule).default([]),
    /** May read the gateway-wide views: GET /metrics and GET /agents (every tool, agent and endpoint). */
    admin: z.boolean().optional(),
    /** Calls of this token matching any of these rules wait for a person's approval (as approvals.require). */
    approve: z.array(ApprovalRule).optional(),
    /**
     * Disk bytes this token's workspace may hold, instead of tools.fs.max_workspace_bytes (with one workspace per
     * principal: tools.fs.root ending in {principal}; docs/tenants.md).
     */
    quota_bytes: z.int().positive().optional(),
  })
  .refine((t) => (t.token_env === undefined) !== (t.token_sha256 === undefined), {
    message: 'give exactly one of token_env or token_sha256',
  });
export type TokenConfig = z.output<typeof TokenConfig>;

export const AuthConfig = z
  .strictObject({
    /** Static bearer tokens: a caller sends one as `Authorization: Bearer …`. */
    tokens: z
      .array(TokenConfig)
      .default([])
      .refine((ts) => new Set(ts.map((t) => t.name)).size === ts.length, { message: 'token names must be unique' }),
    /** Identity-provider tokens (OIDC/JWT), accepted alongside the static tokens. */
    jwt: JwtConfig.optional(),
  })
  .refine((a) => a.tokens.length > 0 || a.jwt !== undefined, {
    message: 'list at least one token, or configure auth.jwt (or remove the auth section)',
    path: ['tokens'],
  });
export type AuthConfig = z.output<typeof AuthConfig>;

export const SessionsConfig = z.strictObject({
  /** Refuse /tool/list and /tool/call without a live session_id. Default: true when `auth` is configured. */
  required: z.boolean().optional(),
  /** Idle time after which a session expires, seconds. */
  ttl_s: z.number().positive().default(3600),
  /** Concurrent calls per session (0 = no limit). */
  max_parallel: z.int().min(0).default(16),
  /** Live sessions at most (0 = no limit); handshakes beyond it get 503 with Retry-After. */
  max_sessions: z.int().min(0).default(10_000),
  /**
   * Live sessions per token (per client address for anonymous handshakes; 0 = no limit). A handshake beyond it
   * closes that token's own least recently used session, never another's.
   */
  max_per_principal: z.int().min(0).default(1000),
});
export type SessionsConfig = z.output<typeof SessionsConfig>;

export const PolicyConfig = z.strictObject({
  /** When non-empty, only tools matching one of these rules exist for callers. */
  allow: z.array(Rule).default([]),
  /** Tools matching any of these rules are hidden and refused; deny wins over allow. */
  deny: z.array(Rule).default([]),
  /**
   * Refuse a tool the caller may not see as if it did not exist (unknown_tool, same message) instead of the
   * spec's tool_denied, so callers cannot enumerate hidden tools. Applies to policy and per-token rules.
   */
  hide_denied: z.boolean().default(false),
});
export type PolicyConfig = z.output<typeof PolicyConfig>;

export const LimitsConfig = z.strictObject({
  /** Deepest nesting of arrays/objects in a request body or message, on every door (checked before parsing). */
  max_json_depth: z.int().min(2).max(1000).default(64),
  /** Longest string (in UTF-16 units) anywhere in a call's arguments. */
  max_string_length: z.int().positive().default(MiB),
  /** Most items in any array in a call's arguments. */
  max_array_items: z.int().positive().default(10_000),
  /** Per-token call rate (token bucket refill per second; 0 = no limit). Applies to authenticated tokens. */
  rate_per_s: z.number().min(0).default(50),
  /** Per-token burst (bucket size). */
  rate_burst: z.int().positive().default(100),
  /** Calls running at once across the gateway (0 = no limit). */
  max_concurrent_calls: z.int().min(0).default(16_384),
});
export type LimitsConfig = z.output<typeof LimitsConfig>;

export const AuditConfig = z.strictObject({
  /** File to append one JSON line per call to; unset = no audit file. */
  path: z.string().min(1).optional(),
  /** Rotate when the file reaches this size: file → file.1 → file.2 …, bytes. */
  max_bytes: z
    .int()
    .positive()
    .default(10 * MiB),
  /** Rotated files kept. */
  keep: z.int().min(0).default(5),
});
export type AuditConfig = z.output<typeof AuditConfig>;

/**
 * The sections of the gateway's config that the security layer reads (the whole config fits): the layer names
 * what it takes instead of importing the root config, which is built from these schemas.
 */
export interface SecuritySections {
  auth?: AuthConfig | undefined;
  policy: PolicyConfig;
  sessions: SessionsConfig;
  limits: LimitsConfig;
  audit: AuditConfig;
  approvals: ApprovalsConfig;
  /** With store.kind redis, the shared sessions hold their owner's lease this long (calls.owner_lease_s). */
  calls: { owner_lease_s: number };
  server: { allow_insecure: boolean };
}
