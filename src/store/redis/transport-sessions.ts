/**
 * The A2E transport's sessions in Redis (store.kind: redis): any instance
 * opens a session, takes its messages and holds its stream. A message is
 * dispatched where it arrives (its calls run there); answers go into the
 * session's outbox, a Redis Stream, which the instance holding GET /stream
 * reads (one blocking reader per instance for all its streams). A client
 * whose stream's instance is lost reconnects to any other with Last-Event-ID
 * and gets every frame after it once, in order. Closing a session anywhere
 * is seen everywhere (the end marker ends its stream; a message on the
 * control channel stops its calls on every instance). A call holds a lease
 * (leases.ts) until its answer is in the outbox: when the instance running it
 * dies, another writes a failed answer for it there, once.
 * Keys and scripts: transport-scripts.ts; a session as one instance handles it:
 * transport-session-handle.ts, its outbox transport-outbox.ts; a stream held
 * here: transport-holder.ts; a call's lease: transport-call-lease.ts; the
 * frames pushed lately, pushed again if Redis loses them: transport-sent.ts.
 */
import { randomBytes } from 'node:crypto';
import { GatewayError, errorMessage, type Call, type Logger, type StopReason } from '../../engine/index.js';
import {
  DEFAULT_MEMORY,
  SessionBinding,
  TransportRefusal,
  dispatch,
  dispatchDeps,
  ANONYMOUS,
  type A2eHttpTransportOptions,
  type A2eTransport,
  type DispatchDeps,
  type FrameSink,
  type Presenter,
  type SavedBinding,
} from '../../transport/a2e-http/index.js';
import type { RedisConnection } from './connection.js';
import type { DataLoss } from './data-loss.js';
import { lostResponse, type Leases } from './leases.js';
import { StreamReader, type StreamEntry } from './stream-reader.js';
import { LEASE_PREFIX, callInfo, leaseOf, sessionOf } from './transport-call-lease.js';
import { RecentIds, type Holder } from './transport-holder.js';
import { SentFrames } from './transport-sent.js';
import { parseRecord, type SessionRecord } from './transport-record.js';
import { RedisSessionHandle, type HandleStore } from './transport-session-handle.js';
import {
  ANSWER_LOST,
  ATTACH,
  CALLS,
  CLOSE,
  CREATE,
  DETACH,
  FORGET_CALL,
  FRAME_OVERHEAD,
  LEASE_CALL,
  PUSH,
  PUT_BACK_CALLS,
  RESTORE_SESSION,
  SETTLE_LEFT,
  USE,
  WRITTEN,
} from './transport-scripts.js';

const SESSION_ID = /^[0-9a-f]{32}$/;

/** Unanswered calls a stream remembers at most (the oldest are forgotten first). */
const RUNNING_KEPT = 1024;
/** Sessions served lately or heard of that an instance remembers at most (the oldest are forgotten first). */
const SERVED_KEPT = 4096;
/** Calls announced running on other instances that an instance remembers at most (the oldest are forgotten first). */
const ELSEWHERE_KEPT = 8192;
/** How long an instance that knows only a session's calls waits for one serving it to put it back, ms (at most). */
const PUT_BACK_WAIT_MS = 250;
/** Frames kept before a resumed stream's Last-Event-ID read at most to learn which calls run unanswered. */
const LEARN_FRAMES = 2048;
/**
 * How long a session put back after Redis lost its data waits for its instances to push again what they had
 * pushed before any new frame goes in, ms: every instance is back on Redis within a second of it (connection.ts
 * retries at least every second) and pushes them again at once.
 */
const RESTORE_SETTLE_MS = 1500;
/** Bytes of frames pushed lately an instance keeps at most to push them again if Redis loses them (SentFrames). */
const SENT_KEPT_BYTES = 16 * 1024 * 1024;
/** How long an instance keeps the frames it pushed, in leases (SentFrames): a stream reads them within moments. */
const SENT_KEPT_LEASES = 3;

/**
 * The control channel: a session opened or its binding and handshake changed (every instance knows it, to put it
 * back if Redis loses it together with the instances serving it), a stream taken over, a session closed, and a call accepted (`run`: its lease member and
 * what its lost answer needs) or answered (`end`) on some instance, so the others can put its lease back if Redis
 * loses it together with that instance.
 */
type ControlMessage =
  | { t: 'attach'; sid: string; nonce: string }
  | { t: 'close'; sid: string; reason: StopReason }
  | { t: 'open'; sid: string; b: SavedBinding }
  | { t: 'bound'; sid: string; f: string[] }
  | { t: 'run'; m: string; i: string }
  | { t: 'end'; m: string };

/** What the transport shares with the other Redis stores. */
export interface SharedStoreParts {
  leases: Leases;
  dataLoss: DataLoss;
}

/** At most how long POST /send waits for the call a message starts to hold its lease, ms. */
const ACCEPT_WAIT_MS = 1000;
/** How often a request that finds its session missing after Redis lost its data looks again, ms. */
const RESTORE_POLL_MS = 100;

/** A call running here that holds a lease; `late`: its first lease could not be written (Redis was down), it is still to take. */
interface Leased {
  handle: RedisSessionHandle;
  call: Call;
  late: boolean;
}

