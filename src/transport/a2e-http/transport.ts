/**
 * The A2E HTTP message transport, without the HTTP: sessions (created,
 * found, expired, closed), message intake and stream attachment. The Hono
 * adapter in src/routes/doors/a2e-transport.ts maps it onto routes.
 */
import { randomBytes } from 'node:crypto';
import { SessionManager, type StopReason } from '../../engine/index.js';
import { ByteBudget } from '../../utils/byte-budget.js';
import { DEFAULT_MAX_JSON_DEPTH } from '../../engine/message-reader.js';
import { acceptAnyToken } from './auth.js';
import { SessionBinding, type Presenter } from './binding.js';
import { dispatch, type DispatchDeps } from './dispatch.js';
import { TransportSession, type FrameSink } from './session.js';
import type { A2eTransport } from './seam.js';
import { DEFAULT_MEMORY, type A2eHttpTransportOptions, type TransportMemoryLimits } from './options.js';

/** Why the transport refused a request; the adapter turns it into an HTTP status. */
export type RefusalKind =
  | 'missing_session'
  | 'unknown_session'
  | 'too_many_sessions'
  | 'quota_in_use'
  | 'queue_full'
  | 'shutting_down'
  | 'unauthorized'
  | 'foreign_session';

export class TransportRefusal extends Error {
  constructor(
    readonly kind: RefusalKind,
    message: string,
  ) {
    super(message);
    this.name = 'TransportRefusal';
  }
}

export { DEFAULT_MEMORY, type A2eHttpTransportOptions, type TransportMemoryLimits } from './options.js';

export class A2eHttpTransport implements A2eTransport {
  private readonly sessions = new Map<string, TransportSession>();
  /** Open sessions per quota key (principal or client address). */
  private readonly byOwner = new Map<string, Set<TransportSession>>();
  private readonly deps: DispatchDeps;
  private readonly idleMs: number;
  private readonly handshakeMs: number;
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;
  private readonly memory: TransportMemoryLimits;
  /** Bytes all sessions' outboxes hold. */
  private readonly outboxTotal: ByteBudget;

  constructor(private readonly options: A2eHttpTransportOptions) {
    const { config } = options;
    this.idleMs = config.session_idle_s * 1000;
    this.handshakeMs = config.handshake_timeout_s * 1000;
    this.memory = options.memory ?? DEFAULT_MEMORY;
    this.outboxTotal = new ByteBudget(this.memory.outboxTotalBytes);
    this.deps = dispatchDeps(options, (s, reason) => this.closeSession(s as TransportSession, reason));
    this.sweeper = setInterval(() => this.sweep(), Math.min(this.idleMs / 2, this.handshakeMs / 2, 10_000));
    this.sweeper.unref();
  }

  /** Open sessions. */
  get size(): number {
    return this.sessions.size;
  }

  /** Bytes all sessions' outboxes hold now. */
  get outboxBytes(): number {
    return this.outboxTotal.used;
  }

  /**
   * POST /session, by `by`: the session belongs to its bearer token's
   * principal, or (none presented) waits for a handshake to authenticate one.
   */
  createSession(by: Presenter = ANONYMOUS): string {
    if (this.closed)
      throw new TransportRefusal(
        'shutting_down',
        'the gateway is shutting down; retry against another instance or later',
      );
    const id = randomBytes(16).toString('hex');
    const binding = new SessionBinding(id, by.principal, by.address);
    this.makeRoom(binding.quotaKey, by.principal !== null);
    const session = new TransportSession(
      id,
      {
        resumeFrames: this.options.config.resume_frames,
        sessionBytes: this.memory.outboxSessionBytes,
        total: this.outboxTotal,
        takeBytes: this.memory.streamWriteBytes,
      },
      binding,
    );
    this.sessions.set(id, session);
    let own = this.byOwner.get(binding.quotaKey);
    if (!own) this.byOwner.set(binding.quotaKey, (own = new Set()));
    own.add(session);
    // Never the session id itself: it is what lets a client use the session.
    this.options.logger.debug(
      { session_ref: binding.ref, open_sessions: this.sessions.size },
      'A2E transport session opened',
    );
    return id;
  }

