/**
 * Per-request context: the request id (the client's `X-Request-Id` when it is
 * valid, else a fresh one; sent back on every response, SSE included), a
 * logger bound to it, and one access-log line when the response is done.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { LazyChildLogger, levelEnabled, type Logger } from '../../engine/index.js';
import { newId } from '../../protocol/index.js';
import { nodeResponse, requestHeader } from './node.js';

declare module 'hono' {
  interface ContextVariableMap {
    /** This request's id (also the `X-Request-Id` response header). */
    requestId: string;
    /** Logger whose every line carries `request_id`. */
    logger: Logger;
    /** Count an SSE stream as open; call the returned function once when it closes. */
    streamOpened: () => () => void;
  }
}

export const REQUEST_ID_HEADER = 'X-Request-Id';
const REQUEST_ID_HEADER_NAME = 'x-request-id';
const VALID_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
const QUIET_PATHS = /\/(healthz|readyz|metrics)$/;

/** The client's request id if it is safe to log and echo, else a new one. */
export function pickRequestId(given: string | undefined): string {
  return given !== undefined && VALID_REQUEST_ID.test(given) ? given : newId();
}

/** The logger of this request (bound to its id), or `fallback` outside the middleware. */
export function requestLogger(c: Context, fallback: Logger): Logger {
  return c.get('logger') ?? fallback;
}

export interface RequestContextOptions {
  logger: Logger;
  /** Called when an SSE stream opens (metrics); returns the function to call when it closes. */
  streamOpened?: () => () => void;
  /** Checks every request first (Host, Origin, token): a Response refuses it. */
  check?: (c: Context) => Response | undefined | Promise<Response | undefined>;
}

export function requestContext({ logger, streamOpened, check }: RequestContextOptions): MiddlewareHandler {
  return async (c, next) => {
    const requestId = pickRequestId(requestHeader(c, REQUEST_ID_HEADER_NAME));
    const log = new LazyChildLogger(logger, { request_id: requestId });
    c.set('requestId', requestId);
    c.set('logger', log);
    if (streamOpened) c.set('streamOpened', streamOpened);
    const outgoing = nodeResponse(c);
    // On Node, answers written straight to the ServerResponse (JSON calls, SSE streams) add the header
    // themselves and a Response built by Hono gets it once it exists, after next(). (c.header() before
    // next() would make every request build a web Headers object, a large part of a fast call's cost.)
    // Elsewhere it is set before next(), so every answer carries it, errors included.
    if (!outgoing) c.header(REQUEST_ID_HEADER, requestId);
    // The access line is at info (debug for probes): when neither is logged, skip its bookkeeping.
    const logged = levelEnabled(logger, 'debug') || levelEnabled(logger, 'info');
    let accessLine: ((status: number, aborted: boolean) => void) | undefined;
    if (logged) {
      const started = performance.now();
      const { method, path } = c.req;
      // Probes and scrapes come every few seconds: keep them out of the info log.
      const quiet = QUIET_PATHS.test(path);
      accessLine = (status, aborted) =>
        log.line(
          quiet && status < 400 ? 'debug' : 'info',
          { method, path, status, duration_ms: Math.round(performance.now() - started), aborted: aborted ? true : undefined },
          'request finished',
        );
      // On Node logged when the response is really done: an SSE stream ends long after next() returns.
      // (A response closes once: `on`, without the wrapper `once` makes per request.)
      if (outgoing) outgoing.on('close', () => accessLine!(outgoing.statusCode, !outgoing.writableFinished));
    }
    let refused = check?.(c);
    // Only an identity-provider token (JWT) makes the check asynchronous.
    if (refused instanceof Promise) refused = await refused;
    if (refused) c.res = refused;
    else await next();
    if (outgoing) {
      if (!outgoing.headersSent) c.res.headers.set(REQUEST_ID_HEADER, requestId);
    } else {
      accessLine?.(c.res.status, false);
    }
  };
}
