/** http_request: one HTTP exchange (following redirects itself), with a bounded body. */
import { isUtf8 } from 'node:buffer';
import type { Dispatcher } from 'undici';
import { ToolError, ToolOutput, type ToolContext } from '../../engine/index.js';
import type { HttpConfig } from './config.js';
import { scrub } from '../../security/credential.js';
import type { CredentialMatcher } from '../../security/credential-match.js';
import type { RefusedAddressError } from './dispatcher.js';
import { Abort, exchangeOnce, type Answer } from './response.js';
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

export async function httpRequestTool(
  dispatcher: Dispatcher,
  config: HttpConfig,
  args: HttpArgs,
  ctx: ToolContext,
  credentials: CredentialMatcher | null = null,
): Promise<ToolOutput> {
  const method = (args.method ?? 'GET').toUpperCase();
  const url = parseUrl(args.url);
  const body: string | undefined = args.body;
  if (body !== undefined && (method === 'GET' || method === 'HEAD')) {
    throw new ToolError(`a ${method} request cannot have a body; use POST, PUT or PATCH`);
  }
  const headers: Record<string, string> = {};
  if (args.headers) {
    for (const [name, value] of Object.entries(args.headers)) {
      if (typeof value !== 'string') throw new ToolError(`header ${JSON.stringify(name)} must be a string`);
      headers[name.toLowerCase()] = value;
    }
  }

  const timeoutS = args.timeout ?? config.timeout_s;
  if (!(timeoutS > 0)) throw new ToolError('timeout must be a positive number of seconds');
  // One abort for the exchange, fired by the call's signal or the timeout (with their reasons). The timer is
  // only set when it would fire before the call's own deadline: otherwise the call's timeout stops the call,
  // and its signal this exchange, first.
  const abort = new Abort();
  const timeoutMs = Math.round(timeoutS * 1000);
  let timedOut = false;
  const timer =
    Date.now() + timeoutMs < ctx.deadline
      ? setTimeout(() => {
          timedOut = true;
          abort.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
        }, timeoutMs).unref()
      : undefined;
  const offStop = ctx.onStop((reason) => abort.abort(reason));
  try {
    return await exchange(dispatcher, config, ctx, {
      method,
      url,
      body,
      headers,
      abort,
      timeoutS,
      timedOut: () => timedOut,
      credentials,
    });
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    offStop();
  }
}

interface Exchange {
  method: string;
  url: URL;
  body: string | undefined;
  headers: Record<string, string>;
  abort: Abort;
  timeoutS: number;
  timedOut(): boolean;
  /** tools.http.credentials, injected on the hops to the caller's origin that match. */
  credentials: CredentialMatcher | null;
}

