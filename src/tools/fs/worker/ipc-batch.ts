/**
 * Messages between the gateway and the file tools worker sent together, once
 * per event-loop turn.
 *
 * Each `send` is a write to the pipe between them (the IPC channel for calls,
 * the answer pipe for what comes back: answer-stream.ts), and each write
 * wakes the other process: under load, on a CPU the two share, a wake-up per
 * call and per answer was a large part of a small file call's cost. What one
 * turn sends goes as one write (a batch when there is more than one), in order.
 */

/** Several messages sent as one, in the order they were given. */
export interface Batch<M> {
  type: 'batch';
  messages: M[];
}

/**
 * A `send` that holds what it is given until the end of this event-loop turn (setImmediate: every request the
 * turn's I/O brought in has been handled by then), then passes it on as one message.
 *
 * @example
 * const post = batchedSender((m) => child.connected && child.send(m));
 * post({ type: 'call', id: 1, … }); post({ type: 'call', id: 2, … }); // one write: { type: 'batch', messages: [both] }
 */
export function batchedSender<M>(send: (message: M | Batch<M>) => void): (message: M) => void {
  let held: M[] = [];
  const flush = () => {
    const messages = held;
    held = [];
    send(messages.length === 1 ? messages[0]! : { type: 'batch', messages });
  };
  return (message) => {
    if (held.push(message) === 1) setImmediate(flush);
  };
}

/** Handle a message that may be a batch: each message it holds, in order. */
export function eachMessage<M extends { type: string }>(message: M | Batch<M>, handle: (message: M) => void): void {
  if (message.type !== 'batch') return handle(message as M);
  for (const m of (message as Batch<M>).messages) handle(m);
}
