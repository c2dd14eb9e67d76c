/** GET /agents: each configured A2A agent's state, tools and last error. */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { AgentsResponse, type AgentStatus } from '../../protocol/index.js';
import type { AdminCheck } from '../http/admin.js';
import { registerSourceStatusRoute, sourceStatusRoute } from './source-status.js';

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
} satisfies AgentsResponse;

export const agentsRoute = sourceStatusRoute({
  path: '/agents',
  operationId: 'listAgents',
  tag: 'agents',
  summary: 'The remote A2A agents: state, tools, skipped tools, last error',
  key: 'agents',
  schema: AgentsResponse,
  listDescription: 'Every configured agent, in configuration order',
  example: AGENTS_EXAMPLE,
});

export function registerAgentRoutes(app: OpenAPIHono, deps: { agents: () => AgentStatus[]; admin?: AdminCheck }): void {
  registerSourceStatusRoute(app, agentsRoute, 'agents', { list: deps.agents, admin: deps.admin });
}
