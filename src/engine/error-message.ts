/**
 * A GatewayError as the A2E error message, the same on every door (REST,
 * SSE, the A2E transport): the request's id echoed, `capability_name`
 * "tools" for tool messages, `detail` an object ({} when there is none).
 */
import { PROTOCOL_VERSION, newId, nowTs, type ErrorMessage } from '../protocol/index.js';
import { GatewayError } from './errors.js';

/** The capability a tool message belongs to (`capability_name` of its error). */
export const TOOLS_CAPABILITY = 'tools';

/** The A2E error message for `err`; `reqId` is the failed request's id, `capabilityName` "tools" for tool messages. */
export function errorMessage(err: GatewayError, reqId = '', capabilityName = ''): ErrorMessage {
  return {
    type: 'error',
    id: newId(),
    version: PROTOCOL_VERSION,
    ts: nowTs(),
    req_id: reqId,
    capability_name: capabilityName,
    code: err.code,
    message: err.message,
    detail: err.detail ?? {},
    retryable: err.retryable,
  };
}

/** Anything thrown → GatewayError; unknown errors are logged by the caller and hidden from the client. */
export function asGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return new GatewayError(
    'internal',
    'internal error in the gateway; it was logged. Retry, or report it if it persists',
    {
      retryable: true,
    },
  );
}
