/**
 * JSON-RPC 2.0 as A2A uses it: the request envelope, the error codes, and
 * how the gateway's own errors become JSON-RPC errors.
 */
import { GatewayError } from '../engine/index.js';

export const RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  /** Also the answer for a skill (tool) that does not exist: the nearest thing JSON-RPC and A2A have. */
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  TASK_NOT_FOUND: -32001,
  TASK_NOT_CANCELABLE: -32002,
  PUSH_NOTIFICATION_NOT_SUPPORTED: -32003,
  UNSUPPORTED_OPERATION: -32004,
  EXTENDED_CARD_NOT_CONFIGURED: -32007,
} as const;

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

export type RpcId = string | number | null;

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
  if (typeof r.method !== 'string' || !r.method) throw new RpcError(RPC.INVALID_REQUEST, 'the request must name its "method"');
  if (id !== undefined && id !== null && typeof id !== 'string' && typeof id !== 'number') {
    throw new RpcError(RPC.INVALID_REQUEST, '"id" must be a string, a number or null');
  }
  const params = r.params ?? {};
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    throw new RpcError(RPC.INVALID_PARAMS, `"params" of ${r.method} must be an object`);
  }
  return { id: (id ?? null) as RpcId, method: r.method, params: params as Record<string, unknown> };
}

export const rpcResult = (id: RpcId, result: unknown) => ({ jsonrpc: '2.0' as const, id, result });

export const rpcError = (id: RpcId, err: RpcError) => ({
  jsonrpc: '2.0' as const,
  id,
  error: err.data === undefined ? { code: err.code, message: err.message } : { code: err.code, message: err.message, data: err.data },
});

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
  return new RpcError(RPC.INTERNAL_ERROR, 'internal error in the gateway; it was logged. Retry, or report it if it persists');
}
