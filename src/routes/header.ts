/**
 * Request headers read straight from Node's IncomingMessage when the app
 * runs on @hono/node-server: `c.req.header()` there first builds a whole
 * web `Headers` object from the raw headers, a cost every call would pay
 * for the three or four headers the gateway reads. Elsewhere (tests with
 * app.request, other runtimes) it falls back to `c.req.header()`.
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';

/** One request header (lower-case name), or undefined; repeated headers joined with ", " like `Headers.get`. */
export function requestHeader(c: Context, name: string): string | undefined {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming === undefined) return c.req.header(name);
  const value = incoming.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}
