/** GET /agents: each configured A2A agent's state, tools and last error. */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { AgentsResponse, type AgentStatus } from '../protocol/index.js';

const agentsRoute = createRoute({
  method: 'get',
  path: '/agents',
  operationId: 'listAgents',
  tags: ['agents'],
  summary: 'The remote A2A agents: state, tools, skipped tools, last error',
  responses: {
    200: { description: 'Every configured agent, in configuration order', content: { 'application/json': { schema: AgentsResponse } } },
  },
});

export function registerAgentRoutes(app: OpenAPIHono, deps: { agents: () => AgentStatus[] }): void {
  app.openAPIRegistry.registerPath(agentsRoute);
  app.get(agentsRoute.path, (c) => c.json({ agents: deps.agents() } satisfies AgentsResponse));
}
