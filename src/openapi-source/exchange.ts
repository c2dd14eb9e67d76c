/**
 * One operation call over HTTP: the request, its redirects (tools.http's
 * rules: each hop's address checked at connect time, at most max_redirects,
 * a body never re-sent to another origin), the answer read up to
 * `max_response_bytes`. The credential is set on each hop that goes to the
 * API's own origin, and on no other; a 401 with an OAuth2 token fetches a new
 * one and tries once more. An event stream is passed on event by event.
 */
import { isUtf8 } from 'node:buffer';
import type { Dispatcher } from 'undici';
import { createParser } from 'eventsource-parser';
import { ToolError, ToolOutput, type ToolContext } from '../engine/index.js';
import { serverAttributes, startClientSpan, tracingOn, type ActiveSpan } from '../observability/tracing.js';
import { scrub, type Credential } from '../security/credential.js';
import { Abort, exchangeOnce } from '../tools/http/response.js';
import type { BuiltRequest } from './request.js';

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** The only request headers that follow a redirect to another origin (as http_request's). */
const CROSS_ORIGIN_HEADERS = new Set(['accept', 'accept-language', 'content-language', 'user-agent']);
/** Response headers a caller sees: none that sets state or names internals. */
const SAFE_RESPONSE_HEADERS = new Set([
  'content-type',
  'content-length',
  'content-language',
  'content-encoding',
  'etag',
  'last-modified',
  'cache-control',
  'expires',
  'location',
  'retry-after',
  'link',
  'date',
  'x-request-id',
  'x-total-count',
]);
const PROGRESS_STEP = 64 * 1024;
/** Most characters of a failed answer's body put in the error message. */
const EXCERPT_CHARS = 300;

export interface ExchangeSettings {
  dispatcher: Dispatcher;
  /** The API's origin: the only one credentials go to. */
  origin: string;
  credential: Credential | null;
  timeoutS: number;
  maxResponseBytes: number;
  maxRedirects: number;
  /** Secrets to scrub from anything shown (the credential's and the fixed headers'). */
  secrets(): string[];
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  bytes: Buffer;
  truncated: boolean;
  events: unknown[] | null;
}

export async function exchange(
  s: ExchangeSettings,
  request: BuiltRequest,
  ctx: ToolContext,
  streams: boolean,
): Promise<ToolOutput> {
  // An operation that may answer with an event stream reads its answer as a stream (events passed on as they
  // come); any other reads it with http_request's buffered reader, which costs less per call.
  const abort = new Abort();
  const controller = streams ? new AbortController() : undefined;
  const stop = (reason: Error) => {
    abort.abort(reason);
    controller?.abort(reason);
  };
  let timedOut = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      stop(new DOMException('timed out', 'TimeoutError'));
    },
    Math.round(s.timeoutS * 1000),
  ).unref();
  const offStop = ctx.onStop(stop);
  const label = `${request.method} ${request.url.pathname}`;
  const send: Send = controller ? streamed(s, ctx, controller.signal) : buffered(s, ctx, abort);
  try {
    let answer = await follow(s, request, ctx, send, false);
    if (answer.status === 401 && s.credential?.renewable) answer = await follow(s, request, ctx, send, true);
    return result(s, label, answer);
  } catch (err) {
    if (err instanceof ToolError) throw err;
    throw failure(err, request.url, timedOut ? s.timeoutS : null, s.secrets());
  } finally {
    clearTimeout(timer);
    offStop();
  }
}

/** One hop's answer: its status and Location, then its body read (or dropped, for a redirect that is followed). */
interface Hop {
  status: number;
  location: string | undefined;
  read(): Promise<Answer>;
  drop(): Promise<void>;
}
type Send = (url: URL, method: string, headers: Record<string, string>, body: string | undefined) => Promise<Hop>;

function streamed(s: ExchangeSettings, ctx: ToolContext, signal: AbortSignal): Send {
  return async (url, method, headers, body) => {
    const res = await s.dispatcher.request({
      origin: url.origin,
      path: url.pathname + url.search,
      method: method as Dispatcher.HttpMethod,
      headers,
      body,
      signal,
    });
    const location = res.headers.location;
    return {
      status: res.statusCode,
      location: typeof location === 'string' ? location : undefined,
      read: () => read(s, res, ctx),
      drop: () => res.body.dump(),
    };
  };
}

