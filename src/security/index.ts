/**
 * The security layer built from config once at start: authenticator,
 * sessions, policy, admission limits and the audit file. server.ts hands
 * the pieces to the engine and the HTTP app.
 */
import {
  Admission,
  MemoryRateLimiter,
  PrincipalStreams,
  SessionManager,
  type AdmissionOptions,
  type Logger,
  type Policy,
} from '../engine/index.js';
import type { SecuritySections } from './config.js';
import { openAuditFile, type AuditFile } from './audit-file.js';
import { createAuthenticator, digestOf, staticCredential, type Authenticate } from './auth.js';
import { isLoopbackAddress } from './loopback.js';
import { buildPolicy } from './policy.js';
import { buildApprovals, type ApprovalSetup } from './approval-rules.js';
import { createJwtVerifier, jwtCredentialPrefix, type JwtVerifier } from './jwt.js';
import type { Stores } from '../store/index.js';
import type { RedisSessionOptions } from '../store/redis/index.js';

export {
  createAuthenticator,
  bearerToken,
  refusal,
  WWW_AUTHENTICATE,
  type Authenticate,
  type Principal,
} from './auth.js';
export {
  admitCaller,
  admitShared,
  findCaller,
  resolveCaller,
  type AccessRules,
  type AdmittedCaller,
} from './access.js';
export { buildPolicy } from './policy.js';
export { compileRules } from './rules.js';
export { auditLine, openAuditFile, type AuditFile } from './audit-file.js';
export { isLoopbackAddress, isLoopbackHostHeader } from './loopback.js';
export type { SecuritySections } from './config.js';

export interface Security {
  authenticate: Authenticate | undefined;
  sessions: SessionManager;
  sessionsRequired: boolean;
  /** The long-lived streams open here, by principal: a reload that revokes a credential ends those opened with it. */
  streams: PrincipalStreams;
  /** Is this credential (Principal.credential) still configured? Per-call access tokens of a revoked one stop working. */
  credentialLive(credential: string): boolean;
  policy: Policy;
  /** Which calls wait for approval and who decides; follows the latest reload (a pending approval keeps its rule). */
  approvals: ApprovalSetup;
  admission: Admission;
  auditFile: AuditFile | undefined;
  /**
   * Check a reloaded config's tokens, JWT settings, policy and limits and return the function that puts them
   * in force for new requests and calls. Throws (nothing changed) when the config is unusable, e.g. a token's
   * variable is unset. `authenticate` and `policy` above stay the same functions and follow the swap.
   */
  prepareReload(next: SecuritySections, env: NodeJS.ProcessEnv): () => ReloadedSecurity;
  /**
   * The workspace quota of a principal's own token (auth.tokens[].quota_bytes, or the largest quota_bytes of the JWT
   * rules its latest token matched); undefined: tools.fs.max_workspace_bytes applies. Follows reloads.
   */
  quotaOf(principal: string | null): number | undefined;
  /** Stop timers and flush the audit file. */
  close(): Promise<void>;
}

/**
 * What a reload did to security: sessions and streams ended because the credential that opened them was removed
 * or changed (sessions counted once Redis answered, with store.kind redis).
 */
export interface ReloadedSecurity {
  sessionsEnded: number | Promise<number>;
  /**
   * Whether what `principal` opened with `credential` (undefined: not known, judged by the name) lost its credential
   * in the reload, for the other doors to end what it opened (the A2E transport's sessions).
   */
  revoked: (principal: string | null, credential?: string) => boolean;
}

/** The parts of security a reload replaces: built from one config, swapped in together. */
interface Rules {
  auth: SecuritySections['auth'];
  /** The credential id of each static token, by name. */
  tokens: ReadonlyMap<string, string>;
  /** The same ids, as a set. */
  credentials: ReadonlySet<string>;
  jwt: JwtVerifier | undefined;
  authenticate: Authenticate | undefined;
  policy: Policy;
  approvals: ApprovalSetup;
}

