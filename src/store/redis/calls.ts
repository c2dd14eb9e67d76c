/**
 * Call resources shared through Redis (`store.kind: redis`): any instance
 * reads, follows and cancels a call that runs on another.
 *
 * - A call runs on the instance that received it (its owner), which keeps it
 *   in memory as before (its own readers take the in-memory fast path) and
 *   copies it to Redis: the hash and lease when it starts, then its events in
 *   batches (one script call per batch: whatever was emitted while the last
 *   write was out), then its final response. Retention is Redis's: the stream
 *   is trimmed to `calls.max_events`, and both keys expire `calls.retain_s`
 *   after the call finished.
 * - Other instances read a `RemoteCall` view; watchers share one blocking
 *   stream reader per instance.
 * - DELETE elsewhere is published on the owner's channel; the owner stops the call.
 * - Each running call holds a lease (leases.ts, shared with the A2E
 *   transport's calls): when its instance dies, any instance fails it (once: a
 *   script), so the watchers everywhere get a final response.
 * - Redis down: starting or reading a call elsewhere answers 503; a running
 *   call goes on, its unsent events wait in the call (bounded by the call's
 *   own event limits; beyond them the oldest are dropped and readers get a gap
 *   notice) and are written when Redis is back.
 * - Redis back without its data (no persistence): the owner re-creates its
 *   calls, running and retained (RESTORE: hash, the events it still keeps,
 *   lease or final response), and the key of the access tokens; a reader on
 *   another instance that finds a call missing meanwhile waits up to a lease
 *   for its owner to do so before answering 404.
 */
import { randomBytes } from 'node:crypto';
import {
  isCallId,
  type Call,
  type CallStore,
  type CallView,
  type Logger,
  type MemoryCallStore,
  type Watcher,
} from '../../engine/index.js';
import { storeUnavailable, type RedisConnection } from './connection.js';
import { APPEND, FAIL_LAPSED, REGISTER, RESTORE } from './call-scripts.js';
import type { DataLoss } from './data-loss.js';
import { lostResponse, type LeaseKind, type Leases } from './leases.js';
import { RemoteCall, type RemoteCallHost } from './remote-call.js';
import { retainRun, type CallRetentionShares } from './call-retention.js';
import { StreamReader } from './stream-reader.js';

export interface RedisCallStoreOptions {
  redis: RedisConnection;
  /** This instance's own calls (the in-memory store, with its retention). */
  local: MemoryCallStore;
  logger: Logger;
  /** calls.retain_s */
  retainS: number;
  /** calls.max_events: events kept per call in Redis. */
  maxEvents: number;
  /** The leases of everything that can outlive its instance (calls.owner_lease_s). */
  leases: Leases;
  dataLoss: DataLoss;
  /** calls.max_retained and calls.max_retained_per_principal: how many finished calls Redis keeps (call-retention.ts). */
  shares: Omit<CallRetentionShares, 'retainS'>;
}

/** How often a reader that finds a call missing after Redis lost its data looks again, ms. */
const RESTORE_POLL_MS = 100;
/** Running calls of other instances an instance remembers having served (the oldest are forgotten first). */
const WATCHED_KEPT = 4096;

/** On `calls:running`: a call resource started on some instance (its hash fields), or written to its end. */
type Announcement = { id: string; f?: Record<string, string>; end?: 1 };

/** ["a", "1", "b", "2"] → [["a", "1"], ["b", "2"]] */
function pairs(flat: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
}

export class RedisCallStore implements CallStore, LeaseKind {
  /** Lease members of call resources are their bare ids. */
  readonly prefix = '';
  /** This instance's id (the connection's, which the approvals write too): the owner of the calls it runs. */
  readonly instance: string;
  private readonly redis: RedisConnection;
  private readonly local: MemoryCallStore;
  private readonly logger: Logger;
  private readonly reader: StreamReader;
  private readonly leases: Leases;
  /** Calls this instance runs whose export has not finished (their leases are renewed), by id. */
  private readonly owned = new Map<string, Call>();
  /** Running calls of other instances served here, by id: their hash fields as last read. */
  private readonly watched = new Map<string, Record<string, string>>();
  /** Exports still writing (awaited, bounded, on close). */
  private readonly exports = new Set<Promise<void>>();
  private key: Buffer | undefined;
  private keyLoading: Promise<Buffer> | undefined;
  private closed = false;
  private readonly host: RemoteCallHost;

