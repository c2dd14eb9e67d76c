/**
 * The gateway's OpenAPI document for a config, from the route specs alone:
 * nothing is built, started or listened on (tools do not appear in it).
 */
import type { GatewayConfig } from './config/index.js';
import { documentOfRoutes, type OpenApiDocument } from './routes/openapi/document.js';
import { routeSpecs } from './routes/table.js';
import { VERSION } from './version.js';

export function openApiFor(config: GatewayConfig): OpenApiDocument {
  const routes = routeSpecs({ mcp: config.mcp.serve.enabled, transport: config.transport });
  return documentOfRoutes(routes, VERSION, config.server.base_path);
}
