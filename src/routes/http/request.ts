/**
 * Per-request context: the request id (the client's `X-Request-Id` when it is
 * valid, else a fresh one; sent back on every response, SSE included), a
 * logger bound to it, and one access-log line when the response is done —
 * which, for a JSON answer to one call, is that call's outcome line
 * (`AccessLine.carryCallLine`): one line per request either way.
 */
import type { ServerResponse } from 'node:http';
import type { Context } from 'hono';
import {
  LazyChildLogger,
  levelEnabled,
  writeCallLine,
  type Call,
  type CallLineCarrier,
  type Logger,
  type PrincipalStreams,
} from '../../engine/index.js';
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
    /** This request's access line, when one is logged. */
    accessLine: AccessLine;
    /** The answer carries the `X-Request-Id` header already (sendJson). */
    requestIdSent: boolean;
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
  /** The streams open here by principal, which every SSE stream joins (a reload that revokes a credential ends its streams). */
  principalStreams?: PrincipalStreams;
  /** Checks every request first (Host, Origin, token): a Response refuses it. */
  check?: (c: Context) => Response | undefined | Promise<Response | undefined>;
}

/** The request context as two steps around the route, so it can run inside the route's own handler (around-routes.ts). */
export interface RequestSteps {
  /**
   * Before the route: the request's id, its logger and access line, then the check; a Response refuses the
   * request (a promise of one only when an identity-provider token is verified).
   */
  enter(c: Context): Response | undefined | Promise<Response | undefined>;
  /** After the answer (c.res) is made: its `X-Request-Id` header where the answer lacks it, and off Node the access line. */
  leave(c: Context): void;
}

export function requestSteps({ logger, streamOpened, principalStreams, check }: RequestContextOptions): RequestSteps {
  return {
    enter(c) {
      const requestId = pickRequestId(requestHeader(c, REQUEST_ID_HEADER_NAME));
      // The id is a UUID or matched VALID_REQUEST_ID: its JSON is itself in quotes.
      const log = new LazyChildLogger(logger, { request_id: requestId }, `,"request_id":"${requestId}"`);
      c.set('requestId', requestId);
      c.set('logger', log);
      if (streamOpened) c.set('streamOpened', streamOpened);
      if (principalStreams) c.set('principalStreams', principalStreams);
      const outgoing = nodeResponse(c);
      // On Node, answers written straight to the ServerResponse (SSE streams) and JSON answers (sendJson) add the
      // header themselves and a Response built by Hono gets it once it exists, in leave(). (c.header() here
      // would make every request build a web Headers object, a large part of a fast call's cost.)
      // Elsewhere it is set before the route, so every answer carries it, errors included.
      if (!outgoing) c.header(REQUEST_ID_HEADER, requestId);
      // The access line is at info (debug for probes): when info is not logged, skip its bookkeeping.
      if (levelEnabled(logger, 'info')) {
        const accessLine = new AccessLine(log, c.req.method, c.req.path);
        c.set('accessLine', accessLine);
        // On Node logged when the response is really done: an SSE stream ends long after the route returns.
        // (A response closes once: `on`, without the wrapper `once` makes per request.)
        if (outgoing) {
          (outgoing as ResponseWithLine)[ACCESS_LINE] = accessLine;
          outgoing.on('close', writeLineOnClose);
        }
      }
      return check?.(c);
    },
    leave(c) {
      const requestId = c.get('requestId');
      if (requestId === undefined) return;
      const outgoing = nodeResponse(c);
      if (outgoing) {
        if (!outgoing.headersSent && !c.get('requestIdSent')) c.res.headers.set(REQUEST_ID_HEADER, requestId);
      } else {
        c.get('accessLine')?.write(c.res.status, false);
      }
    },
  };
}

const ACCESS_LINE = Symbol('a2e.accessLine');
type ResponseWithLine = ServerResponse & { [ACCESS_LINE]?: AccessLine };

/** The response's 'close' listener (one function for every request, not a closure per request). */
function writeLineOnClose(this: ResponseWithLine): void {
  this[ACCESS_LINE]?.write(this.statusCode, !this.writableFinished);
}

/** This request's access line, when one is logged (for a door whose answer is one call's: AccessLine.carryCallLine). */
export function accessLineOf(c: Context): AccessLine | undefined {
  return c.get('accessLine');
}

/**
 * The line written when a request's response is done (a class: cheaper per
 * request than a closure over its fields). For a door answering one call
 * with one JSON response, where the request's line and the call's would say
 * the same, it is that call's outcome line (`call succeeded` / `call
 * failed`) with the request's method, path, status and `request_duration_ms`.
 */
export class AccessLine implements CallLineCarrier {
  private readonly started = performance.now();
  /** The call whose outcome line this one is (carry). */
  private call: Call | undefined;
  private written = false;

  constructor(
    private readonly log: LazyChildLogger,
    private readonly method: string,
    private readonly path: string,
  ) {}

  /** This request answers one call with one JSON response: this line is that call's outcome line (carry). */
  carryCallLine(): void {
    this.log.callLineCarrier = this;
  }

  /**
   * Asked as the request's call settles: this line becomes the call's outcome line, unless it was already written
   * (the response closed first), when the engine writes the call's own line.
   */
  carry(call: Call): boolean {
    if (this.written || this.call !== undefined) return false;
    this.call = call;
    return true;
  }

  write(status: number, aborted: boolean): void {
    this.written = true;
    const durationMs = Math.round(performance.now() - this.started);
    const call = this.call;
    if (call !== undefined) {
      return writeCallLine(call, {
        method: this.method,
        path: this.path,
        status,
        request_duration_ms: durationMs,
        aborted: aborted ? true : undefined,
      });
    }
    // Probes and scrapes come every few seconds: keep them out of the info log.
    const level = status < 400 && QUIET_PATHS.test(this.path) ? 'debug' : 'info';
    this.log.line(
      level,
      { method: this.method, path: this.path, status, duration_ms: durationMs, aborted: aborted ? true : undefined },
      'request finished',
    );
  }
}