  constructor(private readonly options: RedisCallStoreOptions) {
    this.redis = options.redis;
    this.instance = options.redis.instance;
    this.local = options.local;
    this.logger = options.logger;
    this.leases = options.leases;
    this.reader = new StreamReader(
      this.redis,
      {
        wakeKey: this.redis.key('calls', 'wake', this.instance),
        wakeTtlS: 3600,
        purpose: 'call-events',
        count: 1000,
        what: 'call events',
      },
      this.logger,
    );
    this.host = {
      reader: this.reader,
      streamKey: (id) => this.streamKey(id),
      requestStop: async (owner, id) =>
        Number(await this.redis.run('canceling a call', (c) => c.publish(this.stopChannel(owner), id))) > 0,
    };
  }

  /** Take part in the leases, listen for cancels, load the shared access key. Works with Redis down (catches up when it is back). */
  start(): void {
    this.leases.register(this);
    // Each time the connection comes back: the access key is put back if Redis lost it (tokens handed out keep working).
    this.redis.client.on('ready', () => void this.loadKey().catch(() => {}));
    this.options.dataLoss.onLost(() => {
      void this.restoreAll();
      void this.putBackWatched();
    });
    void this.listenForStops();
    void this.loadKey().catch(() => {}); // retried on first use
  }

  put(call: Call): Promise<void> {
    if (!this.redis.client.isReady) return Promise.reject(storeUnavailable('starting a call resource'));
    this.local.put(call);
    // Watch before the tool runs (it starts on the next microtask): the export sees every event.
    const watcher = call.watch(-1);
    const fields = [...this.fields(call), 'state', 'running', 'events', '0'];
    const registered = this.redis.run('starting a call resource', async (c) => {
      await Promise.all([
        REGISTER.run(c, [this.hashKey(call.id), this.leases.key], [call.id, this.leases.ms, ...fields]),
        this.key ?? this.loadKey(),
      ]);
    });
    return registered.then(
      () => {
        // Its lease is renewed until everything is written (not just until it settles): a final response
        // still waiting for Redis to come back must not be taken for a lost instance.
        this.owned.set(call.id, call);
        this.leases.hold(call.id);
        const exported = this.export(call, watcher).finally(() => {
          this.owned.delete(call.id);
          this.leases.release(call.id);
          this.exports.delete(exported);
          void this.announce({ id: call.id, end: 1 });
        });
        this.exports.add(exported);
        // Every instance hears of it (the 202 waits for this): if Redis loses it together with this instance, they put it back.
        return this.announce({ id: call.id, f: Object.fromEntries(pairs(fields)) });
      },
      (err: unknown) => {
        watcher.close();
        throw err;
      },
    );
  }

  get(id: string): Call | undefined {
    return this.local.get(id);
  }

  /** This instance's call (the in-memory fast path), else the shared copy. No key is built from an id of another shape. */
  find(id: string): CallView | undefined | Promise<CallView | undefined> {
    return this.local.get(id) ?? (isCallId(id) ? this.findRemote(id) : undefined);
  }

  list(): Iterable<Call> {
    return this.local.list();
  }

  expire(): number {
    return this.local.expire();
  }

  get size(): number {
    return this.local.size;
  }

  accessKey(): Buffer {
    if (this.key) return this.key;
    void this.loadKey().catch(() => {});
    throw storeUnavailable('checking a call access token');
  }

  /** Stop the timers; let the exports finish writing (at most `graceMs`); stop reading. */
  async close(graceMs = 2000): Promise<void> {
    this.leases.close();
    if (this.exports.size) await Promise.race([Promise.allSettled([...this.exports]), sleep(graceMs)]);
    this.closed = true;
    await this.reader.close();
  }

