/** http_request: one HTTP exchange (following redirects itself), with a bounded body. */
import type { Dispatcher } from 'undici';
import { ToolError, ToolOutput, type ToolContext } from '../../engine/index.js';
import type { HttpConfig } from './config.js';
import type { RefusedAddressError } from './dispatcher.js';
import { serverAttributes, startClientSpan, tracingOn, type ActiveSpan } from '../../observability/tracing.js';

export interface HttpArgs {
  method?: string;
  url: string;
  headers?: Record<string, unknown>;
  body?: string;
  timeout?: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/**
 * The only request headers that follow a redirect to another origin (scheme, host or port differ): any other
 * may carry a credential (Authorization, Cookie, X-Api-Key, X-Auth-Token, …) meant for the first origin only.
 */
const CROSS_ORIGIN_HEADERS = new Set(['accept', 'accept-language', 'content-language', 'user-agent']);
/** Emit a progress event every this many bytes received. */
const PROGRESS_STEP = 64 * 1024;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export async function httpRequestTool(
  dispatcher: Dispatcher,
  config: HttpConfig,
  args: HttpArgs,
  ctx: ToolContext,
): Promise<ToolOutput> {
  const method = (args.method ?? 'GET').toUpperCase();
  const url = parseUrl(args.url);
  const body: string | undefined = args.body;
  if (body !== undefined && (method === 'GET' || method === 'HEAD')) {
    throw new ToolError(`a ${method} request cannot have a body; use POST, PUT or PATCH`);
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(args.headers ?? {})) {
    if (typeof value !== 'string') throw new ToolError(`header ${JSON.stringify(name)} must be a string`);
    headers[name.toLowerCase()] = value;
  }

  const timeoutS = args.timeout ?? config.timeout_s;
  if (!(timeoutS > 0)) throw new ToolError('timeout must be a positive number of seconds');
  // One controller, aborted by the call's signal or the timeout (with their reasons), both released when
  // the exchange ends: AbortSignal.timeout + AbortSignal.any cost two signals and a GC-tracked
  // dependency per call, which showed in the profile.
  const controller = new AbortController();
  const signal = controller.signal;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
  }, Math.round(timeoutS * 1000));
  timer.unref();
  const onCallAbort = () => controller.abort(ctx.signal.reason);
  if (ctx.signal.aborted) onCallAbort();
  else ctx.signal.addEventListener('abort', onCallAbort, { once: true });
  try {
    return await exchange(dispatcher, config, ctx, { method, url, body, headers, signal, timeoutS, timedOut: () => timedOut });
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener('abort', onCallAbort);
  }
}

interface Exchange {
  method: string;
  url: URL;
  body: string | undefined;
  headers: Record<string, string>;
  signal: AbortSignal;
  timeoutS: number;
  timedOut(): boolean;
}

