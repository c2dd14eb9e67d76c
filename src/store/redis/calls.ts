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
 * - The owner renews the leases of all its running calls in one command every
 *   third of `calls.owner_lease_s`. Every instance sweeps lapsed leases and
 *   fails those calls (once: a script), so the watchers everywhere get a final
 *   response when an instance dies.
 * - Redis down: starting or reading a call elsewhere answers 503; a running
 *   call goes on, its unsent events wait in the call (bounded by the call's
 *   own event limits; beyond them the oldest are dropped and readers get a gap
 *   notice) and are written when Redis is back.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { PROTOCOL_VERSION, newId, nowTs, type ToolCallResponse } from '../../protocol/index.js';
import { isCallId, type Call, type CallStore, type CallView, type Logger, type MemoryCallStore, type Watcher } from '../../engine/index.js';
import { storeUnavailable, type RedisConnection } from './connection.js';
import { APPEND, FAIL_LAPSED, LAPSED, REGISTER, RENEW } from './call-scripts.js';
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
  /** calls.owner_lease_s */
  leaseS: number;
  /** calls.max_retained and calls.max_retained_per_principal: how many finished calls Redis keeps (call-retention.ts). */
  shares: Omit<CallRetentionShares, 'retainS'>;
}

/** Lapsed leases failed per sweep (the next sweep takes the rest). */
const SWEEP_BATCH = 100;

export class RedisCallStore implements CallStore {
  /** This instance's id: the owner of the calls it runs. */
  readonly instance = randomUUID();
  private readonly redis: RedisConnection;
  private readonly local: MemoryCallStore;
  private readonly logger: Logger;
  private readonly reader: StreamReader;
  private readonly leaseMs: number;
  /** Calls this instance runs whose export has not finished (their leases are renewed). */
  private readonly owned = new Set<Call>();
  /** Exports still writing (awaited, bounded, on close). */
  private readonly exports = new Set<Promise<void>>();
  private key: Buffer | undefined;
  private keyLoading: Promise<Buffer> | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  /** Since when the command connection has been up (sweeping waits a lease after a reconnect). */
  private upSince: number | undefined;
  private closed = false;
  private readonly host: RemoteCallHost;

  constructor(private readonly options: RedisCallStoreOptions) {
    this.redis = options.redis;
    this.local = options.local;
    this.logger = options.logger;
    this.leaseMs = Math.round(options.leaseS * 1000);
    this.reader = new StreamReader(
      this.redis,
      { wakeKey: this.redis.key('calls', 'wake', this.instance), wakeTtlS: 3600, purpose: 'call-events', count: 1000, what: 'call events' },
      this.logger,
    );
    this.host = {
      reader: this.reader,
      streamKey: (id) => this.streamKey(id),
      requestStop: async (owner, id) => Number(await this.redis.run('canceling a call', (c) => c.publish(this.stopChannel(owner), id))) > 0,
    };
  }

  /** Start the lease renewal, the sweeper and the cancel listener; load the shared access key. Works with Redis down (catches up when it is back). */
  start(): void {
    const client = this.redis.client;
    if (client.isReady) this.upSince = Date.now();
    client.on('ready', () => {
      this.upSince = Date.now();
      void this.renew(); // before any sweeper elsewhere could think this instance gone
    });
    client.on('error', () => (this.upSince = undefined));
    const every = (ms: number, work: () => Promise<void>) => this.timers.push(setInterval(() => void work(), ms).unref());
    every(Math.max(100, this.leaseMs / 3), () => this.renew());
    every(Math.max(100, this.leaseMs / 2), () => this.sweep());
    void this.listenForStops();
    void this.loadKey().catch(() => {}); // retried on first use
  }

  put(call: Call): Promise<void> {
    if (!this.redis.client.isReady) return Promise.reject(storeUnavailable('starting a call resource'));
    this.local.put(call);
    // Watch before the tool runs (it starts on the next microtask): the export sees every event.
    const watcher = call.watch(-1);
    const fields: string[] = ['owner', this.instance, 'req', call.requestId, 'tool', call.toolName, 'created', String(call.createdAt), 'state', 'running', 'events', '0'];
    if (call.principal !== null) fields.push('principal', call.principal);
    if (call.credential !== undefined) fields.push('credential', call.credential);
    const registered = this.redis.run('starting a call resource', async (c) => {
      await Promise.all([REGISTER.run(c, [this.hashKey(call.id), this.leasesKey()], [call.id, this.leaseMs, ...fields]), this.key ?? this.loadKey()]);
    });
    return registered.then(
      () => {
        // Its lease is renewed until everything is written (not just until it settles): a final response
        // still waiting for Redis to come back must not be taken for a lost instance.
        this.owned.add(call);
        const exported = this.export(call, watcher).finally(() => {
          this.owned.delete(call);
          this.exports.delete(exported);
        });
        this.exports.add(exported);
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
    for (const t of this.timers) clearInterval(t);
    if (this.exports.size) await Promise.race([Promise.allSettled([...this.exports]), sleep(graceMs)]);
    this.closed = true;
    await this.reader.close();
  }

  private async findRemote(id: string): Promise<CallView | undefined> {
    const [fields] = await this.redis.run('reading a call resource', async (c) => Promise.all([c.hGetAll(this.hashKey(id)), this.key ?? this.loadKey()]));
    if (!fields || !fields.req) return undefined;
    return new RemoteCall(this.host, id, fields as Record<string, string>);
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
        const kept = await this.write(args, call.id);
        if (!kept) {
          // Another instance failed it after this one's lease lapsed: its outcome is decided; stop the tool.
          this.logger.warn({ call_id: call.id }, 'call was failed by another instance while its lease had lapsed (Redis unreachable for longer than calls.owner_lease_s); stopping it here');
          call.stop('cancel');
          return;
        }
      }
      await this.retain(call.id, call.principal);
    } finally {
      watcher.close();
    }
  }

