/**
 * A2E's own HTTP message transport, as the reference A2E SDK speaks it:
 * POST /session, POST /send, GET /stream, GET /health under
 * `transport.path`. A thin adapter: the sessions, queues and dispatch live
 * in src/transport/a2e-http.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Engine, Logger, SessionManager } from '../../engine/index.js';
import {
  A2eHttpTransport,
  TransportRefusal,
  type A2eTransport,
  type A2eTransportFactory,
  type FrameSink,
  type HandshakeAuth,
  type RefusalKind,
  type TransportConfig,
  type TransportMemoryLimits,
} from '../../transport/a2e-http/index.js';
import { GatewayError } from '../../engine/index.js';
import { readBytes } from '../http/body.js';
import { transportRoutes } from './a2e-transport.spec.js';
import type { HttpLimits } from '../http/limits.js';
import { sseFrame, streamSse } from '../http/sse.js';
import { errorMessage } from '../http/errors.js';
import { requestHeader } from '../http/node.js';
import { proxyTrust, type TrustProxySetting } from '../http/proxy-trust.js';
import { WWW_AUTHENTICATE } from '../../security/auth.js';
import { jsonResponse } from '../http/respond.js';

export interface A2eTransportDeps {
  engine: Engine;
  logger: Logger;
  config: TransportConfig;
  /** Body size, JSON nesting (passed on to the transport's message reader), heartbeats and stream limits. */
  limits: HttpLimits;
  /** `server.trust_proxy`: per-address quotas use the address the trusted proxy saw (http/proxy-trust.ts). */
  trustProxy?: TrustProxySetting;
  sessionsRequired?: boolean;
  sessions?: SessionManager;
  authenticate?: HandshakeAuth;
  authRequired?: boolean;
  /** Byte budgets of the sessions' outboxes. */
  memory?: TransportMemoryLimits;
  /** Where sessions live (`store.kind`); default: this process's memory. */
  open?: A2eTransportFactory;
}

const STATUS: Record<RefusalKind, ContentfulStatusCode> = {
  missing_session: 400,
  unauthorized: 401,
  foreign_session: 403,
  unknown_session: 404,
  queue_full: 429,
  quota_in_use: 429,
  too_many_sessions: 503,
  shutting_down: 503,
};

const REFUSAL_HEADERS: Partial<Record<RefusalKind, Record<string, string>>> = {
  unauthorized: { 'WWW-Authenticate': WWW_AUTHENTICATE },
  queue_full: { 'Retry-After': '1' },
  quota_in_use: { 'Retry-After': '1' },
  too_many_sessions: { 'Retry-After': '5' },
  shutting_down: { 'Retry-After': '5' },
};

/** The principal of the request's bearer token (the guard checked it), or null when it sent none. */
const presented = (c: Context): string | null => c.get('principal')?.name ?? null;

/** Mount the transport's routes on `app`; undefined when `transport.enabled` is false. */
export function mountA2eTransport(app: OpenAPIHono, deps: A2eTransportDeps): A2eTransport | undefined {
  const proxies = proxyTrust(deps.trustProxy);
  if (!deps.config.enabled) return undefined;
  const transport = deps.open ? deps.open(deps) : new A2eHttpTransport(deps);
  const routes = transportRoutes(deps.config.path);

  const refused = (c: Context, err: unknown) => {
    if (err instanceof TransportRefusal) {
      return jsonResponse(c, { detail: err.message }, STATUS[err.kind], REFUSAL_HEADERS[err.kind]);
    }
    if (err instanceof GatewayError && err.code === 'payload_too_large')
      return jsonResponse(c, { detail: err.message }, 413);
    // The shared store (Redis) cannot answer: the gateway is up, retry shortly.
    if (err instanceof GatewayError && err.code === 'unavailable') {
      const after = err.detail?.retry_after_s;
      return jsonResponse(c, { detail: err.message }, 503, {
        'Retry-After': String(typeof after === 'number' ? Math.ceil(after) : 1),
      });
    }
    throw err;
  };

  app.openAPIRegistry.registerPath(routes.session);
  app.post(routes.session.path, async (c) => {
    try {
      const by = { principal: presented(c), address: proxies.clientAddress(c) };
      return jsonResponse(c, { session_id: await transport.createSession(by) });
    } catch (err) {
      return refused(c, err);
    }
  });

  app.openAPIRegistry.registerPath(routes.send);
  app.post(routes.send.path, async (c) => {
    try {
      const id = requestHeader(c, 'x-session-id');
      await transport.check(id, presented(c)); // 400/401/403/404 before reading the body
      await transport.send(id, await readBytes(c, deps.limits.bodyLimitBytes), presented(c));
      return jsonResponse(c, { ok: true as const }, 202);
    } catch (err) {
      return refused(c, err);
    }
  });

  app.openAPIRegistry.registerPath(routes.stream);
  app.get(routes.stream.path, async (c) => {
    const id = requestHeader(c, 'x-session-id');
    try {
      await transport.check(id, presented(c));
    } catch (err) {
      return refused(c, err);
    }
    const lastEventId = requestHeader(c, 'last-event-id');
    // The response lasts until the session lets go of the stream (replaced, closed) or the client leaves.
    const {
      heartbeatS,
      streams: { stallS },
    } = deps.limits;
    const onCut = (stall: number) => {
      deps.logger.warn({ stall_s: stall }, 'A2E transport stream cut: the client took no data (limits.stream_stall_s)');
      return transportCutFrame(stall);
    };
    const onRevoked = (reason: string) =>
      sseFrame(undefined, JSON.stringify(errorMessage(new GatewayError('unauthorized', reason))));
    return streamSse(c, { heartbeatS, stallS, onCut, onRevoked }, (sink) => {
      return new Promise<void>((resolve) => {
        const frames: FrameSink = {
          write: (text) => sink.write(text),
          drain: () => sink.drain(),
          end: resolve,
          get closed() {
            return sink.closed;
          },
          onDisconnect: (fn) =>
            sink.onDisconnect(() => {
              fn();
              resolve();
            }),
        };
        // A shared store that fails between the check and here ends the stream: the client reconnects.
        Promise.resolve(transport.attach(id, frames, lastEventId, presented(c))).catch((err: unknown) => {
          deps.logger.warn({ err }, 'A2E transport stream could not attach; ended it so the client reconnects');
          resolve();
        });
      });
    });
  });

  app.openAPIRegistry.registerPath(routes.health);
  app.get(routes.health.path, (c) => jsonResponse(c, { status: 'ok' as const }));

  return transport;
}

/** The last frame of a transport stream cut for not reading: an error message, outside the numbered frames. */
function transportCutFrame(stallS: number): string {
  const err = new GatewayError(
    'unavailable',
    `this stream was cut: the client took no data for ${stallS} s while messages waited (limits.stream_stall_s); ` +
      'open GET /stream again with Last-Event-ID to get what you missed',
    { retryable: true },
  );
  return sseFrame(undefined, JSON.stringify(errorMessage(err)));
}
