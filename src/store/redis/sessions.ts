/**
 * Handshake sessions and the shared admission limits in Redis (store.kind
 * redis), so a session opened on one instance serves calls on any other and
 * the limits hold across all of them.
 *
 * Keys (all under `store.prefix`):
 *   session:<id>               hash: agent, principal, capabilities, owner, created, last refresh, credential; expires after `sessions.ttl_s` idle
 *   sessions                   zset: live session ids by last use (counts `sessions.max_sessions`)
 *   sessions:owner:<owner>     zset: one owner's session ids by last use (its quota; the lowest is evicted first)
 *   session-calls:<id>         zset: the session's running calls, scored by lease expiry (`max_parallel`)
 *   rate:<principal>           hash: the token bucket (tokens, last refill); expires once it would be full again
 *
 * The calls that need any of it in one turn of the event loop share one round
 * trip (ADMIT_CALLS: their admissions in the order asked, with the slots given
 * back since the last one); a call's end sends nothing of its own: its slot
 * goes back with the next ADMIT_CALLS, or in one ZREM per session at the end
 * of the turn when no admission is waiting. Leases
 * (`calls.owner_lease_s`) are renewed while the call runs, so the slots of
 * an instance that dies lapse on their own.
 */
import { rateLimited, sessionFull, type Admitted, type Session, type SharedSessionStore } from '../../engine/index.js';
import { CommandDeadline } from './command-deadline.js';
import type { DataLoss } from './data-loss.js';
import { storeUnavailable, type RedisConnection } from './connection.js';
import { ADMIT_CALLS, CLOSE_SESSION, OPEN_SESSION, RENEW_LEASES } from './scripts.js';

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

/** What a call's admission resolves with (see SharedSessionStore.admitCall). */
type Outcome = { session: Session | undefined; admitted: Admitted } | undefined;

/**
 * One admission (`check`: admitCall) or session lookup (get) waiting for the next ADMIT_CALLS; settled
 * straight from the reply with what its caller wants (an Outcome, or the Session), so a call waiting for
 * Redis holds one promise, not a chain of them.
 */
interface Pending {
  /** For the error when Redis cannot answer ("admitting the call"). */
  readonly what: string;
  readonly sessionId: string;
  readonly principal: string;
  readonly check: boolean;
  readonly rate: number;
  readonly maxParallel: number;
  /** The running call's lease member ("" = no slot to take). */
  readonly member: string;
  readonly resolve: (value: Outcome | Session | undefined) => void;
  readonly reject: (err: unknown) => void;
}

export class RedisSessions implements SharedSessionStore {
  private ttlMs!: string;
  private readonly leaseMs: number;
  /** Running calls' lease members per session, renewed while they run. */
  private readonly leases = new Map<string, Set<string>>();
  /** Slots given back since the last flush, per session: they go with the next ADMIT_CALLS, else one ZREM per session. */
  private released = new Map<string, string[]>();
  /** Admissions asked for since the last flush, in order. */
  private pending: Pending[] = [];
  private flushing = false;
  private readonly deadline: CommandDeadline;
  private seq = 0;
  private renewing: NodeJS.Timeout | undefined;

