/**
 * A deadline for the hot-path commands (a call's admission), cheaper than the
 * client's own per-command timeout: that one arms an AbortSignal.timeout per
 * command, a timer that outlives the reply by the whole timeout (thousands
 * alive at once under load, and garbage the collector has to chase). Here
 * one interval, running only while commands are out, fails those older than
 * the deadline, and a reply just takes its entry out of a set.
 */
interface Waiting {
  readonly since: number;
  readonly reject: (err: unknown) => void;
}

export class CommandDeadline {
  private readonly waiting = new Set<Waiting>();
  private timer: NodeJS.Timeout | undefined;

  /** `timeoutMs`: how long a command may go unanswered; `timedOut` is the error it then fails with. */
  constructor(
    private readonly timeoutMs: number,
    private readonly timedOut: () => Error,
  ) {}

  /** `reply`, failed with `timedOut()` once unanswered for longer than the deadline. */
  watch<T>(reply: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry: Waiting = { since: performance.now(), reject };
      this.waiting.add(entry);
      this.timer ??= setInterval(() => this.expire(), Math.max(10, this.timeoutMs / 4)).unref();
      reply.then(
        (value) => {
          this.waiting.delete(entry);
          resolve(value);
        },
        (err: unknown) => {
          this.waiting.delete(entry);
          reject(err);
        },
      );
    });
  }

  private expire(): void {
    if (this.waiting.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    const limit = performance.now() - this.timeoutMs;
    for (const entry of this.waiting) {
      if (entry.since > limit) break; // a Set iterates in insertion order: the rest are younger
      this.waiting.delete(entry);
      entry.reject(this.timedOut());
    }
  }
}
