/** `a2a_server` — the gateway as an A2A agent: its card and its JSON-RPC endpoint. */
import { z } from 'zod';

export const A2AServerConfig = z.strictObject({
  /** Serve the agent card and the JSON-RPC endpoint. */
  enabled: z.boolean().default(true),
  /** The agent's name on its card. */
  name: z.string().min(1).default('a2e-gateway'),
  /** The agent's description on its card. */
  description: z.string().default('A tool gateway: each of its tools is a skill of this agent'),
  /** Where the JSON-RPC endpoint is (under server.base_path). */
  path: z
    .string()
    .regex(
      /^(\/[A-Za-z0-9._~-]+)+$/,
      'must start with "/", have no trailing "/" and use only letters, digits and . _ ~ -',
    )
    .default('/a2a'),
  /** Timeout of a call started through A2A, seconds (capped by server.max_timeout_s); a task may set `metadata.timeout`. */
  call_timeout_s: z.int().positive().default(300),
  /**
   * The skill (a tool's name) a message runs when it names none (no `metadata.skillId`, no data part with
   * `tool_name`), with the message's text or data part as its arguments. Unset: such a message is refused with
   * the list of skills. Lets generic A2A clients (and the A2A TCK) talk to the gateway as to one agent.
   */
  default_skill: z.string().min(1).optional(),
});
export type A2AServerConfig = z.output<typeof A2AServerConfig>;