/** The request and its redirects, up to the final response's body. */
async function exchange(
  dispatcher: Dispatcher,
  config: HttpConfig,
  ctx: ToolContext,
  x: Exchange,
): Promise<ToolOutput> {
  let { method, url, body } = x;
  const { headers, abort, timeoutS } = x;
  const origin = url.origin;
  let injected = false;
  for (let redirects = 0; ; redirects++) {
    // A matching credential is set on this hop's copy of the headers (and URL), never on what the next hop starts from.
    const credential = x.credentials?.match(url, origin) ?? null;
    let hopHeaders = headers;
    let path = url.pathname + url.search;
    if (credential) {
      hopHeaders = { ...headers };
      const withKey = new URL(url.href);
      try {
        await credential.apply(hopHeaders, withKey);
      } catch (err) {
        throw new ToolError((err as Error).message);
      }
      path = withKey.pathname + withKey.search;
      injected = true;
    }
    // Set by the redirect check when this response's redirect is followed.
    let next: URL | undefined;
    let keepsBody = true;
    const from = url;
    const checkRedirect =
      config.max_redirects > 0
        ? (status: number, location: string): boolean => {
            if (!REDIRECTS.has(status)) return false;
            const target = nextUrl(from, location, redirects, config.max_redirects);
            keepsBody = !(status === 303 || ((status === 301 || status === 302) && method === 'POST'));
            // A body goes to its own origin only: a 307/308 that would re-send it elsewhere is not followed; the
            // caller gets the redirect itself and may send the body there deliberately.
            if (target.origin !== from.origin && keepsBody && body !== undefined) {
              ctx.emit('status', {
                message: `not following the ${status} redirect to ${target.origin}: the request body is not sent to another origin`,
              });
              return false;
            }
            next = target;
            return true;
          }
        : null;
    const span = tracingOn ? exchangeSpan(method, url) : undefined;
    let spanOpen = span !== undefined; // until the response's headers (or a failure before them)
    let res: Answer;
    try {
      res = await exchangeOnce(
        dispatcher,
        {
          origin: url.origin,
          path,
          method: method as Dispatcher.HttpMethod,
          // The caller's own traceparent, when it sent one, is kept.
          headers: span && hopHeaders.traceparent === undefined ? span.inject({ ...hopHeaders }) : hopHeaders,
          body,
        },
        config.max_response_bytes,
        ctx,
        abort,
        checkRedirect,
        span
          ? (status) => {
              spanOpen = false;
              span.status(status);
              span.end();
            }
          : null,
      );
    } catch (err) {
      if (span && spanOpen) {
        span.fail(err);
        span.end();
      }
      throw requestError(err, url, x.timedOut() ? timeoutS : null);
    }

    if (next) {
      if (!keepsBody) {
        if (method !== 'HEAD') method = 'GET';
        body = undefined;
        delete headers['content-type'];
        delete headers['content-length'];
      }
      if (next.origin !== url.origin)
        for (const name of Object.keys(headers)) if (!CROSS_ORIGIN_HEADERS.has(name)) delete headers[name];
      ctx.emit('status', { message: `redirect ${res.status} to ${next.href}` });
      url = next;
      continue;
    }

    const { bytes, truncated } = res;
    let text = isTextual(res.headers['content-type']) ? decodeUtf8(bytes, truncated) : null;
    // An answer echoing an injected credential shows it redacted: the caller never holds it.
    if (injected && text !== null) text = scrub(text, x.credentials!.secrets());
    return new ToolOutput({
      data: {
        url: url.href,
        status: res.status,
        headers: res.headers,
        body: text ?? bytes.toString('base64'),
        body_encoding: text === null ? 'base64' : 'utf8',
        bytes: bytes.length,
        truncated,
        redirects,
      },
      summary: `${method} ${url.href} → ${res.status} (${bytes.length} bytes${truncated ? ', truncated' : ''})`,
      truncated,
    });
  }
}

/**
 * The client span of one exchange (each redirect is one), up to its response headers: method, host, port
 * and status — never the path, query, headers or body, which are the caller's arguments.
 */
function exchangeSpan(method: string, url: URL): ActiveSpan | undefined {
  const known = METHOD_NAMES.has(method) ? method : '_OTHER';
  return startClientSpan(known, () => ({
    'http.request.method': known,
    'a2e.hop': 'http_request',
    ...serverAttributes(url),
  }));
}

const METHOD_NAMES = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']);

/** Where a redirect leads, checked; throws when it is not followed (too many, invalid, not http). */
function nextUrl(url: URL, location: string, redirects: number, max: number): URL {
  if (redirects >= max) {
    throw new ToolError(
      `stopped after ${redirects} redirects (tools.http.max_redirects is ${max}); the last one pointed to ${location}`,
    );
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
    throw new ToolError(
      `url ${JSON.stringify(text)} is not a valid absolute URL; write it like "https://example.com/path"`,
    );
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

/** Content types whose body is shown as text (when it is valid UTF-8). */
export function isTextual(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return (
    type.startsWith('text/') ||
    /^application\/(json|xml|javascript|ecmascript|x-www-form-urlencoded|x-ndjson|ndjson|yaml|x-yaml|toml|graphql|sql)$/.test(
      type,
    ) ||
    /\+(json|xml|yaml)$/.test(type)
  );
}

/**
 * The body as text, or null when it is not valid UTF-8 (a truncated tail may end mid-character). Checked
 * by isUtf8, then decoded: what a fatal TextDecoder keeping the BOM answers, without its per-call cost.
 */
function decodeUtf8(bytes: Buffer, truncated: boolean): string | null {
  if (isUtf8(bytes)) return bytes.toString('utf8');
  if (!truncated) return null;
  for (let cut = 1; cut <= 3 && cut <= bytes.length; cut++) {
    const head = bytes.subarray(0, bytes.length - cut);
    if (isUtf8(head)) return head.toString('utf8');
  }
  return null;
}

/** A ToolError for a failed exchange, naming the host (never internal details). */
function requestError(err: unknown, url: URL, timedOutAfter: number | null): Error {
  if (err instanceof ToolError) return err;
  const refused = findRefusal(err);
  if (refused) return new ToolError(refused.message);
  if (timedOutAfter !== null)
    return new ToolError(
      `request to ${url.host} timed out after ${timedOutAfter} s; raise "timeout" if it needs longer`,
    );
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
      if (code?.startsWith('ERR_TLS') || code?.includes('CERT'))
        return new ToolError(`TLS error talking to ${url.host} (${code})`);
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
