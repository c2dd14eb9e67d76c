/**
 * An MCP server's answer over Streamable HTTP, each message at most
 * `mcp.max_message_bytes` before the SDK buffers it (its JSON reader and SSE
 * parser have no bound of their own). A JSON answer is held until it is whole
 * (the SDK parses it whole anyway); an SSE answer is passed on an event at a
 * time, its current event held until its blank line. Past the limit the rest
 * of the answer is not read: in its place comes a JSON-RPC error for the
 * request (oversized-message.ts), so the call fails at once saying why, and
 * the connection is closed. A stream that answers no request (the GET stream
 * of server notifications) ends with an error instead, which the SDK reports
 * and reconnects.
 */
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { SseEventBounds } from '../utils/sse-event-bounds.js';
import { tooLargeAnswer } from './oversized-message.js';

export interface AnswerLimit {
  maxBytes: number;
  /** The server's id, for the error. */
  serverId: string;
}

type Body = AsyncIterable<Buffer> & { destroy(): unknown };

/** A JSON answer, whole, or the error in its place. */
export async function* boundedJson(body: Body, limit: AnswerLimit, requestBody: unknown): AsyncGenerator<Buffer> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.length;
    if (bytes > limit.maxBytes) {
      body.destroy();
      yield Buffer.from(
        JSON.stringify(tooLargeAnswer(idOf(requestBody, limit), undefined, limit.maxBytes, limit.serverId)),
      );
      return;
    }
    chunks.push(chunk);
  }
  // As they came: the SDK joins them once (joining here too would copy the answer twice).
  yield* chunks;
}

/** An SSE answer, whole events at a time, or, once one is too large, the error in its place. */
export async function* boundedSse(body: Body, limit: AnswerLimit, requestBody: unknown): AsyncGenerator<Buffer> {
  const events = new SseEventBounds();
  /** The bytes of the event not complete yet. */
  let held: Buffer[] = [];
  for await (const chunk of body) {
    const { end, largest } = events.scan(chunk);
    if (largest > limit.maxBytes || events.current > limit.maxBytes) {
      body.destroy();
      const frame = `event: message\ndata: ${JSON.stringify(tooLargeAnswer(idOf(requestBody, limit), undefined, limit.maxBytes, limit.serverId))}\n\n`;
      yield Buffer.from(frame);
      return;
    }
    if (end > 0) {
      // The events that are complete go on (as they came: the SDK's parser joins them); what follows is held.
      held.push(chunk.subarray(0, end));
      yield* held;
      held = [];
    }
    if (end < chunk.length) held.push(end > 0 ? chunk.subarray(end) : chunk);
  }
  yield* held;
}

/** The request's JSON-RPC id; a request without one (nothing waits for its answer) makes the answer an error. */
function idOf(requestBody: unknown, limit: AnswerLimit): RequestId {
  let id: unknown;
  try {
    id = typeof requestBody === 'string' ? (JSON.parse(requestBody) as { id?: unknown }).id : undefined;
  } catch {
    id = undefined;
  }
  if (typeof id === 'string' || typeof id === 'number') return id;
  throw new Error(
    `MCP server "${limit.serverId}" sent a message over mcp.max_message_bytes (${limit.maxBytes}) on a stream that answers no call; the stream was closed`,
  );
}
