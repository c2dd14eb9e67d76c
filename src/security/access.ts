/**
 * Who is calling, from what the transport knows (the authenticated
 * principal and the session_id it sent). Shared by every door: the REST
 * routes and the A2E transport resolve callers the same way.
 */
import { GatewayError, type Caller, type SessionManager } from '../engine/index.js';

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
