/** What the gateway passes the A2E transport, whichever store keeps its sessions (the seam's factory gets the same). */
import type { Engine, Logger, SessionManager } from '../../engine/index.js';
import type { MessageLimits } from '../../engine/message-reader.js';
import type { HandshakeAuth } from './auth.js';
import type { TransportConfig } from './config.js';

export interface A2eHttpTransportOptions {
  engine: Engine;
  logger: Logger;
  config: TransportConfig;
  /**
   * `sessions.required`: tool messages need a successful handshake, whoever
   * sends them. Without it, with auth, a session its bearer token opened
   * calls as that token before any handshake (as on the REST routes).
   */
  sessionsRequired?: boolean;
  /** Handshake sessions; by default one of the transport's own, expiring like transport sessions. */
  sessions?: SessionManager;
  /** Checks a handshake's auth_token; default: accept everyone. */
  authenticate?: HandshakeAuth;
  /** True when auth is configured: tool messages then need a successful handshake. */
  authRequired?: boolean;
  /** Byte budgets of the sessions' outboxes (`limits.outbox_*`) and the most one stream write takes. */
  memory?: TransportMemoryLimits;
  /** How messages are read (`limits.max_json_depth`); default: the config's default. */
  limits?: MessageLimits;
}

export interface TransportMemoryLimits {
  outboxSessionBytes: number;
  outboxTotalBytes: number;
  streamWriteBytes: number;
}

const MiB = 1024 * 1024;
export const DEFAULT_MEMORY: TransportMemoryLimits = {
  outboxSessionBytes: 8 * MiB,
  outboxTotalBytes: 64 * MiB,
  streamWriteBytes: MiB,
};
