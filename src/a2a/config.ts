/**
 * Configuration of the A2A agents: the `agents` section (one entry per remote
 * agent) and the `a2a` section (settings shared by all of them).
 */
import { z } from 'zod';
import { formatProblems, toProblems } from '../protocol/index.js';
import type { Credential } from '../security/credential.js';
import { CredentialConfig } from '../security/credential-config.js';

/** One remote A2A agent. */
export const AgentConfig = z.strictObject({
  /** URL of the agent card, or a base URL to discover it under (/.well-known/agent-card.json). */
  card: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL of the agent card or of the agent' }),
  /** Sent on the card fetch and on every call (values are never logged). */
  headers: z.record(z.string(), z.string()).default(() => ({})),
  /**
   * A credential the gateway adds to the card fetch and every call (as openapi.sources.<id>.auth; a header kind:
   * `query` is not offered, the card's discovery builds its own URLs). It follows the same origin rule as `headers`.
   */
  auth: CredentialConfig.refine((a) => a.type !== 'query', {
    message: 'an agent takes a header credential (bearer, header, basic, oauth2_client_credentials), not "query"',
  }).optional(),
  /** Longest a call may run on this agent, ms; the call's own timeout still applies when it is shorter. */
  timeout_ms: z.int().positive().default(300_000),
  /** Longest pause between two polls of a running remote task, ms (polling starts faster and backs off to this). */
  poll_ms: z.int().positive().default(1000),
  /**
   * How calls follow a remote task: `auto` uses the peer's streaming method when its card offers it (one
   * request that ends with the task) and polls otherwise; `poll` always sends, then polls GetTask.
   */
  mode: z.enum(['auto', 'poll']).default('auto'),
  /**
   * Call a JSON-RPC endpoint the card names on another origin than the card's own (and send it `headers`).
   * Off by default: a card could otherwise point the gateway's requests, and the agent's credentials,
   * anywhere; such an agent then fails to load, saying so.
   */
  cross_origin: z.boolean().optional(),
  /** The older name of `cross_origin` (kept working): true allows a cross-origin endpoint too. */
  cross_origin_headers: z.boolean().default(false),
  /** Load this agent and offer its skills (a disabled agent is listed in GET /agents, not contacted). */
  enabled: z.boolean().default(true),
});
export type AgentConfig = z.output<typeof AgentConfig>;
export type AgentConfigInput = z.input<typeof AgentConfig>;

/** The `agents` section: agent identifier → agent. The identifier names the agent in logs and GET /agents only. */
export const AgentsConfig = z.record(z.string().min(1), AgentConfig);
export type AgentsConfig = z.output<typeof AgentsConfig>;

/** The `a2a` section: settings shared by every agent. */
export const A2AConfig = z.strictObject({
  /** Re-fetch every agent card this often, seconds (a peer that was down gains its tools; changed skills are updated). */
  refresh_s: z.number().positive().default(300),
  /** Longest the gateway waits for agent cards at start before it listens, ms; slower agents join when they answer. */
  start_wait_ms: z.int().min(0).default(2000),
  /** Longest one card fetch may take, ms. */
  card_timeout_ms: z.int().positive().default(10_000),
  /**
   * Largest answer read from an agent, bytes: a card, a JSON-RPC answer, each event of a stream; counted before it
   * is buffered. A larger one fails the call (or the card fetch), saying so.
   */
  max_message_bytes: z
    .int()
    .min(1024)
    .default(16 * 1024 * 1024),
});
export type A2AConfig = z.output<typeof A2AConfig>;

/** A configured agent with its identifier. */
export interface AgentDescriptor extends AgentConfig {
  name: string;
  /** `auth`, ready to inject (the plugin makes it from the environment), or why it cannot be (an unset variable). */
  credential?: Credential | Error | null;
}

/** `agent.headers` with its credential set (when it has one). */
export async function agentHeaders(
  agent: AgentDescriptor,
  base: Record<string, string> = agent.headers,
): Promise<Record<string, string>> {
  if (!agent.credential) return base;
  if (agent.credential instanceof Error) throw agent.credential;
  const headers = { ...base };
  await agent.credential.apply(headers, new URL(agent.card));
  return headers;
}

/**
 * Parse a whole `agents` block (identifier → agent) into descriptors, in
 * configuration order. Throws an Error naming each bad key.
 */
export function parseAgentsConfig(obj: unknown): AgentDescriptor[] {
  const r = AgentsConfig.safeParse(obj ?? {});
  if (!r.success) throw new Error(`invalid agents config: ${formatProblems(toProblems(r.error.issues))}`);
  return Object.entries(r.data).map(([name, agent]) => ({ name, ...agent }));
}
