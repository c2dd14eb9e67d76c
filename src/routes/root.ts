/**
 * GET /: what someone typing the gateway's address finds. A browser (it asks
 * for text/html) is sent to the interactive docs; anything else gets a short
 * JSON index of where to go. Not part of the API, so not in the OpenAPI document.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { jsonResponse } from './http/respond.js';

export function registerRootRoute(app: OpenAPIHono, deps: { basePath: string; version: string }): void {
  const base = deps.basePath;
  const index = {
    name: 'a2e-gateway',
    version: deps.version,
    docs: `${base}/docs`,
    openapi: `${base}/openapi.json`,
    health: `${base}/healthz`,
    ready: `${base}/readyz`,
    tools: `POST ${base}/tool/list`,
    call: `POST ${base}/tool/call`,
  };
  app.get('/', (c) => {
    if (c.req.header('accept')?.includes('text/html')) return c.redirect(`${base}/docs`, 302);
    return jsonResponse(c, index);
  });
}
