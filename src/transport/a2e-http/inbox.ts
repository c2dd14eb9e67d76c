/**
 * A session's inbox: the messages it received, handled one at a time in
 * arrival order. Shared by the in-memory session and the Redis one.
 */
export class Inbox {
  /** Messages received and not yet handled. */
  size = 0;
  private tail: Promise<void> = Promise.resolve();

  /** Run `task` after every task enqueued before it has settled. */
  enqueue(task: () => Promise<void> | void): void {
    this.size++;
    const run = async () => {
      try {
        await task();
      } catch {
        // Handlers answer their own errors on the stream; one failing must not stop the next.
      } finally {
        this.size--;
      }
    };
    this.tail = this.tail.then(run, run);
  }
}
