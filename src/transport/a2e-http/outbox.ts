/**
 * A session's outgoing messages. Each message becomes one SSE frame with a
 * session-wide id. Frames wait here until a stream takes them; written
 * frames are kept a while longer, so a stream that reconnects with
 * `Last-Event-ID` gets exactly what it missed (no loss, no duplicates).
 */

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

interface Frame {
  id: number;
  text: string;
}

export class Outbox {
  private pending: Frame[] = [];
  private written: Frame[] = [];
  private nextId = 0;
  /** Fires when frames are taken by a stream (or dropped): room for more. */
  readonly taken = new Signal();

  constructor(
    private readonly resumeFrames: number,
    /** Called after frames are pushed. */
    private readonly onPush: () => void,
  ) {}

  /** Frames not yet written to any stream. */
  get size(): number {
    return this.pending.length;
  }

  /** Queue messages (already serialised JSON), in order. */
  push(...json: string[]): void {
    for (const data of json) this.pending.push({ id: this.nextId, text: `id: ${this.nextId}\ndata: ${data}\n\n` });
    this.nextId += json.length;
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
    this.written = this.written.filter((f) => f.id <= last);
    this.pending = [...again, ...this.pending];
  }

  /** Take every pending frame as one string, remembering them for resumption. */
  take(): string {
    const frames = this.pending;
    this.pending = [];
    let text = '';
    for (const f of frames) text += f.text;
    if (this.resumeFrames > 0) {
      this.written.push(...frames);
      if (this.written.length > this.resumeFrames) this.written = this.written.slice(-this.resumeFrames);
    }
    this.taken.notify();
    return text;
  }

  clear(): void {
    this.pending = [];
    this.written = [];
    this.taken.notify();
  }
}
