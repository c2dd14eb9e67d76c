/**
 * The `fetch` the MCP SDK's Streamable HTTP client transport is given: undici's
 * request() on a keep-alive pool, answered as a standard Response. The global
 * fetch costs two to three times the CPU per request (WHATWG streams end to
 * end), and every call to an MCP server over HTTP pays it. The body is passed
 * on as a stream, so an SSE answer's events arrive as they are sent.
 * Redirects are not followed here: the SDK follows those within the server's
 * origin itself (it asks for `redirect: 'manual'`).
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { Agent, request, type Dispatcher } from 'undici';

/** Statuses whose Response may not have a body. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

let pool: Agent | undefined;

export const mcpFetch: FetchLike = async (url, init = {}) => {
  // One pool for every MCP server over HTTP; idle connections do not keep the process alive.
  pool ??= new Agent();
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((value, key) => (headers[key] = value));
  const res = await request(url, {
    method: (init.method ?? 'GET') as Dispatcher.HttpMethod,
    headers,
    body: init.body as string | undefined,
    signal: init.signal ?? undefined,
    dispatcher: pool,
  });
  const out = new Headers();
  for (const [key, value] of Object.entries(res.headers)) {
    if (Array.isArray(value)) for (const v of value) out.append(key, v);
    else if (value !== undefined) out.set(key, value);
  }
  if (NULL_BODY.has(res.statusCode)) {
    res.body.resume();
    return new Response(null, { status: res.statusCode, headers: out });
  }
  return new Response(res.body as unknown as ReadableStream, { status: res.statusCode, headers: out });
};
