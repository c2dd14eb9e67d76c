/**
 * One blocking reader of Redis Streams per instance and use (call events,
 * A2E transport outboxes): a single dedicated connection runs `XREAD BLOCK …
 * STREAMS` over every stream followed, so a thousand followers cost one
 * connection, not a thousand.
 *
 * A new subscription must get into the XREAD that is already blocked: the
 * reader also reads a small per-instance "wake" stream, and adding to it ends
 * the block. Because the XREAD asks for wake entries after the last one it
 * saw, a wake that reaches Redis before the XREAD does is not lost.
 *
 * Backpressure: a consumer that cannot take more returns a promise from
 * `deliver`; its subscription is left out of the XREADs until that settles,
 * so a slow client holds nothing here but its own entries; the rest waits in
 * Redis.
 */
import type { Logger } from '../../engine/index.js';
import { storeUnavailable, type RedisClient, type RedisConnection } from './connection.js';

/** A stream entry as Redis sends it: its id and its fields as [name, value, name, value, …]. */
export type StreamEntry = [id: string, fields: string[]];

export interface StreamReaderOptions {
  /** This instance's wake stream. */
  wakeKey: string;
  /** How long the wake stream outlives its last wake, s. */
  wakeTtlS: number;
  /** Names the dedicated connection. */
  purpose: string;
  /** Entries read per stream at most, per XREAD. */
  count: number;
  /** What is read, for the log ("call events"). */
  what: string;
}

/** Who takes a subscription's entries. */
export interface StreamConsumer {
  /** Take entries (in order, each once); a promise while it cannot take more: the stream is read again once it settles. */
  deliver(entries: StreamEntry[]): void | Promise<void>;
  /** Reading failed (Redis down or gone); the reader retries by itself. */
  failed?(err: unknown): void;
}

const BLOCK_MS = 5000;

/** One stream followed for one consumer. */
export class StreamSubscription {
  /** @internal Set while the consumer cannot take more. */ busy = false;
  closed = false;

  constructor(
    private readonly reader: StreamReader,
    readonly key: string,
    /** Id of the last entry handed over; the next ones come after it. */
    public after: string,
    readonly consumer: StreamConsumer,
  ) {}

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.reader.remove(this);
  }
}

export class StreamReader {
  private readonly subs = new Set<StreamSubscription>();
  private conn: RedisClient | undefined;
  private running: Promise<void> | undefined;
  private closed = false;
  private blocking = false;
  private wakeSent = false;
  private wakeLast = '0-0';
  private idle: (() => void) | undefined;

  constructor(
    private readonly redis: RedisConnection,
    private readonly options: StreamReaderOptions,
    private readonly logger: Logger,
  ) {}

  /** Follow `key` after entry `after` ("0-0" = from the start) into `consumer`. */
  subscribe(key: string, after: string, consumer: StreamConsumer): StreamSubscription {
    const sub = new StreamSubscription(this, key, after, consumer);
    this.subs.add(sub);
    if (this.running) this.wake();
    else this.running = this.loop();
    return sub;
  }

