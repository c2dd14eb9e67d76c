/**
 * GET /: what someone typing the gateway's address finds. A browser (it asks
 * for text/html) is sent to the interactive docs; anything else gets a short
 * JSON index of where to go. Not part of the API, so not in the OpenAPI document.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { jsonResponse } from '../http/respond.js';

export interface RootDeps {
  basePath: string;
  version: string;
  /** Which optional doors are on: each that is gets its line in the index. */
  ui: boolean;
  mcp: boolean;
  a2a: boolean;
}

export function registerRootRoute(app: OpenAPIHono, deps: RootDeps): void {
  const base = deps.basePath;
  const index = {
    name: 'a2e-gateway',
    version: deps.version,
    ...(deps.ui && { console: `${base}/ui` }),
    docs: `${base}/docs`,
    openapi: `${base}/openapi.json`,
    health: `${base}/healthz`,
    ready: `${base}/readyz`,
    tools: `POST ${base}/tool/list`,
    call: `POST ${base}/tool/call`,
    ...(deps.mcp && { mcp: `POST ${base}/mcp` }),
    ...(deps.a2a && { a2a_agent_card: `${base}/.well-known/agent-card.json` }),
  };
  app.get('/', (c) => {
    if (c.req.header('accept')?.includes('text/html')) return c.redirect(`${base}/docs`, 302);
    return jsonResponse(c, index);
  });
}