export class RedisA2eTransport implements A2eTransport, HandleStore {
  /** Sessions this instance is handling messages or running calls of. */
  private readonly handles = new Map<string, RedisSessionHandle>();
  /** Streams this instance holds, by session id. */
  private readonly held = new Map<string, Holder>();
  private readonly reader: StreamReader;
  private readonly deps: DispatchDeps;
  private readonly idleMs: number;
  private readonly handshakeMs: number;
  private readonly sessionBytes: number;
  private readonly sweeper: NodeJS.Timeout;
  private readonly channel: string;
  private control = false;
  private closed = false;
  private readonly logger: Logger;
  private readonly leases: Leases;
  private readonly dataLoss: DataLoss;
  /** The field of a session's record that holds the last batch this instance pushed into it, and the batches' counter. */
  private readonly pusher = `pb:${randomBytes(8).toString('hex')}`;
  private batches = 0;
  /** Calls running here that hold a lease, by lease member. */
  private readonly leased = new Map<string, Leased>();
  /**
   * Calls running on other instances, as announced on the control channel (lease member → what its lost answer
   * needs), until their answer: if Redis loses their leases while their instance dies, this one puts them back.
   */
  private readonly elsewhere = new Map<string, string>();
  /**
   * Sessions this instance served lately (a message, a stream), heard open, or read at its start, as it last knew
   * them: if Redis loses one while no instance holds its stream or runs its calls, this one puts it back (its
   * client would find it gone).
   */
  private readonly served = new Map<
    string,
    { binding: SessionBinding; handshakeId: string; next: number; at: number }
  >();
  /** Frames this instance pushed lately, to push again if Redis loses them before a stream read them. */
  private readonly sent: SentFrames;

  constructor(
    private readonly redis: RedisConnection,
    private readonly options: A2eHttpTransportOptions,
    shared: SharedStoreParts,
  ) {
    const { config } = options;
    this.logger = options.logger;
    this.idleMs = config.session_idle_s * 1000;
    this.handshakeMs = config.handshake_timeout_s * 1000;
    this.sessionBytes = (options.memory ?? DEFAULT_MEMORY).outboxSessionBytes;
    this.deps = dispatchDeps(options, (s, reason) =>
      // A shutdown message closes the session; with Redis down it stays open and expires after session_idle_s.
      this.closeSession((s as RedisSessionHandle).id, reason).catch((err: unknown) => {
        this.logger.warn(
          { err: String((err as Error)?.message ?? err) },
          'A2E transport session could not be closed in Redis; it expires by itself',
        );
      }),
    );
    this.reader = new StreamReader(
      redis,
      {
        wakeKey: redis.key('transport', 'wake', randomBytes(8).toString('hex')),
        wakeTtlS: 60,
        purpose: 'transport-stream-reader',
        count: 256,
        what: 'A2E transport streams',
      },
      this.logger,
    );
    this.channel = redis.key('transport', 'control');
    this.leases = shared.leases;
    this.dataLoss = shared.dataLoss;
    this.sent = new SentFrames(SENT_KEPT_BYTES, SENT_KEPT_LEASES * this.leases.ms);
    this.dataLoss.onLost(() => void this.restoreAll());
    this.leases.register({
      prefix: LEASE_PREFIX,
      lapsed: (m) => this.answerLost(m),
      missing: (m) => this.leaseMissing(m),
    });
    void this.listen();
    // Renews held sessions' life well within session_idle_s, and notices sessions closed or expired elsewhere.
    this.sweeper = setInterval(() => void this.sweep(), Math.min(this.idleMs / 3, this.handshakeMs / 2, 10_000));
    this.sweeper.unref();
  }

  private hashKey = (sid: string) => this.redis.key('transport', 's', sid);
  private outboxKey = (sid: string) => this.redis.key('transport', 'o', sid);
  private get allKey() {
    return this.redis.key('transport', 'all');
  }
  private get ownerPrefix() {
    return this.redis.key('transport', 'owner', '');
  }

  async createSession(by: Presenter = ANONYMOUS): Promise<string> {
    if (this.closed)
      throw new TransportRefusal(
        'shutting_down',
        'the gateway is shutting down; retry against another instance or later',
      );
    const { config } = this.options;
    const id = randomBytes(16).toString('hex');
    const binding = new SessionBinding(id, by.principal, by.address);
    const authenticated = by.principal !== null;
    const quota = authenticated ? config.max_sessions_per_principal : config.max_sessions_per_address;
    const [outcome, evicted] = await this.redis.run('opening an A2E transport session', (c) =>
      CREATE.run<[string, string]>(
        c,
        [this.hashKey(id), this.allKey, this.ownerPrefix + binding.quotaKey],
        [
          Date.now(),
          this.handshakeMs,
          quota,
          config.max_sessions,
          by.principal === null ? '' : `=${by.principal}`,
          binding.boundBy ?? '',
          binding.quotaKey,
          binding.address,
          this.hashKey(''),
          this.outboxKey(''),
          this.ownerPrefix,
          id,
          this.idleMs,
        ],
      ),
    );
    if (evicted) this.announceClosed(evicted, 'disconnect');
    if (outcome === 'quota_in_use') {
      const key = authenticated ? 'transport.max_sessions_per_principal' : 'transport.max_sessions_per_address';
      throw new TransportRefusal(
        'quota_in_use',
        `all ${quota} of your sessions (${key}) have a stream attached or calls running; end one with a shutdown message, then retry`,
      );
    }
    if (outcome === 'too_many_sessions') {
      throw new TransportRefusal(
        'too_many_sessions',
        `too many open sessions (transport.max_sessions = ${config.max_sessions}); close unused ones with a shutdown message, or retry later`,
      );
    }
    this.logger.debug({ session_ref: binding.ref }, 'A2E transport session opened');
    const { principal, boundBy, quotaKey, address, createdAt } = binding;
    void this.publish({
      t: 'open',
      sid: id,
      b: { principal, boundBy, quotaKey, address, createdAt, handshook: false },
    });
    return id;
  }

