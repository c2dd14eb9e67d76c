/**
 * Handshake sessions and the shared admission limits in Redis (store.kind
 * redis), so a session opened on one instance serves calls on any other and
 * the limits hold across all of them.
 *
 * Keys (all under `store.prefix`):
 *   session:<id>               hash: agent, principal, capabilities, owner, created, last refresh; expires after `sessions.ttl_s` idle
 *   sessions                   zset: live session ids by last use (counts `sessions.max_sessions`)
 *   sessions:owner:<owner>     zset: one owner's session ids by last use (its quota; the lowest is evicted first)
 *   session-calls:<id>         zset: the session's running calls, scored by lease expiry (`max_parallel`)
 *   rate:<principal>           hash: the token bucket (tokens, last refill); expires once it would be full again
 *
 * Every call that needs any of it makes one round trip (ADMIT_CALL); its end
 * sends nothing of its own: the slots freed in one turn of the event loop go
 * back in one ZREM per session, or with the session's next ADMIT_CALL. Leases
 * (`calls.owner_lease_s`) are renewed while the call runs, so the slots of
 * an instance that dies lapse on their own.
 */
import { randomBytes } from 'node:crypto';
import { rateLimited, sessionFull, type Admitted, type Session, type SharedSessionStore } from '../../engine/index.js';
import { CommandDeadline } from './command-deadline.js';
import { storeUnavailable, type RedisConnection } from './connection.js';
import { ADMIT_CALL, CLOSE_SESSION, OPEN_SESSION, RENEW_LEASES } from './scripts.js';

export interface RedisSessionOptions {
  /** `sessions.ttl_s`: idle time after which a session expires, seconds. */
  ttlS: number;
  /** `sessions.max_parallel` (0 = no limit). */
  maxParallel: number;
  /** `sessions.max_sessions` (0 = no limit). */
  maxSessions: number;
  /** `sessions.max_per_principal` (0 = no limit). */
  maxPerOwner: number;
  /** `limits.rate_per_s` (0 = no limit) and `limits.rate_burst`, per principal. */
  ratePerS: number;
  rateBurst: number;
  /** `calls.owner_lease_s`: a running call's slot lapses this long after its instance stops renewing it. */
  leaseS: number;
}

type AdmitReply = [number, string | null, string | null, string | null, string | null, number, string?];

export class RedisSessions implements SharedSessionStore {
  private ttlMs!: string;
  private readonly leaseMs: number;
  /** Running calls' lease members per session, renewed while they run. */
  private readonly leases = new Map<string, Set<string>>();
  /** Slots given back since the last flush, per session: one ZREM per session per turn of the event loop. */
  private released = new Map<string, string[]>();
  private flushing = false;
  private readonly deadline: CommandDeadline;
  private readonly instance = randomBytes(6).toString('hex');
  private seq = 0;
  private renewing: NodeJS.Timeout | undefined;

  /** `commandTimeoutMs`: `store.command_timeout_ms`, the deadline of a call's admission. */
  constructor(
    private readonly redis: RedisConnection,
    private options: RedisSessionOptions,
    commandTimeoutMs: number,
  ) {
    this.update(options);
    this.leaseMs = Math.ceil(options.leaseS * 1000);
    this.deadline = new CommandDeadline(commandTimeoutMs, () => new Error(`Redis did not answer within ${commandTimeoutMs} ms (store.command_timeout_ms)`));
  }

  /**
   * The limits of a reloaded config (`limits.rate_per_s`, `limits.rate_burst`), in force from the next
   * call on: every admission passes them to the script, so the bucket in Redis follows at once.
   */
  update(options: RedisSessionOptions): void {
    this.options = options;
    this.ttlMs = String(Math.ceil(options.ttlS * 1000));
  }

  open(session: Session): Promise<boolean> {
    const owner = session.owner ?? '';
    return this.redis.run('opening a session', async (client) => {
      const stored = await OPEN_SESSION.run(
        client,
        [this.redis.key('sessions'), this.redis.key('sessions', 'owner', owner), this.redis.key('session', session.id)],
        [
          this.redis.key(''),
          session.id,
          this.ttlMs,
          String(this.options.maxSessions),
          String(this.options.maxPerOwner),
          session.agentId,
          session.principal ?? '',
          [...session.capabilities].join(' '),
          owner,
        ],
      );
      return stored === 1;
    });
  }

  async get(id: string): Promise<Session | undefined> {
    const reply = await this.admit('looking up the session', null, id, false, 0, 0, '');
    return reply[0] === 0 ? undefined : toSession(id, reply);
  }

  close(id: string): Promise<void> {
    return this.redis.run('closing the session', async (client) => {
      await CLOSE_SESSION.run(client, [this.redis.key('session', id), this.redis.key('sessions')], [this.redis.key(''), id]);
    });
  }

  /**
   * Close every live session whose principal `ended` picks (a config reload removed its token), on every
   * instance at once; resolves with how many were closed. Walks the live-sessions index in batches.
   */
  closeWhere(ended: (principal: string | null) => boolean): Promise<number> {
    return this.redis.run('closing the sessions of removed tokens', async (client) => {
      const ids = await client.zRange(this.redis.key('sessions'), 0, -1);
      let closed = 0;
      for (let i = 0; i < ids.length; i += CLOSE_BATCH) {
        const batch = ids.slice(i, i + CLOSE_BATCH);
        // Commands sent in one turn of the event loop go out together (the client pipelines them).
        const principals = await Promise.all(batch.map((id) => client.hGet(this.redis.key('session', id), 'p')));
        const doomed = batch.filter((_, j) => principals[j] != null && ended(principals[j] ? principals[j] : null));
        const done = await Promise.all(
          doomed.map((id) => CLOSE_SESSION.run<number>(client, [this.redis.key('session', id), this.redis.key('sessions')], [this.redis.key(''), id])),
        );
        closed += done.filter((n) => n === 1).length;
      }
      return closed;
    });
  }

