/**
 * The gateway-wide views (GET /metrics, GET /agents) show every tool name,
 * agent card and endpoint, whatever a token's allow list says. With auth on,
 * only tokens marked `admin: true` may read them; without auth they are open
 * like everything else.
 */
import type { Context } from 'hono';
import { GatewayError } from '../../engine/index.js';

/** Throws `forbidden` unless the request may read an admin view. */
export type AdminCheck = (c: Context, what: string) => void;

/** `admins`: names of the admin tokens; undefined when no auth is configured (open). */
export function adminCheck(admins: ReadonlySet<string> | undefined): AdminCheck {
  if (!admins) return () => {};
  return (c, what) => {
    const principal = c.get('principal');
    if (principal && admins.has(principal.name)) return;
    throw new GatewayError(
      'forbidden',
      `${what} shows every tool, agent and endpoint of this gateway, so it needs a token with admin: true ` +
        `(auth.tokens[].admin)${principal ? `; token "${principal.name}" is not one` : ''}`,
    );
  };
}
