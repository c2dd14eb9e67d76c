/**
 * Server-Sent Events output. On Node it writes straight to the
 * ServerResponse (no web-stream layer: far less memory per open stream);
 * elsewhere it falls back to a ReadableStream body. Either way the caller
 * gets the same small `SseSink`.
 */
import type { ServerResponse } from 'node:http';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { Context } from 'hono';
import { REQUEST_ID_HEADER } from './request.js';
import { nodeResponse } from './node.js';
import { sseFrame, type SseSink } from '../../engine/sse.js';
import { GatewayError, errorMessage, type PrincipalStreams } from '../../engine/index.js';

export { sseFrame, type SseSink } from '../../engine/sse.js';

declare module 'hono' {
  interface ContextVariableMap {
    /** The streams open on this instance by principal (a reload that revokes a credential ends its streams). */
    principalStreams: PrincipalStreams;
  }
}

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  'X-Accel-Buffering': 'no',
  Connection: 'keep-alive',
};

/** How much an SSE stream may hold for a client that does not keep up (`limits.stream_*`). */
export interface StreamLimits {
  /** Bytes a writer hands the stream before it waits for the client to take them. */
  unsentBytes: number;
  /** A client that takes nothing for this long while output waits is cut off, seconds. */
  stallS: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = Object.freeze({ unsentBytes: 1024 * 1024, stallS: 30 });

/** After a cut, how long the final frame may take to reach the client before the connection is dropped, ms. */
const CUT_GRACE_MS = 5000;

export interface SseOptions {
  heartbeatS: number;
  /** Extra lines before the first event, e.g. a `retry:` hint. */
  preamble?: string;
  /** Cut the stream when a `drain()` waits this long, seconds (default: never). */
  stallS?: number;
  /** Called when the stream is cut for stalling; returns its last frame, saying why and what to do. */
  onCut?: (stallS: number) => string;
  /** Whose credential the stream belongs to, when not the request's bearer token's (a call's events read with its access_token). */
  owner?: { principal: string | null; credential: string | undefined };
  /** The last frame of a stream whose credential a reload revoked (default: an `error` event, code unauthorized). */
  onRevoked?: (reason: string) => string;
}

type Runner = (sink: SseSink) => Promise<void>;

/** The last frame of a stream its credential's revocation ended, unless the stream's format wants its own. */
export const revokedFrame = (reason: string): string =>
  sseFrame('error', JSON.stringify(errorMessage(new GatewayError('unauthorized', reason))));

/** How a stream is ended early, with a last frame: the client stopped reading, or its credential was revoked. */
type Finish = (frame: string) => void;

/** Count the stream with its principal's; returns the function that stops counting it. */
function register(c: Context, options: SseOptions, finish: Finish): () => void {
  const streams = c.get('principalStreams');
  if (!streams) return noop;
  const bearer = c.get('principal');
  const { principal, credential } = options.owner ?? {
    principal: bearer?.name ?? null,
    credential: bearer?.credential,
  };
  return streams.add(principal, credential, (reason) => finish(options.onRevoked?.(reason) ?? revokedFrame(reason)));
}

/** Start an SSE response and hand the sink to `run`. */
export function streamSse(c: Context, options: SseOptions, run: Runner): Response {
  const outgoing = nodeResponse(c);
  // Headers other middleware prepared (CORS, request id, …) plus ours.
  const headers = c.body(null, 200, SSE_HEADERS).headers;
  const requestId = c.get('requestId');
  if (requestId !== undefined) headers.set(REQUEST_ID_HEADER, requestId);
  const onClosed = c.get('streamOpened')?.() ?? noop;
  let unregister = noop;
  const closed = () => {
    unregister();
    onClosed();
  };
  const made = outgoing ? nodeSse(outgoing, headers, options, run, closed) : webSse(headers, options, run, closed);
  // Closing is only ever noticed later (an event, or the runner's promise): registered in time.
  unregister = register(c, options, made.finish);
  return made.response;
}

function nodeSse(
  res: ServerResponse,
  headers: Headers,
  options: SseOptions,
  run: Runner,
  onClosed: () => void,
): { response: Response; finish: Finish } {
  const head: Record<string, string | string[]> = {};
  headers.forEach((value, key) => {
    if (key === 'set-cookie') return;
    head[key] = value;
  });
  const cookies = headers.getSetCookie();
  if (cookies.length) head['set-cookie'] = cookies;
  res.writeHead(200, head);
  res.write(`${options.preamble ?? ''}: stream open\n\n`);

  let ended = false;
  let disconnected = false;
  let onGone: (() => void) | undefined;
  const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), options.heartbeatS * 1000);
  // Ended early (the client stopped taking data, or its credential was revoked): end with a frame saying so, and
  // drop the connection (and what it buffers) if even that is not taken soon.
  const finish: Finish = (frame) => {
    if (ended || disconnected) return;
    ended = true;
    clearInterval(heartbeat);
    res.end(frame);
    const drop = setTimeout(() => res.destroy(), CUT_GRACE_MS);
    drop.unref();
    res.once('close', () => clearTimeout(drop));
    onGone?.();
  };
  res.on('close', () => {
    clearInterval(heartbeat);
    onClosed();
    if (!ended) {
      disconnected = true;
      onGone?.();
    }
  });
  const sink: SseSink = {
    // Nothing after an early end's last frame (a runner may not have noticed yet).
    write: (frames) => (disconnected || ended ? false : res.write(frames)),
    drain: () =>
      disconnected || ended || !res.writableNeedDrain
        ? Promise.resolve()
        : new Promise((resolve) => {
            const stallS = options.stallS;
            const stall =
              stallS === undefined
                ? undefined
                : setTimeout(() => (done(), finish(options.onCut?.(stallS) ?? '')), stallS * 1000);
            const done = () => {
              clearTimeout(stall);
              res.off('drain', done);
              res.off('close', done);
              resolve();
            };
            res.on('drain', done);
            res.on('close', done);
          }),
    end: () => {
      if (ended || disconnected) return;
      ended = true;
      clearInterval(heartbeat);
      res.end();
    },
    get closed() {
      return ended || disconnected;
    },
    onDisconnect: (fn) => {
      onGone = fn;
      if (disconnected) fn();
    },
  };
  runGuarded(run, sink);
  return { response: RESPONSE_ALREADY_SENT, finish };
}

