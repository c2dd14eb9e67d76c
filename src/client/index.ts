/**
 * `a2e-gateway/client`: talk to an a2e-gateway from Node or a browser.
 *   ToolAPI        — list, search, call (with live events), handshake
 *   paths, components — the types generated from the OpenAPI document, for openapi-fetch
 */
export {
  ToolAPI,
  ToolAPIError,
  type ToolAPIOptions,
  type ListOptions,
  type CallOptions,
  type ToolDefinition,
  type ToolEvent,
  type ToolResult,
  type ErrorMessage,
  type HandshakeRequest,
  type HandshakeResponse,
} from './tool-api.js';
export type { paths, components, operations } from './schema.js';
