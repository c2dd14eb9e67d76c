/**
 * A JSON answer (ending with a newline). On Node written straight to the ServerResponse with its
 * headers as one flat list, the cheapest way Node has to send a response;
 * a Hono Response (c.json) otherwise, or when middleware prepared headers
 * of its own (CORS) that must go with it.
 */
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { REQUEST_ID_HEADER } from './request.js';
import { nodeResponse } from './node.js';

/**
 * A JSON answer through Hono, ending with a newline like every answer of the
 * gateway (so a shell prompt after `curl` starts on a line of its own).
 */
export function jsonResponse(c: Context, value: unknown, status: ContentfulStatusCode = 200, headers?: Record<string, string>): Response {
  return c.body(`${JSON.stringify(value)}\n`, status, { ...headers, 'Content-Type': 'application/json' });
}

export function sendJson(c: Context, value: unknown, status: ContentfulStatusCode = 200): Response {
  return sendJsonText(c, JSON.stringify(value), status);
}

/** sendJson of a value already serialized: `json` is its JSON text (the newline is added here). */
export function sendJsonText(c: Context, json: string, status: ContentfulStatusCode = 200): Response {
  const outgoing = nodeResponse(c);
  const requestId = c.get('requestId');
  if (!outgoing || requestId === undefined || c.get('preparedHeaders')) {
    return c.body(`${json}\n`, status, { 'Content-Type': 'application/json' });
  }
  const text = `${json}\n`;
  outgoing.writeHead(status, [
    'Content-Type',
    'application/json',
    'Content-Length',
    String(Buffer.byteLength(text)),
    REQUEST_ID_HEADER,
    requestId,
  ]);
  outgoing.end(text);
  return RESPONSE_ALREADY_SENT;
}
