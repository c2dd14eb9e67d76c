/**
 * A transport session's outbox in Redis (beside the in-memory one, transport/a2e-http/outbox.ts, behind the same
 * SessionOutbox): answers go into the session's Redis Stream through PUSH (transport-scripts.ts).
 */
import type { Call, Logger } from '../../engine/index.js';
import type { SessionOutbox } from '../../transport/a2e-http/index.js';
import { callInfo, leaseOf } from './transport-call-lease.js';
import { FRAME_OVERHEAD } from './transport-scripts.js';

/** How often a forwarder waiting for room looks again, ms (only while the session's outbox is full). */
const ROOM_POLL_MS = 50;
/** How often a push into a session put back after Redis lost its data looks again while that settles, ms. */
const SETTLE_POLL_MS = 100;

/** What an outbox needs of its session's handle: the fields written along with its frames. */
export interface OutboxSession {
  readonly id: string;
  version: number;
  /** The fields to write with the next frames: none when unchanged. */
  changedFields(): string[];
  /** Writing the fields failed: send them again with the next frames. */
  forgetSaved(): void;
}

/** What an outbox needs of the transport store it writes through. */
export interface OutboxStore {
  /** Run PUSH: `fields` the session's changed fields, `frames` per frame the lease member its answer ends ("" none) and its JSON. */
  pushFrames(
    sid: string,
    fields: string[],
    frames: string[],
    batch: number,
  ): Promise<[number, number, number?, number?, number?, string?]>;
  /** A push was written: `first` the id of its first frame, `written` per frame "1" written or "0" dropped (see PUSH). */
  pushed(sid: string, frames: string[], first: number, written: string): void;
  /** The number of the next batch of frames this instance pushes (into any session). */
  nextBatch(): number;
  /** PUSH found the session gone: true when Redis lost it and it was put back (push again). */
  sessionLost(sid: string): Promise<boolean>;
  /** The answer that ends `member`'s lease was written (or dropped with its session). */
  leaseEnded(member: string): void;
  outboxState(sid: string): Promise<{ pending: number; bytes: number } | undefined>;
  /** How long answers are retried while Redis is down, ms. */
  readonly retryForMs: number;
  readonly sessionByteBudget: number;
  readonly log: Logger;
}

/**
 * Answers into the session's Redis outbox, in order: pushes made while one
 * is on its way go together in the next. While Redis is down they are kept
 * and retried (for session_idle_s), so no answer is dropped by a blip.
 */
export class RedisOutbox implements SessionOutbox {
  /** Per frame: the lease member its answer ends ("" none), then its JSON. */
  private queue: string[] = [];
  /** Lease members whose answers are queued or on their way. */
  private readonly answers = new Set<string>();
  private queuedBytes = 0;
  private flushing: Promise<void> | undefined;
  /** As Redis last said: frames not yet written to a stream, and bytes kept. */
  private pending = 0;
  /** Id of the last frame this instance pushed (-1 none): where frame ids go on if Redis loses the session. */
  lastPushed = -1;
  bytes = 0;
  readonly taken = { wait: () => this.waitForRoom() };

  constructor(
    private readonly session: OutboxSession,
    private readonly transport: OutboxStore,
  ) {}

  get size(): number {
    return this.pending + (this.queue.length >> 1);
  }

  /** An answer ending `member`'s lease is queued or on its way. */
  carries(member: string): boolean {
    return this.answers.has(member);
  }

  get full(): boolean {
    return this.bytes + this.queuedBytes >= this.transport.sessionByteBudget;
  }

  /** Frames on their way to Redis. */
  get busy(): boolean {
    return this.flushing !== undefined;
  }

  known(pending: number, bytes: number): void {
    if (this.busy) return;
    this.pending = pending;
    this.bytes = bytes;
  }

  push(...json: string[]): void {
    for (const j of json) {
      this.queuedBytes += Buffer.byteLength(j) + FRAME_OVERHEAD;
      this.queue.push('', j);
    }
    this.flushing ??= this.flush();
  }

  /** A call's event, marked with the call (see PUSH). */
  event(call: Call, json: string): void {
    this.queuedBytes += Buffer.byteLength(json) + FRAME_OVERHEAD;
    this.queue.push(`+${leaseOf(this.session.id, call)} ${callInfo(call)}`, json);
    this.flushing ??= this.flush();
  }

  /** A call's final answer: written together with the end of its lease (dropped if another instance answered it already). */
  answer(call: Call, json: string): void {
    const member = leaseOf(this.session.id, call);
    this.answers.add(member);
    this.queuedBytes += Buffer.byteLength(json) + FRAME_OVERHEAD;
    this.queue.push(member, json);
    this.flushing ??= this.flush();
  }

  /** The frames were written (or dropped): the leases their answers end are over. */
  private done(frames: string[]): void {
    for (let i = 0; i < frames.length; i += 2) {
      this.queuedBytes -= Buffer.byteLength(frames[i + 1]!) + FRAME_OVERHEAD;
      const member = frames[i]!;
      if (member && !member.startsWith('+')) {
        this.answers.delete(member);
        this.transport.leaseEnded(member);
      }
    }
  }

  settled(): Promise<void> {
    return this.flushing ?? Promise.resolve();
  }

  private async flush(): Promise<void> {
    let restored = false;
    while (this.queue.length) {
      const frames = this.queue;
      this.queue = [];
      const fields = this.session.changedFields();
      // One number per batch, sent again with it on a retry: a batch Redis wrote before its reply was lost is not written twice.
      const batch = this.transport.nextBatch();
      let failingSince: number | undefined;
      for (;;) {
        try {
          const [pending, bytes, version, last, first, written] = await this.transport.pushFrames(
            this.session.id,
            fields,
            frames,
            batch,
          );
          if (pending === -2) {
            // Put back after Redis lost its data: what instances had pushed before goes in first (RESTORE_SESSION).
            await new Promise((r) => setTimeout(r, SETTLE_POLL_MS));
            continue;
          }
          if (pending === -1 && !restored && (await this.transport.sessionLost(this.session.id))) {
            restored = true; // once until a push succeeds: a session closed meanwhile stays closed
            continue;
          }
          this.done(frames);
          if (pending >= 0) {
            if (first !== undefined && written !== undefined)
              this.transport.pushed(this.session.id, frames, first, written);
            restored = false;
            if (last !== undefined) this.lastPushed = Math.max(this.lastPushed, last);
            this.pending = pending;
            this.bytes = bytes;
            if (version !== undefined) this.session.version = version;
          }
          break;
        } catch (err) {
          failingSince ??= Date.now();
          if (Date.now() - failingSince > this.transport.retryForMs) {
            this.transport.log.error(
              { err, dropped: (frames.length + this.queue.length) >> 1 },
              'A2E transport answers could not be stored in Redis; dropped them',
            );
            this.done([...frames, ...this.queue]);
            if (fields.length) this.session.forgetSaved();
            this.queue = [];
            this.queuedBytes = 0;
            this.flushing = undefined;
            return;
          }
          await new Promise((r) => setTimeout(r, 250));
        }
      }
    }
    this.flushing = undefined;
  }

  /** A forwarder waits for the stream to take frames: look again shortly (only while the outbox is full). */
  private async waitForRoom(): Promise<void> {
    await new Promise((r) => setTimeout(r, ROOM_POLL_MS));
    if (this.busy) return this.settled();
    const state = await this.transport.outboxState(this.session.id).catch(() => undefined);
    if (state) this.known(state.pending, state.bytes);
  }
}
