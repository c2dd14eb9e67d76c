import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'hono';

/**
 * Run `fn` if the client goes away before the response is sent. Returns a
 * function that stops listening. On Node this listens on the socket's
 * response directly (cheap); elsewhere on the request's AbortSignal.
 */
export function onClientGone(c: Context, fn: () => void): () => void {
  const env = c.env as { outgoing?: ServerResponse; incoming?: IncomingMessage } | undefined;
  const res = env?.outgoing;
  if (res) {
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
