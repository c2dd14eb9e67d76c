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
 *
 * The queue is a linked list (EntryList), not an array cleared when it runs empty: under steady load it seldom
 * does, and the array kept every handed-out callback, and the calls they resumed, alive past the young generation
 * (38 MB promoted in 4 s of read_file load; measured in 20b6018).
 */
import { EntryList } from '../../../utils/entry-list.js';

/** Answers resumed per event-loop turn. */
const SLICE = 8;

const queue = new EntryList<() => void>();
let scheduled = false;

/** Run `resume` in this turn's slice of answers, or a later turn's when this one is full. */
export function handOut(resume: () => void): void {
  queue.add(resume);
  if (!scheduled) {
    scheduled = true;
    setImmediate(handSlice);
  }
}

function handSlice(): void {
  scheduled = false;
  // Only what was queued before this slice: an answer handed out while it runs waits for a later turn.
  for (let n = Math.min(SLICE, queue.size); n > 0; n--) queue.shift()!();
  if (queue.size > 0 && !scheduled) {
    scheduled = true;
    setImmediate(handSlice);
  }
}
