import type { Socket } from 'node:net';
import type { Context } from 'hono';
import { nodeResponse } from './node.js';

/** Per-connection set of "the client went away" callbacks of its requests still being answered. */
const GONE = Symbol('a2e.clientGone');
type TrackedSocket = Socket & { [GONE]?: Set<() => void> };

/**
 * Run `fn` if the client goes away before the response is sent. Returns a
 * function that stops listening. On Node one 'close' listener per
 * connection serves all its requests (a listener added and removed on every
 * response was a measurable part of a fast call); elsewhere the request's
 * AbortSignal.
 */
export function onClientGone(c: Context, fn: () => void): () => void {
  const res = nodeResponse(c);
  const socket = res?.socket as TrackedSocket | null | undefined;
  if (res && socket) {
    let waiting = socket[GONE];
    if (!waiting) {
      const set = (waiting = socket[GONE] = new Set());
      socket.once('close', () => {
        for (const gone of set) gone();
        set.clear();
      });
    }
    const entry = () => {
      if (!res.writableFinished) fn();
    };
    waiting.add(entry);
    return () => waiting.delete(entry);
  }
  if (res) {
    // No socket (already detached): the response's own close event.
    const listener = () => {
      if (!res.writableFinished) fn();
    };
    res.once('close', listener);
    return () => res.off('close', listener);
  }
  const signal = c.req.raw.signal;
  signal.addEventListener('abort', fn, { once: true });
  return () => signal.removeEventListener('abort', fn);
}