function buildRules(config: SecuritySections, env: NodeJS.ProcessEnv, logger: Logger, previous?: Rules): Rules {
  const staticNames = new Set(config.auth?.tokens.map((t) => t.name));
  // A JWT verifier whose settings and static names are unchanged is kept, with its cached key set.
  const sameJwt =
    previous?.jwt !== undefined &&
    JSON.stringify(previous.auth?.jwt) === JSON.stringify(config.auth?.jwt) &&
    JSON.stringify(previous.auth?.tokens.map((t) => t.name)) === JSON.stringify(config.auth?.tokens.map((t) => t.name));
  const jwt = sameJwt ? previous.jwt : config.auth?.jwt && createJwtVerifier(config.auth.jwt, logger, staticNames);
  const tokens = new Map(config.auth?.tokens.map((t) => [t.name, staticCredential(t.name, digestOf(t, env))]));
  return {
    auth: config.auth,
    tokens,
    credentials: new Set(tokens.values()),
    jwt,
    authenticate: config.auth ? createAuthenticator(config.auth, env, jwt) : undefined,
    policy: buildPolicy(config.policy, config.auth, jwt ? (name) => jwt.rulesFor(name) : undefined),
    approvals: buildApprovals(config.approvals, config.auth, jwt ? (name) => jwt.rulesFor(name) : undefined),
  };
}

function admissionOptions(
  config: SecuritySections,
  previous?: { options: AdmissionOptions; config: SecuritySections },
): AdmissionOptions {
  const { limits } = config;
  // The rate limiter keeps its buckets unless its rate changed.
  const sameRate =
    previous &&
    previous.config.limits.rate_per_s === limits.rate_per_s &&
    previous.config.limits.rate_burst === limits.rate_burst;
  return {
    maxConcurrentCalls: limits.max_concurrent_calls,
    maxParallelPerSession: config.sessions.max_parallel,
    maxDepth: limits.max_json_depth,
    maxStringLength: limits.max_string_length,
    maxArrayItems: limits.max_array_items,
    rateLimiter: sameRate
      ? previous.options.rateLimiter
      : limits.rate_per_s > 0
        ? new MemoryRateLimiter(limits.rate_per_s, limits.rate_burst)
        : undefined,
  };
}

/** What the shared session store (store.kind redis) takes from the config. */
function sharedSessionOptions(config: SecuritySections): RedisSessionOptions {
  return {
    ttlS: config.sessions.ttl_s,
    maxParallel: config.sessions.max_parallel,
    maxSessions: config.sessions.max_sessions,
    maxPerOwner: config.sessions.max_per_principal,
    ratePerS: config.limits.rate_per_s,
    rateBurst: config.limits.rate_burst,
    leaseS: config.calls.owner_lease_s,
  };
}

/**
 * Is the credential `principal` held before the reload still good after it? (null: the anonymous caller of a
 * gateway without auth.) A name says who, not with what: a static token stays only with the same secret, a JWT
 * subject only while tokens of the same issuer, read the same way, are accepted. Whatever was opened under a name
 * was opened with its credential of the time, since a reload that changed it ended it.
 */
function stillValid(principal: string | null, before: Rules, after: Rules): boolean {
  if (principal === null) return after.auth === undefined;
  if (after.auth === undefined) return false;
  const was = before.tokens.get(principal);
  if (was !== undefined) return after.tokens.get(principal) === was;
  if (after.tokens.has(principal)) return false; // a JWT subject's name now a static token's
  const [a, b] = [before.auth?.jwt, after.auth.jwt];
  return (
    a !== undefined &&
    b !== undefined &&
    a.issuer === b.issuer &&
    a.name_claim === b.name_claim &&
    after.jwt !== undefined
  );
}

/** The last frame of a stream whose credential a reload revoked says this. */
const REVOKED =
  'the token this stream was opened with was removed or changed by a configuration reload, so the stream ended; reconnect with a currently valid token';

/**
 * Is `credential` (Principal.credential) one `rules` accept? A static token's while a token has that name and secret;
 * an identity provider's while tokens of that issuer, named by the same claim, are accepted.
 */
function liveUnder(rules: Rules, credential: string): boolean {
  if (credential.startsWith('t.')) return rules.credentials.has(credential);
  const jwt = rules.auth?.jwt;
  return jwt !== undefined && rules.jwt !== undefined && credential.startsWith(jwtCredentialPrefix(jwt));
}