function buffered(s: ExchangeSettings, ctx: ToolContext, abort: Abort): Send {
  return async (url, method, headers, body) => {
    const a = await exchangeOnce(
      s.dispatcher,
      { origin: url.origin, path: url.pathname + url.search, method: method as Dispatcher.HttpMethod, headers, body },
      s.maxResponseBytes,
      ctx,
      abort,
      null,
      null,
    );
    return {
      status: a.status,
      location: a.headers.location,
      read: async () => ({
        status: a.status,
        headers: safeHeaders(a.headers),
        bytes: a.bytes,
        truncated: a.truncated,
        events: null,
      }),
      drop: async () => {},
    };
  };
}

async function follow(
  s: ExchangeSettings,
  first: BuiltRequest,
  ctx: ToolContext,
  send: Send,
  renew: boolean,
): Promise<Answer> {
  // Neither is changed in place (a redirect makes new ones), so the built request's are used as they are.
  let { method, body, url, headers } = first;
  for (let redirects = 0; ; redirects++) {
    // The credential is set on this hop's copy, and only for the API's own origin.
    let hopHeaders = headers;
    let hopUrl = url;
    if (s.credential && url.origin === s.origin) {
      hopHeaders = { ...headers };
      // A query credential sets a parameter: on a copy of the URL.
      if (s.credential.queryNames.size > 0) hopUrl = new URL(url.href);
      await s.credential.apply(hopHeaders, hopUrl, renew && redirects === 0);
    }
    // A client span per hop, up to its status: method, route template, server; never the path's values or a header.
    const span = tracingOn ? hopSpan(method, redirects === 0 ? first.route : null, hopUrl) : undefined;
    if (span && hopHeaders.traceparent === undefined)
      hopHeaders = span.inject(hopHeaders === headers ? { ...headers } : hopHeaders);
    let res: Hop;
    try {
      res = await send(hopUrl, method, hopHeaders, body);
    } catch (err) {
      span?.fail(err);
      span?.end();
      throw err;
    }
    span?.status(res.status);
    span?.end();
    const location = res.location;
    if (!REDIRECTS.has(res.status) || location === undefined || s.maxRedirects === 0) return res.read();
    if (redirects >= s.maxRedirects) {
      await res.drop();
      throw new ToolError(`stopped after ${redirects} redirects (tools.http.max_redirects is ${s.maxRedirects})`);
    }
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      await res.drop();
      throw new ToolError(`${url.host} redirected to an invalid URL`);
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') {
      await res.drop();
      throw new ToolError(`${url.host} redirected to a ${next.protocol} URL; only http and https are followed`);
    }
    const keepsBody = !(res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST'));
    if (next.origin !== url.origin && keepsBody && body !== undefined) return res.read(); // the body is not sent elsewhere
    await res.drop();
    if (!keepsBody) {
      if (method !== 'HEAD') method = 'GET';
      body = undefined;
      headers = { ...headers };
      delete headers['content-type'];
    }
    if (next.origin !== url.origin)
      headers = Object.fromEntries(Object.entries(headers).filter(([name]) => CROSS_ORIGIN_HEADERS.has(name)));
    ctx.emit('status', { message: `redirect ${res.status} to ${next.origin}${next.pathname}` });
    url = next;
  }
}

const METHOD_NAMES = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE']);

/** The client span of one hop: "GET /items/{id}" for the operation's own request, the method alone after a redirect. */
function hopSpan(method: string, route: string | null, url: URL): ActiveSpan | undefined {
  const known = METHOD_NAMES.has(method) ? method : '_OTHER';
  return startClientSpan(route === null ? known : `${known} ${route}`, () => ({
    'http.request.method': known,
    ...(route === null ? {} : { 'http.route': route }),
    'a2e.hop': 'openapi',
    ...serverAttributes(url),
  }));
}

/** The response headers a caller sees. */
function safeHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (
      value === undefined ||
      !(SAFE_RESPONSE_HEADERS.has(name) || name.startsWith('x-ratelimit-') || name.startsWith('ratelimit'))
    )
      continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

async function read(s: ExchangeSettings, res: Dispatcher.ResponseData, ctx: ToolContext): Promise<Answer> {
  const headers = safeHeaders(res.headers);
  const type = (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const max = s.maxResponseBytes;
  if (type === 'text/event-stream' && res.statusCode < 300) return readEvents(s, res, headers, ctx);
  const chunks: Buffer[] = [];
  let kept = 0;
  let received = 0;
  let next = PROGRESS_STEP;
  const total = Number(headers['content-length']);
  let truncated = false;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    received += chunk.length;
    if (kept + chunk.length > max) {
      chunks.push(chunk.subarray(0, max - kept));
      kept = max;
      truncated = true;
      res.body.destroy();
      break;
    }
    chunks.push(chunk);
    kept += chunk.length;
    if (received >= next) {
      next = received + PROGRESS_STEP;
      ctx.emit('progress', {
        pct: total > 0 ? Math.min(100, Math.floor((received / total) * 100)) : 0,
        message: `received ${received} bytes${total > 0 ? ` of ${total}` : ''}`,
      });
    }
  }
  return { status: res.statusCode, headers, bytes: Buffer.concat(chunks, kept), truncated, events: null };
}

