/**
 * JSON-RPC 2.0 as the MCP and A2A doors answer it and the A2A client reads it: the error codes, the error and the
 * response envelopes. Each door checks requests its own way (MCP takes batches under 2025-03-26, A2A never).
 */

export const JSONRPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  /** Also the A2A door's answer for a skill (tool) that does not exist: the nearest thing JSON-RPC and A2A have. */
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** Implementation-defined server error: the MCP door's refusals (tool_denied, rate_limited, …); data says which. */
  SERVER_ERROR: -32000,
} as const;

export type RpcId = string | number | null;

/** A JSON-RPC error: thrown where a request is refused, read from a peer's answer. */
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

export const rpcResult = (id: RpcId, result: unknown) => ({ jsonrpc: '2.0' as const, id, result });

/** An error response; id null answers a message whose id could not be read (JSON-RPC 2.0 §5). */
export const rpcErrorResponse = (id: RpcId, code: number, message: string, data?: unknown) => ({
  jsonrpc: '2.0' as const,
  id,
  error: data === undefined ? { code, message } : { code, message, data },
});

export const rpcError = (id: RpcId, err: RpcError) => rpcErrorResponse(id, err.code, err.message, err.data);