/** `stores`: with store.kind redis, sessions and the shared admission limits live in Redis. */
export function buildSecurity(
  config: SecuritySections,
  env: NodeJS.ProcessEnv,
  logger: Logger,
  stores?: Stores,
): Security {
  let rules = buildRules(config, env, logger);
  const shared = stores?.sessions(sharedSessionOptions(config));
  const sessions = new SessionManager({
    ttlS: config.sessions.ttl_s,
    maxParallel: config.sessions.max_parallel,
    maxSessions: config.sessions.max_sessions,
    maxPerOwner: config.sessions.max_per_principal,
    shared,
  });
  const sweep = setInterval(() => sessions.sweep(), Math.min(60, config.sessions.ttl_s) * 1000);
  sweep.unref();
  let admitted = { options: admissionOptions(config), config };
  const admission = new Admission(admitted.options);
  const auditFile = config.audit.path
    ? openAuditFile({ path: config.audit.path, maxBytes: config.audit.max_bytes, keep: config.audit.keep, logger })
    : undefined;
  const streams = new PrincipalStreams();
  return {
    // The same functions for the gateway's life; they follow the rules of the latest reload.
    authenticate:
      rules.authenticate &&
      Object.assign((token: string | null | undefined) => rules.authenticate!(token), {
        explain: (token: string) => rules.authenticate?.explain?.(token),
      }),
    sessions,
    streams,
    credentialLive: (credential) => liveUnder(rules, credential),
    sessionsRequired: config.sessions.required ?? config.auth !== undefined,
    policy: (caller, tool) => rules.policy(caller, tool),
    approvals: {
      gate: {
        need: (caller, tool, args) => rules.approvals.gate.need(caller, tool, args),
        selfAllowed: () => rules.approvals.gate.selfAllowed(),
      },
      isApprover: (principal) => rules.approvals.isApprover(principal),
    },
    admission,
    auditFile,
    quotaOf(principal) {
      if (principal === null || !rules.auth) return undefined;
      const token = rules.auth.tokens.find((t) => t.name === principal);
      return token ? token.quota_bytes : rules.jwt?.rulesFor(principal)?.quotaBytes;
    },
    prepareReload(next, nextEnv) {
      const nextRules = buildRules(next, nextEnv, logger, rules);
      const nextAdmission = { options: admissionOptions(next, admitted), config: next };
      return () => {
        const before = rules;
        rules = nextRules;
        admitted = nextAdmission;
        admission.update(nextAdmission.options);
        // Judged by the credential where it is known, so a reload on another instance later does not end the sessions
        // the name's new credential opened meanwhile; by the name where it is not (the A2E transport's sessions).
        // A JWT subject whose name a static token now has is refused from now on (createJwtVerifier), so it ends too.
        const revoked = (principal: string | null, credential?: string) =>
          credential !== undefined
            ? !liveUnder(nextRules, credential) ||
              (credential.startsWith('j.') && principal !== null && nextRules.tokens.has(principal))
            : !stillValid(principal, before, nextRules);
        const streamsEnded = streams.endWhere(revoked, REVOKED);
        if (!shared)
          return {
            sessionsEnded: sessions.closeWhere((s) => revoked(s.principal, s.credential)) + streamsEnded,
            revoked,
          };
        shared.update(sharedSessionOptions(next));
        const ended = shared.closeWhere(revoked);
        return {
          // The new rules are in force either way; sessions Redis did not hear about expire after sessions.ttl_s.
          sessionsEnded: ended.then(
            (n) => n + streamsEnded,
            (err: unknown) => {
              logger.error(
                { error: (err as Error).message },
                'config reload: the sessions of removed tokens could not be closed in Redis; they expire after sessions.ttl_s',
              );
              return streamsEnded;
            },
          ),
          revoked,
        };
      };
    },
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
export function checkBind(address: string, config: SecuritySections): { error?: string; warning?: string } {
  if (isLoopbackAddress(address) || config.auth) return {};
  if (!config.server.allow_insecure) {
    return {
      error:
        `refusing to listen on ${address} without authentication: anyone who can reach it could run tools. ` +
        'Configure auth.tokens, bind 127.0.0.1, or set server.allow_insecure: true to accept the risk',
    };
  }
  return {
    warning: `INSECURE: listening on ${address} without authentication (server.allow_insecure: true); anyone who can reach it can run tools`,
  };
}
