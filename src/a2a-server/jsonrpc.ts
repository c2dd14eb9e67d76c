/**
 * JSON-RPC 2.0 as the A2A door takes it: the request envelope, and how the gateway's own errors become JSON-RPC
 * errors (codes, error and responses are src/wire's).
 */
import { GatewayError } from '../engine/index.js';
import { A2A_ERRORS } from '../wire/a2a.js';
import { JSONRPC, RpcError, type RpcId } from '../wire/jsonrpc.js';

/** The codes the A2A door answers with: JSON-RPC's and A2A's own. */
export const RPC = { ...JSONRPC, ...A2A_ERRORS } as const;

export interface RpcRequest {
  id: RpcId;
  method: string;
  params: Record<string, unknown>;
}

/** Check the envelope of a parsed JSON-RPC request; throws RpcError saying what is wrong. */
export function parseRpcRequest(json: unknown): RpcRequest {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new RpcError(RPC.INVALID_REQUEST, 'the request must be one JSON-RPC 2.0 object (batches are not supported)');
  }
  const r = json as Record<string, unknown>;
  const id = r.id;
  if (r.jsonrpc !== '2.0') throw new RpcError(RPC.INVALID_REQUEST, 'the request must have "jsonrpc": "2.0"');
  if (typeof r.method !== 'string' || !r.method)
    throw new RpcError(RPC.INVALID_REQUEST, 'the request must name its "method"');
  if (id !== undefined && id !== null && typeof id !== 'string' && typeof id !== 'number') {
    throw new RpcError(RPC.INVALID_REQUEST, '"id" must be a string, a number or null');
  }
  const params = r.params ?? {};
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    throw new RpcError(RPC.INVALID_PARAMS, `"params" of ${r.method} must be an object`);
  }
  return { id: (id ?? null) as RpcId, method: r.method, params: params as Record<string, unknown> };
}

/** The gateway's refusals (from the engine, the body reader, the caller checks) as JSON-RPC errors. */
export function asRpcError(err: unknown): RpcError {
  if (err instanceof RpcError) return err;
  if (err instanceof GatewayError) {
    const data = { code: err.code, ...(err.detail ?? {}) };
    switch (err.code) {
      case 'invalid_arguments':
        return new RpcError(RPC.INVALID_PARAMS, err.message, data);
      case 'unknown_tool':
        return new RpcError(RPC.METHOD_NOT_FOUND, err.message, data);
      case 'invalid_request':
      case 'payload_too_large':
        return new RpcError(RPC.INVALID_REQUEST, err.message, data);
      case 'rate_limited':
      case 'unavailable':
      case 'internal':
        return new RpcError(RPC.INTERNAL_ERROR, err.message, { ...data, retryable: err.retryable });
      default:
        // tool_denied, unauthorized, rate_limited, unavailable, …: the gateway's code goes in data.code.
        return new RpcError(RPC.INVALID_REQUEST, err.message, { ...data, retryable: err.retryable });
    }
  }
  return new RpcError(
    RPC.INTERNAL_ERROR,
    'internal error in the gateway; it was logged. Retry, or report it if it persists',
  );
}
