/**
 * One A2E transport session: its outbox, the stream currently attached to
 * it (at most one; a new one replaces the old), and the calls it started.
 * Knows nothing of HTTP: a stream is any SSE sink (engine/sse.ts).
 */
import type { Call, StopReason } from '../../engine/index.js';
import { Outbox, Signal, type OutboxLimits, type SessionOutbox } from './outbox.js';
import type { SessionBinding } from './binding.js';
import type { SseSink } from '../../engine/sse.js';
import { Inbox } from './inbox.js';

/** Where a session's frames go: the stream attached to it. */
export type FrameSink = SseSink;

export type SessionState = 'open' | 'draining' | 'closing' | 'closed';

/**
 * What message dispatch needs of a session, wherever it lives: who it
 * belongs to, its handshake, its calls on this instance, and an outbox to
 * push answers into (whose room a call's forwarder waits for).
 */
export interface DispatchSession {
  readonly binding: SessionBinding;
  handshakeId: string | undefined;
  state: SessionState;
  readonly calls: Map<Call, Promise<void>>;
  readonly outbox: SessionOutbox;
}

export class TransportSession implements DispatchSession {
  readonly outbox: Outbox;
  /** Id of the handshake session (SessionManager) once a handshake succeeded. */
  handshakeId: string | undefined;
  /** Epoch ms of the last message or stream detach; idle time counts from here. */
  lastActivity = Date.now();
  state: SessionState = 'open';
  /** Running calls and the task that forwards each one's events and response. */
  readonly calls = new Map<Call, Promise<void>>();
  /** Message handlers, run one at a time in arrival order. */
  readonly inbox = new Inbox();

  private stream: FrameSink | undefined;
  private readonly wake = new Signal();
  private closing: Promise<void> | undefined;

  constructor(
    readonly id: string,
    outboxLimits: OutboxLimits,
    /** Who the session belongs to, and whose quota it counts against. */
    readonly binding: SessionBinding,
  ) {
    this.outbox = new Outbox(outboxLimits, () => this.wake.notify());
  }

  get attached(): boolean {
    return this.stream !== undefined;
  }

  /** Mark the session as used now. */
  touch(): void {
    this.lastActivity = Date.now();
  }

  /** Idle: no stream attached and nothing received for `idleMs`. */
  idle(now: number, idleMs: number): boolean {
    return !this.stream && now - this.lastActivity > idleMs;
  }

  /**
   * Attach a stream. The previous one, if any, is ended. With `lastEventId`
   * the frames written after it are sent again first.
   */
  attach(sink: FrameSink, lastEventId?: string): void {
    const previous = this.stream;
    this.stream = sink;
    this.touch();
    previous?.end();
    this.outbox.resumeAfter(lastEventId);
    sink.onDisconnect(() => {
      if (this.stream !== sink) return;
      this.stream = undefined;
      this.touch();
      this.wake.notify();
    });
    this.wake.notify();
    void this.pump(sink);
  }

  /** Write queued frames to `sink` while it is the session's stream. */
  private async pump(sink: FrameSink): Promise<void> {
    while (this.stream === sink && !sink.closed) {
      if (this.outbox.size > 0) {
        if (!sink.write(this.outbox.take())) await sink.drain();
        continue;
      }
      if (this.state === 'closed') break;
      await this.wake.wait();
    }
    if (this.state === 'closed' && this.stream === sink) {
      this.stream = undefined;
      sink.end();
    }
    if (this.state === 'closed' && !this.stream) this.outbox.clear(); // what is left counts in no budget any more
  }

  /**
   * Stop the session's calls (their responses are still sent to an attached
   * stream), then end the stream and drop whatever is left.
   */
  close(reason: StopReason): Promise<void> {
    this.closing ??= (async () => {
      this.state = 'closing';
      this.outbox.taken.notify(); // forwarders waiting for room go on
      for (const call of this.calls.keys()) call.stop(reason);
      await Promise.allSettled(this.calls.values());
      this.state = 'closed';
      if (this.stream) this.wake.notify();
      else this.outbox.clear();
    })();
    return this.closing;
  }
}