  /** The session's record, when `by` may use it; `touch` renews its life (a message, a stream). */
  private async use(
    id: string | undefined,
    by: string | null,
    touch: boolean,
  ): Promise<{ rec: SessionRecord; binding: SessionBinding }> {
    if (!id)
      throw new TransportRefusal(
        'missing_session',
        'missing X-Session-Id header; POST /session first and send its session_id in X-Session-Id',
      );
    const unknown = () =>
      new TransportRefusal('unknown_session', 'unknown or expired session; POST /session to open a new one');
    if (!SESSION_ID.test(id)) throw unknown();
    let now = Date.now();
    let flat: string[] | null;
    for (;;) {
      flat = await this.redis.run('finding the A2E transport session', (c) =>
        USE.run<string[] | null>(
          c,
          [this.hashKey(id), this.outboxKey(id), this.allKey],
          [now, this.idleMs, this.handshakeMs, touch ? 1 : 0, this.ownerPrefix, id],
        ),
      );
      // Redis lost its data a moment ago: the instances serving the session are putting it back.
      if (!flat) await this.dataLoss.settled();
      const until = flat ? undefined : this.dataLoss.waitUntil(this.leases.ms);
      if (until === undefined || this.closed) break;
      await new Promise((r) => setTimeout(r, Math.min(RESTORE_POLL_MS, Math.max(1, until - Date.now()))));
      now = Date.now();
    }
    if (!flat) throw unknown();
    const rec = parseRecord(flat);
    if (rec.state === 'closing' || rec.state === 'closed') {
      this.served.delete(id);
      throw unknown();
    }
    const binding = SessionBinding.restore(id, rec);
    this.remember(id, binding, rec.handshakeId, rec.next, Date.now());
    const refusal = binding.check(by);
    if (refusal) throw new TransportRefusal(refusal.kind, refusal.message);
    if (!rec.handshook && now - rec.createdAt > this.handshakeMs) {
      void this.closeSession(id, 'disconnect').catch(() => undefined);
      throw new TransportRefusal(
        'unknown_session',
        `the session was closed: no successful handshake within transport.handshake_timeout_s (${this.options.config.handshake_timeout_s} s) ` +
          'of POST /session; open a new one and send handshake/req right away',
      );
    }
    return { rec, binding };
  }

  async check(id: string | undefined, by: string | null = null): Promise<void> {
    await this.use(id, by, false);
  }

