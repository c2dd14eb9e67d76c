/**
 * Node's own request and response behind a Hono context, when the app runs
 * on @hono/node-server (undefined elsewhere: app.request in tests, other
 * runtimes). The hot path reads and writes them directly: going through the
 * web Request/Response makes a Headers object, a body copy or a Response per
 * request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'hono';

type NodeEnv = { incoming?: IncomingMessage; outgoing?: ServerResponse } | undefined;

export const nodeRequest = (c: Context): IncomingMessage | undefined => (c.env as NodeEnv)?.incoming;
export const nodeResponse = (c: Context): ServerResponse | undefined => (c.env as NodeEnv)?.outgoing;

/**
 * One request header (lower-case name), or undefined; repeated headers
 * joined with ", " like `Headers.get`. On Node from `IncomingMessage.headers`:
 * `c.req.header()` there first builds a whole web `Headers` object.
 */
export function requestHeader(c: Context, name: string): string | undefined {
  const incoming = nodeRequest(c);
  if (incoming === undefined) return c.req.header(name);
  const value = incoming.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}
