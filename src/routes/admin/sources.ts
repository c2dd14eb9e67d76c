/** GET /sources: every tool source in one shape (health, tool count, last refresh, last error). */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { SourcesResponse, type SourceStatus } from '../../protocol/index.js';
import type { AdminCheck } from '../http/admin.js';
import { registerSourceStatusRoute, sourceStatusRoute } from './source-status.js';

const EXAMPLE = {
  sources: [
    { id: 'fs', kind: 'native', health: 'ok', tool_count: 6, last_refresh: null, last_error: null },
    {
      id: 'petstore',
      kind: 'openapi',
      health: 'ok',
      tool_count: 3,
      last_refresh: '2024-05-19T12:00:00.000Z',
      last_error: null,
    },
    {
      id: 'billing',
      kind: 'openapi',
      health: 'failed',
      tool_count: 0,
      last_refresh: null,
      last_error:
        'the OpenAPI document could not be loaded: GET api.example.com/openapi.json answered 503; check the spec URL',
    },
  ],
} satisfies SourcesResponse;

export const sourcesRoute = sourceStatusRoute({
  path: '/sources',
  operationId: 'listSources',
  tag: 'sources',
  summary:
    'Every tool source (native groups, plugins, A2A agents, MCP servers, OpenAPI documents): health, tools, last error',
  key: 'sources',
  schema: SourcesResponse,
  listDescription: 'Every tool source',
  example: EXAMPLE,
});

export function registerSourcesRoute(
  app: OpenAPIHono,
  deps: { sources: () => SourceStatus[]; admin?: AdminCheck },
): void {
  registerSourceStatusRoute(app, sourcesRoute, 'sources', { list: deps.sources, admin: deps.admin });
}
