/**
 * The few MCP protocol facts the door needs at run time, without loading the
 * MCP SDK's schema module (hundreds of zod schemas built at import: a cost
 * every gateway and CLI start would pay). The SDK's types are used for type
 * checking; test/mcp-server/mcp-server.test.ts keeps these in step with the SDK and
 * checks the door's answers against the SDK's own schemas.
 */

/** Protocol versions the door speaks, newest first (the SDK's SUPPORTED_PROTOCOL_VERSIONS). */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [
  '2025-11-25',
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
  '2024-10-07',
];
export const LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[0]!;

/** Messages one JSON-RPC batch may hold (each still a request of its own: the body limit covers the whole batch). */
export const MAX_BATCH_MESSAGES = 50;

/** JSON-RPC batches: required by 2025-03-26 (the version assumed when none is named), removed in 2025-06-18. */
export function batchesAllowed(protocolVersion: string | undefined): boolean {
  return (protocolVersion ?? '2025-03-26') <= '2025-03-26';
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** What is wrong with `initialize` params, or undefined; the protocol version the client asked for. */
export function checkInitialize(params: Record<string, unknown>): { problem?: string; version: string } {
  const { protocolVersion, capabilities, clientInfo } = params;
  if (typeof protocolVersion !== 'string')
    return { problem: 'params.protocolVersion: required string is missing', version: '' };
  if (!isObject(capabilities))
    return { problem: 'params.capabilities: required object is missing', version: protocolVersion };
  if (!isObject(clientInfo) || typeof clientInfo.name !== 'string' || typeof clientInfo.version !== 'string') {
    return { problem: 'params.clientInfo: required object with string "name" and "version"', version: protocolVersion };
  }
  return { version: protocolVersion };
}

/** The cursor of `tools/list` params (undefined when absent); throws a message when it is not a string. */
export function cursorOf(params: Record<string, unknown>): string | undefined {
  const { cursor } = params;
  if (cursor === undefined) return undefined;
  if (typeof cursor !== 'string') throw new TypeError('params.cursor: expected string');
  return cursor;
}
