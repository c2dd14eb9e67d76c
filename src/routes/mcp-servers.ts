/** GET /mcp-servers: each configured MCP server's state, tools and last error. */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { McpServersResponse, type McpServerStatus } from '../protocol/index.js';
import type { AdminCheck } from './admin.js';

const EXAMPLE = {
  servers: [
    {
      id: 'everything',
      transport: 'stdio',
      sandboxed: true,
      target: 'mcp-server-everything',
      state: 'ready',
      server_name: 'mcp-servers/everything',
      pid: 4242,
      tools: ['everything_echo', 'everything_get-sum'],
      skipped: [],
      restarts: 0,
      last_error: null,
      last_started: '2024-05-19T12:00:00.000Z',
    },
  ],
};

export const mcpServersRoute = createRoute({
  method: 'get',
  path: '/mcp-servers',
  operationId: 'listMcpServers',
  tags: ['mcp'],
  summary: 'The MCP servers whose tools the gateway offers: state, transport, tools, last error',
  responses: {
    200: {
      description: 'Every configured MCP server, in configuration order',
      content: { 'application/json': { schema: McpServersResponse, example: EXAMPLE } },
    },
  },
});

export function registerMcpServersRoute(app: OpenAPIHono, deps: { servers: () => McpServerStatus[]; admin?: AdminCheck }): void {
  app.openAPIRegistry.registerPath(mcpServersRoute);
  app.get(mcpServersRoute.path, (c) => {
    // Like GET /agents: commands, URLs and tool names are for operators (auth.tokens[].admin) when auth is on.
    deps.admin?.(c, 'GET /mcp-servers');
    return c.json({ servers: deps.servers() } satisfies McpServersResponse);
  });
}
