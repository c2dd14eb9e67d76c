import { z } from 'zod';

/** `transport` — A2E's own HTTP message transport (POST /session, POST /send, GET /stream). */
export const TransportConfig = z.strictObject({
  /** Serve the transport (POST /session, POST /send, GET /stream). */
  enabled: z.boolean().default(true),
  /** Where the transport's routes live; kept apart from the REST routes. */
  path: z
    .string()
    .regex(
      /^(\/[A-Za-z0-9._~-]+)+$/,
      'must start with "/", have no trailing "/" and use only letters, digits and . _ ~ -',
    )
    .default('/a2e/v1'),
  /** A session with no stream attached and no message sent for this long is closed, seconds. */
  session_idle_s: z.number().positive().default(300),
  /** Messages waiting for a session's stream; POST /send is refused (429) beyond it. */
  max_queued: z.int().min(2).default(1000),
  /** Open sessions at once; POST /session is refused (503) beyond it. */
  max_sessions: z.int().positive().default(1000),
  /** A session must complete a successful handshake this soon after POST /session, or it is closed, seconds. */
  handshake_timeout_s: z.number().positive().default(10),
  /** Open sessions per token: at it, POST /session closes that token's own least recently used idle session. */
  max_sessions_per_principal: z.int().positive().default(64),
  /** Open sessions per client address for sessions opened without a token (same eviction). */
  max_sessions_per_address: z.int().positive().default(16),
  /** Frames kept after they were written, so a stream reconnecting with Last-Event-ID gets what it missed. */
  resume_frames: z.int().min(0).default(256),
});
export type TransportConfig = z.output<typeof TransportConfig>;