  async send(id: string | undefined, body: Uint8Array, by: string | null = null): Promise<void> {
    const { rec, binding } = await this.use(id, by, true);
    const h = this.handle(id!, rec, binding);
    const waiting = h.outbox.size + h.inbox.size;
    if (waiting >= this.options.config.max_queued) {
      throw new TransportRefusal(
        'queue_full',
        `${waiting} messages are waiting for GET /stream (transport.max_queued); read the stream, then send again`,
      );
    }
    if (h.outbox.full) {
      throw new TransportRefusal(
        'queue_full',
        `${h.outbox.bytes} bytes of answers are waiting for GET /stream (limits.outbox_session_bytes); read the stream, then send again`,
      );
    }
    // POST /send answers once a call the message starts holds its lease (bounded): from then on, if this instance
    // dies, another one answers the call; before, the client still has the request to send again.
    const handled = new Promise<void>((resolve) =>
      h.inbox.enqueue(() => dispatch(this.deps, h, body).finally(resolve)),
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([handled.then(() => h.leasing), new Promise((r) => (timer = setTimeout(r, ACCEPT_WAIT_MS)))]);
    clearTimeout(timer);
  }

  /** This instance's handle of a session, brought up to date with `rec` unless it has changes of its own on the way. */
  private handle(id: string, rec: SessionRecord, binding: SessionBinding): RedisSessionHandle {
    let h = this.handles.get(id);
    if (!h) {
      h = new RedisSessionHandle(id, binding, rec, this);
      this.handles.set(id, h);
    } else if (rec.version > h.version && !h.outbox.busy && h.inbox.size === 0) {
      h.apply(binding, rec);
    }
    h.outbox.known(rec.pending, rec.bytes);
    return h;
  }

  async attach(id: string | undefined, sink: FrameSink, lastEventId?: string, by: string | null = null): Promise<void> {
    const { rec, binding } = await this.use(id, by, false);
    const sid = id!;
    const previous = this.held.get(sid);
    if (previous) this.endHolder(previous);
    const holder: Holder = {
      sid,
      nonce: randomBytes(8).toString('hex'),
      sink,
      reading: undefined,
      ended: false,
      writes: Promise.resolve(),
      binding,
      handshakeId: rec.handshakeId,
      last: -1,
      recent: new RecentIds(),
      running: new Map(),
      putBack: new Set(),
    };
    this.held.set(sid, holder);
    sink.onDisconnect(() => this.detach(holder));
    const last = /^\d+$/.test(lastEventId ?? '') ? lastEventId! : '';
    const seen = await this.redis.run('attaching the A2E transport stream', (c) =>
      ATTACH.run<number | null>(
        c,
        [this.hashKey(sid), this.outboxKey(sid), this.allKey],
        [holder.nonce, last, Date.now(), this.idleMs, this.handshakeMs, this.ownerPrefix, sid],
      ),
    );
    if (seen === null || holder.ended) {
      this.endHolder(holder);
      return;
    }
    holder.last = seen;
    if (seen >= 0) await this.learnRunning(holder, seen);
    if (holder.ended) return;
    void this.publish({ t: 'attach', sid, nonce: holder.nonce });
    holder.reading = this.reader.subscribe(this.outboxKey(sid), seen < 0 ? '0-0' : `1-${seen}`, {
      deliver: (entries) => this.deliver(holder, entries),
    });
  }

  /** Frames read from the outbox → the holder's stream; the end marker ends it. */
  private deliver(holder: Holder, entries: StreamEntry[]): void | Promise<void> {
    if (holder.ended) return;
    if (holder.last >= 0 && skips(holder.last, entries)) return this.deliverAcrossSkip(holder, entries);
    return this.write(holder, entries, false);
  }

  /**
   * Frame ids skipped: in a session put back after Redis lost its data, frames its instances are still pushing
   * again (RESTORE_SESSION) go in at their place, behind what this stream read. Wait for that, read the skipped
   * ids again, and announce what still misses: a notice naming exactly the frames that will not come.
   */
  private async deliverAcrossSkip(holder: Holder, entries: StreamEntry[]): Promise<void> {
    const left = await SETTLE_LEFT.run<number>(this.redis.client, [this.hashKey(holder.sid)], []).catch(() => -1);
    if (Number(left) < 0) return this.write(holder, entries, false); // never lost: frames trimmed before a late resume
    if (Number(left) > 0) await new Promise((r) => setTimeout(r, Number(left) + 50));
    if (holder.ended) return;
    const upTo = entries.at(-1)![0];
    const again = (await this.redis.client
      .sendCommand(['XRANGE', this.outboxKey(holder.sid), `1-${holder.last + 1}`, upTo])
      .catch(() => undefined)) as StreamEntry[] | undefined;
    return this.write(holder, again?.length ? again : entries, true);
  }

  /** Write frames to the holder's stream; `announce`: a notice before each skip names the frames it skips. */
  private write(holder: Holder, entries: StreamEntry[], announce: boolean): void | Promise<void> {
    if (holder.ended) return;
    let text = '';
    let bytes = 0;
    let last = -1;
    let end = false;
    for (const [id, fields] of entries) {
      if (fields[0] !== 'd') {
        end = true;
        break;
      }
      const data = fields[1]!;
      const at = Number(id.slice(2));
      if (announce && at > Math.max(last, holder.last) + 1) text += lostFrames(Math.max(last, holder.last) + 1, at - 1);
      last = at;
      if (fields[2] === 'c' || fields[2] === 'e') this.track(holder, fields[2], fields[3]!);
      // The session's handshake was just answered (on whichever instance): learn it, in case this instance has to put the session back.
      if (!holder.binding.handshook && data.includes('"handshake/resp"')) void this.refresh(holder);
      bytes += Buffer.byteLength(data) + FRAME_OVERHEAD;
      if (holder.recent.seen(data)) continue;
      text += `id: ${last}\ndata: ${data}\n\n`;
    }
    let ok = true;
    if (text) ok = holder.sink.write(text);
    if (last >= 0) {
      holder.last = last;
      this.written(holder, last, bytes);
    }
    if (end) {
      void holder.writes.then(() => this.endHolder(holder));
      return;
    }
    if (!ok) return holder.sink.drain();
  }

  /**
   * The calls the frames kept before the client's Last-Event-ID show running unanswered (their events passed
   * through another instance's stream): this stream knows them too, before it reads on. Bounded; best effort.
   */
  private async learnRunning(holder: Holder, upTo: number): Promise<void> {
    try {
      // The latest ones, read back to front, then taken in order.
      const entries = (await this.redis.client.sendCommand([
        'XREVRANGE',
        this.outboxKey(holder.sid),
        `1-${upTo}`,
        '-',
        'COUNT',
        String(LEARN_FRAMES),
      ])) as [string, string[]][] | null;
      for (const [, fields] of (entries ?? []).reverse())
        if (fields[2] === 'c' || fields[2] === 'e') this.track(holder, fields[2], fields[3]!);
    } catch {
      // Redis down: the stream goes on without it (as before this instance knew of such calls)
    }
  }

  /** What a frame says of its call: `c` an event of a call running ("<member> <info>"), `e` its answer (the member). */
  private track(holder: Holder, kind: string, value: string): void {
    if (kind === 'c') {
      const space = value.indexOf(' ');
      const member = value.slice(0, space);
      if (holder.running.has(member)) return;
      if (holder.running.size >= RUNNING_KEPT) holder.running.delete(holder.running.keys().next().value!);
      holder.running.set(member, value.slice(space + 1));
      return;
    }
    holder.running.delete(value);
    if (holder.putBack.delete(value)) {
      FORGET_CALL.run(this.redis.client, [this.hashKey(holder.sid), this.leases.key], [value]).catch(() => undefined); // else it lapses into an answer the client ignores (its req_id was answered)
    }
  }

  /** What a holder knows of its session, kept up to date in case this instance has to put the session back. */
  private learn(holder: Holder, flat: string[]): void {
    const rec = parseRecord(flat);
    holder.binding = SessionBinding.restore(holder.sid, rec);
    holder.handshakeId = rec.handshakeId;
  }

  private async refresh(holder: Holder): Promise<void> {
    const flat = await USE.run<string[] | null>(
      this.redis.client,
      [this.hashKey(holder.sid), this.outboxKey(holder.sid), this.allKey],
      [Date.now(), this.idleMs, this.handshakeMs, 0, this.ownerPrefix, holder.sid],
    ).catch(() => undefined);
    if (flat) this.learn(holder, flat);
  }

  private written(holder: Holder, upTo: number, bytes: number): void {
    const { config } = this.options;
    holder.writes = holder.writes.then(() =>
      WRITTEN.run(
        this.redis.client,
        [this.hashKey(holder.sid), this.outboxKey(holder.sid)],
        [holder.nonce, upTo, bytes, config.resume_frames, this.sessionBytes >> 1],
      ).catch(
        // Redis down: the frames count as unwritten, so a stream resuming without Last-Event-ID may get them again.
        () => undefined,
      ),
    );
  }

  /** Stop serving a stream here (its client left, or another stream replaced it, or the session closed). */
  private endHolder(holder: Holder): void {
    if (holder.ended) return;
    holder.ended = true;
    holder.reading?.close();
    if (this.held.get(holder.sid) === holder) this.held.delete(holder.sid);
    holder.sink.end();
  }

  /** The client left: the session has no stream now (unless another replaced it already). */
  private detach(holder: Holder): void {
    const mine = !holder.ended;
    this.endHolder(holder);
    if (!mine) return;
    const sid = holder.sid;
    void holder.writes
      .then(() =>
        DETACH.run(
          this.redis.client,
          [this.hashKey(sid), this.outboxKey(sid), this.allKey],
          [holder.nonce, Date.now(), this.idleMs, this.handshakeMs, this.ownerPrefix, sid],
        ),
      )
      .catch(() => undefined); // Redis down: the session expires session_idle_s after the last renewal anyway
  }

  async streamAttached(id: string): Promise<boolean> {
    const holder = await this.redis.run('reading the A2E transport session', (c) =>
      c.sendCommand(['HGET', this.hashKey(id), 's']),
    );
    return typeof holder === 'string' && holder !== '';
  }

  /**
   * Close a session: stop its calls here (their responses still go out),
   * then mark it closed in Redis (the end marker ends its stream wherever it
   * is held) and tell every instance (they stop theirs).
   */
  async closeSession(sid: string, reason: StopReason): Promise<void> {
    const h = this.handles.get(sid);
    if (h) {
      await h.stop(reason);
      this.handles.delete(sid);
    }
    const closedNow = await this.redis.run('closing the A2E transport session', (c) =>
      CLOSE.run<number>(c, [this.hashKey(sid), this.outboxKey(sid), this.allKey], [this.ownerPrefix, sid]),
    );
    // The handshake session ends with it, on every instance when sessions are shared (with Redis down it expires there).
    if (h?.handshakeId) await Promise.resolve(this.deps.sessions.end(h.handshakeId)).catch(() => {});
    if (closedNow) this.announceClosed(sid, reason);
  }

  private announceClosed(sid: string, reason: StopReason): void {
    void this.publish({ t: 'close', sid, reason });
  }

  private publish(message: ControlMessage): Promise<void> {
    return this.redis.client.sendCommand(['PUBLISH', this.channel, JSON.stringify(message)]).then(
      () => undefined,
      () => undefined,
    );
  }

  /** The control channel (streams replaced, sessions closed on other instances), on the instance's one pub/sub connection. */
  private async listen(): Promise<void> {
    while (!this.closed && !this.control) {
      try {
        await this.redis.subscribe(this.channel, this.onControlText);
        if (this.closed) return void (await this.redis.unsubscribe(this.channel, this.onControlText));
        this.control = true;
        void this.learnSessions();
      } catch {
        await new Promise((r) => setTimeout(r, 1000)); // Redis down at start: the sweep covers what is missed
      }
    }
  }

  private readonly onControlText = (text: string): void => this.onControl(text);

  /**
   * A session this instance may have to put back if Redis loses it (it served it, or heard of it): as it last
   * knew it, `at` its last activity then. Bounded: the oldest are forgotten first.
   */
  private remember(sid: string, binding: SessionBinding, handshakeId: string, next: number, at: number): void {
    this.served.delete(sid);
    if (this.served.size >= SERVED_KEPT) this.served.delete(this.served.keys().next().value!);
    this.served.set(sid, { binding, handshakeId, next, at });
  }

  /**
   * Once, at start: the open sessions (the latest SERVED_KEPT) and their calls running, so an instance started
   * after a session opened or a call began can put them back too if Redis loses them together with every instance
   * that served them. Best effort.
   */
  private async learnSessions(): Promise<void> {
    try {
      const c = this.redis.client;
      const flat = (await c.sendCommand([
        'ZRANGE',
        this.allKey,
        '+inf',
        '-inf',
        'BYSCORE',
        'REV',
        'LIMIT',
        '0',
        String(SERVED_KEPT),
      ])) as string[];
      const ids: string[] = [];
      for (let i = flat.length - 1; i >= 0; i--) ids.push(flat[i]!);
      const now = Date.now();
      const recs = await Promise.all(
        ids.map((sid) =>
          USE.run<string[] | null>(
            c,
            [this.hashKey(sid), this.outboxKey(sid), this.allKey],
            [now, this.idleMs, this.handshakeMs, 0, this.ownerPrefix, sid],
          ),
        ),
      );
      const live = ids.flatMap((sid, i) => {
        const flat = recs[i];
        const rec = flat ? parseRecord(flat) : undefined;
        if (!flat || !rec || rec.state === 'closing' || rec.state === 'closed') return [];
        // Its calls running on other instances (a field per lease): as if this instance had heard them accepted.
        for (let j = 0; j + 1 < flat.length; j += 2)
          if (flat[j]!.startsWith(LEASE_PREFIX) && flat[j + 1] !== 'x') this.heardRunning(flat[j]!, flat[j + 1]!);
        return [{ sid, rec }];
      });
      // Its life counts from its last activity (the owner index's score): a session idle longer than it lives stays gone.
      const active = await Promise.all(
        live.map(({ sid, rec }) => c.sendCommand<string | null>(['ZSCORE', this.ownerPrefix + rec.quotaKey, sid])),
      );
      live.forEach(({ sid, rec }, i) => {
        if (this.served.has(sid)) return;
        this.remember(
          sid,
          SessionBinding.restore(sid, rec),
          rec.handshakeId,
          rec.next,
          Number(active[i] ?? Date.now()),
        );
      });
    } catch (err) {
      // Redis down at start: this instance learns sessions as it serves them, or hears them open
      this.logger.debug(
        { err: String((err as Error)?.message ?? err) },
        'reading the open A2E transport sessions failed',
      );
    }
  }

  /** A call running on another instance (`info`: what its lost answer needs), remembered until its answer (bounded). */
  private heardRunning(member: string, info: string): void {
    if (this.leased.has(member) || this.elsewhere.has(member)) return;
    if (this.elsewhere.size >= ELSEWHERE_KEPT) this.elsewhere.delete(this.elsewhere.keys().next().value!);
    this.elsewhere.set(member, info);
  }

  private onControl(text: string): void {
    let m: ControlMessage;
    try {
      m = JSON.parse(text) as ControlMessage;
    } catch {
      return;
    }
    if (m.t === 'open') {
      if (!this.served.has(m.sid)) this.remember(m.sid, SessionBinding.restore(m.sid, m.b), '', 0, Date.now());
    } else if (m.t === 'bound') {
      const known = this.served.get(m.sid);
      if (!known) return;
      const f: Record<string, string> = {};
      for (let i = 0; i + 1 < m.f.length; i += 2) f[m.f[i]!] = m.f[i + 1]!;
      const { quotaKey, address, createdAt } = known.binding;
      known.binding = SessionBinding.restore(m.sid, {
        principal: f.p ? f.p.slice(1) : null,
        boundBy: f.b === 'bearer' || f.b === 'handshake' ? f.b : undefined,
        quotaKey,
        address,
        createdAt,
        handshook: f.h === '1',
      });
      known.handshakeId = f.hs || known.handshakeId;
    } else if (m.t === 'run') {
      this.heardRunning(m.m, m.i);
    } else if (m.t === 'end') {
      this.elsewhere.delete(m.m);
    } else if (m.t === 'attach') {
      const holder = this.held.get(m.sid);
      if (holder && holder.nonce !== m.nonce) this.endHolder(holder);
    } else if (m.t === 'close') {
      this.served.delete(m.sid);
      const h = this.handles.get(m.sid);
      if (!h) return;
      this.handles.delete(m.sid);
      void h.stop(m.reason);
    }
  }

  /**
   * Renew the sessions whose streams are held here (their life counts from
   * the last activity, and an attached stream is activity); end streams of
   * sessions gone; stop calls of sessions closed or expired elsewhere; forget
   * handles with nothing left to do.
   */
  private async sweep(): Promise<void> {
    if (this.closed) return;
    const now = Date.now();
    const client = this.redis.client;
    await Promise.all([
      ...[...this.held.values()].map(async (holder) => {
        const flat = await USE.run<string[] | null>(
          client,
          [this.hashKey(holder.sid), this.outboxKey(holder.sid), this.allKey],
          [now, this.idleMs, this.handshakeMs, 1, this.ownerPrefix, holder.sid],
        ).catch(() => undefined);
        if (flat === null && (await this.lostRecently())) await this.restore(holder.sid).catch(() => undefined);
        else if (flat === null)
          this.endHolder(holder); // gone (not merely unreachable): the client reconnects and learns it
        else if (flat) this.learn(holder, flat);
      }),
      ...[...this.handles.values()].map(async (h) => {
        if (h.calls.size === 0 && h.inbox.size === 0 && !h.outbox.busy) {
          this.handles.delete(h.id);
          return;
        }
        const flat = await USE.run<string[] | null>(
          client,
          [this.hashKey(h.id), this.outboxKey(h.id), this.allKey],
          [now, this.idleMs, this.handshakeMs, 0, this.ownerPrefix, h.id],
        ).catch(() => undefined);
        if (flat === null && (await this.lostRecently())) {
          await this.restore(h.id).catch(() => undefined);
        } else if (flat === null || (flat && parseRecord(flat).state === 'closed')) {
          this.handles.delete(h.id);
          void h.stop('disconnect');
        } else if (flat && h.handshakeId && parseRecord(flat).holder) {
          void Promise.resolve(this.deps.sessions.find(h.handshakeId)).catch(() => {}); // a quiet session with a stream is alive: keep its handshake
        }
      }),
    ]);
    this.deps.sessions.sweep();
  }

  /** Close the sessions of credentials a reload revoked, wherever they are served (closeSession tells every instance). */
  async endWhere(revoked: (principal: string | null) => boolean): Promise<number> {
    const ids = await this.redis.run('listing the A2E transport sessions', (c) => c.zRange(this.allKey, 0, -1));
    const owners = ids.length
      ? await this.redis.run('reading the A2E transport sessions', (c) =>
          Promise.all(ids.map((id) => c.sendCommand<string | null>(['HGET', this.hashKey(id), 'p']))),
        )
      : [];
    const ending = ids.filter((_, i) => owners[i] !== null && revoked(owners[i] ? owners[i].slice(1) : null));
    await Promise.all(ending.map((id) => this.closeSession(id, 'disconnect')));
    return ending.length;
  }

  /**
   * Gateway shutdown. Sessions live on (other instances serve them): the
   * answers of calls stopped here are flushed to Redis, and the streams held
   * here end, so their clients reconnect elsewhere.
   */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    const flushed = Promise.allSettled(
      [...this.handles.values()].map(async (h) => {
        await Promise.allSettled(h.calls.values());
        await h.outbox.settled();
      }),
    );
    await Promise.race([flushed, new Promise((r) => setTimeout(r, 5000).unref())]);
    for (const holder of [...this.held.values()]) this.detach(holder);
    await Promise.allSettled([...this.held.values()].map((h) => h.writes));
    await this.reader.close();
    if (this.control) await this.redis.unsubscribe(this.channel, this.onControlText);
    this.control = false;
  }

