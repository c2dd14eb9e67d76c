/** The one place where errors become HTTP responses. */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { GatewayError } from '../engine/index.js';
import { PROTOCOL_VERSION, newId, nowTs, type ErrorCode, type ErrorMessage } from '../protocol/index.js';
import { jsonResponse } from './respond.js';

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

/** The A2E error message for `err` (unexpected errors become a generic `internal`). */
export function errorMessage(err: GatewayError, reqId = ''): ErrorMessage {
  return {
    type: 'error',
    id: newId(),
    version: PROTOCOL_VERSION,
    ts: nowTs(),
    req_id: reqId,
    code: err.code,
    message: err.message,
    detail: err.detail,
    retryable: err.retryable,
  };
}

/** Anything thrown → GatewayError; unknown errors are logged by the caller and hidden from the client. */
export function asGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return new GatewayError('internal', 'internal error in the gateway; it was logged. Retry, or report it if it persists', {
    retryable: true,
  });
}

export function errorResponse(c: Context, err: GatewayError, reqId = ''): Response {
  const headers: Record<string, string> = {};
  if (err.code === 'unauthorized') headers['WWW-Authenticate'] = 'Bearer realm="a2e-gateway"';
  if (err.code === 'method_not_allowed' && typeof err.detail?.allow === 'string') headers.Allow = err.detail.allow;
  if (err.code === 'unavailable' || err.code === 'rate_limited') {
    const after = err.detail?.retry_after_s;
    if (typeof after === 'number') headers['Retry-After'] = String(Math.ceil(after));
  }
  return jsonResponse(c, errorMessage(err, reqId), STATUS_BY_CODE[err.code], headers);
}
