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
import type { SseSink } from '../../engine/sse.js';

export { sseFrame, type SseSink } from '../../engine/sse.js';

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
}

type Runner = (sink: SseSink) => Promise<void>;

/** Start an SSE response and hand the sink to `run`. */
export function streamSse(c: Context, options: SseOptions, run: Runner): Response {
  const outgoing = nodeResponse(c);
  // Headers other middleware prepared (CORS, request id, …) plus ours.
  const headers = c.body(null, 200, SSE_HEADERS).headers;
  const requestId = c.get('requestId');
  if (requestId !== undefined) headers.set(REQUEST_ID_HEADER, requestId);
  const onClosed = c.get('streamOpened')?.() ?? noop;
  return outgoing ? nodeSse(outgoing, headers, options, run, onClosed) : webSse(headers, options, run, onClosed);
}

function nodeSse(res: ServerResponse, headers: Headers, options: SseOptions, run: Runner, onClosed: () => void): Response {
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
  // The client stopped taking data: end with a frame saying so, and drop the connection (and what it buffers)
  // if even that is not taken soon.
  const cut = (stallS: number) => {
    if (ended || disconnected) return;
    ended = true;
    clearInterval(heartbeat);
    res.end(options.onCut?.(stallS) ?? '');
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
    write: (frames) => (disconnected ? false : res.write(frames)),
    drain: () =>
      disconnected || ended || !res.writableNeedDrain
        ? Promise.resolve()
        : new Promise((resolve) => {
            const stallS = options.stallS;
            const stall = stallS === undefined ? undefined : setTimeout(() => (done(), cut(stallS)), stallS * 1000);
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
  return RESPONSE_ALREADY_SENT;
}

function webSse(headers: Headers, options: SseOptions, run: Runner, onClosed: () => void): Response {
  const encoder = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let ended = false;
  let disconnected = false;
  let onGone: (() => void) | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let resumeDrain: (() => void) | undefined;
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
                    if (ended || disconnected) return;
                    ended = true;
                    clearInterval(heartbeat);
                    onClosed();
                    controller.enqueue(encoder.encode(options.onCut?.(stallS) ?? ''));
                    controller.close();
                    onGone?.();
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
  return new Response(body, { status: 200, headers });
}

function noop(): void {}

function runGuarded(run: Runner, sink: SseSink): void {
  run(sink).then(
    () => sink.end(),
    () => sink.end(),
  );
}
