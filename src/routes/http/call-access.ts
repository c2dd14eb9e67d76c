/**
 * Who may see a call resource when auth is on. GET/DELETE /tool/calls/{id}
 * need the bearer token that started the call (others get the same 404 as
 * for a call that does not exist). The event stream also accepts the
 * per-call `access_token` put into `events_url`, because EventSource cannot
 * send an Authorization header: an HMAC of the call id under a key made at
 * start, compared in constant time, good for that one call only, and only
 * while the credential that started the call is still configured (a reload
 * that removes or rotates it revokes the tokens of its calls too).
 *
 * The event stream's refusal depends only on the credentials sent, never on
 * whether the call exists, so call ids cannot be probed: another bearer token
 * gets the 404 of a missing call, no valid credential gets 401 — for an
 * existing call and an unknown id alike.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { GatewayError, type CallView } from '../../engine/index.js';

/**
 * Who may read a call's events (the call resources' and the admin events' routes ask it): open without auth
 * (`openCallAccess`), signed per-call tokens with it (`signedCallAccess`).
 */
export interface CallAccess {
  /** Query parameters added to `events_url`. */
  eventsQuery(call: CallView): Record<string, string>;
  /**
   * May this request read the events of call `callId` (`call` undefined when there is no such call)? Throws a
   * GatewayError (e.g. `unauthorized`) or answers `not_found`; the answer must not depend on whether the call
   * exists unless the request proved it may see it, so ids cannot be probed.
   */
  checkEvents(c: Context, callId: string, call: CallView | undefined): 'ok' | 'not_found';
  /** Whether this request may read or cancel the call; a call it may not is answered like one that does not exist. */
  ownedBy?(c: Context, call: CallView): boolean;
}

export const openCallAccess: CallAccess = {
  eventsQuery: () => ({}),
  checkEvents: (_c, _id, call) => (call ? 'ok' : 'not_found'),
};

/**
 * `key` gives the HMAC key: by default one made here (valid in this process only); with a shared store, the
 * store's key, the same on every instance (so a token minted by one verifies on any). `live`: whether a
 * credential (Principal.credential) is still configured.
 */
export function signedCallAccess(
  key: () => Buffer = processKey(),
  live: (credential: string) => boolean = () => true,
): CallAccess {
  const sign = (callId: string) => createHmac('sha256', key()).update(callId).digest();
  // A call belongs to the credential that started it, not to its name: a token rotated under the same name is someone else.
  const ownedBy = (c: Context, call: CallView) => {
    const principal = c.get('principal');
    return (
      principal !== null &&
      principal !== undefined &&
      principal.name === call.principal &&
      (call.credential === undefined || call.credential === principal.credential)
    );
  };
  return {
    eventsQuery: (call) => ({ access_token: sign(call.id).toString('base64url') }),
    ownedBy,
    checkEvents(c, callId, call) {
      if (call && ownedBy(c, call)) return 'ok';
      const given = Buffer.from(c.req.query('access_token') ?? '', 'base64url');
      const want = sign(callId);
      const revoked = call?.credential !== undefined && !live(call.credential);
      // A valid per-call token for a call that is gone: only its holder learns that it was dropped.
      if (given.length === want.length && timingSafeEqual(given, want) && !revoked) return call ? 'ok' : 'not_found';
      if (c.get('principal')) return 'not_found';
      throw new GatewayError(
        'unauthorized',
        'reading these events needs the events_url returned by POST /tool/calls (it carries access_token) ' +
          'or the bearer token that started the call',
      );
    },
  };
}

function processKey(): () => Buffer {
  const key = randomBytes(32);
  return () => key;
}
