/**
 * HTTP to A2A peers: one keep-alive connection pool (an undici Agent) for
 * every peer, JSON GETs for cards, JSON-RPC POSTs and SSE streams.
 */
import { createParser } from 'eventsource-parser';
import { SseEventBounds } from '../utils/sse-event-bounds.js';
import type * as Undici from 'undici';
import type { Dispatcher } from 'undici';
import { loadPackage } from '../load-package.js';
import { serverAttributes, startClientSpan, tracingOn, type ActiveSpan } from '../observability/tracing.js';

/** A failure to talk to a peer (network, HTTP status, body that is not JSON). */
export class PeerError extends Error {
  /** HTTP status, when the peer answered. */
  readonly status: number | undefined;
  /** The peer could not be reached at all (no answer). */
  readonly network: boolean;
  constructor(message: string, options: { status?: number; network?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'PeerError';
    this.status = options.status;
    this.network = options.network ?? false;
  }
}

export type Headers = Record<string, string>;

/** a2a.max_message_bytes' default, for a PeerHttp made without the config (agentTools). */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** What is left of a stream after its final event is read in the background up to these bounds, then the connection is closed. */
const DRAIN_MAX_BYTES = 64 * 1024;
const DRAIN_MS = 2000;

/** undici (over a hundred modules), loaded by the first request to a peer rather than at start-up. */
let undici: Promise<typeof Undici> | undefined;
const loadUndici = () => (undici ??= loadPackage<typeof Undici>('undici'));

export class PeerHttp {
  /** Given, or this instance's own pool, made with the first request. */
  private dispatcher: Dispatcher | undefined;
  private readonly owned: boolean;

  constructor(
    dispatcher?: Dispatcher,
    /** Largest answer, or event of a stream, read from a peer (a2a.max_message_bytes). */
    private readonly maxBytes = MAX_MESSAGE_BYTES,
  ) {
    this.owned = !dispatcher;
    this.dispatcher = dispatcher;
  }

  /** GET a JSON document. Throws PeerError on network errors, non-2xx or a body that is not JSON. */
  async getJson(url: string, headers: Headers, signal: AbortSignal): Promise<unknown> {
    const res = await this.send(url, { method: 'GET', headers: { accept: 'application/json', ...headers }, signal });
    const text = await readText(res.body, url, this.maxBytes);
    if (res.statusCode < 200 || res.statusCode >= 300) {
      throw new PeerError(`GET ${url} answered HTTP ${res.statusCode}`, { status: res.statusCode });
    }
    return parseJson(text, `GET ${url}`);
  }

  /**
   * POST a JSON-RPC request. Returns the parsed body whatever the status
   * (JSON-RPC errors often come with 4xx/5xx); throws when it is not JSON.
   */
  async postJson(url: string, body: unknown, headers: Headers, signal: AbortSignal): Promise<unknown> {
    const span = tracingOn ? rpcSpan(url, body, false) : undefined;
    try {
      const res = await this.send(url, {
        method: 'POST',
        headers: traced(span, { 'content-type': 'application/json', accept: 'application/json', ...headers }),
        body: JSON.stringify(body),
        signal,
      });
      span?.status(res.statusCode);
      const text = await readText(res.body, url, this.maxBytes);
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new PeerError(
          `POST ${url} answered HTTP ${res.statusCode} with a body that is not JSON${snippet(text)}`,
          { status: res.statusCode },
        );
      }
    } catch (err) {
      span?.fail(err);
      throw err;
    } finally {
      span?.end();
    }
  }