  /** `commandTimeoutMs`: `store.command_timeout_ms`, the deadline of a call's admission. */
  constructor(
    private readonly redis: RedisConnection,
    private options: RedisSessionOptions,
    commandTimeoutMs: number,
    /** Tells when Redis lost its data: a session missing since may have been lost with it. */
    private readonly dataLoss?: DataLoss,
  ) {
    this.update(options);
    this.leaseMs = Math.ceil(options.leaseS * 1000);
    this.deadline = new CommandDeadline(
      commandTimeoutMs,
      () => new Error(`Redis did not answer within ${commandTimeoutMs} ms (store.command_timeout_ms)`),
    );
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
          session.credential ?? '',
        ],
      );
      return stored === 1;
    });
  }

  lostAt(): number | undefined {
    const at = this.dataLoss?.lastLoss;
    // A session idle longer than sessions.ttl_s would have expired anyway.
    return at !== undefined && Date.now() - at < Number(this.ttlMs) ? at : undefined;
  }

  get(id: string): Promise<Session | undefined> {
    return this.admit<Session | undefined>('looking up the session', null, id, false, 0, 0, '');
  }

  close(id: string): Promise<void> {
    return this.redis.run('closing the session', async (client) => {
      await CLOSE_SESSION.run(
        client,
        [this.redis.key('session', id), this.redis.key('sessions')],
        [this.redis.key(''), id],
      );
    });
  }

  /**
   * Close every live session whose principal `ended` picks (a config reload removed its token), on every
   * instance at once; resolves with how many were closed. Walks the live-sessions index in batches.
   */
  closeWhere(ended: (principal: string | null, credential: string | undefined) => boolean): Promise<number> {
    return this.redis.run('closing the sessions of removed tokens', async (client) => {
      const ids = await client.zRange(this.redis.key('sessions'), 0, -1);
      let closed = 0;
      for (let i = 0; i < ids.length; i += CLOSE_BATCH) {
        const batch = ids.slice(i, i + CLOSE_BATCH);
        // Commands sent in one turn of the event loop go out together (the client pipelines them).
        const owners = await Promise.all(batch.map((id) => client.hmGet(this.redis.key('session', id), ['p', 'k'])));
        const doomed = batch.filter((_, j) => {
          const [principal, credential] = owners[j]!;
          return principal != null && ended(principal ? principal : null, credential ? credential : undefined);
        });
        const done = await Promise.all(
          doomed.map((id) =>
            CLOSE_SESSION.run<number>(
              client,
              [this.redis.key('session', id), this.redis.key('sessions')],
              [this.redis.key(''), id],
            ),
          ),
        );
        closed += done.filter((n) => n === 1).length;
      }
      return closed;
    });
  }

  needed(principal: string | null, sessionId: string): boolean {
    return sessionId !== '' || (principal !== null && this.options.ratePerS > 0);
  }

  admitCall(principal: string | null, sessionId: string): Promise<Outcome> {
    const rate = principal !== null ? this.options.ratePerS : 0;
    const maxParallel = sessionId ? this.options.maxParallel : 0;
    const member =
      maxParallel > 0 ? `${this.redis.instance}:${(this.seq = (this.seq + 1) % Number.MAX_SAFE_INTEGER)}` : '';
    return this.admit<Outcome>('admitting the call', principal, sessionId, true, rate, maxParallel, member);
  }

  /** Queue one admission or lookup for the ADMIT_CALLS sent at the end of this turn of the event loop. */
  private admit<T extends Outcome | Session | undefined>(
    what: string,
    principal: string | null,
    sessionId: string,
    check: boolean,
    rate: number,
    maxParallel: number,
    member: string,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({
        what,
        sessionId,
        principal: principal ?? '',
        check,
        rate,
        maxParallel,
        member,
        resolve: resolve as Pending['resolve'],
        reject,
      });
      this.scheduleFlush();
    });
  }

  /** What `p` resolves with, from its verdict: the outcome of an admission, the session of a lookup. */
  private settle(
    p: Pending,
    status: number,
    session: Session | undefined,
    waitS: number,
  ): Outcome | Session | undefined {
    if (!p.check) return status === 0 ? undefined : session;
    switch (status) {
      case 0:
        return undefined;
      case 2:
        return { session, admitted: { refused: rateLimited(p.principal, waitS) } };
      case 3:
        return { session, admitted: { refused: sessionFull(p.maxParallel) } };
      default:
        return { session, admitted: { release: p.member ? this.lease(p.sessionId, p.member) : noop } };
    }
  }

  private scheduleFlush(): void {
    if (this.flushing) return;
    this.flushing = true;
    // Not a microtask: requests on other connections are read later in the same turn, and join this batch.
    setImmediate(() => this.flush());
  }

  /**
   * Send what this turn of the event loop asked for: the admissions in one ADMIT_CALLS, which also
   * gives back the slots released since the last flush, so Redis always hears of a release before any
   * admission that follows it. Without admissions, the slots go back in one ZREM per session, not
   * waited for (the calls are over either way; a slot Redis did not hear about lapses with its lease).
   */
  private flush(): void {
    const pending = this.pending;
    const released = this.released;
    this.pending = [];
    this.released = new Map();
    this.flushing = false;
    if (pending.length === 0) {
      for (const [sessionId, members] of released) this.giveBack(sessionId, members);
      return;
    }
    const args = [
      '0',
      this.redis.key(''),
      this.ttlMs,
      String(this.options.rateBurst),
      String(this.leaseMs),
      String(released.size),
    ];
    for (const [sessionId, members] of released) args.push(sessionId, String(members.length), ...members);
    for (const p of pending)
      args.push(p.sessionId, p.principal, p.check ? '1' : '0', String(p.rate), String(p.maxParallel), p.member);
    const reply = ADMIT_CALLS.eval<(number | string)[]>(this.redis.client, args, OWN_DEADLINE);
    this.deadline.watch(reply).then(
      (values) =>
        readVerdicts(pending, values, (p, status, session, waitS) => p.resolve(this.settle(p, status, session, waitS))),
      (err: unknown) => {
        for (const p of pending) p.reject(storeUnavailable(p.what, err));
        // Timed out here, the script may still run once Redis answers: the slots it took are given back then.
        reply.then((late) => {
          readVerdicts(pending, late, (p, status) => {
            if (status === 1 && p.member) this.giveBack(p.sessionId, [p.member]);
          });
        }, noop);
      },
    );
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
      this.scheduleFlush();
    };
  }

  private giveBack(sessionId: string, members: string[]): void {
    this.redis.client
      .sendCommand(['ZREM', this.redis.key('session-calls', sessionId), ...members], OWN_DEADLINE)
      .catch(noop);
  }

  private renew(): void {
    for (const [sessionId, members] of this.leases) {
      RENEW_LEASES.run(
        this.redis.client,
        [this.redis.key('session-calls', sessionId)],
        [String(this.leaseMs), ...members],
      ).catch(noop); // retried next tick
    }
  }
}

