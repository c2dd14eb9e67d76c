import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Context } from 'hono';
import { EntryList } from '../../utils/entry-list.js';
import { nodeResponse } from './node.js';

/** A request still being answered on a connection, and what to run if its client goes away. */
interface Waiting {
  res: ServerResponse;
  fn: () => void;
}

/** Per-connection list of its requests still being answered (an EntryList: no Set hashing per request). */
const GONE = Symbol('a2e.clientGone');
type TrackedSocket = Socket & { [GONE]?: EntryList<Waiting> };

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
      const list = (waiting = socket[GONE] = new EntryList());
      socket.once('close', () => {
        for (let w = list.shift(); w !== undefined; w = list.shift()) if (!w.res.writableFinished) w.fn();
      });
    }
    const entry = waiting.add({ res, fn });
    return () => void waiting.remove(entry);
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
