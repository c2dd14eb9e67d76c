/**
 * One blocking reader of Redis Streams per gateway instance, shared by every
 * stream the instance serves: a single XREAD BLOCK over all of them on a
 * dedicated connection. A stream whose consumer is busy (its client is slow)
 * leaves the read until it is ready again, so one slow client holds nothing
 * but its own stream. Changes to the set wake the blocked read through a
 * small per-instance wake stream (race-free: it is read after its last id).
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from '../../engine/index.js';
import type { RedisClient, RedisConnection } from './connection.js';

/** A stream entry: its id and its fields as [name, value, name, value, …]. */
export type StreamEntry = [id: string, fields: string[]];

/** Hand entries to the consumer; a promise while it cannot take more (read again once it settles). */
export type Deliver = (entries: StreamEntry[]) => void | Promise<void>;

interface Subscription {
  key: string;
  /** Read entries after this id. */
  after: string;
  deliver: Deliver;
  busy: boolean;
}

const BATCH = 256;
const BLOCK_MS = 5000;

export class StreamReader {
  private readonly subs = new Map<string, Subscription>();
  private readonly wakeKey: string;
  private wakeAfter = '0-0';
  private connection: RedisClient | undefined;
  private blocked = false;
  private idle: (() => void) | undefined;
  private closed = false;
  private failing = false;
  private readonly running: Promise<void>;

  constructor(
    private readonly redis: RedisConnection,
    private readonly logger: Logger,
  ) {
    this.wakeKey = redis.key('transport', 'wake', randomBytes(8).toString('hex'));
    this.running = this.loop();
  }

  /** Read `key` after `after` into `deliver`, replacing whatever read it before. Returns what remove() takes. */
  add(key: string, after: string, deliver: Deliver): object {
    const sub: Subscription = { key, after, deliver, busy: false };
    this.subs.set(key, sub);
    this.kick();
    return sub;
  }

  remove(key: string, token: object): void {
    if (this.subs.get(key) === token) this.subs.delete(key);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.subs.clear();
    this.kick();
    const c = this.connection;
    this.connection = undefined;
    if (c) await this.redis.release(c);
    await this.running;
  }

  /** The set changed: wake the loop, or the blocked read. */
  private kick(): void {
    if (!this.blocked) {
      this.idle?.();
      return;
    }
    const c = this.redis.client;
    c.sendCommand(['XADD', this.wakeKey, 'MAXLEN', '1', '*', 'w', '1'])
      .then(() => c.sendCommand(['PEXPIRE', this.wakeKey, '60000']))
      .catch(() => undefined); // Redis down: the read fails too, and the loop retries
  }

  private async loop(): Promise<void> {
    while (!this.closed) {
      const ready = [...this.subs.values()].filter((s) => !s.busy);
      if (!ready.length) {
        await new Promise<void>((resolve) => (this.idle = resolve));
        this.idle = undefined;
        continue;
      }
      let reply: unknown;
      try {
        this.connection ??= await this.redis.dedicated('transport-stream-reader');
        const args = ['XREAD', 'COUNT', String(BATCH), 'BLOCK', String(BLOCK_MS), 'STREAMS', this.wakeKey, ...ready.map((s) => s.key), this.wakeAfter, ...ready.map((s) => s.after)];
        this.blocked = true;
        reply = await this.connection.sendCommand(args);
        if (this.failing) this.logger.info({ store: 'redis' }, 'A2E transport streams are read from Redis again');
        this.failing = false;
      } catch (err) {
        if (this.closed) break;
        if (!this.failing) this.logger.error({ store: 'redis', err: String((err as Error)?.message ?? err) }, 'A2E transport streams cannot be read from Redis; retrying');
        this.failing = true;
        await new Promise((r) => setTimeout(r, 500));
        continue;
      } finally {
        this.blocked = false;
      }
      // RESP2 answers [[key, entries], …]; RESP3 a map of key → entries.
      const streams: [string, StreamEntry[]][] = !reply ? [] : Array.isArray(reply) ? reply : Object.entries(reply as Record<string, StreamEntry[]>);
      for (const [key, entries] of streams) {
        if (!entries.length) continue;
        const last = entries[entries.length - 1]![0];
        if (key === this.wakeKey) {
          this.wakeAfter = last;
          continue;
        }
        const sub = this.subs.get(key);
        if (!sub || !ready.includes(sub)) continue;
        sub.after = last;
        let pending: void | Promise<void>;
        try {
          pending = sub.deliver(entries);
        } catch (err) {
          this.logger.error({ err }, 'A2E transport stream consumer failed');
          continue;
        }
        if (pending) {
          sub.busy = true;
          void pending
            .catch(() => undefined)
            .finally(() => {
              sub.busy = false;
              if (this.subs.get(sub.key) === sub) this.kick();
            });
        }
      }
    }
  }
}