  /** For handles: the script runs. `frames`: per frame, the lease member its answer ends ("" none) and its JSON. */
  pushFrames(
    sid: string,
    fields: string[],
    frames: string[],
    batch: number,
  ): Promise<[number, number, number?, number?, number?, string?]> {
    const pushed = this.redis.run('queueing an A2E transport answer', (c) =>
      PUSH.run<[number, number, number?, number?, number?, string?]>(
        c,
        [this.hashKey(sid), this.outboxKey(sid), this.leases.key],
        [this.pusher, batch, fields.length, ...fields, ...frames],
      ),
    );
    // Its binding or handshake changed: every instance that may put the session back learns it.
    if (fields.length)
      pushed.then(
        ([pending]) => pending >= 0 && void this.publish({ t: 'bound', sid, f: fields }),
        () => undefined,
      );
    return pushed;
  }

  /** A push was written: its frames are kept a while, to push again if Redis loses them before a stream reads them. */
  pushed(sid: string, frames: string[], first: number, written: string): void {
    this.sent.add(sid, frames, Number(first), String(written));
  }

  /** The number of the next batch of frames this instance pushes (into any session). */
  nextBatch(): number {
    return this.batches++;
  }

  /**
   * A session found missing was lost with Redis's data rather than closed or expired. Waits for the data-loss
   * check of the connection that just came back: a sweep reading an emptied Redis before that check is done
   * would otherwise end a stream it should put back (its client then found the session gone: 404).
   */
  private async lostRecently(): Promise<boolean> {
    await this.dataLoss.settled();
    return this.dataLoss.recent(this.restoreWindowMs);
  }