  /** The shared copy; after Redis lost its data, a missing call is looked for again until a lease has passed (its owner re-creates it). */
  private async findRemote(id: string): Promise<CallView | undefined> {
    for (;;) {
      const [fields] = await this.redis.run('reading a call resource', async (c) =>
        Promise.all([c.hGetAll(this.hashKey(id)), this.key ?? this.loadKey()]),
      );
      if (fields && fields.req) {
        this.remember(id, fields as Record<string, string>);
        return new RemoteCall(this.host, id, fields as Record<string, string>);
      }
      await this.options.dataLoss.settled(); // the connection just came back: first learn whether Redis lost its data
      // Its owner puts it back within a lease; if the owner died with Redis's data, an instance that served it does after a lease.
      const until = this.options.dataLoss.maybeLostUntil(2 * this.leases.ms);
      if (until === undefined || this.closed) return undefined;
      await sleep(Math.min(RESTORE_POLL_MS, Math.max(1, until - Date.now())));
    }
  }

  /** The hash fields of a call that do not change while it runs. */
  private fields(call: Call): string[] {
    const fields = [
      'owner',
      this.instance,
      'req',
      call.requestId,
      'tool',
      call.toolName,
      'created',
      String(call.createdAt),
    ];
    if (call.principal !== null) fields.push('principal', call.principal);
    if (call.credential !== undefined) fields.push('credential', call.credential);
    return fields;
  }

  /** Copy the call's events and final response to Redis, one script call per batch; retried while Redis is down. */
  private async export(call: Call, watcher: Watcher): Promise<void> {
    try {
      for (let done = false; !done; ) {
        const batch = await watcher.next();
        done = batch === null || (call.settled && watcher.cursor >= call.eventCount);
        const events = batch?.events ?? [];
        const response = done ? call.response : undefined;
        const args: (string | number)[] = [
          call.id,
          this.options.maxEvents,
          Math.ceil(this.options.retainS),
          response ? call.state : '',
          response ? JSON.stringify(response) : '',
          response ? call.eventCount : events.length ? events.at(-1)!.seq + 1 : watcher.cursor,
        ];
        for (const ev of events) args.push(ev.seq, JSON.stringify(ev));
        let written = await this.write(args, call.id);
        // Redis lost the call (restarted without its data): put it back as far as this instance knows it, then write the batch.
        while (written === -1 && !this.closed) {
          await this.restore(call);
          written = await this.write(args, call.id);
        }
        if (written === 0) {
          this.decidedElsewhere(call);
          return;
        }
      }
      // Written to its end (the script removed the lease): nothing left to renew or re-create.
      this.owned.delete(call.id);
      this.leases.release(call.id);
      await this.retain(call.id, call.principal);
    } finally {
      watcher.close();
    }
  }

  /** Hold the finished calls in Redis to their principal's share and the backstop of all (call-retention.ts). */
  private async retain(id: string, principal: string | null): Promise<void> {
    if (this.closed) return;
    const run = retainRun(
      (...parts) => this.redis.key(...parts),
      { retainS: this.options.retainS, ...this.options.shares },
      id,
      principal,
    );
    await run.script
      .run(this.redis.client, run.keys, run.args)
      .catch((err: unknown) =>
        this.logger.warn(
          { call_id: id, error: (err as Error)?.message },
          'dropping the oldest finished calls in Redis failed; they expire after calls.retain_s',
        ),
      );
  }

  /** Another instance failed it after this one's lease lapsed: its outcome is decided; stop the tool. */
  private decidedElsewhere(call: Call): void {
    this.logger.warn(
      { call_id: call.id },
      'call was failed by another instance while its lease had lapsed (Redis unreachable for longer than calls.owner_lease_s); stopping it here',
    );
    call.stop('cancel');
  }

  /** One APPEND, retried with backoff while Redis is unreachable (the call goes on meanwhile): 1 written, 0 no longer ours to write, -1 Redis has no such call. */
  private async write(args: (string | number)[], id: string): Promise<number> {
    for (let failures = 0; ; failures++) {
      try {
        return Number(
          await APPEND.run(this.redis.client, [this.hashKey(id), this.streamKey(id), this.leases.key], args),
        );
      } catch (err) {
        if (this.closed) return 1;
        if (failures === 0)
          this.logger.warn(
            { call_id: id, error: (err as Error)?.message },
            'writing call events to Redis failed; retrying until it is back',
          );
        await sleep(Math.min(50 * 2 ** failures, 1000));
      }
    }
  }

