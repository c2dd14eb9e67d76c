/**
 * The `fetch` the MCP SDK's Streamable HTTP client transport is given: undici's
 * request() on a keep-alive pool, answered as a standard Response. The global
 * fetch costs two to three times the CPU per request (WHATWG streams end to
 * end), and every call to an MCP server over HTTP pays it. The body is passed
 * on as a stream, so an SSE answer's events arrive as they are sent.
 * Redirects are not followed here: the SDK follows those within the server's
 * origin itself (it asks for `redirect: 'manual'`).
 *
 * Back-pressure: a tools/call sent within `eventPacing.run(taken, ...)` has its
 * SSE answer passed on in small slices, each once `taken()` resolves (the
 * call's readers have caught up with its events). While they are behind, the
 * body is not read, so the server's writes wait on TCP instead of its progress
 * notifications being dropped.
 *
 * Connection loss: `mcpFetchFor(limit, onLost)` tells its server's connection
 * when a request cannot reach the server or an event stream (a call's answer,
 * the server's GET stream) breaks before its end, so the calls waiting on that
 * server fail at once and it is reconnected, instead of each waiting for its
 * timeout. An abort of our own (the connection closing) is not a loss.
 *
 * Every answer is bounded by `mcp.max_message_bytes` (bounded-answer.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { Agent, request, type Dispatcher } from 'undici';
import type { Credential } from '../security/credential.js';
import { boundedJson, boundedSse, type AnswerLimit } from './bounded-answer.js';

/** The running call's `eventsTaken`, for the requests it sends (set by the connection for streaming calls). */
export const eventPacing = new AsyncLocalStorage<() => Promise<void>>();

/**
 * Bytes of an SSE answer passed on between two waits for the readers. The SDK turns each message into an event
 * at once and reads a few slices ahead, so a slice holds a handful of progress notifications: together well
 * under a quarter of the smallest `limits.call_events_bytes` (64 KiB).
 */
const SLICE_BYTES = 2048;

/** Statuses whose Response may not have a body. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

let pool: Agent | undefined;

/** Told why the server could not be reached, or why its event stream broke. */
export type ConnectionLost = (reason: string) => void;

/** The pool every MCP server over HTTP shares (also a credential's token requests). */
export function mcpPool(): Agent {
  return (pool ??= new Agent());
}

/**
 * `fetch` with `credential` set on every request to `origin` (never elsewhere); an OAuth2 token refused with a 401
 * is renewed and the request sent once more.
 */
export function withCredential(fetch: FetchLike, credential: Credential, origin: string): FetchLike {
  const attempt = async (url: string | URL, init: RequestInit | undefined, renew: boolean) => {
    const target = new URL(url);
    if (target.origin !== origin) return fetch(url, init);
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, key) => (headers[key] = value));
    await credential.apply(headers, target, renew);
    return fetch(target, { ...init, headers });
  };
  return async (url, init) => {
    const res = await attempt(url, init, false);
    if (res.status !== 401 || !credential.renewable) return res;
    await res.body?.cancel().catch(() => undefined);
    return attempt(url, init, true);
  };
}

/** The fetch of one server's transport: its answers bounded by `limit`, a lost connection reported to `onLost`. */
export const mcpFetchFor =
  (limit: AnswerLimit, onLost: ConnectionLost): FetchLike =>
  (url, init) =>
    send(url, init, limit, onLost);

async function send(
  url: string | URL,
  init: RequestInit = {},
  limit: AnswerLimit,
  onLost: ConnectionLost,
): Promise<Response> {
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((value, key) => (headers[key] = value));
  let res: Dispatcher.ResponseData;
  try {
    res = await request(url, {
      method: (init.method ?? 'GET') as Dispatcher.HttpMethod,
      headers,
      body: init.body as string | undefined,
      signal: init.signal ?? undefined,
      // One pool for every MCP server over HTTP; idle connections do not keep the process alive.
      dispatcher: mcpPool(),
    });
  } catch (err) {
    if (!init.signal?.aborted && !slowOnly(err)) onLost(`the server could not be reached: ${networkReason(err)}`);
    throw err;
  }
  const out = new Headers();
  for (const [key, value] of Object.entries(res.headers)) {
    if (Array.isArray(value)) for (const v of value) out.append(key, v);
    else if (value !== undefined) out.set(key, value);
  }
  if (NULL_BODY.has(res.statusCode)) {
    res.body.resume();
    return new Response(null, { status: res.statusCode, headers: out });
  }
  const sse = String(res.headers['content-type'] ?? '').includes('text/event-stream');
  const taken = eventPacing.getStore();
  // A JSON answer whose length is known and within the limit needs no counting (undici reads no more than it says).
  const length = Number(res.headers['content-length'] ?? NaN);
  const bounded = sse
    ? boundedSse(res.body, limit, init.body)
    : length <= limit.maxBytes
      ? res.body
      : boundedJson(res.body, limit, init.body);
  let body: AsyncIterable<Buffer> = taken && sse ? paced(bounded, taken) : bounded;
  if (sse) body = watched(body, init.signal, onLost);
  return new Response(body as unknown as ReadableStream, { status: res.statusCode, headers: out });
}

/** An event stream that reports its breaking (not its end, nor our own abort) to `onLost`. */
async function* watched(
  body: AsyncIterable<Buffer>,
  signal: AbortSignal | null | undefined,
  onLost: ConnectionLost,
): AsyncGenerator<Buffer> {
  try {
    yield* body;
  } catch (err) {
    if (!signal?.aborted && !slowOnly(err)) onLost(`its event stream broke: ${networkReason(err)}`);
    throw err;
  }
}

/**
 * undici's own timeouts: a stream that was quiet for long (an idle GET stream, which the SDK opens again; a call
 * whose server says nothing for minutes) is not a lost connection, and must not fail the server's other calls.
 */
const slowOnly = (err: unknown) => {
  const code = (err as { code?: unknown }).code;
  return code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT';
};

/** A network error's code (ECONNREFUSED, UND_ERR_SOCKET, …) or message, without addresses. */
function networkReason(err: unknown): string {
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  const code = typeof e.code === 'string' ? e.code : typeof e.cause?.code === 'string' ? e.cause.code : undefined;
  return code ?? 'the connection failed';
}

/** The body in slices, each passed on once the call's readers have caught up. */
async function* paced(body: AsyncIterable<Buffer>, taken: () => Promise<void>): AsyncGenerator<Buffer> {
  for await (const chunk of body) {
    for (let at = 0; at < chunk.length; at += SLICE_BYTES) {
      await taken();
      yield chunk.subarray(at, at + SLICE_BYTES);
    }
  }
}
