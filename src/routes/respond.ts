/**
 * A JSON answer. On Node written straight to the ServerResponse with its
 * headers as one flat list, the cheapest way Node has to send a response;
 * a Hono Response (c.json) otherwise, or when middleware prepared headers
 * of its own (CORS) that must go with it.
 */
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { REQUEST_ID_HEADER } from './request.js';
import { nodeResponse } from './node.js';

export function sendJson(c: Context, value: unknown, status: ContentfulStatusCode = 200): Response {
  const outgoing = nodeResponse(c);
  const requestId = c.get('requestId');
  if (!outgoing || requestId === undefined || c.get('preparedHeaders')) return c.json(value, status);
  const text = JSON.stringify(value);
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
