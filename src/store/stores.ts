/**
 * The stores a gateway keeps what any instance may be asked about in, chosen
 * by `store.kind`: this process's memory (the default), or a Redis shared by
 * every instance. Each seam (calls, sessions, rate limits, transport sessions)
 * gets its implementation here; the engine and the doors only see the seams.
 */
import type { Logger } from '../engine/index.js';
import type { StoreConfig } from '../config/store.js';
import { RedisConnection, RedisSessions, type RedisSessionOptions, type StoreHealth } from './redis/index.js';
import type { SharedSessionStore } from '../engine/index.js';
import { A2eHttpTransport, type A2eTransportFactory } from '../transport/a2e-http/index.js';
import { RedisA2eTransport } from './redis/transport-sessions.js';

export interface Stores {
  readonly kind: StoreConfig['kind'];
  /** The Redis connection (kind `redis` only). */
  readonly redis: RedisConnection | undefined;
  /** Handshake sessions and shared admission limits (kind `redis` only; memory keeps them in the SessionManager and Admission). */
  sessions(options: RedisSessionOptions): SharedSessionStore | undefined;
  /** Where the A2E transport's sessions and outboxes live. */
  readonly transportSessions: A2eTransportFactory;
  /** What GET /healthz reports. */
  health(): StoreHealth;
  close(): Promise<void>;
}

const MEMORY_HEALTH: StoreHealth = Object.freeze({ kind: 'memory', ok: true });

/**
 * Open the configured stores. A Redis that cannot be reached at start is
 * logged and the gateway starts degraded (see RedisConnection.connect).
 */
export async function openStores(config: StoreConfig, logger: Logger): Promise<Stores> {
  if (config.kind === 'memory') {
    return {
      kind: 'memory',
      redis: undefined,
      sessions: () => undefined,
      transportSessions: (o) => new A2eHttpTransport(o),
      health: () => MEMORY_HEALTH,
      close: async () => {},
    };
  }
  const redis = new RedisConnection({ url: config.url, prefix: config.prefix, commandTimeoutMs: config.command_timeout_ms, logger });
  if (!(await redis.connect())) {
    logger.error({ store: 'redis', error: redis.health.error }, 'Redis (store.url) is not reachable; starting anyway: what needs the shared store answers 503 until it is');
  }
  return {
    kind: 'redis',
    redis,
    sessions: (options) => new RedisSessions(redis, options),
    transportSessions: (o) => new RedisA2eTransport(redis, o),
    health: () => redis.health,
    close: () => redis.close(),
  };
}
