/**
 * The security layer built from config once at start: authenticator,
 * sessions, policy, admission limits and the audit file. server.ts hands
 * the pieces to the engine and the HTTP app.
 */
import { Admission, MemoryRateLimiter, SessionManager, type Logger, type Policy } from '../engine/index.js';
import type { GatewayConfig } from '../config/index.js';
import { openAuditFile, type AuditFile } from './audit-file.js';
import { createAuthenticator, type Authenticate } from './auth.js';
import { isLoopbackAddress } from './loopback.js';
import { buildPolicy } from './policy.js';
import { createJwtVerifier } from './jwt.js';
import type { Stores } from '../store/index.js';

export { createAuthenticator, bearerToken, WWW_AUTHENTICATE, type Authenticate, type Principal } from './auth.js';
export { admitCaller, admitShared, findCaller, resolveCaller, type AccessRules, type AdmittedCaller } from './access.js';
export { buildPolicy } from './policy.js';
export { compileRules } from './rules.js';
export { auditLine, openAuditFile, type AuditFile } from './audit-file.js';
export { isLoopbackAddress, isLoopbackHostHeader } from './loopback.js';

export interface Security {
  authenticate: Authenticate | undefined;
  sessions: SessionManager;
  sessionsRequired: boolean;
  policy: Policy;
  admission: Admission;
  auditFile: AuditFile | undefined;
  /** Stop timers and flush the audit file. */
  close(): Promise<void>;
}

/** `stores`: with store.kind redis, sessions and the shared admission limits live in Redis. */
export function buildSecurity(config: GatewayConfig, env: NodeJS.ProcessEnv, logger: Logger, stores?: Stores): Security {
  const jwt = config.auth?.jwt && createJwtVerifier(config.auth.jwt, logger, new Set(config.auth.tokens.map((t) => t.name)));
  const authenticate = config.auth ? createAuthenticator(config.auth, env, jwt) : undefined;
  const sessions = new SessionManager({
    ttlS: config.sessions.ttl_s,
    maxParallel: config.sessions.max_parallel,
    maxSessions: config.sessions.max_sessions,
    maxPerOwner: config.sessions.max_per_principal,
    shared: stores?.sessions({
      ttlS: config.sessions.ttl_s,
      maxParallel: config.sessions.max_parallel,
      maxSessions: config.sessions.max_sessions,
      maxPerOwner: config.sessions.max_per_principal,
      ratePerS: config.limits.rate_per_s,
      rateBurst: config.limits.rate_burst,
      leaseS: config.calls.owner_lease_s,
    }),
  });
  const sweep = setInterval(() => sessions.sweep(), Math.min(60, config.sessions.ttl_s) * 1000);
  sweep.unref();
  const { limits } = config;
  const admission = new Admission({
    maxConcurrentCalls: limits.max_concurrent_calls,
    maxParallelPerSession: config.sessions.max_parallel,
    maxDepth: limits.max_json_depth,
    maxStringLength: limits.max_string_length,
    maxArrayItems: limits.max_array_items,
    rateLimiter: limits.rate_per_s > 0 ? new MemoryRateLimiter(limits.rate_per_s, limits.rate_burst) : undefined,
  });
  const auditFile = config.audit.path
    ? openAuditFile({ path: config.audit.path, maxBytes: config.audit.max_bytes, keep: config.audit.keep, logger })
    : undefined;
  return {
    authenticate,
    sessions,
    sessionsRequired: config.sessions.required ?? config.auth !== undefined,
    policy: buildPolicy(config.policy, config.auth, jwt ? (name) => jwt.rulesFor(name) : undefined),
    admission,
    auditFile,
    async close() {
      clearInterval(sweep);
      await auditFile?.close();
    },
  };
}

/**
 * Refuse a non-loopback bind without auth unless `allow_insecure`; returns
 * the warning to log at every start when insecure was allowed.
 */
export function checkBind(address: string, config: GatewayConfig): { error?: string; warning?: string } {
  if (isLoopbackAddress(address) || config.auth) return {};
  if (!config.server.allow_insecure) {
    return {
      error:
        `refusing to listen on ${address} without authentication: anyone who can reach it could run tools. ` +
        'Configure auth.tokens, bind 127.0.0.1, or set server.allow_insecure: true to accept the risk',
    };
  }
  return { warning: `INSECURE: listening on ${address} without authentication (server.allow_insecure: true); anyone who can reach it can run tools` };
}
