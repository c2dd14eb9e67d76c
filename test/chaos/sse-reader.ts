/**
 * An SSE client for the chaos run: like test/helpers/server.ts's openSse,
 * but a non-200 answer keeps its body (the error the client must be able to
 * read), the caller's signal bounds the whole exchange, and a frame that does
 * not arrive before a deadline ends the read, so no loop waits forever.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface Frame {
  event: string | undefined;
  id: string | undefined;
  data: string;
}

export type Opened =
  | { status: 200; next(deadlineMs: number): Promise<Frame | 'end' | 'timeout'>; close(): void }
  | { status: number; body: string };

/** GET `url` as an event stream. Throws when no HTTP answer came (connection refused, reset, or `signal`). */
export async function openEvents(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<Opened> {
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  let res: Response;
  try {
    res = await fetch(url, { headers: { Accept: 'text/event-stream', ...headers }, signal: controller.signal });
  } catch (err) {
    signal.removeEventListener('abort', onAbort);
    throw err;
  }
  if (res.status !== 200) {
    const body = await res.text().catch((err: Error) => `(body cut: ${err.message})`);
    signal.removeEventListener('abort', onAbort);
    return { status: res.status, body };
  }
  const queue: (Frame | 'end')[] = [];
  let wake: (() => void) | undefined;
  const push = (f: Frame | 'end') => {
    queue.push(f);
    wake?.();
  };
  const parser = createParser({ onEvent: (e: EventSourceMessage) => push({ event: e.event, id: e.id, data: e.data }) });
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
        parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      // cut: the instance died, or close()
    }
    signal.removeEventListener('abort', onAbort);
    push('end');
  })();
  return {
    status: 200,
    async next(deadlineMs) {
      while (queue.length === 0) {
        const left = deadlineMs - Date.now();
        if (left <= 0) return 'timeout';
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
      return queue.shift()!;
    },
    close: () => controller.abort(),
  };
}