  /**
   * Put a call back into a Redis that lost it: its hash, the events this instance still keeps (at most
   * calls.max_events; what it no longer has becomes a gap notice for readers), and its lease, or its final
   * response once settled. 1 re-created, 2 Redis had it running (lease put back), 0 another instance failed it.
   */
  private async restore(call: Call): Promise<number> {
    for (let failures = 0; ; failures++) {
      const count = call.eventCount;
      // A call whose export is still writing goes back as running: the export writes its last events and its end.
      const settled = call.settled && !this.owned.has(call.id);
      const kept = call.keptEvents;
      const first = Math.max(0, kept.length - this.options.maxEvents);
      const fields = this.fields(call);
      const args: (string | number)[] = [
        call.id,
        this.leases.ms,
        Math.ceil(this.options.retainS),
        count,
        settled ? call.state : '',
        settled ? JSON.stringify(call.response) : '',
        fields.length,
        ...fields,
      ];
      for (let i = first; i < kept.length; i++) {
        const ev = kept[i]!;
        if (ev.seq !== undefined && ev.seq < count) args.push(ev.seq, JSON.stringify(ev));
      }
      try {
        const outcome = Number(
          await RESTORE.run(this.redis.client, [this.hashKey(call.id), this.streamKey(call.id), this.leases.key], args),
        );
        if (outcome === 1) {
          this.logger.warn(
            { call_id: call.id, events_kept: kept.length - first, events: count },
            settled
              ? 'Redis lost a finished call resource; re-created it from this instance'
              : 'Redis lost a running call resource; re-created it (state, kept events, lease) and it goes on',
          );
        }
        return outcome;
      } catch (err) {
        if (this.closed) return 2;
        if (failures === 0)
          this.logger.warn(
            { call_id: call.id, error: (err as Error)?.message },
            're-creating a call resource Redis lost failed; retrying',
          );
        await sleep(Math.min(50 * 2 ** failures, 1000));
      }
    }
  }

  /** Tell every instance a call started here (`f`: its hash fields) or was written to its end. Best effort. */
  private announce(message: Announcement): Promise<void> {
    return this.redis.client.publish(this.runningChannel, JSON.stringify(message)).then(
      () => undefined,
      () => undefined,
    );
  }

  /** Another instance's call started (remembered as if served here, unless read already) or ended (forgotten). */
  private readonly onAnnounce = (text: string): void => {
    let m: Announcement;
    try {
      m = JSON.parse(text) as Announcement;
    } catch {
      return;
    }
    if (typeof m?.id !== 'string') return;
    if (m.end) this.watched.delete(m.id);
    else if (m.f && !this.watched.has(m.id)) this.remember(m.id, m.f);
  };

  /** A running call of another instance served here: remembered (bounded), in case Redis loses it together with its owner. */
  private remember(id: string, fields: Record<string, string>): void {
    this.watched.delete(id);
    if (fields.state !== 'running' || this.local.get(id)) return;
    if (this.watched.size >= WATCHED_KEPT) this.watched.delete(this.watched.keys().next().value!);
    this.watched.set(id, fields);
  }

  /**
   * After Redis lost its data: a running call of another instance served here that its owner has not put back
   * within a lease (it died with Redis's data) goes back as this instance knew it (no events: readers get a gap
   * notice), with a lease nobody renews: it lapses, and the sweep answers it as lost, as any call whose instance died.
   */
  private async putBackWatched(): Promise<void> {
    const watched = [...this.watched];
    this.watched.clear();
    if (!watched.length) return;
    await sleep(this.leases.ms);
    for (const [id, f] of watched) {
      if (this.closed) return;
      if (this.local.get(id)) continue;
      const fields = ['owner', f.owner ?? '', 'req', f.req ?? '', 'tool', f.tool ?? '', 'created', f.created ?? '0'];
      if (f.principal !== undefined) fields.push('principal', f.principal);
      if (f.credential !== undefined) fields.push('credential', f.credential);
      const args = [
        id,
        this.leases.ms,
        Math.ceil(this.options.retainS),
        Number(f.events ?? 0),
        '',
        '',
        fields.length,
        ...fields,
      ];
      try {
        const outcome = Number(
          await RESTORE.run(this.redis.client, [this.hashKey(id), this.streamKey(id), this.leases.key], args),
        );
        if (outcome === 1)
          this.logger.warn(
            { call_id: id },
            'Redis lost a running call resource its instance did not put back; put it back with a lease nobody renews (answered as lost if its instance is gone)',
          );
      } catch (err) {
        this.logger.warn(
          { call_id: id, error: (err as Error)?.message },
          'putting back a call resource Redis lost failed',
        );
      }
    }
  }

