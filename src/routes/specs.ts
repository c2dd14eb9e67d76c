/**
 * Every route's OpenAPI spec, in the order createApp registers them (the
 * document's order), so the document can be built without building an app.
 * test/openapi.test.ts checks the list against the routes a real app declares.
 */
import type { RouteConfig } from '@hono/zod-openapi';
import type { TransportConfig } from '../transport/a2e-http/index.js';
import { adminEventsRoute } from './admin-events.js';
import { agentsRoute } from './agents.js';
import { transportRoutes } from './openapi/a2e-transport.js';
import { callEventsRoute, cancelCallRoute, getCallRoute, startCallRoute } from './openapi/calls.js';
import { docsRoute, healthRoute, openapiRoute } from './docs.js';
import { handshakeRoute } from './handshake.js';
import { mcpRoute, mcpStreamRoute } from './openapi/mcp.js';
import { mcpServersRoute } from './mcp-servers.js';
import { sourcesRoute } from './sources.js';
import { metricsRoute } from './metrics.js';
import { readyRoute } from './ready.js';
import { reloadRoute } from './reload.js';
import { callRoute, listRoute } from './openapi/tools.js';
import { uiRoute } from './ui.js';

export interface RouteSpecOptions {
  /** `mcp.serve.enabled`: POST /mcp is served. */
  mcp: boolean;
  /** `transport`: A2E's own HTTP message transport, under its path when enabled. */
  transport: TransportConfig;
}

export function routeSpecs(options: RouteSpecOptions): RouteConfig[] {
  const specs: RouteConfig[] = [
    listRoute,
    callRoute,
    handshakeRoute,
    startCallRoute,
    getCallRoute,
    cancelCallRoute,
    callEventsRoute,
    adminEventsRoute,
    uiRoute,
    agentsRoute,
    mcpServersRoute,
    sourcesRoute,
    reloadRoute,
    readyRoute,
  ];
  if (options.mcp) specs.push(mcpRoute, mcpStreamRoute);
  specs.push(metricsRoute, healthRoute, openapiRoute, docsRoute);
  if (options.transport.enabled) {
    const t = transportRoutes(options.transport.path);
    specs.push(t.session, t.send, t.stream, t.health);
  }
  return specs;
}