  /**
   * POST a JSON-RPC request answered with Server-Sent Events; yields each
   * event's data parsed as JSON. A plain JSON answer (e.g. an error) is
   * yielded once. A consumer that stops early (it has the final event)
   * leaves the rest of the stream to be read in the background, so the
   * connection goes back to the pool instead of being closed.
   */
  async *postStream(url: string, body: unknown, headers: Headers, signal: AbortSignal): AsyncGenerator<unknown> {
    // The caller's signal may fire once it has what it needs (a call that ended aborts it): it stops
    // the request only while the stream is being followed, never the background drain.
    const own = new AbortController();
    const forward = () => own.abort(signal.reason);
    if (signal.aborted) forward();
    else signal.addEventListener('abort', forward, { once: true });
    let res: Dispatcher.ResponseData | undefined;
    const span = tracingOn ? rpcSpan(url, body, true) : undefined;
    try {
      res = await this.send(url, {
        method: 'POST',
        headers: traced(span, { 'content-type': 'application/json', accept: 'text/event-stream', ...headers }),
        body: JSON.stringify(body),
        signal: own.signal,
        // A stream may be quiet for long; the call's own signal bounds it.
        bodyTimeout: 0,
      });
      span?.status(res.statusCode);
      const type = String(res.headers['content-type'] ?? '');
      if (!type.includes('text/event-stream')) {
        const text = await readText(res.body, url, this.maxBytes);
        yield parseJson(text, `POST ${url} (HTTP ${res.statusCode})`);
        return;
      }
      const queue: string[] = [];
      const parser = createParser({ onEvent: (e) => queue.push(e.data) });
      const decoder = new TextDecoder();
      // An event is counted before the parser buffers it (it keeps a whole event, whatever its size).
      const events = new SseEventBounds();
      for await (const chunk of res.body.iterator({ destroyOnReturn: false })) {
        const { largest } = events.scan(chunk as Buffer);
        if (largest > this.maxBytes || events.current > this.maxBytes) {
          res.body.destroy();
          throw new PeerError(
            `an event of the stream of POST ${url} is larger than ${this.maxBytes} bytes (a2a.max_message_bytes); ${TOO_LARGE_HINT}`,
          );
        }
        parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
        while (queue.length) yield parseJson(queue.shift()!, `an event of POST ${url}`);
      }
    } catch (err) {
      span?.fail(err);
      throw err;
    } finally {
      span?.end();
      signal.removeEventListener('abort', forward);
      if (res && !res.body.destroyed && !res.body.readableEnded) {
        if (signal.aborted) res.body.destroy();
        else drain(res.body);
      }
    }
  }

  private async send(
    url: string,
    options: Omit<Dispatcher.RequestOptions, 'origin' | 'path'> & { signal: AbortSignal },
  ) {
    try {
      const { Agent, request } = await loadUndici();
      this.dispatcher ??= new Agent({
        keepAliveTimeout: 30_000,
        keepAliveMaxTimeout: 300_000,
        connections: 64,
        pipelining: 1,
      });
      return await request(url, { ...options, dispatcher: this.dispatcher });
    } catch (err) {
      if (options.signal.aborted) throw options.signal.reason ?? err;
      throw new PeerError(`${options.method} ${url} failed: ${describeNetworkError(err)}`, {
        network: true,
        cause: err,
      });
    }
  }

  /** A small request whose text answer is read up to `maxBytes` (a credential's token endpoint). */
  async fetchText(
    url: string,
    init: { method: 'POST'; headers: Record<string, string>; body: string },
    maxBytes: number,
  ): Promise<{ status: number; text: string }> {
    const res = await this.send(url, { ...init, signal: AbortSignal.timeout(30_000) });
    return { status: res.statusCode, text: await readText(res.body, url, maxBytes) };
  }

  async close(): Promise<void> {
    if (this.owned) await this.dispatcher?.close();
  }
}

/** The client span of one JSON-RPC request to a peer: its method and host, never its parameters. */
function rpcSpan(url: string, body: unknown, streaming: boolean): ActiveSpan | undefined {
  const method = String((body as { method?: unknown }).method ?? 'request');
  return startClientSpan(method, () => ({
    'rpc.system': 'jsonrpc',
    'rpc.service': 'a2a',
    'rpc.method': method,
    'rpc.jsonrpc.version': '2.0',
    'http.request.method': 'POST',
    'a2e.a2a.streaming': streaming,
    ...serverAttributes(new URL(url)),
  }));
}

/** The request's headers, with the span's `traceparent` when there is a span. */
const traced = (span: ActiveSpan | undefined, headers: Headers): Headers => (span ? span.inject(headers) : headers);

const TOO_LARGE_HINT = 'ask the agent for less or raise a2a.max_message_bytes';

async function readText(body: Dispatcher.ResponseData['body'], url: string, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      body.destroy();
      throw new PeerError(
        `the answer of ${url} is larger than ${maxBytes} bytes (a2a.max_message_bytes); ${TOO_LARGE_HINT}`,
      );
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Read the rest of an answer in the background so its keep-alive connection is reused; close it past the bounds. */
function drain(body: Dispatcher.ResponseData['body']): void {
  let left = DRAIN_MAX_BYTES;
  const timer = setTimeout(() => body.destroy(), DRAIN_MS);
  timer.unref();
  body
    .on('data', (chunk: Buffer) => {
      left -= chunk.length;
      if (left < 0) body.destroy();
    })
    .on('error', () => {})
    .on('close', () => clearTimeout(timer))
    .resume();
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new PeerError(`${what}: the answer is not JSON${snippet(text)}`);
  }
}

function snippet(text: string): string {
  const t = text.trim().replace(/\s+/g, ' ');
  if (!t) return ' (empty body)';
  return ` (starts with ${JSON.stringify(t.slice(0, 60))})`;
}

function describeNetworkError(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused (is the agent running?)';
    case 'ENOTFOUND':
      return 'host not found';
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'the agent did not answer in time';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'the connection was closed by the agent';
    default:
      return code ? `${code}` : (e.message ?? 'network error');
  }
}