/** Sessions looked up per round trip when a reload closes the sessions of removed tokens. */
const CLOSE_BATCH = 500;
/** The client's per-command timeout off: admissions keep a cheaper one (CommandDeadline); releases need none. */
const OWN_DEADLINE = { timeout: 0 };

const noop = (): void => {};

/**
 * Walk ADMIT_CALLS's answer (see the script for its layout): `each` gets every admission with its status,
 * session (when the status is not 0 and it has one) and, for status 2, the wait in seconds.
 */
function readVerdicts(
  pending: Pending[],
  values: (number | string)[],
  each: (p: Pending, status: number, session: Session | undefined, waitS: number) => void,
): void {
  const now = values[0] as number;
  let sessions: Map<string, Session> | undefined;
  let at = 1;
  for (const p of pending) {
    const status = values[at++] as number;
    const waitS = status === 2 ? Number(values[at++]) : 0;
    let session: Session | undefined;
    if (status !== 0 && p.sessionId) {
      session = sessions?.get(p.sessionId);
      if (!session) {
        session = toSession(
          p.sessionId,
          values[at] as string | null,
          values[at + 1] as string | null,
          values[at + 2] as string | null,
          values[at + 3] as string,
          now,
        );
        (sessions ??= new Map()).set(p.sessionId, session);
        at += 4;
      }
    }
    each(p, status, session, waitS);
  }
}

function toSession(
  id: string,
  agent: string | null,
  principal: string | null,
  capabilities: string | null,
  created: string,
  now: number,
): Session {
  return {
    id,
    agentId: agent ?? '',
    principal: principal ? principal : null,
    capabilities: new Set(capabilities ? capabilities.split(' ') : []),
    createdAt: Number(created),
    lastSeen: now,
    owner: undefined,
  };
}
