import { z } from 'zod';
import { contributedTools, isoTimeOrNull, lastError, sourceStatusList } from './source-status.js';

/** One configured A2A agent's health, as GET /agents reports it. */
export const AgentStatus = z
  .object({
    name: z.string().meta({ description: 'The agent identifier from the config (agents.<name>)' }),
    card: z.string().meta({ description: 'The configured card URL (or base URL)' }),
    state: z.enum(['ok', 'failed', 'loading', 'disabled']).meta({
      description:
        'ok: the last card fetch worked; failed: it did not (see last_error); loading: the first fetch is running',
    }),
    agent_name: z.string().nullable().meta({ description: "The card's name (the prefix of the tool names)" }),
    dialect: z.enum(['1.0', '0.3']).nullable().meta({ description: 'A2A protocol dialect in use' }),
    endpoint: z.string().nullable().meta({ description: 'JSON-RPC endpoint the calls go to' }),
    streaming: z.boolean().meta({ description: 'Whether the card offers streaming' }),
    tools: contributedTools('Tools this agent currently contributes'),
    skipped: z
      .array(z.object({ tool: z.string(), kept_by: z.string().meta({ description: 'Who offers that name instead' }) }))
      .meta({
        description: 'Tools left out because a native tool, another plugin or an earlier-configured agent has the name',
      }),
    last_error: lastError('Why the last card fetch failed'),
    last_fetched: isoTimeOrNull('When the card was last fetched successfully (ISO 8601)'),
    last_attempt: isoTimeOrNull('When the card was last tried (ISO 8601)'),
  })
  .meta({ id: 'AgentStatus', description: "A remote A2A agent's health and tools" });
export type AgentStatus = z.output<typeof AgentStatus>;

export const AgentsResponse = sourceStatusList('agents', AgentStatus, {
  id: 'AgentsResponse',
  description: 'Every configured A2A agent, in configuration order',
});
export type AgentsResponse = z.output<typeof AgentsResponse>;