function webSse(
  headers: Headers,
  options: SseOptions,
  run: Runner,
  onClosed: () => void,
): { response: Response; finish: Finish } {
  const encoder = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let ended = false;
  let disconnected = false;
  let onGone: (() => void) | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let resumeDrain: (() => void) | undefined;
  const finish: Finish = (frame) => {
    if (ended || disconnected) return;
    ended = true;
    clearInterval(heartbeat);
    onClosed();
    controller.enqueue(encoder.encode(frame));
    controller.close();
    resumeDrain?.();
    onGone?.();
  };
  const body = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        c.enqueue(encoder.encode(`${options.preamble ?? ''}: stream open\n\n`));
        heartbeat = setInterval(() => c.enqueue(encoder.encode(': heartbeat\n\n')), options.heartbeatS * 1000);
      },
      pull() {
        resumeDrain?.();
        resumeDrain = undefined;
      },
      cancel() {
        clearInterval(heartbeat);
        onClosed();
        disconnected = true;
        resumeDrain?.();
        if (!ended) onGone?.();
      },
    },
    { highWaterMark: 64 * 1024, size: (chunk) => chunk.byteLength },
  );
  const sink: SseSink = {
    write: (frames) => {
      if (disconnected || ended) return false;
      controller.enqueue(encoder.encode(frames));
      return (controller.desiredSize ?? 1) > 0;
    },
    drain: () =>
      disconnected || ended || (controller.desiredSize ?? 1) > 0
        ? Promise.resolve()
        : new Promise((resolve) => {
            const stallS = options.stallS;
            const stall =
              stallS === undefined
                ? undefined
                : setTimeout(() => {
                    resumeDrain = undefined;
                    resolve();
                    finish(options.onCut?.(stallS) ?? '');
                  }, stallS * 1000);
            resumeDrain = () => {
              clearTimeout(stall);
              resolve();
            };
          }),
    end: () => {
      if (ended || disconnected) return;
      ended = true;
      clearInterval(heartbeat);
      onClosed();
      controller.close();
    },
    get closed() {
      return ended || disconnected;
    },
    onDisconnect: (fn) => {
      onGone = fn;
      if (disconnected) fn();
    },
  };
  queueMicrotask(() => runGuarded(run, sink));
  return { response: new Response(body, { status: 200, headers }), finish };
}

function noop(): void {}

function runGuarded(run: Runner, sink: SseSink): void {
  run(sink).then(
    () => sink.end(),
    () => sink.end(),
  );
}
