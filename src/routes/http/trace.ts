/**
 * The span of each HTTP request the sampler records (only when tracing is on; app.ts does not install it
 * otherwise; an unsampled request gets none, and only its caller's traceparent is carried, see tracing.ts),
 * around the request steps and the route it wraps (around-routes.ts makes the wrapped handler once per route, so
 * tracing adds no dispatch step of its own, and an unsampled request takes the same path as with tracing off). It
 * continues the caller's trace when the request carries a `traceparent`, is the active span while the
 * request is handled (so a call it starts is its child), and ends when the response is done — for an SSE
 * stream, when the stream ends. Attributes follow the HTTP server conventions; no query, headers or body.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { ActiveSpan, runIn, startServerSpan } from '../../observability/tracing.js';
import { nodeRequest, nodeResponse } from './node.js';

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);

export function traceRequests(inner: MiddlewareHandler): MiddlewareHandler {
  // Not async: an unsampled request goes straight on, without a promise of this middleware's own.
  return (c, next) => {
    const method = KNOWN_METHODS.has(c.req.method) ? c.req.method : '_OTHER';
    const incoming = nodeRequest(c);
    const headers = incoming ? incoming.headers : Object.fromEntries(c.req.raw.headers);
    const span = startServerSpan(method, headers, () => ({
      'http.request.method': method,
      'url.path': c.req.path,
      'url.scheme': 'http',
      ...(incoming?.socket.localPort === undefined ? {} : { 'server.port': incoming.socket.localPort }),
      ...(incoming?.httpVersion ? { 'network.protocol.version': incoming.httpVersion } : {}),
    }));
    // Not sampled: nothing more, but a caller's traceparent is passed on by what the request sends.
    if (span === undefined) return inner(c, next);
    const handle = () => inner(c, next);
    if (!(span instanceof ActiveSpan)) return runIn(span, handle);
    return traced(c, handle, span, method);
  };
}

async function traced(
  c: Context,
  next: () => Promise<Response | void>,
  span: ActiveSpan,
  method: string,
): Promise<void> {
  const outgoing = nodeResponse(c);
  if (outgoing) outgoing.once('close', () => finish(span, c, method, outgoing.statusCode, !outgoing.writableFinished));
  try {
    await span.run(next);
  } finally {
    if (!outgoing) finish(span, c, method, c.res.status, false);
  }
}

function finish(span: ActiveSpan, c: Context, method: string, status: number, aborted: boolean): void {
  const route = handlerRoute(c);
  if (route) {
    span.span.setAttribute('http.route', route);
    span.span.updateName(`${method} ${route}`);
  }
  span.status(status);
  if (aborted) span.span.setAttribute('a2e.response.aborted', true);
  span.end();
}

/** The route pattern that answered ("/tool/calls/:id"), or undefined when no route did (not found, refused by the guard). */
function handlerRoute(c: Context): string | undefined {
  const routes = matchedRoutes(c);
  const route = routes[c.req.routeIndex];
  if (!route || route.method === 'ALL' || route.path.endsWith('*')) return undefined;
  return route.path;
}
