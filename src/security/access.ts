/**
 * Who is calling, from what the transport knows (the authenticated
 * principal and the session_id it sent). Shared by every door: the REST
 * routes and the A2E transport resolve callers the same way.
 */
import { GatewayError, type Admitted, type Caller, type SessionManager } from '../engine/index.js';

export interface AccessRules {
  sessions: SessionManager;
  /** Refuse callers without a live session. */
  sessionsRequired: boolean;
}

const noSession = (why: string) =>
  new GatewayError('unauthorized', `${why}; open a session with POST /handshake and send its session_id`, {
    detail: { reason: 'session' },
  });

/**
 * The caller for `principal` (null when no auth is configured) presenting
 * `sessionId` ("" for none). A session can only be used with the token that
 * opened it; an unknown, expired or foreign session is refused alike, so the
 * answer does not tell whether a session id exists.
 */
export function resolveCaller(rules: AccessRules, principal: string | null, sessionId: string): Caller {
  if (!sessionId) {
    if (rules.sessionsRequired) throw noSession('this gateway requires a session (sessions.required)');
    return { sessionId: '', principal };
  }
  const session = rules.sessions.get(sessionId);
  if (!session || session.principal !== principal) throw noSession('session_id is unknown or expired');
  return { sessionId: session.id, principal, capabilities: session.capabilities };
}

/**
 * resolveCaller for either session store: synchronous in memory, one round
 * trip when sessions live in a shared store (store.kind redis) and a session
 * is given.
 */
export function findCaller(rules: AccessRules, principal: string | null, sessionId: string): Caller | Promise<Caller> {
  const shared = rules.sessions.shared;
  if (!shared || !sessionId) return resolveCaller(rules, principal, sessionId);
  return shared.get(sessionId).then((session) => {
    if (!session || session.principal !== principal) throw noSession('session_id is unknown or expired');
    return { sessionId: session.id, principal, capabilities: session.capabilities };
  });
}

/** A caller the shared store admitted (or refused), for engine.start's `admitted`. */
export interface AdmittedCaller {
  caller: Caller;
  admitted: Admitted;
}

/**
 * The caller of a call about to start. Synchronous, as resolveCaller, unless
 * the call needs the shared store (store.kind redis, with a session or a
 * rate limit to take): then one round trip resolves the session and takes
 * the shared limits together, and engine.start applies the outcome.
 */
export function admitCaller(
  rules: AccessRules,
  principal: string | null,
  sessionId: string,
): Caller | Promise<AdmittedCaller> {
  const shared = rules.sessions.shared;
  if (!shared || !shared.needed(principal, sessionId)) return resolveCaller(rules, principal, sessionId);
  if (!sessionId && rules.sessionsRequired) throw noSession('this gateway requires a session (sessions.required)');
  return shared.admitCall(principal, sessionId).then((outcome) => {
    if (!outcome) throw noSession('session_id is unknown or expired');
    const { session, admitted } = outcome;
    const caller: Caller = session
      ? { sessionId: session.id, principal, capabilities: session.capabilities }
      : { sessionId: '', principal };
    return { caller, admitted };
  });
}

/**
 * The shared admission of a call whose caller is already known (the MCP and
 * A2A doors): undefined when it needs none (memory store, or no session and
 * no rate limit to take).
 */
export function admitShared(
  rules: AccessRules,
  principal: string | null,
  sessionId = '',
): Promise<Admitted> | undefined {
  const shared = rules.sessions.shared;
  if (!shared || !shared.needed(principal, sessionId)) return undefined;
  return shared
    .admitCall(principal, sessionId)
    .then((outcome) => outcome?.admitted ?? { refused: noSession('session_id is unknown or expired') });
}
