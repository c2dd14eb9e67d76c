/** The one place where errors become HTTP responses. */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { GatewayError, TOOLS_CAPABILITY, errorMessage } from '../../engine/index.js';
import type { ErrorCode } from '../../protocol/index.js';
import { jsonResponse } from './respond.js';

// The mapping to the A2E message is the engine's (every door uses it); this file adds the HTTP side.
export { asGatewayError, errorMessage } from '../../engine/index.js';

export const STATUS_BY_CODE: Record<ErrorCode, ContentfulStatusCode> = {
  invalid_request: 400,
  unauthorized: 401,
  tool_denied: 403,
  forbidden: 403,
  unknown_tool: 404,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  invalid_arguments: 422,
  rate_limited: 429,
  internal: 500,
  tool_error: 500,
  unavailable: 503,
};

/** The id the request's JSON body carried (set once it is read), echoed as `req_id` in its error. */
declare module 'hono' {
  interface ContextVariableMap {
    messageId: string;
  }
}

// Tool messages: /tool/list, /tool/call, /tool/calls… (after any base path).
const TOOL_ROUTE = /\/tool\/(list|call|calls)(\/|$)/;

export function errorResponse(c: Context, err: GatewayError, reqId: string = c.get('messageId') ?? ''): Response {
  const capability = TOOL_ROUTE.test(c.req.path) ? TOOLS_CAPABILITY : '';
  const headers: Record<string, string> = {};
  if (err.code === 'unauthorized') headers['WWW-Authenticate'] = 'Bearer realm="a2e-gateway"';
  if (err.code === 'method_not_allowed' && typeof err.detail?.allow === 'string') headers.Allow = err.detail.allow;
  if (err.code === 'unavailable' || err.code === 'rate_limited') {
    const after = err.detail?.retry_after_s;
    if (typeof after === 'number') headers['Retry-After'] = String(Math.ceil(after));
  }
  return jsonResponse(c, errorMessage(err, reqId, capability), STATUS_BY_CODE[err.code], headers);
}
