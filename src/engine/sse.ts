/**
 * Server-Sent Events, the one stream format of every door that streams (REST
 * SSE, call resources, the A2E transport, MCP and A2A streams): how a frame is
 * written, and the sink a stream writes frames to. No HTTP here: routes/http/sse.ts
 * makes a sink of a response; the transport writes to whatever sink it is given.
 */

/** One SSE frame; no `event:` line when `event` is undefined. `data` must not contain newlines (JSON.stringify output never does). */
export function sseFrame(event: string | undefined, data: string, id?: number | string): string {
  const head = event === undefined ? '' : `event: ${event}\n`;
  return id === undefined ? `${head}data: ${data}\n\n` : `${head}id: ${id}\ndata: ${data}\n\n`;
}

/** An open event stream. */
export interface SseSink {
  /** Write raw frames. Returns false when the client is not keeping up: await `drain()` then. */
  write(frames: string): boolean;
  /**
   * Resolves when buffered output was flushed, or the client went away. When
   * it waits longer than the stream's stall limit, the stream is cut: the final
   * frame is written, the stream counts as disconnected and is closed.
   */
  drain(): Promise<void>;
  /** Finish the stream. */
  end(): void;
  /** True once the client disconnected or `end()` was called. */
  readonly closed: boolean;
  /** Called once if the client disconnects before `end()`. */
  onDisconnect(fn: () => void): void;
}
