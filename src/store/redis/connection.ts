/**
 * The gateway's connection to Redis (`store.kind: redis`): one command
 * client shared by every store, one pub/sub client shared by every store
 * (`subscribe`), plus dedicated ones for what blocks a connection otherwise
 * (blocking stream reads), and this instance's one id (the owner of what it
 * runs, whichever store records it). Commands fail fast while Redis
 * is unreachable (no offline queue), and every failure reaches the caller as
 * one retryable `unavailable` error, so a door answers 503 with Retry-After
 * and the gateway itself stays up. The client reconnects on its own.
 */
import { randomUUID } from 'node:crypto';
import { createClient, type RedisClientType } from '@redis/client';
import { GatewayError, type Logger } from '../../engine/index.js';

export interface RedisConnectionOptions {
  url: string;
  /** Prefix of every key (and channel) this gateway uses. */
  prefix: string;
  /** A command not answered within this is failed, ms. */
  commandTimeoutMs: number;
  logger: Logger;
}

/** What GET /healthz reports about the store. */
export interface StoreHealth {
  kind: 'memory' | 'redis';
  ok: boolean;
  /** Why not, in words (no URL or credentials). */
  error?: string;
}

export type RedisClient = RedisClientType;

export class RedisConnection {
  /** This instance's id: the owner of the calls and approvals it holds (every store writes this one). */
  readonly instance = randomUUID();
  /** Commands (never blocking ones). */
  readonly client: RedisClient;
  private readonly extra = new Set<RedisClient>();
  /** The pub/sub client, once connected (or connecting). */
  private pubsub: Promise<RedisClient> | undefined;
  /** The channels subscribed (once in Redis, whoever listens), with their listeners. */
  private readonly channels = new Map<
    string,
    { listeners: Set<(message: string) => void>; subscribed: Promise<void> }
  >();
  private lastError: string | undefined;
  private closed = false;

  constructor(private readonly options: RedisConnectionOptions) {
    this.client = this.create('commands');
  }

  /**
   * Start connecting. Resolves true once Redis answers, or false at the first
   * failure — the gateway still starts (degraded: what needs the store answers
   * 503, /healthz says why) and the client keeps reconnecting in the background.
   */
  connect(): Promise<boolean> {
    return new Promise((resolve) => {
      const failed = () => resolve(false);
      this.client.once('error', failed);
      this.client.connect().then(
        () => {
          this.client.off('error', failed);
          resolve(true);
        },
        () => resolve(false),
      );
    });
  }

  /** `prefix` + the parts joined by ":". */
  key(...parts: string[]): string {
    return this.options.prefix + parts.join(':');
  }

  /**
   * Another connection for what blocks one (SUBSCRIBE, XREAD BLOCK). Connected
   * before it resolves; closed with this connection.
   */
  async dedicated(purpose: string): Promise<RedisClient> {
    const client = this.create(purpose);
    this.extra.add(client);
    try {
      await client.connect();
    } catch (err) {
      await this.release(client);
      throw err;
    }
    return client;
  }

  /**
   * Call `listener` with each message on `channel`, through this instance's one pub/sub connection (every
   * store's channels share it; the client subscribes again by itself after a reconnect). Rejects while Redis
   * is unreachable: the caller tries again. Adding the same listener again changes nothing.
   */
  async subscribe(channel: string, listener: (message: string) => void): Promise<void> {
    const client = await (this.pubsub ??= this.dedicated('pubsub').catch((err: unknown) => {
      this.pubsub = undefined;
      throw err;
    }));
    let entry = this.channels.get(channel);
    if (!entry) {
      const listeners = new Set<(message: string) => void>();
      const subscribed = client.subscribe(channel, (message: string) => {
        for (const l of listeners) {
          try {
            l(message);
          } catch {
            // One store's listener failing is its own; the others still hear the message.
          }
        }
      });
      const made = { listeners, subscribed };
      this.channels.set(channel, made);
      // A SUBSCRIBE that failed is sent again by the next subscribe() (every listener waiting on it retries).
      subscribed.catch(() => this.channels.get(channel) === made && this.channels.delete(channel));
      entry = made;
    }
    await entry.subscribed;
    entry.listeners.add(listener);
  }

  /** Stop calling `listener` for `channel`; the last listener gone, the channel is unsubscribed (best effort). */
  async unsubscribe(channel: string, listener: (message: string) => void): Promise<void> {
    const entry = this.channels.get(channel);
    if (!entry?.listeners.delete(listener) || entry.listeners.size > 0) return;
    this.channels.delete(channel);
    const client = await this.pubsub?.catch(() => undefined);
    await client?.unsubscribe(channel).catch(() => {});
  }

  /** Give back a connection from `dedicated()`. */
  async release(client: RedisClient): Promise<void> {
    if (!this.extra.delete(client)) return;
    await client.close().catch(() => client.destroy());
  }

  get health(): StoreHealth {
    return this.client.isReady
      ? { kind: 'redis', ok: true }
      : { kind: 'redis', ok: false, error: this.lastError ?? 'not connected to Redis' };
  }

  /**
   * Run store work; any Redis failure becomes the retryable `unavailable`
   * error (HTTP 503 + Retry-After) naming what was being done.
   */
  async run<T>(what: string, work: (client: RedisClient) => Promise<T>): Promise<T> {
    try {
      return await work(this.client);
    } catch (err) {
      throw storeUnavailable(what, err);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [this.client, ...this.extra];
    this.extra.clear();
    await Promise.allSettled(all.map((c) => (c.isOpen ? c.close() : Promise.resolve())));
  }

  private create(purpose: string): RedisClient {
    const client = createClient({
      url: this.options.url,
      disableOfflineQueue: true,
      commandOptions: purpose === 'commands' ? { timeout: this.options.commandTimeoutMs } : undefined,
      socket: {
        connectTimeout: this.options.commandTimeoutMs,
        // Back off up to 1 s between attempts, forever: the store comes back when Redis does.
        reconnectStrategy: (retries: number) => (this.closed ? false : Math.min(50 * 2 ** retries, 1000)),
      },
    }) as RedisClient;
    let down = false;
    client.on('error', (err: unknown) => {
      this.lastError = describe(err);
      if (!down) {
        down = true;
        this.options.logger.error(
          { store: 'redis', connection: purpose, error: this.lastError },
          'Redis connection lost; requests that need the shared store answer 503 until it is back',
        );
      }
    });
    client.on('ready', () => {
      if (down) this.options.logger.info({ store: 'redis', connection: purpose }, 'Redis connection restored');
      down = false;
      this.lastError = undefined;
    });
    return client;
  }
}

/** The retryable error a request gets when the store cannot answer. */
export function storeUnavailable(what: string, err?: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return new GatewayError(
    'unavailable',
    `the shared store (Redis) is unavailable, so ${what} cannot be done right now; retry shortly`,
    {
      retryable: true,
      detail: { retry_after_s: 1, store: 'redis' },
      cause: err,
    },
  );
}

/** An error in words without the URL (which may carry a password). */
function describe(err: unknown): string {
  const e = err as { code?: string; message?: string };
  if (e?.code === 'ECONNREFUSED') return 'connection refused';
  if (e?.code === 'ENOTFOUND') return 'host not found';
  if (e?.code === 'ETIMEDOUT') return 'connection timed out';
  const message = String(e?.message ?? err).replace(/rediss?:\/\/\S+/g, '<store.url>');
  return message.slice(0, 200);
}
