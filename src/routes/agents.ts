/** GET /agents: each configured A2A agent's state, tools and last error. */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { AgentsResponse, type AgentStatus } from '../protocol/index.js';
import type { AdminCheck } from './admin.js';
import { jsonResponse } from './respond.js';

const AGENTS_EXAMPLE = {
  agents: [
    {
      name: 'coder',
      card: 'https://agents.example.com/coder/.well-known/agent-card.json',
      state: 'ok',
      agent_name: 'Coder',
      dialect: '1.0',
      endpoint: 'https://agents.example.com/coder/a2a',
      streaming: true,
      tools: ['Coder_review_diff', 'Coder_write_tests'],
      skipped: [],
      last_error: null,
      last_fetched: '2024-05-19T12:00:00.000Z',
      last_attempt: '2024-05-19T12:00:00.000Z',
    },
  ],
};

export const agentsRoute = createRoute({
  method: 'get',
  path: '/agents',
  operationId: 'listAgents',
  tags: ['agents'],
  summary: 'The remote A2A agents: state, tools, skipped tools, last error',
  description: 'With auth configured, only tokens with `admin: true` may read it (others get 403).',
  responses: {
    200: {
      description: 'Every configured agent, in configuration order',
      content: { 'application/json': { schema: AgentsResponse, example: AGENTS_EXAMPLE } },
    },
  },
});

export function registerAgentRoutes(app: OpenAPIHono, deps: { agents: () => AgentStatus[]; admin?: AdminCheck }): void {
  app.openAPIRegistry.registerPath(agentsRoute);
  app.get(agentsRoute.path, (c) => {
    deps.admin?.(c, 'GET /agents');
    return jsonResponse(c, { agents: deps.agents() } satisfies AgentsResponse);
  });
}