/** An event stream: each event passed on as an `artifact` event as it comes, and kept (up to the byte cap) for the result. */
async function readEvents(
  s: ExchangeSettings,
  res: Dispatcher.ResponseData,
  headers: Record<string, string>,
  ctx: ToolContext,
): Promise<Answer> {
  const events: unknown[] = [];
  let kept = 0;
  let truncated = false;
  const secrets = s.secrets();
  const parser = createParser({
    onEvent(e) {
      const data = scrub(e.data, secrets);
      ctx.emit('artifact', {
        name: e.event ?? 'message',
        mime: 'text/event-stream',
        chunk: data,
        final: false,
        ...(e.id !== undefined && { id: e.id }),
      });
      kept += data.length;
      if (kept > s.maxResponseBytes) truncated = true;
      else
        events.push({
          event: e.event ?? 'message',
          data: parseJson(data) ?? data,
          ...(e.id !== undefined && { id: e.id }),
        });
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    if (truncated) {
      res.body.destroy();
      break;
    }
  }
  return { status: res.statusCode, headers, bytes: Buffer.alloc(0), truncated, events };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function result(s: ExchangeSettings, label: string, a: Answer): ToolOutput {
  const secrets = s.secrets();
  const type = (a.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  let body: unknown;
  let encoding = 'utf8';
  if (a.events) body = a.events;
  else if (a.bytes.length === 0) body = null;
  else if (
    isUtf8(a.bytes) &&
    (type === '' || type.startsWith('text/') || /json|xml|yaml|javascript|x-www-form-urlencoded/.test(type))
  ) {
    const text = scrub(a.bytes.toString('utf8'), secrets);
    body = /json/.test(type) && !a.truncated ? (parseJson(text) ?? text) : text;
  } else {
    body = a.bytes.toString('base64');
    encoding = 'base64';
  }
  const data = {
    status: a.status,
    headers: a.headers,
    body,
    ...(encoding === 'base64' && { body_encoding: 'base64' }),
    truncated: a.truncated,
  };
  if (a.status < 200 || a.status >= 300) {
    const excerpt = typeof body === 'string' ? body : JSON.stringify(body);
    const shown = excerpt && excerpt.length > EXCERPT_CHARS ? `${excerpt.slice(0, EXCERPT_CHARS)}…` : excerpt;
    const hint =
      a.status === 401 || a.status === 403
        ? " (check the source's auth)"
        : a.status >= 300 && a.status < 400
          ? ' (the redirect was not followed)'
          : '';
    throw new ToolError(`${label} answered ${a.status}${hint}${shown ? `: ${shown}` : ''}`, {
      data,
      truncated: a.truncated,
    });
  }
  return new ToolOutput({
    data,
    summary: `${label} → ${a.status}${a.truncated ? ' (truncated)' : ''}`,
    truncated: a.truncated,
  });
}

/** A ToolError for a request that got no answer, naming the host (never a secret or internal detail). */
function failure(err: unknown, url: URL, timedOutAfter: number | null, secrets: string[]): ToolError {
  if (timedOutAfter !== null)
    return new ToolError(
      `request to ${url.host} timed out after ${timedOutAfter} s; raise the source's timeout_s if it needs longer`,
    );
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if ((e as { code?: string }).code === 'A2E_REFUSED_ADDRESS')
      return new ToolError(`${(e as Error).message} (or set allow_private on the source)`);
  }
  if ((err as Error | null)?.name === 'CredentialError') return new ToolError(scrub((err as Error).message, secrets));
  const raw = (err as { code?: unknown } | null)?.code;
  const code = typeof raw === 'string' ? raw : (err as Error | null)?.name;
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ToolError(`host ${url.hostname} could not be resolved; check the source's base_url`);
    case 'ECONNREFUSED':
      return new ToolError(`${url.host} refused the connection; the API may be down, try again later`);
    case 'AbortError':
    case 'UND_ERR_ABORTED':
      return new ToolError('request canceled');
    default:
      return new ToolError(`request to ${url.host} failed (${code ?? 'error'}); try again later`);
  }
}