  /** How long after Redis lost its data a session found missing is put back rather than taken for expired, ms. */
  private get restoreWindowMs(): number {
    return this.leases.ms + 10_000;
  }

  /** After Redis lost its data: put back every session this instance serves (streams held, calls running, answers queued). */
  private async restoreAll(): Promise<void> {
    const sids = new Set([...this.held.keys(), ...this.handles.keys(), ...this.sent.sessions()]);
    // Sessions served here lately and not idle for longer than they live: one may have no stream or call anywhere now.
    for (const [sid, s] of this.served) if (Date.now() - s.at < this.idleMs) sids.add(sid);
    for (const sid of sids) {
      if (this.closed) return;
      await this.restore(sid).catch((err: unknown) =>
        this.logger.warn(
          { err: String((err as Error)?.message ?? err) },
          'putting back an A2E transport session Redis lost failed; retried at the next sweep',
        ),
      );
    }
    // Calls announced running elsewhere, of sessions this instance does not serve: once an instance serving the
    // session put it back, their leases go back too (a live owner renews its own; a dead one's lapses into its answer).
    const bySession = new Map<string, string[]>();
    for (const [member, info] of this.elsewhere) {
      const sid = sessionOf(member);
      if (sids.has(sid)) continue; // put back with the session, above
      const calls = bySession.get(sid) ?? [];
      calls.push(member, info);
      bySession.set(sid, calls);
    }
    await Promise.all([...bySession].map(([sid, calls]) => this.putBackCalls(sid, calls)));
  }

