/**
 * A session's outgoing messages. Each message becomes one SSE frame with a
 * session-wide id. Frames wait here until a stream takes them; written
 * frames are kept a while longer, so a stream that reconnects with
 * `Last-Event-ID` gets exactly what it missed (no loss, no duplicates).
 *
 * Memory is counted in bytes (characters of frame text): per session, and
 * in a total shared by every session. The outbox never refuses a frame
 * (an answer must not be lost); the transport stops taking messages while
 * it is `full`, and call forwarders wait for room.
 */
import type { ByteBudget } from '../../utils/byte-budget.js';
import { sseFrame } from '../../engine/sse.js';
import type { Call } from '../../engine/index.js';

export interface OutboxLimits {
  /** Frames kept for resumption (`transport.resume_frames`). */
  resumeFrames: number;
  /** Bytes this outbox may hold, queued and kept for resumption; resumption keeps at most half of it. */
  sessionBytes: number;
  /** Bytes all outboxes hold together (shared). */
  total: ByteBudget;
  /** Most bytes handed to a stream in one write. */
  takeBytes: number;
}

/** Wakes whoever waits on it; a fresh promise after each notify. */
export class Signal {
  private waiters: (() => void)[] = [];
  wait(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
  notify(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const fn of w) fn();
  }
}

/**
 * What message dispatch pushes a session's answers into and waits on for room, wherever the session lives: this
 * process's memory (Outbox, below) or a shared store (src/store/redis/transport-outbox.ts).
 */
export interface SessionOutbox {
  push(...json: string[]): void;
  /** Push `call`'s final answer: with a shared store, written together with the end of the call's lease. */
  answer(call: Call, json: string): void;
  /** Push one of `call`'s events: with a shared store, marked with the call, so whoever streams it knows the call runs. */
  event(call: Call, json: string): void;
  /** Frames not yet written to a stream. */
  readonly size: number;
  /** At or over its byte budget. */
  readonly full: boolean;
  /** Resolves when a stream may have taken frames (room for more). */
  readonly taken: { wait(): Promise<void> };
}

interface Frame {
  id: number;
  text: string;
}

export class Outbox implements SessionOutbox {
  private pending: Frame[] = [];
  private written: Frame[] = [];
  private pendingBytes = 0;
  private writtenBytes = 0;
  private nextId = 0;
  /** Fires when frames are taken by a stream (or dropped): room for more. */
  readonly taken = new Signal();

  constructor(
    private readonly limits: OutboxLimits,
    /** Called after frames are pushed. */
    private readonly onPush: () => void,
  ) {}

  /** Frames not yet written to any stream. */
  get size(): number {
    return this.pending.length;
  }

  /** Bytes held: frames queued and frames kept for resumption. */
  get bytes(): number {
    return this.pendingBytes + this.writtenBytes;
  }

  /** At or over its byte budget: take no more messages until a stream reads. */
  get full(): boolean {
    return this.bytes >= this.limits.sessionBytes;
  }

  /** A call's final answer (in memory, a frame like any other: nothing outlives this process here). */
  answer(_call: Call, json: string): void {
    this.push(json);
  }

  /** A call's event (in memory, a frame like any other). */
  event(_call: Call, json: string): void {
    this.push(json);
  }

  /** Queue messages (already serialised JSON), in order. */
  push(...json: string[]): void {
    let bytes = 0;
    for (const data of json) {
      const text = sseFrame(undefined, data, this.nextId++);
      this.pending.push({ id: this.nextId - 1, text });
      bytes += text.length;
    }
    this.pendingBytes += bytes;
    this.limits.total.add(bytes);
    this.onPush();
  }

  /**
   * A stream attaches having seen every frame up to `lastEventId`: frames
   * written after it are queued again, ahead of the pending ones.
   */
  resumeAfter(lastEventId: string | undefined): void {
    if (lastEventId === undefined || !/^\d+$/.test(lastEventId)) return;
    const last = Number(lastEventId);
    const again = this.written.filter((f) => f.id > last);
    if (!again.length) return;
    const bytes = textBytes(again);
    this.written = this.written.filter((f) => f.id <= last);
    this.writtenBytes -= bytes;
    this.pending = [...again, ...this.pending];
    this.pendingBytes += bytes;
  }

  /**
   * Take pending frames as one string (about `takeBytes` at most, at least
   * one frame), remembering them for resumption.
   */
  take(): string {
    let n = 0;
    let text = '';
    while (
      n < this.pending.length &&
      (n === 0 || text.length + this.pending[n]!.text.length <= this.limits.takeBytes)
    ) {
      text += this.pending[n++]!.text;
    }
    const frames = n === this.pending.length ? this.pending : this.pending.slice(0, n);
    this.pending = n === this.pending.length ? [] : this.pending.slice(n);
    this.pendingBytes -= text.length;
    if (this.limits.resumeFrames > 0) {
      this.written.push(...frames);
      this.writtenBytes += text.length;
    } else {
      this.limits.total.release(text.length);
    }
    this.trimWritten();
    this.taken.notify();
    return text;
  }

  /** Frames kept for resumption: at most `resumeFrames` of them, in at most half the session's bytes. */
  private trimWritten(): void {
    const maxBytes = this.limits.sessionBytes >> 1;
    let n = Math.max(0, this.written.length - this.limits.resumeFrames);
    let bytes = this.writtenBytes;
    for (let i = 0; i < n; i++) bytes -= this.written[i]!.text.length;
    while (n < this.written.length && bytes > maxBytes) bytes -= this.written[n++]!.text.length;
    if (n === 0) return;
    this.written = this.written.slice(n);
    this.limits.total.release(this.writtenBytes - bytes);
    this.writtenBytes = bytes;
  }

  clear(): void {
    this.limits.total.release(this.bytes);
    this.pending = [];
    this.written = [];
    this.pendingBytes = this.writtenBytes = 0;
    this.taken.notify();
  }
}

function textBytes(frames: readonly Frame[]): number {
  let n = 0;
  for (const f of frames) n += f.text.length;
  return n;
}
