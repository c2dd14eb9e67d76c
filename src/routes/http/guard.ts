/**
 * The gate in front of every route: Host check on loopback binds (DNS
 * rebinding), Origin check and CORS, bearer-token authentication. Runs
 * before the routes, and sets its headers before the route runs so every answer
 * carries them, SSE streams included (they copy the prepared headers).
 */
import type { Context } from 'hono';
import { GatewayError, type Logger } from '../../engine/index.js';
import { bearerToken, refusal, type Authenticate, type Principal } from '../../security/auth.js';
import { hostHeaderName, isLoopbackHostHeader } from '../../security/loopback.js';
import { errorResponse } from './errors.js';
import { requestHeader } from './node.js';

declare module 'hono' {
  interface ContextVariableMap {
    /** The authenticated token, or null (no auth configured, or a public route). */
    principal: Principal | null;
    /** Set when the guard added response headers with c.header() (CORS): answers must go through Hono. */
    preparedHeaders: boolean;
  }
}

export interface GuardOptions {
  /** Whether the server listens on loopback only (then Host must name loopback). */
  loopbackBind: () => boolean;
  /** Origins allowed to call from a browser, e.g. "https://app.example.com". */
  corsOrigins: readonly string[];
  /** Extra names accepted in Host on a loopback bind (server.allowed_hosts). */
  allowedHosts?: readonly string[];
  /** Present when auth is configured. */
  authenticate?: Authenticate;
  /** `server.base_path`: route paths below are matched without it. */
  basePath?: string;
  /** Refusals are logged (info) with the path and reason, never with a token. */
  logger?: Logger;
  /** Told of every refusal, with the path under the base path (the audit of refused call attempts). */
  onRefused?: (c: Context, err: GatewayError, path: string) => void;
}

/** Routes anyone who reaches the gateway may read: health, readiness, the index, documentation and the console's page (it asks for a token itself). */
const isPublic = (method: string, path: string) =>
  (method === 'GET' || method === 'HEAD') &&
  (path === '/healthz' ||
    path === '/readyz' ||
    path === '/' ||
    path === '/openapi.json' ||
    path === '/docs' ||
    path.startsWith('/docs/') ||
    path === '/ui' ||
    path.startsWith('/ui/'));

/**
 * Routes that may come without a bearer header because they check a token of
 * their own: the handshake (`auth_token` in the body) and a call's event
 * stream (EventSource cannot send headers; `events_url` carries a per-call token).
 */
const checksItsOwnToken = (method: string, path: string) =>
  (method === 'POST' && path === '/handshake') ||
  (method === 'GET' && /^\/tool\/calls\/[^/]+\/events$/.test(path)) ||
  // The A2A agent card: without a token it lists no skills (a token, when sent, must be valid).
  (method === 'GET' && path === '/.well-known/agent-card.json');

const ALLOW_METHODS = 'GET, POST, DELETE, OPTIONS';
const ALLOW_HEADERS =
  'Authorization, Content-Type, Accept, Last-Event-ID, X-Session-Id, X-Request-Id, Mcp-Session-Id, MCP-Protocol-Version, A2A-Version';
const EXPOSE_HEADERS = 'Retry-After, WWW-Authenticate, Allow, X-Request-Id, Mcp-Session-Id';

const normalizeOrigin = (origin: string) => origin.toLowerCase().replace(/\/+$/, '');

/**
 * The guard: the refusal to send, or undefined to go on. A plain synchronous
 * check, run by the request step (request.ts) in its own frame, before every
 * route and not-found answer (createApp wires it), rather than as one more
 * middleware layer on every request.
 */
export function guardCheck(
  options: GuardOptions,
): (c: Context) => Response | undefined | Promise<Response | undefined> {
  const allowedOrigins = new Set(options.corsOrigins.map(normalizeOrigin));
  const allowedHosts = new Set((options.allowedHosts ?? []).map((h) => h.toLowerCase()));
  // Clients send the same few Host values over and over: remember the accepted ones (a bounded set, so
  // hostile values cannot grow it).
  const acceptedHosts = new Set<string>();
  const hostAllowed = (host: string) => {
    if (acceptedHosts.has(host)) return true;
    const ok = isLoopbackHostHeader(host) || allowedHosts.has(hostHeaderName(host) ?? '');
    if (ok && acceptedHosts.size < 64) acceptedHosts.add(host);
    return ok;
  };
  const base = options.basePath ?? '';
  const routePath = (c: Context) =>
    base && c.req.path.startsWith(base) ? c.req.path.slice(base.length) || '/' : c.req.path;
  const refuse = (c: Context, err: GatewayError) => {
    options.logger?.info({ method: c.req.method, path: c.req.path, code: err.code }, `request refused: ${err.message}`);
    options.onRefused?.(c, err, routePath(c));
    return errorResponse(c, err);
  };
  const admit = (c: Context, path: string, token: string | null, principal: Principal | null): Response | undefined => {
    if (!principal && !(token === null && checksItsOwnToken(c.req.method, path))) {
      return refuse(
        c,
        new GatewayError(
          'unauthorized',
          token === null
            ? 'this gateway requires a token; send Authorization: Bearer <token>'
            : refusal(
                options.authenticate,
                token,
                'the bearer token is not valid; check the token you send in Authorization: Bearer <token>',
              ),
        ),
      );
    }
    c.set('principal', principal);
    return undefined;
  };
  return (c) => {
    const host = requestHeader(c, 'host');
    if (host !== undefined && options.loopbackBind() && !hostAllowed(host)) {
      return refuse(
        c,
        new GatewayError(
          'forbidden',
          'the Host header does not name this machine (the gateway listens on loopback); use http://127.0.0.1 or ' +
            'http://localhost, or list the name in server.allowed_hosts (e.g. behind a reverse proxy)',
        ),
      );
    }

    const origin = requestHeader(c, 'origin');
    if (origin !== undefined) {
      const o = normalizeOrigin(origin);
      const sameOrigin =
        host !== undefined && (o === `http://${host.toLowerCase()}` || o === `https://${host.toLowerCase()}`);
      const listed = allowedOrigins.has(o);
      if (!sameOrigin && !listed) {
        return refuse(
          c,
          new GatewayError(
            'forbidden',
            `browser origin ${JSON.stringify(origin)} is not allowed; add it to server.cors_origins to let that page call the gateway`,
          ),
        );
      }
      if (listed) {
        c.set('preparedHeaders', true);
        c.header('Access-Control-Allow-Origin', origin);
        c.header('Access-Control-Expose-Headers', EXPOSE_HEADERS);
        c.header('Vary', 'Origin');
        if (c.req.method === 'OPTIONS' && requestHeader(c, 'access-control-request-method')) {
          return c.body(null, 204, {
            'Access-Control-Allow-Methods': ALLOW_METHODS,
            'Access-Control-Allow-Headers': ALLOW_HEADERS,
            'Access-Control-Max-Age': '600',
          });
        }
      }
    }

    c.set('principal', null);
    const authenticate = options.authenticate;
    const path = routePath(c);
    if (authenticate && !isPublic(c.req.method, path)) {
      const token = bearerToken(requestHeader(c, 'authorization'));
      const principal = authenticate(token);
      // A JWT is verified asynchronously; a static token answers at once, without a promise.
      if (principal instanceof Promise) return principal.then((p) => admit(c, path, token, p));
      return admit(c, path, token, principal);
    }
    return undefined;
  };
}
