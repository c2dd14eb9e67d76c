/**
 * Leases of what one instance runs and others watch, whatever the door: a
 * call resource, a call sent over the A2E transport. One sorted set
 * (`<prefix>calls:leases`, member → expiry in Redis's clock) holds them all;
 * a member starts with its kind's prefix (a call resource's is its bare id,
 * prefix "": the longest prefix that matches wins), which knows how to end it.
 *
 * - The holder renews every lease it holds in one script every third of
 *   `calls.owner_lease_s` (and at once when the connection comes back). A
 *   lease Redis no longer has is handed to its kind (`missing`): Redis lost
 *   it (re-create what was lost), or another instance failed it while this
 *   one could not reach Redis (stop it here).
 * - Every instance sweeps lapsed leases every half lease and hands each to
 *   its kind (`lapsed`), which gives its watchers a final answer saying the
 *   instance running it was lost, exactly once (a script that checks the
 *   lease and removes it). An instance sweeps only after its connection has
 *   been up for a whole lease, so after a Redis restart live holders renew
 *   before anyone declares them lost.
 */
import { PROTOCOL_VERSION, newId, nowTs, type ToolCallResponse } from '../../protocol/index.js';
import type { Logger } from '../../engine/index.js';
import type { RedisConnection } from './connection.js';
import { RedisScript } from './script.js';

/** What can outlive its instance, by the prefix of its members. */
export interface LeaseKind {
  /** Members of this kind start with it (e.g. "a2e:"; "" for what no other kind claims). */
  readonly prefix: string;
  /** The lease lapsed (its holder is gone): answer its watchers once, with the error of `lostResponse`. */
  lapsed(member: string): Promise<void>;
  /** This instance holds it, but Redis has no lease for it: re-create what Redis lost, or stop it when another instance failed it. */
  missing(member: string): Promise<void>;
}

/** `now`: Redis's clock in ms. */
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/** Renew leases. KEYS: leases. ARGV: lease ms, member, member, … → the members it has no lease for. */
const RENEW = new RedisScript(`${NOW}
local until_ = now + tonumber(ARGV[1])
local missing = {}
for i = 2, #ARGV do
  if redis.call('ZADD', KEYS[1], 'XX', 'CH', until_, ARGV[i]) == 0 and not redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    missing[#missing + 1] = ARGV[i]
  end
end
return missing`);

/** Lapsed leases. KEYS: leases. ARGV: most to return. */
const LAPSED = new RedisScript(`${NOW}
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))`);

/** Lapsed leases ended per sweep (the next sweep takes the rest). */
const SWEEP_BATCH = 100;

/**
 * The Lua that takes a lapsed lease, for a kind's script: `now` and `lapsed(leases, member)`, true when the
 * lease had lapsed and is now removed (so exactly one instance ends it).
 */
export const TAKE_LAPSED = `${NOW}
local function lapsed(leases, member)
  local score = redis.call('ZSCORE', leases, member)
  if not score or tonumber(score) > now then return false end
  redis.call('ZREM', leases, member)
  return true
end
`;

export class Leases {
  /** The sorted set of every lease. */
  readonly key: string;
  readonly ms: number;
  private readonly held = new Set<string>();
  private readonly kinds: LeaseKind[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  /** Since when the command connection has been up. */
  private upSince: number | undefined;
  private started = false;

  constructor(
    private readonly redis: RedisConnection,
    /** calls.owner_lease_s */
    readonly leaseS: number,
    private readonly logger: Logger,
  ) {
    this.key = redis.key('calls', 'leases');
    this.ms = Math.round(leaseS * 1000);
  }

  register(kind: LeaseKind): void {
    this.kinds.push(kind);
    this.start();
  }

  /** Renew `member`'s lease from now on (its first lease is written with what it leases, in one script). */
  hold(member: string): void {
    this.held.add(member);
  }

  /** Stop renewing it (its lease was removed with its final answer, or it lapses). */
  release(member: string): void {
    this.held.delete(member);
  }

  holds(member: string): boolean {
    return this.held.has(member);
  }

  /** Renew now (e.g. right after re-creating leases). */
  renewNow(): Promise<void> {
    return this.renew();
  }

  close(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers.length = 0;
  }

  private start(): void {
    if (this.started) return;
    this.started = true;
    const client = this.redis.client;
    if (client.isReady) this.upSince = Date.now();
    client.on('ready', () => {
      this.upSince = Date.now();
      void this.renew(); // before any sweeper elsewhere could think this instance gone
    });
    client.on('error', () => (this.upSince = undefined));
    const every = (ms: number, work: () => Promise<void>) =>
      this.timers.push(setInterval(() => void work(), ms).unref());
    every(Math.max(100, this.ms / 3), () => this.renew());
    every(Math.max(100, this.ms / 2), () => this.sweep());
  }

  private kindOf(member: string): LeaseKind | undefined {
    let best: LeaseKind | undefined;
    for (const k of this.kinds)
      if (member.startsWith(k.prefix) && (!best || k.prefix.length > best.prefix.length)) best = k;
    return best;
  }

  private async renew(): Promise<void> {
    if (this.held.size === 0 || !this.redis.client.isReady) return;
    let missing: string[];
    try {
      missing = (await RENEW.run(this.redis.client, [this.key], [this.ms, ...this.held])) as string[];
    } catch (err) {
      this.logger.warn({ error: (err as Error)?.message }, 'renewing call leases in Redis failed');
      return;
    }
    for (const member of missing) {
      if (!this.held.has(member)) continue; // ended while the script ran
      await this.kindOf(member)
        ?.missing(member)
        .catch((err: unknown) =>
          this.logger.warn(
            { error: (err as Error)?.message, lease: member },
            're-creating a lease Redis lost failed; retried at the next renewal',
          ),
        );
    }
  }

  /** End what the lapsed leases were held for. Waits a whole lease after (re)connecting, so live holders renew first. */
  private async sweep(): Promise<void> {
    if (this.upSince === undefined || Date.now() - this.upSince < this.ms || !this.redis.client.isReady) return;
    try {
      const lapsed = (await LAPSED.run(this.redis.client, [this.key], [SWEEP_BATCH])) as string[];
      for (const member of lapsed) {
        await this.kindOf(member)?.lapsed(member);
      }
    } catch (err) {
      this.logger.warn({ error: (err as Error)?.message }, 'sweeping lapsed call leases failed');
    }
  }
}

/** The final response of a call whose instance was lost. */
export function lostResponse(reqId: string, toolName: string, createdAt: number, leaseS: number): ToolCallResponse {
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
