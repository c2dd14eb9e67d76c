/** A2A agents as tools: every skill of a remote agent becomes a tool. */
export {
  A2AConfig,
  AgentConfig,
  AgentsConfig,
  parseAgentsConfig,
  type AgentDescriptor,
  type AgentConfigInput,
} from './config.js';
export { agentTools, type AgentTool } from './tools.js';
export { A2APlugin, a2aPlugin, A2A_PLUGIN_NAME } from './plugin.js';
export type { RunContext, RunResult, RunMetadata } from './client.js';
export type { Artifact } from '../wire/a2a.js';
