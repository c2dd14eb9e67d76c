/**
 * How a handshake's `auth_token` is checked. The transport takes this as a
 * function, so the gateway's bearer-token auth plugs in without the
 * transport knowing how tokens are stored.
 */
export type HandshakeAuthResult = { ok: true; principal: string | null } | { ok: false; reason: string };

/** `token` is the handshake's auth_token, or null when it sent none (or ""). */
export type HandshakeAuth = (token: string | null) => HandshakeAuthResult | Promise<HandshakeAuthResult>;

/** No auth configured: every handshake is accepted, anonymously. */
export const acceptAnyToken: HandshakeAuth = () => ({ ok: true, principal: null });
