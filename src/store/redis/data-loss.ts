/**
 * Notices that Redis lost what the gateway had written (restarted without
 * persistence, or flushed): a random epoch is kept in Redis under
 * `<prefix>epoch`; each instance remembers the one it saw, and finding it
 * gone or changed when the connection comes back means everything written
 * before is gone. Then what this instance runs re-creates itself (its
 * listeners), and a reader that finds something missing waits for its owner
 * to do so (`recent`) before saying it does not exist.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from '../../engine/index.js';
import type { RedisConnection } from './connection.js';
import { RedisScript } from './script.js';

/**
 * KEYS: epoch. ARGV: a new epoch. → {the epoch in Redis (set to the new one, with Redis's time, when there
 * was none), its age in ms}. Stored as "<epoch>:<ms it was set>".
 */
const EPOCH = new RedisScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local e = redis.call('GET', KEYS[1])
if not e then
  e = ARGV[1] .. ':' .. now
  redis.call('SET', KEYS[1], e)
end
local at = tonumber(string.match(e, ':(%d+)$') or now)
return {e, now - at}`);

export class DataLoss {
  /** When this instance last found Redis had lost its data (epoch ms). */
  private lostAt: number | undefined;
  private epoch: string | undefined;
  /** When the epoch this instance first found was set by another instance (epoch ms): Redis may have lost its data then. */
  private foundYoungAt: number | undefined;
  private readonly listeners: (() => void)[] = [];
  /** The check under way since the connection came back. */
  private checking: Promise<void> = Promise.resolve();

  constructor(
    private readonly redis: RedisConnection,
    private readonly logger: Logger,
  ) {}

  /** Check now (when connected) and each time the connection comes back. */
  start(): void {
    const client = this.redis.client;
    client.on('ready', () => void (this.checking = this.check()));
    if (client.isReady) this.checking = this.check();
  }

  /** Resolves once the check since the connection last came back is done (so `recent` answers for it). */
  settled(): Promise<void> {
    return this.checking;
  }

  /** Run `listener` each time a loss is found. */
  onLost(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** When this instance last found Redis had lost its data (epoch ms), if it did. */
  get lastLoss(): number | undefined {
    return this.lostAt;
  }

  /** A loss was found within the last `ms`. */
  recent(ms: number): boolean {
    return this.lostAt !== undefined && Date.now() - this.lostAt < ms;
  }

  /**
   * waitUntil, also for an instance that started after the loss: an epoch another instance set less than `ms`
   * ago may mark a loss this instance did not see (or only a fresh start of all of them).
   */
  maybeLostUntil(ms: number): number | undefined {
    const at = Math.max(this.lostAt ?? 0, this.foundYoungAt ?? 0);
    return at && at + ms > Date.now() ? at + ms : undefined;
  }

  /** Epoch ms until which a reader waits for owners to restore what was lost `ms` ago at most (undefined: no recent loss). */
  waitUntil(ms: number): number | undefined {
    return this.lostAt === undefined ? undefined : this.lostAt + ms > Date.now() ? this.lostAt + ms : undefined;
  }

  private async check(): Promise<void> {
    let found: string;
    let ageMs: number;
    const mine = randomBytes(12).toString('hex');
    try {
      const [e, age] = (await EPOCH.run(this.redis.client, [this.redis.key('epoch')], [mine])) as [string, number];
      found = String(e);
      ageMs = Number(age);
    } catch {
      return; // down again: checked at the next 'ready'
    }
    const known = this.epoch;
    this.epoch = found;
    if (known === undefined && !found.startsWith(`${mine}:`)) this.foundYoungAt = Date.now() - ageMs;
    if (known === undefined || known === found) return;
    this.lostAt = Date.now();
    this.logger.warn(
      { store: 'redis' },
      'Redis lost its data (restarted without persistence, or flushed): re-creating what this instance runs',
    );
    for (const listener of this.listeners) {
      try {
        listener();
      } catch (err) {
        this.logger.error({ err }, 're-creating what Redis lost failed');
      }
    }
  }
}
