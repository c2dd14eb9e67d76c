/**
 * A JSON answer (ending with a newline). On Node a Response of
 * @hono/node-server's own (a string body and a plain header record, which it
 * writes to the ServerResponse as they are, with no web Headers object); a
 * Hono Response (c.json) otherwise, or when middleware prepared headers of
 * its own (CORS) that must go with it.
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { REQUEST_ID_HEADER } from './request.js';
import { nodeResponse } from './node.js';

/**
 * A JSON answer through Hono, ending with a newline like every answer of the
 * gateway (so a shell prompt after `curl` starts on a line of its own).
 */
export function jsonResponse(
  c: Context,
  value: unknown,
  status: ContentfulStatusCode = 200,
  headers?: Record<string, string>,
): Response {
  return c.body(`${JSON.stringify(value)}\n`, status, { ...headers, 'Content-Type': 'application/json' });
}

export function sendJson(c: Context, value: unknown, status: ContentfulStatusCode = 200): Response {
  return sendJsonText(c, JSON.stringify(value), status);
}

/** sendJson of a value already serialized: `json` is its JSON text (the newline is added here). */
export function sendJsonText(c: Context, json: string, status: ContentfulStatusCode = 200): Response {
  return sendJsonBody(c, `${json}\n`, status);
}

/**
 * A JSON answer whose body is ready: its text, or its UTF-8 bytes, ending with the newline.
 *
 * @example
 * return sendJsonBody(c, call.responseJson('\n')!);
 */
export function sendJsonBody(
  c: Context,
  body: string | Uint8Array<ArrayBuffer>,
  status: ContentfulStatusCode = 200,
): Response {
  const requestId = c.get('requestId');
  if (!nodeResponse(c) || requestId === undefined || c.get('preparedHeaders')) {
    return c.body(body, status, { 'Content-Type': 'application/json' });
  }
  // With the request id already: the request context adds it to other answers through their (web) Headers.
  c.set('requestIdSent', true);
  // `Response` is @hono/node-server's while it serves (it replaces the global): this one it writes with
  // writeHead(status, record) and end(body), its cheapest path. (Writing to the ServerResponse here and
  // returning RESPONSE_ALREADY_SENT made it read that marker's web Headers on every request.)
  return new Response(body, {
    status,
    headers: { 'Content-Type': 'application/json', [REQUEST_ID_HEADER]: requestId },
  });
}
