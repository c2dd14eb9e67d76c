/**
 * The stores a gateway keeps what any instance may be asked about in, chosen
 * by `store.kind`: this process's memory (the default), or a Redis shared by
 * every instance. Each seam (calls, sessions, rate limits, transport sessions)
 * gets its implementation here; the engine and the doors only see the seams.
 */
import type { ApprovalStore, CallStore, Logger, MemoryCallStore } from '../engine/index.js';
import type { StoreConfig } from './config.js';
import type { CallsConfig } from './calls-config.js';
// Types only: the Redis modules (and @redis/client, hundreds of files) are imported when store.kind is redis.
import type { RedisConnection, RedisSessionOptions, StoreHealth } from './redis/index.js';
import type { SharedSessionStore } from '../engine/index.js';
import { A2eHttpTransport, type A2eTransportFactory } from '../transport/a2e-http/index.js';
import type { RedisCallStore } from './redis/calls.js';

export interface Stores {
  readonly kind: StoreConfig['kind'];
  /** The Redis connection (kind `redis` only). */
  readonly redis: RedisConnection | undefined;
  /** Handshake sessions and shared admission limits (kind `redis` only; memory keeps them in the SessionManager and Admission). */
  sessions(options: RedisSessionOptions): SharedSessions | undefined;
  /** Where the A2E transport's sessions and outboxes live. */
  readonly transportSessions: A2eTransportFactory;
  /** What GET /healthz reports. */
  health(): StoreHealth;
  /** Where call resources live: `local` itself in memory mode; with Redis, shared (this instance's calls stay in `local` too). */
  callStore(local: MemoryCallStore, calls: CallsConfig): CallStore;
  /** Where pending approvals are listed and decided: undefined in memory mode (the engine keeps them), shared with Redis. */
  approvalStore(): ApprovalStore | undefined;
  close(): Promise<void>;
}

/** The shared session store, with what a config reload needs of it. */
export interface SharedSessions extends SharedSessionStore {
  /** The reloaded limits (`limits.rate_per_s`, `limits.rate_burst`), in force from the next call on. */
  update(options: RedisSessionOptions): void;
  /**
   * Close the sessions `ended` picks, given the principal and the credential each was opened with (when known; a
   * reload removed or changed it), on every instance; resolves with how many.
   */
  closeWhere(ended: (principal: string | null, credential: string | undefined) => boolean): Promise<number>;
}

const MEMORY_HEALTH: StoreHealth = Object.freeze({ kind: 'memory', ok: true });

/** What the shared stores need of the rest of the config. */
export interface StoreSettings {
  /** `calls.owner_lease_s`: the lease of whatever runs on one instance and is watched from others (call resources, A2E transport calls). */
  leaseS: number;
}

/**
 * Open the configured stores. A Redis that cannot be reached at start is
 * logged and the gateway starts degraded (see RedisConnection.connect).
 */
export async function openStores(config: StoreConfig, logger: Logger, settings: StoreSettings): Promise<Stores> {
  if (config.kind === 'memory') {
    return {
      kind: 'memory',
      redis: undefined,
      sessions: () => undefined,
      transportSessions: (o) => new A2eHttpTransport(o),
      health: () => MEMORY_HEALTH,
      callStore: (local) => local,
      approvalStore: () => undefined,
      close: async () => {},
    };
  }
  const [
    { RedisConnection, RedisSessions },
    { RedisA2eTransport },
    { RedisCallStore },
    { Leases },
    { DataLoss },
    { RedisApprovalStore },
  ] = await Promise.all([
    import('./redis/index.js'),
    import('./redis/transport-sessions.js'),
    import('./redis/calls.js'),
    import('./redis/leases.js'),
    import('./redis/data-loss.js'),
    import('./redis/approvals.js'),
  ]);
  const redis = new RedisConnection({
    url: config.url,
    prefix: config.prefix,
    commandTimeoutMs: config.command_timeout_ms,
    logger,
  });
  if (!(await redis.connect())) {
    logger.error(
      { store: 'redis', error: redis.health.error },
      'Redis (store.url) is not reachable; starting anyway: what needs the shared store answers 503 until it is',
    );
  }
  // One lease board for everything that can outlive its instance; one watch for Redis losing its data.
  const leases = new Leases(redis, settings.leaseS, logger);
  const dataLoss = new DataLoss(redis, logger);
  dataLoss.start();
  let calls: RedisCallStore | undefined;
  const callStore = (local: MemoryCallStore, c: CallsConfig) => {
    calls = new RedisCallStore({
      redis,
      local,
      logger,
      retainS: c.retain_s,
      maxEvents: c.max_events,
      leases,
      dataLoss,
      shares: { maxRetained: c.max_retained, maxRetainedPerPrincipal: c.max_retained_per_principal },
    });
    calls.start();
    return calls;
  };
  let approvals: InstanceType<typeof RedisApprovalStore> | undefined;
  const approvalStore = () => {
    approvals = new RedisApprovalStore({ redis, leases, logger });
    approvals.start();
    return approvals;
  };
  return {
    kind: 'redis',
    redis,
    sessions: (options) => new RedisSessions(redis, options, config.command_timeout_ms, dataLoss),
    transportSessions: (o) => new RedisA2eTransport(redis, o, { leases, dataLoss }),
    health: () => redis.health,
    callStore,
    approvalStore,
    async close() {
      await calls?.close(); // the calls' last writes go out before the connection closes
      await approvals?.close();
      leases.close();
      await redis.close();
    },
  };
}
