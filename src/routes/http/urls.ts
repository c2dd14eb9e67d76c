/**
 * URLs the gateway hands out (Location, events_url, …). They carry
 * `server.base_path`, and behind a trusted proxy its X-Forwarded-Proto and
 * X-Forwarded-Host, so a client outside the proxy can follow them.
 */
import type { Context } from 'hono';
import { requestHeader } from './node.js';
import type { ProxyTrust } from './proxy-trust.js';

export interface PublicUrlOptions {
  /** "" or a path such as "/a2e" (no trailing slash). */
  basePath: string;
  /** `server.trust_proxy`: X-Forwarded-Proto / X-Forwarded-Host are used when the request came through a trusted proxy. */
  proxies: ProxyTrust;
}

// host, host:port, [v6]:port — anything else in a header is ignored rather than echoed into URLs.
const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** First value of a possibly comma-separated (multi-proxy) header. */
function firstValue(header: string | undefined): string | undefined {
  const v = header?.split(',')[0]?.trim();
  return v ? v : undefined;
}

/** The origin clients reach this gateway at, e.g. "https://tools.example.com". */
export function publicOrigin(c: Context, options: PublicUrlOptions): string {
  const own = new URL(c.req.url);
  let proto = own.protocol.slice(0, -1);
  let host = own.host;
  if (options.proxies.trusted(c)) {
    const fProto = firstValue(requestHeader(c, 'x-forwarded-proto'))?.toLowerCase();
    if (fProto === 'http' || fProto === 'https') proto = fProto;
    const fHost = firstValue(requestHeader(c, 'x-forwarded-host'));
    if (fHost && HOST.test(fHost)) host = fHost;
  }
  return `${proto}://${host}`;
}

/** Absolute public URL of a gateway path (`path` without the base path, e.g. "/tool/calls/…"). */
export function publicUrl(c: Context, options: PublicUrlOptions, path: string): string {
  return `${publicOrigin(c, options)}${options.basePath}${path}`;
}
