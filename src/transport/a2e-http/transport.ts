/**
 * The A2E HTTP message transport, without the HTTP: sessions (created,
 * found, expired, closed), message intake and stream attachment. The Hono
 * adapter in src/routes/a2e-transport.ts maps it onto routes.
 */
import { randomBytes } from 'node:crypto';
import { ByteBudget, SessionManager, type Engine, type Logger, type StopReason } from '../../engine/index.js';
import { acceptAnyToken, type HandshakeAuth } from './auth.js';
import type { TransportConfig } from './config.js';
import { dispatch, type DispatchDeps } from './dispatch.js';
import { TransportSession, type FrameSink } from './session.js';

/** Why the transport refused a request; the adapter turns it into an HTTP status. */
export type RefusalKind = 'missing_session' | 'unknown_session' | 'too_many_sessions' | 'queue_full' | 'shutting_down';

export class TransportRefusal extends Error {
  constructor(
    readonly kind: RefusalKind,
    message: string,
  ) {
    super(message);
    this.name = 'TransportRefusal';
  }
}

export interface A2eHttpTransportOptions {
  engine: Engine;
  logger: Logger;
  config: TransportConfig;
  /** Handshake sessions; by default one of the transport's own, expiring like transport sessions. */
  sessions?: SessionManager;
  /** Checks a handshake's auth_token; default: accept everyone. */
  authenticate?: HandshakeAuth;
  /** True when auth is configured: tool messages then need a successful handshake. */
  authRequired?: boolean;
  /** Byte budgets of the sessions' outboxes (`limits.outbox_*`) and the most one stream write takes. */
  memory?: TransportMemoryLimits;
}

export interface TransportMemoryLimits {
  outboxSessionBytes: number;
  outboxTotalBytes: number;
  streamWriteBytes: number;
}

const MiB = 1024 * 1024;
const DEFAULT_MEMORY: TransportMemoryLimits = { outboxSessionBytes: 8 * MiB, outboxTotalBytes: 64 * MiB, streamWriteBytes: MiB };

export class A2eHttpTransport {
  private readonly sessions = new Map<string, TransportSession>();
  private readonly deps: DispatchDeps;
  private readonly idleMs: number;
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;
  private readonly memory: TransportMemoryLimits;
  /** Bytes all sessions' outboxes hold. */
  private readonly outboxTotal: ByteBudget;

  constructor(private readonly options: A2eHttpTransportOptions) {
    const { config } = options;
    this.idleMs = config.session_idle_s * 1000;
    this.memory = options.memory ?? DEFAULT_MEMORY;
    this.outboxTotal = new ByteBudget(this.memory.outboxTotalBytes);
    const handshakes = options.sessions ?? new SessionManager({ ttlS: config.session_idle_s, maxParallel: 0 });
    this.deps = {
      engine: options.engine,
      sessions: handshakes,
      authenticate: options.authenticate ?? acceptAnyToken,
      authRequired: options.authRequired ?? false,
      logger: options.logger,
      startedAt: Date.now(),
      eventRoom: Math.max(1, Math.floor(config.max_queued / 2)),
      closeSession: (s, reason) => this.closeSession(s, reason),
    };
    this.sweeper = setInterval(() => this.sweep(), Math.min(this.idleMs / 2, 10_000));
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

  /** POST /session */
  createSession(): string {
    if (this.closed) throw new TransportRefusal('shutting_down', 'the gateway is shutting down; retry against another instance or later');
    if (this.sessions.size >= this.options.config.max_sessions) {
      this.sweep();
      if (this.sessions.size >= this.options.config.max_sessions) {
        throw new TransportRefusal(
          'too_many_sessions',
          `too many open sessions (transport.max_sessions = ${this.options.config.max_sessions}); close unused ones with a shutdown message, or retry later`,
        );
      }
    }
    const id = randomBytes(16).toString('hex');
    this.sessions.set(
      id,
      new TransportSession(id, {
        resumeFrames: this.options.config.resume_frames,
        sessionBytes: this.memory.outboxSessionBytes,
        total: this.outboxTotal,
        takeBytes: this.memory.streamWriteBytes,
      }),
    );
    this.options.logger.debug({ session: id, open_sessions: this.sessions.size }, 'A2E transport session opened');
    return id;
  }

  /** The live session for an X-Session-Id header value, or a refusal saying what is wrong. */
  session(id: string | undefined): TransportSession {
    if (!id) throw new TransportRefusal('missing_session', 'missing X-Session-Id header; POST /session first and send its session_id in X-Session-Id');
    const s = this.sessions.get(id);
    if (!s || s.state === 'closing' || s.state === 'closed') {
      throw new TransportRefusal('unknown_session', 'unknown or expired session; POST /session to open a new one');
    }
    if (s.idle(Date.now(), this.idleMs)) {
      void this.closeSession(s, 'disconnect');
      throw new TransportRefusal('unknown_session', 'the session expired after being idle; POST /session to open a new one');
    }
    return s;
  }

  /** POST /send: accept one message for the session; its answer travels on the stream. */
  send(sessionId: string | undefined, body: Uint8Array): void {
    const s = this.session(sessionId);
    // Every accepted message has at least one answer to come: count those not handled yet too.
    const waiting = s.outbox.size + s.inboxSize;
    if (waiting >= this.options.config.max_queued) {
      throw new TransportRefusal(
        'queue_full',
        `${waiting} messages are waiting for GET /stream (transport.max_queued); read the stream, then send again`,
      );
    }
    // Bytes too: answers can be large (a call's result), and a session that never reads must not hold the gateway's memory.
    if (s.outbox.full || this.outboxTotal.over) {
      const [held, key] = s.outbox.full ? [s.outbox.bytes, 'limits.outbox_session_bytes'] : [this.outboxTotal.used, 'limits.outbox_total_bytes'];
      throw new TransportRefusal(
        'queue_full',
        `${held} bytes of answers are waiting for GET /stream (${key}); read the stream, then send again`,
      );
    }
    s.touch();
    s.enqueue(() => dispatch(this.deps, s, body));
  }

  /** GET /stream: attach `sink` as the session's stream. */
  attach(sessionId: string | undefined, sink: FrameSink, lastEventId?: string): void {
    this.session(sessionId).attach(sink, lastEventId);
  }

  /** Close idle sessions (with their queued messages and calls); keep the handshakes of live ones. */
  sweep(): void {
    const now = Date.now();
    for (const s of this.sessions.values()) {
      if (s.idle(now, this.idleMs)) void this.closeSession(s, 'disconnect');
      // A quiet session with its stream attached is alive: its handshake must not expire under it.
      else if (s.attached && s.handshakeId) this.deps.sessions.get(s.handshakeId);
    }
    this.deps.sessions.sweep();
  }

  private async closeSession(s: TransportSession, reason: StopReason): Promise<void> {
    await s.close(reason);
    if (this.sessions.get(s.id) === s) this.sessions.delete(s.id);
    this.options.logger.debug({ session: s.id, reason }, 'A2E transport session closed');
    if (s.handshakeId) this.deps.sessions.close(s.handshakeId);
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