  /**
   * Room for one more session of `owner`: at its quota its own least
   * recently used idle session is closed (another owner's sessions are never
   * touched), and it is refused when none of its own is idle. The quota is
   * below max_sessions, so one owner alone cannot fill the gateway.
   */
  private makeRoom(owner: string, authenticated: boolean): void {
    const { config } = this.options;
    const quota = authenticated ? config.max_sessions_per_principal : config.max_sessions_per_address;
    if ((this.byOwner.get(owner)?.size ?? 0) >= quota && !this.evictOldestIdle(owner)) {
      const key = authenticated ? 'transport.max_sessions_per_principal' : 'transport.max_sessions_per_address';
      throw new TransportRefusal(
        'quota_in_use',
        `all ${quota} of your sessions (${key}) have a stream attached or calls running; end one with a shutdown message, then retry`,
      );
    }
    if (this.sessions.size < config.max_sessions) return;
    this.sweep();
    if (this.sessions.size >= config.max_sessions) {
      throw new TransportRefusal(
        'too_many_sessions',
        `too many open sessions (transport.max_sessions = ${config.max_sessions}); close unused ones with a shutdown message, or retry later`,
      );
    }
  }

  /** Close `owner`'s least recently used session without a stream or running calls; false when it has none. */
  private evictOldestIdle(owner: string): boolean {
    let oldest: TransportSession | undefined;
    for (const s of this.byOwner.get(owner) ?? []) {
      if (s.state !== 'open' || s.attached || s.calls.size > 0) continue;
      if (!oldest || s.lastActivity < oldest.lastActivity) oldest = s;
    }
    if (!oldest) return false;
    this.forget(oldest);
    void this.closeSession(oldest, 'disconnect');
    return true;
  }

  /**
   * The live session for an X-Session-Id header value, used by `by` (its
   * bearer principal; null: none), or a refusal saying what is wrong.
   */
  session(id: string | undefined, by: string | null = null): TransportSession {
    if (!id)
      throw new TransportRefusal(
        'missing_session',
        'missing X-Session-Id header; POST /session first and send its session_id in X-Session-Id',
      );
    const s = this.sessions.get(id);
    if (!s || s.state === 'closing' || s.state === 'closed') {
      throw new TransportRefusal('unknown_session', 'unknown or expired session; POST /session to open a new one');
    }
    const refusal = s.binding.check(by);
    if (refusal) throw new TransportRefusal(refusal.kind, refusal.message);
    const now = Date.now();
    if (s.idle(now, this.idleMs)) {
      void this.closeSession(s, 'disconnect');
      throw new TransportRefusal(
        'unknown_session',
        'the session expired after being idle; POST /session to open a new one',
      );
    }
    if (this.missedHandshake(s, now)) {
      void this.closeSession(s, 'disconnect');
      throw new TransportRefusal(
        'unknown_session',
        `the session was closed: no successful handshake within transport.handshake_timeout_s (${this.options.config.handshake_timeout_s} s) ` +
          'of POST /session; open a new one and send handshake/req right away',
      );
    }
    return s;
  }

  /** A2eTransport.check: the session may be used by `by`. */
  check(id: string | undefined, by: string | null = null): void {
    this.session(id, by);
  }

  streamAttached(id: string): boolean {
    return this.sessions.get(id)?.attached ?? false;
  }

  /** A session that has not completed a handshake within the deadline (so unused sessions cannot pile up). */
  private missedHandshake(s: TransportSession, now: number): boolean {
    return !s.binding.handshook && now - s.binding.createdAt > this.handshakeMs;
  }