/** The request and its redirects, up to the final response's body. */
async function exchange(dispatcher: Dispatcher, config: HttpConfig, ctx: ToolContext, x: Exchange): Promise<ToolOutput> {
  let { method, url, body } = x;
  const { headers, signal, timeoutS } = x;
  for (let redirects = 0; ; redirects++) {
    let res: Dispatcher.ResponseData;
    const span = tracingOn ? exchangeSpan(method, url) : undefined;
    try {
      res = await dispatcher.request({
        origin: url.origin,
        path: url.pathname + url.search,
        method: method as Dispatcher.HttpMethod,
        // The caller's own traceparent, when it sent one, is kept.
        headers: span && headers.traceparent === undefined ? span.inject({ ...headers }) : headers,
        body,
        signal,
      });
    } catch (err) {
      span?.fail(err);
      span?.end();
      throw requestError(err, url, x.timedOut() ? timeoutS : null);
    }
    span?.status(res.statusCode);
    span?.end();

    const location = res.headers.location;
    const redirect = REDIRECTS.has(res.statusCode) && typeof location === 'string' && config.max_redirects > 0;
    let next: URL | undefined;
    if (redirect) {
      try {
        next = nextUrl(url, location, redirects, config.max_redirects);
      } catch (err) {
        await res.body.dump().catch(() => {});
        throw err;
      }
    }
    const crossOrigin = next !== undefined && next.origin !== url.origin;
    const keepsBody = !(res.statusCode === 303 || ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST'));
    // A body goes to its own origin only: a 307/308 that would re-send it elsewhere is not followed; the
    // caller gets the redirect itself and may send the body there deliberately.
    if (next && crossOrigin && keepsBody && body !== undefined) {
      ctx.emit('status', {
        message: `not following the ${res.statusCode} redirect to ${next.origin}: the request body is not sent to another origin`,
      });
    } else if (next) {
      await res.body.dump().catch(() => {});
      if (!keepsBody) {
        if (method !== 'HEAD') method = 'GET';
        body = undefined;
        delete headers['content-type'];
        delete headers['content-length'];
      }
      if (crossOrigin) for (const name of Object.keys(headers)) if (!CROSS_ORIGIN_HEADERS.has(name)) delete headers[name];
      ctx.emit('status', { message: `redirect ${res.statusCode} to ${next.href}` });
      url = next;
      continue;
    }

    const { bytes, truncated } = await readBody(res, config.max_response_bytes, ctx, (err) =>
      requestError(err, url, x.timedOut() ? timeoutS : null),
    );
    const contentType = headerValue(res.headers['content-type']);
    const text = isTextual(contentType) ? decodeUtf8(bytes, truncated) : null;
    return new ToolOutput({
      data: {
        url: url.href,
        status: res.statusCode,
        headers: flattenHeaders(res.headers),
        body: text ?? bytes.toString('base64'),
        body_encoding: text === null ? 'base64' : 'utf8',
        bytes: bytes.length,
        truncated,
        redirects,
      },
      summary: `${method} ${url.href} → ${res.statusCode} (${bytes.length} bytes${truncated ? ', truncated' : ''})`,
      truncated,
    });
  }
}

/**
 * The client span of one exchange (each redirect is one), up to its response headers: method, host, port
 * and status — never the path, query, headers or body, which are the caller's arguments.
 */
function exchangeSpan(method: string, url: URL): ActiveSpan {
  const known = METHOD_NAMES.has(method) ? method : '_OTHER';
  return startClientSpan(known, { 'http.request.method': known, 'a2e.hop': 'http_request', ...serverAttributes(url) });
}

const METHOD_NAMES = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']);

/** Where a redirect leads, checked; throws when it is not followed (too many, invalid, not http). */
function nextUrl(url: URL, location: string, redirects: number, max: number): URL {
  if (redirects >= max) {
    throw new ToolError(`stopped after ${redirects} redirects (tools.http.max_redirects is ${max}); the last one pointed to ${location}`);
  }
  let next: URL;
  try {
    next = new URL(location, url);
  } catch {
    throw new ToolError(`${url.host} redirected to an invalid URL: ${location}`);
  }
  if (next.protocol !== 'http:' && next.protocol !== 'https:') {
    throw new ToolError(`${url.host} redirected to a ${next.protocol} URL; only http and https are followed`);
  }
  return checkedUrl(next);
}

function parseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ToolError(`url ${JSON.stringify(text)} is not a valid absolute URL; write it like "https://example.com/path"`);
  }
  return checkedUrl(url);
}

function checkedUrl(url: URL): URL {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ToolError(`only http and https URLs are allowed, not ${url.protocol}`);
  }
  if (url.username || url.password) {
    throw new ToolError('credentials in the URL are not supported; send an Authorization header instead');
  }
  return url;
}

/**
 * The body, up to `max` bytes (then cut, the rest not read). Read with stream events: an async iterator
 * costs an iterator and a promise per chunk.
 */
