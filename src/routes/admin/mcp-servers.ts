/** GET /mcp-servers: each configured MCP server's state, tools and last error. */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { McpServersResponse, type McpServerStatus } from '../../protocol/index.js';
import type { AdminCheck } from '../http/admin.js';
import { registerSourceStatusRoute, sourceStatusRoute } from './source-status.js';

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
} satisfies McpServersResponse;

export const mcpServersRoute = sourceStatusRoute({
  path: '/mcp-servers',
  operationId: 'listMcpServers',
  tag: 'mcp',
  summary: 'The MCP servers whose tools the gateway offers: state, transport, tools, last error',
  key: 'servers',
  schema: McpServersResponse,
  listDescription: 'Every configured MCP server, in configuration order',
  example: EXAMPLE,
});

export function registerMcpServersRoute(
  app: OpenAPIHono,
  deps: { servers: () => McpServerStatus[]; admin?: AdminCheck },
): void {
  registerSourceStatusRoute(app, mcpServersRoute, 'servers', { list: deps.servers, admin: deps.admin });
}
