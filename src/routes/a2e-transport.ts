/**
 * A2E's own HTTP message transport, as the reference A2E SDK speaks it:
 * POST /session, POST /send, GET /stream, GET /health under
 * `transport.path`. A thin adapter: the sessions, queues and dispatch live
 * in src/transport/a2e-http.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Engine, Logger, SessionManager } from '../engine/index.js';
import {
  A2eHttpTransport,
  TransportRefusal,
  type FrameSink,
  type HandshakeAuth,
  type RefusalKind,
  type TransportConfig,
} from '../transport/a2e-http/index.js';
import { GatewayError } from '../engine/index.js';
import { readBytes } from './body.js';
import { transportRoutes } from './a2e-transport.openapi.js';
import { streamSse } from './sse.js';
import { requestHeader } from './node.js';
import { jsonResponse } from './respond.js';

export interface A2eTransportDeps {
  engine: Engine;
  logger: Logger;
  config: TransportConfig;
  heartbeatS: number;
  bodyLimitBytes: number;
  sessions?: SessionManager;
  authenticate?: HandshakeAuth;
  authRequired?: boolean;
}

const STATUS: Record<RefusalKind, ContentfulStatusCode> = {
  missing_session: 400,
  unknown_session: 404,
  queue_full: 429,
  too_many_sessions: 503,
  shutting_down: 503,
};

/** Mount the transport's routes on `app`; undefined when `transport.enabled` is false. */
export function mountA2eTransport(app: OpenAPIHono, deps: A2eTransportDeps): A2eHttpTransport | undefined {
  if (!deps.config.enabled) return undefined;
  const transport = new A2eHttpTransport(deps);
  const routes = transportRoutes(deps.config.path);

  const refused = (c: Context, err: unknown) => {
    if (err instanceof TransportRefusal) {
      const retry = err.kind === 'queue_full' ? { 'Retry-After': '1' } : STATUS[err.kind] === 503 ? { 'Retry-After': '5' } : undefined;
      return jsonResponse(c, { detail: err.message }, STATUS[err.kind], retry);
    }
    if (err instanceof GatewayError && err.code === 'payload_too_large') return jsonResponse(c, { detail: err.message }, 413);
    throw err;
  };

  app.openAPIRegistry.registerPath(routes.session);
  app.post(routes.session.path, (c) => {
    try {
      return jsonResponse(c, { session_id: transport.createSession() });
    } catch (err) {
      return refused(c, err);
    }
  });

  app.openAPIRegistry.registerPath(routes.send);
  app.post(routes.send.path, async (c) => {
    try {
      const id = requestHeader(c, 'x-session-id');
      transport.session(id); // 400/404 before reading the body
      transport.send(id, await readBytes(c, deps.bodyLimitBytes));
      return jsonResponse(c, { ok: true as const }, 202);
    } catch (err) {
      return refused(c, err);
    }
  });

  app.openAPIRegistry.registerPath(routes.stream);
  app.get(routes.stream.path, (c) => {
    const id = requestHeader(c, 'x-session-id');
    try {
      transport.session(id);
    } catch (err) {
      return refused(c, err);
    }
    const lastEventId = requestHeader(c, 'last-event-id');
    // The response lasts until the session lets go of the stream (replaced, closed) or the client leaves.
    return streamSse(c, { heartbeatS: deps.heartbeatS }, (sink) => {
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
        transport.attach(id, frames, lastEventId);
      });
    });
  });

  app.openAPIRegistry.registerPath(routes.health);
  app.get(routes.health.path, (c) => jsonResponse(c, { status: 'ok' as const }));

  return transport;
}
