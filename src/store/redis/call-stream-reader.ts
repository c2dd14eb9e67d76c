/**
 * One blocking reader per instance for every Redis stream its watchers
 * follow: a single dedicated connection runs `XREAD BLOCK … STREAMS` over all
 * of them at once and hands each subscription the entries after its cursor.
 * So a thousand watchers cost one connection, not a thousand.
 *
 * A new (or resumed) subscription must get into the XREAD that is already
 * blocked: the reader also reads a small per-instance "wake" stream, and
 * adding to it ends the block. Because the XREAD asks for wake entries after
 * the last one it saw, a wake that reaches Redis before the XREAD does is not
 * lost (the XREAD returns at once).
 *
 * Backpressure: a subscription holding two unread batches is left out of the
 * next XREADs until its reader takes one, so a slow client holds at most two
 * batches here; the rest waits in Redis.
 */
import type { Logger } from '../../engine/index.js';
import { storeUnavailable, type RedisClient, type RedisConnection } from './connection.js';

/** A stream entry as Redis sends it: [id, [field, value, …]]. */
export type RawEntry = [string, string[]];

const BLOCK_MS = 5000;
const COUNT = 1000;
/** Unread batches a subscription may hold before it is left out of the XREADs. */
const MAX_QUEUED = 2;

export class StreamSubscription {
  /** @internal */ queue: RawEntry[][] = [];
  /** @internal */ error: Error | undefined;
  /** @internal */ closed = false;
  private wait: (() => void) | undefined;

  constructor(
    private readonly reader: StreamReader,
    readonly key: string,
    /** Id of the last entry handed over; the next ones come after it. */
    public lastId: string,
  ) {}

  /** @internal */
  get paused(): boolean {
    return this.queue.length >= MAX_QUEUED;
  }

  /** @internal */
  notify(): void {
    const wait = this.wait;
    this.wait = undefined;
    wait?.();
  }

  /** The next entries (waits for them); null once closed. Throws `unavailable` when Redis failed under it. */
  async next(): Promise<RawEntry[] | null> {
    for (;;) {
      if (this.closed) return null;
      const batch = this.queue.shift();
      if (batch) {
        // It was left out of the XREADs while full: back in.
        if (this.queue.length === MAX_QUEUED - 1) this.reader.wake();
        return batch;
      }
      if (this.error) {
        const err = this.error;
        this.error = undefined;
        throw err;
      }
      await new Promise<void>((resolve) => (this.wait = resolve));
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.reader.remove(this);
    this.notify();
  }
}

export class StreamReader {
  private readonly subs = new Set<StreamSubscription>();
  private conn: RedisClient | undefined;
  private running = false;
  private closed = false;
  private blocking = false;
  private wakeSent = false;
  private wakeLast = '0-0';
  private idle: (() => void) | undefined;

  constructor(
    private readonly redis: RedisConnection,
    /** This instance's wake stream. */
    private readonly wakeKey: string,
    private readonly logger: Logger,
  ) {}

  /** Follow `key` after entry `afterId` ("0-0" = from the start). */
  subscribe(key: string, afterId: string): StreamSubscription {
    const sub = new StreamSubscription(this, key, afterId);
    this.subs.add(sub);
    if (!this.running) void this.loop();
    else this.wake();
    return sub;
  }

  /** @internal */
  remove(sub: StreamSubscription): void {
    this.subs.delete(sub);
  }

  /** Make the loop look at the subscriptions again (a blocked XREAD ends). */
  wake(): void {
    if (this.idle) {
      const idle = this.idle;
      this.idle = undefined;
      idle();
    } else if (this.blocking && !this.wakeSent) {
      this.wakeSent = true;
      const c = this.redis.client;
      c.sendCommand(['XADD', this.wakeKey, 'MAXLEN', '1', '*', 'w', '1']).catch(() => {});
      c.sendCommand(['EXPIRE', this.wakeKey, '3600']).catch(() => {});
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const sub of this.subs) sub.close();
    this.wake();
    if (this.conn) await this.redis.release(this.conn);
  }

  private async loop(): Promise<void> {
    this.running = true;
    let failures = 0;
    while (!this.closed) {
      if (![...this.subs].some((s) => !s.paused)) {
        await new Promise<void>((resolve) => (this.idle = resolve));
        continue;
      }
      let active: StreamSubscription[] = [];
      try {
        if (!this.conn) {
          if (!this.redis.client.isReady) throw new Error('not connected');
          this.conn = await this.redis.dedicated('call-events');
          this.wakeLast = String(await this.redis.client.sendCommand(['XADD', this.wakeKey, 'MAXLEN', '1', '*', 'w', '1']));
        }
        // Taken in the same turn as the XREAD is sent: a subscription added later wakes it.
        active = [...this.subs].filter((s) => !s.paused);
        if (active.length === 0) continue;
        // One XREAD per stream key, from the furthest-behind subscription's cursor.
        const from = new Map<string, string>();
        for (const s of active) {
          const cur = from.get(s.key);
          if (cur === undefined || compareIds(s.lastId, cur) < 0) from.set(s.key, s.lastId);
        }
        const args = ['XREAD', 'COUNT', String(COUNT), 'BLOCK', String(BLOCK_MS), 'STREAMS', this.wakeKey, ...from.keys(), this.wakeLast, ...from.values()];
        this.blocking = true;
        this.wakeSent = false;
        let reply: unknown;
        try {
          reply = await this.conn.sendCommand(args);
        } finally {
          this.blocking = false;
        }
        failures = 0;
        if (reply) this.deliver(streamsOf(reply));
      } catch (err) {
        if (this.closed) break;
        // Every waiting watcher learns that the store failed (its stream ends retryable); new ones retry below.
        const error = storeUnavailable('following the events of a call that runs on another instance', err);
        for (const s of active.length ? active : this.subs) {
          s.error = error;
          s.notify();
        }
        if (failures++ === 0) this.logger.warn({ store: 'redis', error: (err as Error)?.message }, 'reading call events from Redis failed; retrying');
        await sleep(Math.min(100 * 2 ** failures, 1000));
      }
    }
    this.running = false;
  }

  private deliver(reply: [string, RawEntry[]][]): void {
    for (const [key, entries] of reply) {
      if (entries.length === 0) continue;
      if (key === this.wakeKey) {
        this.wakeLast = entries.at(-1)![0];
        continue;
      }
      for (const s of this.subs) {
        if (s.key !== key || s.closed) continue;
        const fresh = compareIds(entries[0]![0], s.lastId) > 0 ? entries : entries.filter((e) => compareIds(e[0], s.lastId) > 0);
        if (fresh.length === 0) continue;
        s.lastId = fresh.at(-1)![0];
        s.queue.push(fresh);
        s.notify();
      }
    }
  }
}

/** XREAD's reply as [key, entries] pairs (the client answers an array, a Map or an object depending on the protocol). */
function streamsOf(reply: unknown): [string, RawEntry[]][] {
  if (Array.isArray(reply)) return reply as [string, RawEntry[]][];
  if (reply instanceof Map) return [...(reply as Map<string, RawEntry[]>).entries()];
  return Object.entries(reply as Record<string, RawEntry[]>);
}

/** Order of two stream ids ("ms-n"). */
export function compareIds(a: string, b: string): number {
  const [am, an] = a.split('-');
  const [bm, bn] = b.split('-');
  return Number(am) - Number(bm) || Number(an) - Number(bn);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