  /** After Redis lost its data: every call this instance keeps goes back, running and finished (their readers elsewhere are waiting). */
  private async restoreAll(): Promise<void> {
    for (const call of [...this.local.list()]) {
      if (this.closed) return;
      const outcome = await this.restore(call);
      if (outcome === 0 && this.owned.has(call.id) && !call.settled) this.decidedElsewhere(call);
    }
  }

  /** LeaseKind: the lease of a call this instance runs is gone from Redis. */
  async missing(id: string): Promise<void> {
    const call = this.owned.get(id);
    if (!call) return;
    // A settled call's lease goes with its final write (which a renewal running beside it finds missing): not another
    // instance's doing. Had another instance failed it, the export's own write learns so and says it.
    if ((await this.restore(call)) === 0 && !call.settled) this.decidedElsewhere(call);
  }

  /** LeaseKind: fail a call whose owner stopped renewing its lease. */
  async lapsed(id: string): Promise<void> {
    const c = this.redis.client;
    const [req, tool, created, principal] = await c.hmGet(this.hashKey(id), ['req', 'tool', 'created', 'principal']);
    const response = lostResponse(req ?? '', tool ?? '', Number(created ?? 0), this.leases.leaseS);
    const failed = await FAIL_LAPSED.run(
      c,
      [this.hashKey(id), this.streamKey(id), this.leases.key],
      [id, JSON.stringify(response), Math.ceil(this.options.retainS)],
    );
    if (failed === 1) {
      this.logger.warn(
        { call_id: id, tool_name: tool },
        'call failed: the instance running it was lost (its lease lapsed)',
      );
      await this.retain(id, principal ?? null);
    }
  }

  /** Stop requests for this instance's calls, from DELETE on other instances. */
  private async listenForStops(): Promise<void> {
    for (let failures = 0; !this.closed; failures++) {
      try {
        await this.redis.subscribe(this.stopChannel(this.instance), this.onStop);
        await this.redis.subscribe(this.runningChannel, this.onAnnounce);
        return; // the client resubscribes by itself after a reconnect
      } catch (err) {
        if (failures === 0)
          this.logger.warn(
            { error: (err as Error)?.message },
            'listening for call cancels from other instances failed; retrying',
          );
        await sleep(1000);
      }
    }
  }

  private readonly onStop = (id: string): void => void this.local.get(id)?.stop('cancel');

  /**
   * The HMAC key of the per-call access tokens, shared by every instance through Redis: the first instance
   * sets it (SET NX), the others read it. A random key (not one derived from config) needs no new secret in
   * the config, and an operator rotates it by deleting the key (tokens already handed out stop working).
   */
  private loadKey(): Promise<Buffer> {
    this.keyLoading ??= (async () => {
      // After Redis lost its data, the key this instance has goes back (the first instance back wins; they all had it).
      const mine = this.key?.toString('base64') ?? randomBytes(32).toString('base64');
      const key = this.redis.key('calls', 'access-key');
      const previous = await this.redis.client.sendCommand(['SET', key, mine, 'NX', 'GET']);
      this.key = Buffer.from(typeof previous === 'string' ? previous : mine, 'base64');
      return this.key;
    })().finally(() => (this.keyLoading = undefined));
    return this.keyLoading;
  }

  private hashKey(id: string): string {
    return this.redis.key('call', id);
  }

  private streamKey(id: string): string {
    return this.redis.key('call', id, 'events');
  }

  /** Where each instance announces the call resources it starts and ends. */
  private get runningChannel(): string {
    return this.redis.key('calls', 'running');
  }

  private stopChannel(instance: string): string {
    return this.redis.key('calls', 'stop', instance);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