  needed(principal: string | null, sessionId: string): boolean {
    return sessionId !== '' || (principal !== null && this.options.ratePerS > 0);
  }

  async admitCall(principal: string | null, sessionId: string): Promise<{ session: Session | undefined; admitted: Admitted } | undefined> {
    const rate = principal !== null ? this.options.ratePerS : 0;
    const maxParallel = sessionId ? this.options.maxParallel : 0;
    const member = maxParallel > 0 ? `${this.instance}:${(this.seq = (this.seq + 1) % Number.MAX_SAFE_INTEGER)}` : '';
    const reply = await this.admit('admitting the call', principal, sessionId, true, rate, maxParallel, member);
    const session = sessionId ? toSession(sessionId, reply) : undefined;
    switch (reply[0]) {
      case 0:
        return undefined;
      case 2:
        return { session, admitted: { refused: rateLimited(principal!, Number(reply[6])) } };
      case 3:
        return { session, admitted: { refused: sessionFull(maxParallel) } };
      default:
        return { session, admitted: { release: member ? this.lease(sessionId, member) : noop } };
    }
  }

  private admit(
    what: string,
    principal: string | null,
    sessionId: string,
    checkPrincipal: boolean,
    rate: number,
    maxParallel: number,
    member: string,
  ): Promise<AdmitReply> {
    const prefix = this.redis.key('');
    // The session's slots released but not yet flushed go with this script, before it counts.
    let released = sessionId ? this.released.get(sessionId) : undefined;
    if (released) {
      this.released.delete(sessionId);
      // Past what Lua's unpack takes, they go as their own ZREM, still ahead of this script on the connection.
      if (released.length > PIGGYBACK_MAX) released = void this.giveBack(sessionId, released);
    }
    const reply = ADMIT_CALL.run<AdmitReply>(
      this.redis.client,
      [`${prefix}session:${sessionId}`, `${prefix}sessions`, `${prefix}rate:${principal ?? ''}`, `${prefix}session-calls:${sessionId}`],
      [
        prefix,
        sessionId,
        principal ?? '',
        checkPrincipal ? '1' : '0',
        this.ttlMs,
        String(rate),
        String(this.options.rateBurst),
        String(maxParallel),
        String(this.leaseMs),
        member,
        ...(released ?? []),
      ],
      OWN_DEADLINE,
    );
    return this.deadline.watch(reply).catch((err: unknown) => {
      // Timed out here, the script may still run once Redis answers: a slot it took is given back then.
      if (member) reply.then((late) => late[0] === 1 && this.giveBack(sessionId, [member]), noop);
      throw storeUnavailable(what, err);
    });
  }

  /** Track a running call's slot until the returned function gives it back (once). */
  private lease(sessionId: string, member: string): () => void {
    let members = this.leases.get(sessionId);
    if (!members) this.leases.set(sessionId, (members = new Set()));
    members.add(member);
    this.renewing ??= setInterval(() => this.renew(), Math.max(100, this.leaseMs / 3)).unref();
    return () => {
      if (!members.delete(member)) return;
      if (members.size === 0) this.leases.delete(sessionId);
      if (this.leases.size === 0) {
        clearInterval(this.renewing);
        this.renewing = undefined;
      }
      const batch = this.released.get(sessionId);
      if (batch) batch.push(member);
      else this.released.set(sessionId, [member]);
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => this.flushReleased());
      }
    };
  }

  /**
   * Give back the slots released during this turn of the event loop: one ZREM per session, not waited
   * for (the calls are over either way; a slot Redis did not hear about lapses with its lease). An
   * admission in the same session before this flush takes the session's released slots along (see
   * admit), so Redis always hears of a release before any admission that follows it.
   */
  private flushReleased(): void {
    const released = this.released;
    this.released = new Map();
    this.flushing = false;
    for (const [sessionId, members] of released) this.giveBack(sessionId, members);
  }

  private giveBack(sessionId: string, members: string[]): void {
    this.redis.client.sendCommand(['ZREM', this.redis.key('session-calls', sessionId), ...members], OWN_DEADLINE).catch(noop);
  }

  private renew(): void {
    for (const [sessionId, members] of this.leases) {
      RENEW_LEASES.run(this.redis.client, [this.redis.key('session-calls', sessionId)], [String(this.leaseMs), ...members]).catch(noop); // retried next tick
    }
  }
}

/** Released slots an admission takes along at most (the rest go ahead of it as a ZREM). */
const PIGGYBACK_MAX = 500;
/** Sessions looked up per round trip when a reload closes the sessions of removed tokens. */
const CLOSE_BATCH = 500;
/** The client's per-command timeout off: admissions keep a cheaper one (CommandDeadline); releases need none. */
const OWN_DEADLINE = { timeout: 0 };

const noop = (): void => {};

function toSession(id: string, reply: AdmitReply): Session {
  return {
    id,
    agentId: reply[1] ?? '',
    principal: reply[2] ? reply[2] : null,
    capabilities: new Set(reply[3] ? reply[3].split(' ') : []),
    createdAt: Number(reply[4]),
    lastSeen: reply[5],
    owner: undefined,
  };
}
