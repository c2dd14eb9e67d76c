/**
 * The gateway's own agent card: one skill per tool the caller may call.
 * One document both generations of clients read: A2A 1.0's
 * `supportedInterfaces` (the endpoint speaks 1.0 and 0.3, chosen per request
 * by the A2A-Version header) and 0.3's `url`, `preferredTransport` and
 * `protocolVersion`. The bearer scheme is written so both readers find it
 * (1.0's `httpAuthSecurityScheme`, 0.3's `type`/`scheme`).
 */
import type { ToolDefinition } from '../protocol/index.js';
import type { A2AServerConfig } from './config.js';

export interface CardOptions {
  config: A2AServerConfig;
  /** Gateway version. */
  version: string;
  /** Public URL of the JSON-RPC endpoint. */
  endpoint: string;
  /** The tools the caller may call. */
  tools: readonly ToolDefinition[];
  /** Whether the gateway requires a bearer token. */
  bearer: boolean;
}

const MODES = ['application/json', 'text/plain'];

export function agentCard({ config, version, endpoint, tools, bearer }: CardOptions): Record<string, unknown> {
  const card: Record<string, unknown> = {
    name: config.name,
    description: config.description,
    version,
    supportedInterfaces: [
      { url: endpoint, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: endpoint, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ],
    capabilities: { streaming: true, pushNotifications: false },
    defaultInputModes: MODES,
    defaultOutputModes: MODES,
    skills: tools.map(skillOf),
    // A2A 0.3
    protocolVersion: '0.3.0',
    url: endpoint,
    preferredTransport: 'JSONRPC',
  };
  if (bearer) {
    card.securitySchemes = {
      bearer: {
        type: 'http',
        scheme: 'bearer',
        httpAuthSecurityScheme: { scheme: 'Bearer', description: 'A token of the gateway (auth.tokens)' },
      },
    };
    card.securityRequirements = [{ schemes: { bearer: { list: [] } } }];
    card.security = [{ bearer: [] }];
    // GetExtendedAgentCard: the card of the caller's token, with its skills (the public one lists none).
    (card.capabilities as Record<string, unknown>).extendedAgentCard = true;
    card.supportsAuthenticatedExtendedCard = true;
  }
  return card;
}

function skillOf(tool: ToolDefinition): Record<string, unknown> {
  const onlyText =
    tool.input_parameters.filter((p) => p.required).length === 1 &&
    tool.input_parameters.find((p) => p.required)?.type === 'string';
  return {
    id: tool.name,
    name: tool.name,
    description: tool.description || `The gateway's tool "${tool.name}"`,
    tags: tool.tags,
    examples: [],
    // Arguments as a data part; a tool with one required string parameter also takes plain text.
    inputModes: onlyText ? MODES : ['application/json'],
    outputModes: MODES,
  };
}
