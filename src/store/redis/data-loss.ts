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

/** KEYS: epoch. ARGV: a new epoch. The epoch in Redis (set to the new one when there was none). */
const EPOCH = new RedisScript(`
local e = redis.call('GET', KEYS[1])
if e then return e end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]`);

export class DataLoss {
  /** When this instance last found Redis had lost its data (epoch ms). */
  private lostAt: number | undefined;
  private epoch: string | undefined;
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

  /** Epoch ms until which a reader waits for owners to restore what was lost `ms` ago at most (undefined: no recent loss). */
  waitUntil(ms: number): number | undefined {
    return this.lostAt === undefined ? undefined : this.lostAt + ms > Date.now() ? this.lostAt + ms : undefined;
  }

  private async check(): Promise<void> {
    let found: string;
    try {
      found = String(await EPOCH.run(this.redis.client, [this.redis.key('epoch')], [randomBytes(12).toString('hex')]));
    } catch {
      return; // down again: checked at the next 'ready'
    }
    const known = this.epoch;
    this.epoch = found;
    if (known === undefined || known === found) return;
    this.lostAt = Date.now();
    this.logger.warn({ store: 'redis' }, 'Redis lost its data (restarted without persistence, or flushed): re-creating what this instance runs');
    for (const listener of this.listeners) {
      try {
        listener();
      } catch (err) {
        this.logger.error({ err }, 're-creating what Redis lost failed');
      }
    }
  }
}
