/**
 * Who may see a call resource when auth is on. GET/DELETE /tool/calls/{id}
 * need the bearer token that started the call (others get the same 404 as
 * for a call that does not exist). The event stream also accepts the
 * per-call `access_token` put into `events_url`, because EventSource cannot
 * send an Authorization header: an HMAC of the call id under a key made at
 * start, compared in constant time, good for that one call only.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { GatewayError, type Call } from '../engine/index.js';
import type { CallAccess } from './calls.js';

export function signedCallAccess(): CallAccess {
  const key = randomBytes(32);
  const sign = (call: Call) => createHmac('sha256', key).update(call.id).digest();
  const ownedBy = (c: Context, call: Call) => {
    const principal = c.get('principal');
    return principal !== null && principal !== undefined && principal.name === call.caller.principal;
  };
  return {
    eventsQuery: (call) => ({ access_token: sign(call).toString('base64url') }),
    ownedBy,
    checkEvents(c, call) {
      if (ownedBy(c, call)) return;
      const given = Buffer.from(c.req.query('access_token') ?? '', 'base64url');
      const want = sign(call);
      if (given.length === want.length && timingSafeEqual(given, want)) return;
      throw new GatewayError(
        'unauthorized',
        'reading these events needs the events_url returned by POST /tool/calls (it carries access_token) ' +
          'or the bearer token that started the call',
      );
    },
  };
}
