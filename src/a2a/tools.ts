/**
 * Tools from an agent card: one per skill, named after the card and the
 * skill, each taking one required string `task`.
 */
import type { Logger } from '../engine/index.js';
import type { ToolDefinitionInput } from '../protocol/index.js';
import { checkEndpointOrigin, fetchCard, type ResolvedCard } from './card.js';
import { AgentClient, type RunContext, type RunResult } from './client.js';
import { AgentConfig, type AgentConfigInput, type AgentDescriptor } from './config.js';
import { PeerHttp } from './http.js';
import { toolNamePart } from '../wire/tool-name.js';

/** One skill of a remote agent, as a tool. */
export interface AgentTool {
  readonly name: string;
  readonly definition: ToolDefinitionInput;
  readonly skillId: string;
  /** Run the skill; resolves with the outcome (success or not), never rejects for a remote failure. */
  execute(args: { task: string }, ctx?: RunContext): Promise<RunResult>;
}

const TASK_PARAMETER = {
  name: 'task',
  type: 'string',
  description: 'What to ask the agent to do, in plain language (sent as the text of the A2A message)',
  required: true,
} as const;

/** The tools a resolved card offers. Skills without an id or a name are left out. */
export function toolsFromCard(resolved: ResolvedCard, client: AgentClient, logger?: Logger): AgentTool[] {
  const { card } = resolved;
  const prefix = toolNamePart(card.name);
  const tools: AgentTool[] = [];
  for (const skill of card.skills) {
    const skillId = skill.id || skill.name;
    if (!skillId) {
      logger?.warn(
        { agent: client.agent.name },
        `agent "${client.agent.name}" lists a skill with neither id nor name; it is left out`,
      );
      continue;
    }
    const name = `${prefix}_${toolNamePart(skillId)}`;
    const definition: ToolDefinitionInput = {
      name,
      description: skill.description || skill.name || `Skill "${skillId}" of the A2A agent "${card.name}"`,
      input_parameters: [{ ...TASK_PARAMETER }],
      streaming: true,
      tags: [...new Set([...(skill.tags ?? []), 'a2a'])],
      version: card.version || '1.0.0',
      toolkit: card.name,
      kind: 'a2a',
    };
    tools.push({ name, definition, skillId, execute: (args, ctx) => client.run(skillId, args.task, ctx) });
  }
  return tools;
}

let sharedHttp: PeerHttp | undefined;

/**
 * Fetch an agent's card and return one tool per skill. Throws on a network
 * or parse failure (callers that want isolation catch around it). `agent` is
 * a card URL, a base URL, or an agent config.
 */
export async function agentTools(
  agent: string | (AgentConfigInput & { name?: string }),
  options: { http?: PeerHttp; logger?: Logger; signal?: AbortSignal; cardTimeoutMs?: number } = {},
): Promise<AgentTool[]> {
  const input = typeof agent === 'string' ? { card: agent } : agent;
  const { name, ...rest } = input;
  const config = AgentConfig.parse(rest);
  const http = options.http ?? (sharedHttp ??= new PeerHttp());
  const timeout = AbortSignal.timeout(options.cardTimeoutMs ?? Math.min(config.timeout_ms, 10_000));
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const resolved = await fetchCard(http, config.card, config.headers, signal);
  const descriptor: AgentDescriptor = { name: name ?? resolved.card.name, ...config };
  checkEndpointOrigin(resolved, descriptor);
  const client = new AgentClient(descriptor, resolved, http, options.logger ?? silentLogger);
  return toolsFromCard(resolved, client, options.logger);
}

const noop = () => {};
const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop, child: () => silentLogger };
