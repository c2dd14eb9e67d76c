/** POST /handshake: open a session and negotiate capabilities. */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { GatewayError, quotaKey, type SessionManager } from '../../engine/index.js';
import { ErrorMessage, HandshakeRequest, HandshakeResponse } from '../../protocol/index.js';
import { refusal, type Authenticate } from '../../security/auth.js';
import { readJson } from '../http/body.js';
import type { HttpLimits } from '../http/limits.js';
import type { ProxyTrust } from '../http/proxy-trust.js';
import { jsonResponse } from '../http/respond.js';

export const handshakeRoute = createRoute({
  method: 'post',
  path: '/handshake',
  operationId: 'handshake',
  tags: ['sessions'],
  summary: 'Open a session and negotiate capabilities',
  description:
    'Answers a `handshake/req` with a `handshake/resp`. Only A2E capabilities that were asked for appear in ' +
    '`accepted_caps`; `tools` is the one this gateway serves. Send the returned `session_id` with later ' +
    '`/tool/list` and `/tool/call` requests (required when `sessions.required` is on, the default with `auth`). ' +
    'With auth configured, authenticate with `Authorization: Bearer <token>` or the `auth_token` field.',
  request: {
    body: {
      required: true,
      content: {
        'application/json': {
          schema: HandshakeRequest,
          example: { type: 'handshake/req', agent_id: 'my-agent', agent_caps: ['tools'] },
        },
      },
    },
  },
  responses: {
    200: {
      description: 'The session',
      content: {
        'application/json': {
          schema: HandshakeResponse,
          example: {
            type: 'handshake/resp',
            id: 'b7c8d9',
            version: '1.0',
            ts: 1716123456.8,
            req_id: 'a1b2c3',
            session_id: '3adec81f70a095864b7b466ad33534fe',
            accepted_caps: [{ capability: 'tools', enabled: true, metadata: {} }],
            max_parallel: 16,
            ok: true,
            reason: '',
          },
        },
      },
    },
    400: {
      description: 'Malformed request (`invalid_request`)',
      content: { 'application/json': { schema: ErrorMessage } },
    },
    401: {
      description: 'Missing or wrong token (`unauthorized`); `WWW-Authenticate` is set',
      content: { 'application/json': { schema: ErrorMessage } },
    },
  },
});

export interface HandshakeDeps {
  sessions: SessionManager;
  authenticate?: Authenticate;
  /** Body size and JSON nesting (the rest is for streams). */
  limits: HttpLimits;
  /** `server.trust_proxy`: anonymous sessions count against the address the trusted proxy saw. */
  proxies: ProxyTrust;
}

export function registerHandshakeRoute(app: OpenAPIHono, deps: HandshakeDeps): void {
  app.openAPIRegistry.registerPath(handshakeRoute);
  app.post(handshakeRoute.path, async (c) => {
    const { value: req } = await readJson(c, HandshakeRequest, deps.limits.bodyLimitBytes, {
      maxDepth: deps.limits.maxJsonDepth,
    });
    let principal = c.get('principal');
    if (deps.authenticate && !principal) {
      principal = await deps.authenticate(req.auth_token);
      if (!principal) {
        const reason = req.auth_token
          ? refusal(
              deps.authenticate,
              req.auth_token,
              'the token is not valid; check auth_token or Authorization: Bearer <token>',
            )
          : 'this gateway requires a token; send Authorization: Bearer <token> or auth_token';
        // Over REST a refusal is an error message like on every other route; the A2E transport answers
        // a handshake/resp with ok: false instead (SessionManager.refuse).
        throw new GatewayError('unauthorized', reason, { detail: { req_id: req.id } });
      }
    }
    // Each token's sessions (each client address's, without auth) count against its own quota (sessions.max_per_principal).
    const name = principal?.name ?? null;
    const owner = quotaKey(name, name === null ? deps.proxies.clientAddress(c) : undefined);
    const opened = deps.sessions.open(req, name, owner, principal?.credential);
    return jsonResponse(c, opened instanceof Promise ? await opened : opened);
  });
}
