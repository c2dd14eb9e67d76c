/**
 * Per-request context: the request id (the client's `X-Request-Id` when it is
 * valid, else a fresh one; sent back on every response, SSE included), a
 * logger bound to it, and one access-log line when the response is done.
 */
import type { ServerResponse } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import { LazyChildLogger, levelEnabled, type Logger } from '../engine/index.js';
import { newId } from '../protocol/index.js';
import { requestHeader } from './header.js';

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
const QUIET_PATHS = /\/(healthz|metrics)$/;

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
}

export function requestContext({ logger, streamOpened }: RequestContextOptions): MiddlewareHandler {
  return async (c, next) => {
    const requestId = pickRequestId(requestHeader(c, REQUEST_ID_HEADER_NAME));
    const log = new LazyChildLogger(logger, { request_id: requestId });
    c.set('requestId', requestId);
    c.set('logger', log);
    if (streamOpened) c.set('streamOpened', streamOpened);
    const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
    if (!outgoing) {
      // Set before next(): every answer carries it, errors included.
      c.header(REQUEST_ID_HEADER, requestId);
    } else {
      // On Node, answers written straight to the ServerResponse (JSON calls, SSE streams) add the header
      // themselves; a Response built by Hono gets it here, once it exists. (c.header() before next()
      // would make every request build a web Headers object, a large part of a fast call's cost.)
      const inner = next;
      next = async () => {
        await inner();
        if (!outgoing.headersSent) c.res.headers.set(REQUEST_ID_HEADER, requestId);
      };
    }
    // The access line is at info (debug for probes): when neither is logged, skip its bookkeeping.
    if (!levelEnabled(logger, 'debug') && !levelEnabled(logger, 'info')) return next();
    const started = performance.now();
    // Probes and scrapes come every few seconds: keep them out of the info log.
    const quiet = QUIET_PATHS.test(c.req.path);
    const done = (status: number, aborted: boolean) =>
      (quiet && status < 400 ? log.debug : log.info).call(
        log,
        {
          method: c.req.method,
          path: c.req.path,
          status,
          duration_ms: Math.round(performance.now() - started),
          ...(aborted ? { aborted: true } : {}),
        },
        'request finished',
      );
    if (outgoing) {
      // On Node log when the response is really done: an SSE stream ends long after next() returns.
      outgoing.once('close', () => done(outgoing.statusCode, !outgoing.writableFinished));
      await next();
    } else {
      await next();
      done(c.res.status, false);
    }
  };
}