  /** Put back the leases of calls announced running elsewhere for a session another instance puts back (waits for it, bounded). */
  private async putBackCalls(sid: string, calls: string[]): Promise<void> {
    for (const until = Date.now() + this.leases.ms; !this.closed; ) {
      const put = await PUT_BACK_CALLS.run<number>(
        this.redis.client,
        [this.hashKey(sid), this.outboxKey(sid), this.leases.key],
        [this.leases.ms, ...calls],
      ).catch(() => -1);
      if (Number(put) > 0) {
        this.logger.warn(
          { calls: Number(put) },
          'put back the leases of A2E transport calls announced running elsewhere that Redis lost (answered as lost if their instance does not renew them)',
        );
      }
      if (Number(put) >= 0 || Date.now() >= until) return; // not put back by anyone within a lease: the session is gone
      await new Promise((r) => setTimeout(r, PUT_BACK_WAIT_MS));
    }
  }

  /** Put back one session Redis lost, as this instance knows it (RESTORE_SESSION); a notice frame tells its client what may be lost. */
  private async restore(sid: string): Promise<void> {
    const holder = this.held.get(sid);
    const h = this.handles.get(sid);
    const served = this.served.get(sid);
    const binding = h?.binding ?? holder?.binding ?? served?.binding;
    if (!binding || ((h?.state === 'closing' || h?.state === 'closed') && !holder)) return; // closed here: nothing to put back
    const handshakeId = h?.handshakeId || holder?.handshakeId || served?.handshakeId || '';
    const state = h && h.state !== 'open' ? 'draining' : 'open';
    // What this instance pushed lately goes back with its ids (a stream may not have read it yet).
    const sent = this.sent.of(sid);
    // Frame ids go on after the last this instance knows of (a stream resumed past it moves what follows: ATTACH).
    const floor = Math.max(holder?.last ?? -1, h?.outbox.lastPushed ?? -1, (served?.next ?? 0) - 1, sent.last) + 1;
    const calls: string[] = [];
    for (const [member, entry] of this.leased) {
      if (entry.handle.id === sid) calls.push(member, callInfo(entry.call));
    }
    // Calls running elsewhere whose events this stream carried: if their instance is alive it renews the lease
    // put back here; if it died with Redis's data, the lease lapses and the sweep answers them.
    const putBack: string[] = [];
    if (holder && !holder.ended) {
      for (const [member, info] of holder.running) {
        if (!this.leased.has(member)) {
          calls.push(member, info);
          putBack.push(member);
        }
      }
    }
    const created = await RESTORE_SESSION.run<number>(
      this.redis.client,
      [this.hashKey(sid), this.outboxKey(sid), this.allKey, this.ownerPrefix + binding.quotaKey, this.leases.key],
      [
        Date.now(),
        this.idleMs,
        binding.principal === null ? '' : `=${binding.principal}`,
        binding.boundBy ?? '',
        binding.quotaKey,
        binding.address,
        binding.createdAt,
        // A session still alive past its handshake timeout did its handshake, whatever this instance last read
        // (a stream attached just before the handshake holds a binding from before it): put back as one that did,
        // not as one that never did, which the next look closes.
        binding.handshook || Date.now() - binding.createdAt > this.handshakeMs ? 1 : 0,
        handshakeId,
        state,
        floor,
        holder && !holder.ended ? holder.nonce : '',
        RESTORE_SETTLE_MS,
        this.leases.ms,
        calls.length,
        ...calls,
        ...sent.args,
      ],
    );
    if (Number(created) === 1)
      this.logger.warn(
        { session_ref: binding.ref },
        'Redis lost an A2E transport session this instance serves; put it back (the frames its instances pushed lately go back with it)',
      );
    for (let i = 0; i < calls.length; i += 2) {
      const entry = this.leased.get(calls[i]!);
      if (!entry) continue;
      entry.late = false; // put back with the session (counted there)
      this.leases.hold(calls[i]!);
    }
    // Calls announced running elsewhere (they need not have sent an event through any stream): put back unless
    // answered meanwhile (their live owner may have pushed the answer already; PUT_BACK_CALLS looks in the outbox).
    const announced: string[] = [];
    for (const [member, info] of this.elsewhere) {
      if (sessionOf(member) === sid && !this.leased.has(member) && !putBack.includes(member))
        announced.push(member, info);
    }
    if (announced.length) await this.putBackCalls(sid, announced);
    if (putBack.length) {
      if (holder && !holder.ended) for (const m of putBack) holder.putBack.add(m);
      this.logger.warn(
        { session_ref: binding.ref, calls: putBack.length },
        'put back the leases of calls running elsewhere whose events this stream carried (answered as lost if their instance does not renew them)',
      );
    }
  }

  /** PUSH found the session gone: true when Redis lost it and it was put back (push again), false when it was closed or expired. */
  async sessionLost(sid: string): Promise<boolean> {
    await this.dataLoss.settled();
    if (!this.dataLoss.recent(this.restoreWindowMs)) return false;
    await this.restore(sid);
    return true;
  }

