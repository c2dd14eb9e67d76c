import { z } from 'zod';
import { messageFields } from './base.js';
import { FIELD_LIMITS } from './field-limits.js';

/** Every capability name of the A2E protocol. Only these may appear in a handshake answer. */
export const A2E_CAPABILITIES = [
  'skill',
  'tools',
  'toolkits',
  'env',
  'proc',
  'memory',
  'learning',
  'chains',
  'multi_agent',
  'planning',
  'mcp',
  'test',
] as const;
export type A2ECapability = (typeof A2E_CAPABILITIES)[number];

export const HandshakeRequest = z
  .object({
    ...messageFields('handshake/req'),
    agent_id: z
      .string()
      .max(FIELD_LIMITS.name)
      .default('')
      .meta({ description: 'Who the agent is (free text, for logs and audit)' }),
    agent_caps: z
      .array(z.string().max(FIELD_LIMITS.name))
      .max(FIELD_LIMITS.listItems)
      .default([])
      .meta({ description: 'Capabilities the agent wants, e.g. ["tools"]' }),
    auth_token: z
      .string()
      .max(FIELD_LIMITS.token)
      .nullable()
      .default(null)
      .meta({ description: 'Bearer token, when the gateway requires one' }),
  })
  .meta({ id: 'HandshakeRequest', description: 'Open a session and negotiate capabilities' });
export type HandshakeRequest = z.output<typeof HandshakeRequest>;

export const AcceptedCapability = z
  .object({
    capability: z.string(),
    enabled: z.boolean(),
    metadata: z.record(z.string(), z.unknown()).default({}),
  })
  .meta({ id: 'AcceptedCapability' });

export const HandshakeResponse = z
  .object({
    ...messageFields('handshake/resp'),
    req_id: z.string().default(''),
    session_id: z.string().default('').meta({ description: 'Send this as session_id on later requests' }),
    accepted_caps: z.array(AcceptedCapability).default([]),
    max_parallel: z.int().default(0).meta({ description: 'Concurrent calls allowed in this session (0 = no limit)' }),
    ok: z.boolean(),
    reason: z.string().default('').meta({ description: 'Why the handshake failed, when ok is false' }),
  })
  .meta({ id: 'HandshakeResponse', description: 'The outcome of a handshake' });
export type HandshakeResponse = z.output<typeof HandshakeResponse>;