  /** POST /send: accept one message for the session; its answer travels on the stream. */
  send(sessionId: string | undefined, body: Uint8Array, by: string | null = null): void {
    const s = this.session(sessionId, by);
    // Every accepted message has at least one answer to come: count those not handled yet too.
    const waiting = s.outbox.size + s.inbox.size;
    if (waiting >= this.options.config.max_queued) {
      throw new TransportRefusal(
        'queue_full',
        `${waiting} messages are waiting for GET /stream (transport.max_queued); read the stream, then send again`,
      );
    }
    // Bytes too: answers can be large (a call's result), and a session that never reads must not hold the gateway's memory.
    if (s.outbox.full || this.outboxTotal.over) {
      const [held, key] = s.outbox.full
        ? [s.outbox.bytes, 'limits.outbox_session_bytes']
        : [this.outboxTotal.used, 'limits.outbox_total_bytes'];
      throw new TransportRefusal(
        'queue_full',
        `${held} bytes of answers are waiting for GET /stream (${key}); read the stream, then send again`,
      );
    }
    s.touch();
    s.inbox.enqueue(() => dispatch(this.deps, s, body));
  }

  /** GET /stream: attach `sink` as the session's stream. */
  attach(sessionId: string | undefined, sink: FrameSink, lastEventId?: string, by: string | null = null): void {
    this.session(sessionId, by).attach(sink, lastEventId);
  }

  endWhere(revoked: (principal: string | null) => boolean): number {
    let n = 0;
    for (const s of [...this.sessions.values()]) {
      if (!revoked(s.binding.principal)) continue;
      void this.closeSession(s, 'disconnect');
      n++;
    }
    return n;
  }

  /** Close idle sessions (with their queued messages and calls); keep the handshakes of live ones. */
  sweep(): void {
    const now = Date.now();
    for (const s of this.sessions.values()) {
      if (s.idle(now, this.idleMs) || this.missedHandshake(s, now)) void this.closeSession(s, 'disconnect');
      // A quiet session with its stream attached is alive: its handshake must not expire under it.
      else if (s.attached && s.handshakeId)
        void Promise.resolve(this.deps.sessions.find(s.handshakeId)).catch(() => {}); // a shared store down: retried next sweep
    }
    this.deps.sessions.sweep();
  }

  private async closeSession(s: TransportSession, reason: StopReason): Promise<void> {
    this.forget(s); // at once: room for a new session while this one's calls stop
    await s.close(reason);
    this.options.logger.debug({ session_ref: s.binding.ref, reason }, 'A2E transport session closed');
    if (s.handshakeId) await Promise.resolve(this.deps.sessions.end(s.handshakeId)).catch(() => {}); // a shared store down: the session expires there
  }

  /** The session no longer counts as open (nor against its owner's quota). */
  private forget(s: TransportSession): void {
    if (this.sessions.get(s.id) === s) this.sessions.delete(s.id);
    const own = this.byOwner.get(s.binding.quotaKey);
    if (own?.delete(s) && own.size === 0) this.byOwner.delete(s.binding.quotaKey);
  }

  /**
   * At gateway shutdown, after the engine has stopped the calls: flush what
   * is queued to attached streams and end them.
   */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.values()].map((s) => this.closeSession(s, 'shutdown')));
  }
}

/** What message dispatch needs, from the transport's options (shared by every session store). */
export function dispatchDeps(
  options: A2eHttpTransportOptions,
  closeSession: DispatchDeps['closeSession'],
): DispatchDeps {
  const { config } = options;
  return {
    engine: options.engine,
    sessions: options.sessions ?? new SessionManager({ ttlS: config.session_idle_s, maxParallel: 0 }),
    authenticate: options.authenticate ?? acceptAnyToken,
    authRequired: options.authRequired ?? false,
    sessionsRequired: options.sessionsRequired ?? false,
    logger: options.logger,
    maxJsonDepth: options.limits?.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH,
    startedAt: Date.now(),
    eventRoom: Math.max(1, Math.floor(config.max_queued / 2)),
    closeSession,
  };
}

export const ANONYMOUS: Presenter = { principal: null, address: 'unknown' };