  /** A call started here for a session: it counts as running there, and holds a lease until its answer is written. */
  callStarted(h: RedisSessionHandle, call: Call): void {
    const member = leaseOf(h.id, call);
    const entry: Leased = { handle: h, call, late: false };
    this.leased.set(member, entry);
    h.leasing = this.leaseCall(member, call, 'start').then(
      async (outcome) => {
        if (outcome !== 1 || !this.leased.has(member)) return;
        this.leases.hold(member);
        // Accepted (the 202 waits for this): every instance knows of it now, not only Redis and this one.
        await this.publish({ t: 'run', m: member, i: callInfo(call) });
      },
      (err: unknown) => {
        // Redis went down as the call was accepted: it runs, and takes its lease once Redis is back (the renewal
        // finds it missing: leaseMissing), so that from then on its watchers hear of it if this instance dies.
        entry.late = true;
        this.leases.hold(member);
        this.logger.warn(
          { err: String((err as Error)?.message ?? err), call_id: call.id },
          'A2E transport call could not take its lease in Redis; it takes it once Redis is back',
        );
      },
    );
  }

  /** The call ended here (its answer is queued, or it could not be forwarded): its lease ends with the flush that carries its answer. */
  callEnded(h: RedisSessionHandle, call: Call): void {
    const member = leaseOf(h.id, call);
    this.leased.delete(member);
    CALLS.run(this.redis.client, [this.hashKey(h.id)], [-1]).catch(() => undefined);
    // Not carried by any answer (its forwarding failed): let the lease lapse, so its watchers hear of it.
    void h.outbox.settled().then(() => {
      if (!h.outbox.carries(member)) this.leases.release(member);
    });
  }

  /** The answer that ends `member`'s lease was written (or dropped with its session). */
  leaseEnded(member: string): void {
    this.leases.release(member);
    void this.publish({ t: 'end', m: member });
  }

  /** LEASE_CALL: `start` a call starting here, `missing` its lease found missing, `late` its first lease taken late. */
  private leaseCall(member: string, call: Call, why: 'start' | 'missing' | 'late'): Promise<number> {
    const sid = sessionOf(member);
    const info = callInfo(call);
    return LEASE_CALL.run<number>(
      this.redis.client,
      [this.hashKey(sid), this.leases.key, this.outboxKey(sid)],
      [member, info, this.leases.ms, why === 'start' ? 1 : why === 'late' ? 2 : 0],
    ).then(Number);
  }

  /** LeaseKind: a call running here has no lease in Redis: put it back, or stop the call when another instance answered it. */
  private async leaseMissing(member: string): Promise<void> {
    const entry = this.leased.get(member);
    if (!entry) return this.leases.release(member);
    const late = entry.late;
    const outcome = await this.leaseCall(member, entry.call, late ? 'late' : 'missing');
    if (outcome === 2) return this.leases.release(member); // answered meanwhile: nothing left to lease
    if (outcome === 1 && late && this.leased.get(member) === entry) {
      entry.late = false;
      this.logger.info({ call_id: entry.call.id }, 'A2E transport call took its lease now that Redis is back');
      await this.publish({ t: 'run', m: member, i: callInfo(entry.call) });
    }
    if (outcome === 0) {
      this.logger.warn(
        { call_id: entry.call.id },
        'A2E transport call was answered by another instance while its lease had lapsed (Redis unreachable for longer than calls.owner_lease_s); stopping it here',
      );
      this.leases.release(member);
      entry.call.stop('cancel');
    }
  }

  /** LeaseKind: the instance running a transport call was lost: its session's watchers get a failed answer, once. */
  private async answerLost(member: string): Promise<void> {
    const sid = sessionOf(member);
    const c = this.redis.client;
    const info = (await c.sendCommand(['HGET', this.hashKey(sid), member])) as string | null;
    let frame = '';
    if (info && info !== 'x') {
      const { r, t, c: created } = JSON.parse(info) as { r: string; t: string; c: number };
      frame = JSON.stringify(lostResponse(r, t, created, this.leases.leaseS));
    }
    const answered = await ANSWER_LOST.run<number>(
      c,
      [this.leases.key, this.hashKey(sid), this.outboxKey(sid)],
      [member, frame],
    );
    if (Number(answered) === 1) {
      this.logger.warn(
        { lease: member },
        'A2E transport call failed: the instance running it was lost (its lease lapsed)',
      );
      void this.publish({ t: 'end', m: member });
    }
  }

  async outboxState(sid: string): Promise<{ pending: number; bytes: number } | undefined> {
    const r = (await this.redis.client.sendCommand(['HMGET', this.hashKey(sid), 'n', 'w', 'by'])) as (string | null)[];
    if (r[0] === null) return undefined;
    return { pending: Number(r[0]) - 1 - Number(r[1]), bytes: Number(r[2]) };
  }

  /** How long a handle keeps retrying answers while Redis is down, ms. */
  get retryForMs(): number {
    return this.idleMs;
  }

  get sessionByteBudget(): number {
    return this.sessionBytes;
  }

  get log(): Logger {
    return this.logger;
  }
}

/** Whether frame ids skip one after `last` (the frame a stream wrote last) among `entries`. */
function skips(last: number, entries: StreamEntry[]): boolean {
  for (const [id] of entries) {
    const at = Number(id.slice(2));
    if (at > last + 1) return true;
    last = at;
  }
  return false;
}

/** The notice a stream gets where frames `from`..`to` were lost with Redis's data (no instance had them to push again). */
function lostFrames(from: number, to: number): string {
  const notice = errorMessage(
    new GatewayError(
      'unavailable',
      `the shared store (Redis) lost its data (restarted without persistence), and with it frames ${from}..${to} of this stream, ` +
        'which no gateway instance had left to push again (the one that pushed them was lost too): an answer among them will not come; ' +
        'send again a request that gets no answer (calls still running answer as usual)',
      { retryable: true, detail: { store: 'redis', lost_frames: { from, to } } },
    ),
  );
  return `data: ${JSON.stringify(notice)}\n\n`;
}
