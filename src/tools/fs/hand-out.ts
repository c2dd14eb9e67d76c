/**
 * Answers handed to their callers a few per event-loop turn.
 *
 * A helper thread or the privilege-separated worker answers whatever queued
 * up while the event loop was busy, and the event loop takes all of those
 * messages in one go (a MessagePort's batch, an IPC read of many lines): each
 * answer resumes a call, whose response is built and written right then, so a
 * convoy of them would be one long task, and a request that just arrived (a
 * health check) would wait behind all of it. Handed out at most SLICE per
 * turn, the event loop polls for I/O between slices.
 */

/** Answers resumed per event-loop turn. */
const SLICE = 8;

const queue: (() => void)[] = [];
let handed = 0;

/** Run `resume` in this turn's slice of answers, or a later turn's when this one is full. */
export function handOut(resume: () => void): void {
  if (queue.push(resume) === 1) setImmediate(handSlice);
}

function handSlice(): void {
  const end = Math.min(queue.length, handed + SLICE);
  while (handed < end) queue[handed++]!();
  if (handed < queue.length) {
    setImmediate(handSlice);
    return;
  }
  queue.length = 0;
  handed = 0;
}