  /** Hold the finished calls in Redis to their principal's share and the backstop of all (call-retention.ts). */
  private async retain(id: string, principal: string | null): Promise<void> {
    if (this.closed) return;
    const run = retainRun((...parts) => this.redis.key(...parts), { retainS: this.options.retainS, ...this.options.shares }, id, principal);
    await run.script.run(this.redis.client, run.keys, run.args).catch((err: unknown) =>
      this.logger.warn({ call_id: id, error: (err as Error)?.message }, 'dropping the oldest finished calls in Redis failed; they expire after calls.retain_s'),
    );
  }

  /** One APPEND, retried with backoff while Redis is unreachable (the call goes on meanwhile). False when the call is no longer ours to write. */
  private async write(args: (string | number)[], id: string): Promise<boolean> {
    for (let failures = 0; ; failures++) {
      try {
        return (await APPEND.run(this.redis.client, [this.hashKey(id), this.streamKey(id), this.leasesKey()], args)) === 1;
      } catch (err) {
        if (this.closed) return true;
        if (failures === 0) this.logger.warn({ call_id: id, error: (err as Error)?.message }, 'writing call events to Redis failed; retrying until it is back');
        await sleep(Math.min(50 * 2 ** failures, 1000));
      }
    }
  }

  private async renew(): Promise<void> {
    if (this.owned.size === 0 || !this.redis.client.isReady) return;
    const ids = [...this.owned].map((c) => c.id);
    await RENEW.run(this.redis.client, [this.leasesKey()], [this.leaseMs, ...ids]).catch((err: unknown) =>
      this.logger.warn({ error: (err as Error)?.message }, 'renewing call leases in Redis failed'),
    );
  }

  /** Fail the calls whose owner stopped renewing their lease. Waits a whole lease after (re)connecting, so live owners renew first. */
  private async sweep(): Promise<void> {
    if (this.upSince === undefined || Date.now() - this.upSince < this.leaseMs || !this.redis.client.isReady) return;
    try {
      const c = this.redis.client;
      const lapsed = (await LAPSED.run(c, [this.leasesKey()], [SWEEP_BATCH])) as string[];
      for (const id of lapsed) {
        const [req, tool, created, principal] = await c.hmGet(this.hashKey(id), ['req', 'tool', 'created', 'principal']);
        const response = lostResponse(req ?? '', tool ?? '', Number(created ?? 0), this.options.leaseS);
        const failed = await FAIL_LAPSED.run(c, [this.hashKey(id), this.streamKey(id), this.leasesKey()], [id, JSON.stringify(response), Math.ceil(this.options.retainS)]);
        if (failed === 1) {
          this.logger.warn({ call_id: id, tool_name: tool }, 'call failed: the instance running it was lost (its lease lapsed)');
          await this.retain(id, principal ?? null);
        }
      }
    } catch (err) {
      this.logger.warn({ error: (err as Error)?.message }, 'sweeping lapsed call leases failed');
    }
  }

  /** Stop requests for this instance's calls, from DELETE on other instances. */
  private async listenForStops(): Promise<void> {
    for (let failures = 0; !this.closed; failures++) {
      let sub: Awaited<ReturnType<RedisConnection['dedicated']>> | undefined;
      try {
        sub = await this.redis.dedicated('call-stop');
        await sub.subscribe(this.stopChannel(this.instance), (id: string) => this.local.get(id)?.stop('cancel'));
        return; // the client resubscribes by itself after a reconnect
      } catch (err) {
        if (sub) await this.redis.release(sub);
        if (failures === 0) this.logger.warn({ error: (err as Error)?.message }, 'listening for call cancels from other instances failed; retrying');
        await sleep(1000);
      }
    }
  }

  /**
   * The HMAC key of the per-call access tokens, shared by every instance through Redis: the first instance
   * sets it (SET NX), the others read it. A random key (not one derived from config) needs no new secret in
   * the config, and an operator rotates it by deleting the key (tokens already handed out stop working).
   */
  private loadKey(): Promise<Buffer> {
    this.keyLoading ??= (async () => {
      const mine = randomBytes(32).toString('base64');
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

  private leasesKey(): string {
    return this.redis.key('calls', 'leases');
  }

  private stopChannel(instance: string): string {
    return this.redis.key('calls', 'stop', instance);
  }
}

/** The final response of a call whose instance was lost. */
function lostResponse(reqId: string, toolName: string, createdAt: number, leaseS: number): ToolCallResponse {
  const ts = nowTs();
  return {
    type: 'tool/call/resp',
    id: newId(),
    version: PROTOCOL_VERSION,
    ts,
    req_id: reqId,
    created_at: ts,
    data: {
      success: false,
      tool_name: toolName,
      data: null,
      summary: null,
      truncated: false,
      exit_code: null,
      error:
        `the gateway instance running tool "${toolName}" was lost (it stopped renewing the call's lease for ${leaseS} s, calls.owner_lease_s); ` +
        'the call may or may not have finished its work: check before retrying it',
      error_code: 'tool_error',
      duration_ms: Math.max(0, Math.round(Date.now() - createdAt * 1000)),
      events: [],
    },
  } as ToolCallResponse;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
