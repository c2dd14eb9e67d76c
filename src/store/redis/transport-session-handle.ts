/** A transport session as one instance handles it (its messages, its calls running here, its Redis outbox). */
import type { Call, StopReason } from '../../engine/index.js';
import { Inbox, type DispatchSession, type SessionBinding, type SessionState } from '../../transport/a2e-http/index.js';
import { RedisOutbox, type OutboxStore } from './transport-outbox.js';
import type { SessionRecord } from './transport-record.js';

/** What a handle needs of the transport store: its outbox's needs, and to hear of its calls starting and ending. */
export interface HandleStore extends OutboxStore {
  /** A call started here for the session: it counts as running there, and holds a lease until its answer is written. */
  callStarted(h: RedisSessionHandle, call: Call): void;
  /** The call ended here (its answer is queued, or it could not be forwarded). */
  callEnded(h: RedisSessionHandle, call: Call): void;
}

/**
 * A session as this instance handles it: its messages, one at a time, in
 * arrival order; its calls running here; an outbox writing to Redis. Its
 * binding and handshake are written along with the answers they produce.
 */
export class RedisSessionHandle implements DispatchSession {
  binding: SessionBinding;
  handshakeId: string | undefined;
  state: SessionState;
  version: number;
  readonly calls: Map<Call, Promise<void>>;
  readonly outbox: RedisOutbox;
  readonly inbox = new Inbox();
  /** The lease of the call started last, on its way to Redis. */
  leasing: Promise<unknown> | undefined;
  /** The fields as Redis has them (what is written when they change). */
  private saved: string;

  constructor(
    readonly id: string,
    binding: SessionBinding,
    rec: SessionRecord,
    transport: HandleStore,
  ) {
    this.binding = binding;
    this.handshakeId = rec.handshakeId || undefined;
    this.state = rec.state;
    this.version = rec.version;
    this.saved = this.fields().join('\n');
    this.calls = new CountedCalls(
      (call) => transport.callStarted(this, call),
      (call) => transport.callEnded(this, call),
    );
    this.outbox = new RedisOutbox(this, transport);
  }

  /** What another instance changed. */
  apply(binding: SessionBinding, rec: SessionRecord): void {
    this.binding = binding;
    this.handshakeId = rec.handshakeId || undefined;
    if (this.state === 'open') this.state = rec.state;
    this.version = rec.version;
    this.saved = this.fields().join('\n');
  }

  /** The fields to write with the next frames: none when unchanged. */
  changedFields(): string[] {
    const fields = this.fields();
    const text = fields.join('\n');
    if (text === this.saved) return [];
    this.saved = text;
    return fields;
  }

  /** Writing the fields failed: send them again with the next frames. */
  forgetSaved(): void {
    this.saved = '';
  }

  private fields(): string[] {
    const b = this.binding;
    // Past open, a session only drains (closed is written by CLOSE, never by a push).
    const st = this.state === 'open' ? 'open' : 'draining';
    return [
      'p',
      b.principal === null ? '' : `=${b.principal}`,
      'b',
      b.boundBy ?? '',
      'h',
      b.handshook ? '1' : '0',
      'hs',
      this.handshakeId ?? '',
      'st',
      st,
    ];
  }

  /** Stop the calls running here; their responses are still queued. */
  async stop(reason: StopReason): Promise<void> {
    if (this.state === 'closing' || this.state === 'closed') return;
    this.state = 'closing';
    for (const call of this.calls.keys()) call.stop(reason);
    await Promise.allSettled(this.calls.values());
    await this.outbox.settled();
    this.state = 'closed';
  }
}

/** Tells the store of the calls running on a session (their count spares it quota eviction; each holds a lease). */
class CountedCalls extends Map<Call, Promise<void>> {
  constructor(
    private readonly started: (call: Call) => void,
    private readonly ended: (call: Call) => void,
  ) {
    super();
  }
  override set(call: Call, forwarding: Promise<void>): this {
    const added = !this.has(call);
    super.set(call, forwarding);
    if (added) this.started(call);
    return this;
  }
  override delete(call: Call): boolean {
    const removed = super.delete(call);
    if (removed) this.ended(call);
    return removed;
  }
}
