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
type Named = { readonly name: string } | null;

export function bearerTokenAuth(
  authenticate: ((token: string | null) => Named | Promise<Named>) & {
    explain?: (token: string) => string | undefined;
  },
): HandshakeAuth {
  const invalid = (token: string) => {
    const why = authenticate.explain?.(token);
    return why ? `the token is not valid: ${why}` : 'the token is not valid; check auth_token';
  };
  const outcome = (token: string | null, principal: Named): HandshakeAuthResult =>
    principal
      ? { ok: true, principal: principal.name }
      : {
          ok: false,
          reason: token ? invalid(token) : 'this gateway requires a token; send it as auth_token in handshake/req',
        };
  return (token) => {
    const principal = authenticate(token);
    // Identity-provider tokens are verified asynchronously; static ones answer at once.
    return principal instanceof Promise ? principal.then((p) => outcome(token, p)) : outcome(token, principal);
  };
}

/** No auth configured: every handshake is accepted, anonymously. */
export const acceptAnyToken: HandshakeAuth = () => ({ ok: true, principal: null });