function readBody(
  res: Dispatcher.ResponseData,
  max: number,
  ctx: ToolContext,
  failure: (err: unknown) => Error,
): Promise<{ bytes: Buffer; truncated: boolean }> {
  const total = Number(headerValue(res.headers['content-length']) ?? NaN);
  const stream = res.body;
  const chunks: Buffer[] = [];
  let kept = 0;
  let received = 0;
  let nextProgress = PROGRESS_STEP;
  return new Promise((resolve, reject) => {
    const done = (truncated: boolean) => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      resolve({ bytes: chunks.length === 1 && !truncated ? chunks[0]! : Buffer.concat(chunks, kept), truncated });
    };
    const onEnd = () => done(false);
    const onError = (err: unknown) => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      try {
        reject(failure(err));
      } catch (thrown) {
        reject(thrown); // never out of an event handler
      }
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (kept + chunk.length > max) {
        chunks.push(chunk.subarray(0, max - kept));
        kept = max;
        stream.on('error', () => {}); // the destroy below may still report an error: nobody reads it
        stream.destroy();
        done(true);
        return;
      }
      chunks.push(chunk);
      kept += chunk.length;
      if (received >= nextProgress) {
        nextProgress = received + PROGRESS_STEP;
        const pct = Number.isFinite(total) && total > 0 ? Math.min(100, Math.floor((received / total) * 100)) : 0;
        ctx.emit('progress', {
          pct,
          message: `received ${received} bytes${Number.isFinite(total) ? ` of ${total}` : ''}`,
          bytes_received: received,
          bytes_total: Number.isFinite(total) ? total : null,
        });
      }
    };
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
  });
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v.join(', ') : v;
}

function flattenHeaders(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k] = headerValue(v)!;
  return out;
}

/** Content types whose body is shown as text (when it is valid UTF-8). */
export function isTextual(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return (
    type.startsWith('text/') ||
    /^application\/(json|xml|javascript|ecmascript|x-www-form-urlencoded|x-ndjson|ndjson|yaml|x-yaml|toml|graphql|sql)$/.test(type) ||
    /\+(json|xml|yaml)$/.test(type)
  );
}

/** The body as text, or null when it is not valid UTF-8 (a truncated tail may end mid-character). */
function decodeUtf8(bytes: Buffer, truncated: boolean): string | null {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    if (!truncated) return null;
  }
  for (let cut = 1; cut <= 3 && cut <= bytes.length; cut++) {
    try {
      return strictUtf8.decode(bytes.subarray(0, bytes.length - cut));
    } catch {
      // try one byte less
    }
  }
  return null;
}

/** A ToolError for a failed exchange, naming the host (never internal details). */
function requestError(err: unknown, url: URL, timedOutAfter: number | null): Error {
  if (err instanceof ToolError) return err;
  const refused = findRefusal(err);
  if (refused) return new ToolError(refused.message);
  if (timedOutAfter !== null) return new ToolError(`request to ${url.host} timed out after ${timedOutAfter} s; raise "timeout" if it needs longer`);
  // A DOMException (an abort's reason) has a numeric code: only string codes are errno-like names.
  const raw = (err as { code?: unknown } | null)?.code;
  const code = typeof raw === 'string' ? raw : (err as Error | null)?.name === 'AbortError' ? 'ABORT_ERR' : undefined;
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ToolError(`host ${url.hostname} could not be resolved; check the URL`);
    case 'ECONNREFUSED':
      return new ToolError(`${url.host} refused the connection`);
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return new ToolError(`the connection to ${url.host} was closed unexpectedly`);
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new ToolError(`connecting to ${url.host} timed out`);
    case 'UND_ERR_INVALID_ARG':
      return new ToolError(`invalid request: ${(err as Error).message}`);
    case 'UND_ERR_ABORTED':
    case 'ABORT_ERR':
      return new ToolError('request canceled');
    default:
      if (code?.startsWith('ERR_TLS') || code?.includes('CERT')) return new ToolError(`TLS error talking to ${url.host} (${code})`);
      return new ToolError(`request to ${url.host} failed (${code ?? (err as Error)?.name ?? 'error'})`);
  }
}

function findRefusal(err: unknown): RefusedAddressError | null {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    // By its code, not instanceof: this module does not load the dispatcher (and undici) itself.
    if ((e as { code?: string }).code === 'A2E_REFUSED_ADDRESS') return e as RefusedAddressError;
  }
  return null;
}