  /** @internal */
  remove(sub: StreamSubscription): void {
    this.subs.delete(sub);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const sub of [...this.subs]) sub.close();
    this.wake();
    const conn = this.conn;
    this.conn = undefined;
    if (conn) await this.redis.release(conn); // ends the blocked XREAD
    await this.running;
  }

  /** Make the loop look at the subscriptions again (a blocked XREAD ends). */
  private wake(): void {
    if (this.idle) {
      const idle = this.idle;
      this.idle = undefined;
      idle();
    } else if (this.blocking && !this.wakeSent) {
      this.wakeSent = true;
      this.sendWake().catch(() => undefined); // Redis down: the read fails too, and the loop retries
    }
  }

  private async sendWake(): Promise<string> {
    const { wakeKey, wakeTtlS } = this.options;
    const c = this.redis.client;
    const [id] = await Promise.all([
      c.sendCommand(['XADD', wakeKey, 'MAXLEN', '1', '*', 'w', '1']),
      c.sendCommand(['EXPIRE', wakeKey, String(wakeTtlS)]),
    ]);
    return String(id);
  }

  private async loop(): Promise<void> {
    const { wakeKey, count, purpose, what } = this.options;
    let failures = 0;
    while (!this.closed) {
      if (![...this.subs].some((s) => !s.busy)) {
        await new Promise<void>((resolve) => (this.idle = resolve));
        continue;
      }
      let ready: StreamSubscription[] = [];
      try {
        if (!this.conn) {
          if (!this.redis.client.isReady) throw new Error('not connected');
          this.conn = await this.redis.dedicated(purpose);
          // Wake entries from before this one are not for this reader.
          this.wakeLast = await this.sendWake();
        }
        // Taken in the same turn as the XREAD is sent: a subscription added later wakes it.
        ready = [...this.subs].filter((s) => !s.busy);
        if (ready.length === 0) continue;
        // One XREAD per stream key, from the furthest-behind subscription's cursor.
        const byKey = new Map<string, StreamSubscription[]>();
        const from = new Map<string, string>();
        for (const s of ready) {
          const cur = from.get(s.key);
          if (cur === undefined || compareIds(s.after, cur) < 0) from.set(s.key, s.after);
          const same = byKey.get(s.key);
          if (same) same.push(s);
          else byKey.set(s.key, [s]);
        }
        const args = [
          'XREAD',
          'COUNT',
          String(count),
          'BLOCK',
          String(BLOCK_MS),
          'STREAMS',
          wakeKey,
          ...from.keys(),
          this.wakeLast,
          ...from.values(),
        ];
        this.blocking = true;
        this.wakeSent = false;
        let reply: unknown;
        try {
          reply = await this.conn.sendCommand(args);
        } finally {
          this.blocking = false;
        }
        if (failures > 0) this.logger.info({ store: 'redis' }, `${what} are read from Redis again`);
        failures = 0;
        if (reply) this.deliver(streamsOf(reply), byKey);
      } catch (err) {
        if (this.closed) break;
        // Every waiting consumer learns that the store failed; the reader retries below.
        for (const s of ready.length ? ready : [...this.subs]) s.consumer.failed?.(err);
        if (failures++ === 0)
          this.logger.warn(
            { store: 'redis', error: (err as Error)?.message },
            `reading ${what} from Redis failed; retrying`,
          );
        await sleep(Math.min(100 * 2 ** failures, 1000));
      }
    }
    // A connection made while close() ran is given back here.
    const conn = this.conn;
    this.conn = undefined;
    if (conn) await this.redis.release(conn);
  }

  /** Hand each subscription that was in the read the entries after its cursor. */
  private deliver(reply: [string, StreamEntry[]][], byKey: Map<string, StreamSubscription[]>): void {
    for (const [key, entries] of reply) {
      if (entries.length === 0) continue;
      if (key === this.options.wakeKey) {
        this.wakeLast = entries.at(-1)![0];
        continue;
      }
      for (const s of byKey.get(key) ?? []) {
        if (s.closed) continue;
        const fresh =
          compareIds(entries[0]![0], s.after) > 0 ? entries : entries.filter((e) => compareIds(e[0], s.after) > 0);
        if (fresh.length === 0) continue;
        s.after = fresh.at(-1)![0];
        this.hand(s, fresh);
      }
    }
  }

  private hand(s: StreamSubscription, entries: StreamEntry[]): void {
    let pending: void | Promise<void>;
    try {
      pending = s.consumer.deliver(entries);
    } catch (err) {
      this.logger.error({ err: String((err as Error)?.message ?? err) }, `a reader of ${this.options.what} failed`);
      return;
    }
    if (!pending) return;
    s.busy = true;
    void pending
      .catch(() => undefined)
      .finally(() => {
        s.busy = false;
        if (!s.closed) this.wake();
      });
  }
}

/** Unread batches a pulled stream may hold before it is left out of the XREADs. */
const MAX_QUEUED = 2;

/**
 * A subscription read by pulling: `next()` waits for the next entries. It
 * holds at most two unread batches; while it does, it is left out of the
 * XREADs and the rest waits in Redis.
 */
export class PulledStream {
  private readonly sub: StreamSubscription;
  private readonly queue: StreamEntry[][] = [];
  private error: Error | undefined;
  private wait: (() => void) | undefined;
  private room: (() => void) | undefined;

  constructor(
    reader: StreamReader,
    key: string,
    after: string,
    /** What a failure was doing, for the `unavailable` error next() throws ("following the events of …"). */
    doing: string,
  ) {
    this.sub = reader.subscribe(key, after, {
      deliver: (entries) => {
        this.queue.push(entries);
        this.notify();
        if (this.queue.length >= MAX_QUEUED) return new Promise<void>((resolve) => (this.room = resolve));
      },
      failed: (err) => {
        this.error = storeUnavailable(doing, err);
        this.notify();
      },
    });
  }

  /** The next entries (waits for them); null once closed. Throws `unavailable` when Redis failed under it. */
  async next(): Promise<StreamEntry[] | null> {
    for (;;) {
      if (this.sub.closed) return null;
      const batch = this.queue.shift();
      if (batch) {
        this.makeRoom();
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
    this.sub.close();
    this.notify();
    this.makeRoom();
  }

  private notify(): void {
    const wait = this.wait;
    this.wait = undefined;
    wait?.();
  }

  private makeRoom(): void {
    const room = this.room;
    this.room = undefined;
    room?.();
  }
}

/** XREAD's reply as [key, entries] pairs (the client answers an array, a Map or an object depending on the protocol). */
function streamsOf(reply: unknown): [string, StreamEntry[]][] {
  if (Array.isArray(reply)) return reply as [string, StreamEntry[]][];
  if (reply instanceof Map) return [...(reply as Map<string, StreamEntry[]>).entries()];
  return Object.entries(reply as Record<string, StreamEntry[]>);
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
