/**
 * How a handshake's `auth_token` is checked. The transport takes this as a
 * function, so the gateway's bearer-token auth plugs in without the
 * transport knowing how tokens are stored.
 */
export type HandshakeAuthResult = { ok: true; principal: string | null } | { ok: false; reason: string };

/** `token` is the handshake's auth_token, or null when it sent none (or ""). */
export type HandshakeAuth = (token: string | null) => HandshakeAuthResult | Promise<HandshakeAuthResult>;

/**
 * The handshake check for a bearer-token authenticator (token → principal
 * with a name, or null): `auth_token` is checked exactly like a bearer token.
 */
export function bearerTokenAuth(authenticate: (token: string | null) => { readonly name: string } | null): HandshakeAuth {
  return (token) => {
    const principal = authenticate(token);
    if (principal) return { ok: true, principal: principal.name };
    return {
      ok: false,
      reason: token ? 'the token is not valid; check auth_token' : 'this gateway requires a token; send it as auth_token in handshake/req',
    };
  };
}

/** No auth configured: every handshake is accepted, anonymously. */
export const acceptAnyToken: HandshakeAuth = () => ({ ok: true, principal: null });
