/**
 * A call's events as Server-Sent Events: the one framing shared by every SSE
 * door (the one-shot POST /tool/call stream and the call resources' events).
 *
 *   event: tool/event       id: <seq>      data: ToolEvent       (gap notices too)
 *   event: tool/call/resp   id: <events>   data: ToolCallResponse (last)
 *
 * The response carries the id one past the last event's seq, so a browser's
 * EventSource that reconnects after it sends a Last-Event-ID "past the end"
 * and is told to stop (HTTP 204) instead of being replayed the answer forever.
 */
import type { Context } from 'hono';
import { GatewayError, TOOLS_CAPABILITY, type CallView, type EventBatch, type Logger } from '../../engine/index.js';
import { asGatewayError, errorMessage } from './errors.js';
import { DEFAULT_STREAM_LIMITS, sseFrame, streamSse, type SseSink, type StreamLimits } from './sse.js';

export interface CallStreamOptions {
  heartbeatS: number;
  logger: Logger;
  /** Follow from after this seq (-1 = from the start). */
  afterSeq?: number;
  /**
   * The client saw up to this seq already, beyond what the view holds (`afterSeq` is then the view's last):
   * events up to it are not sent again, but a final response the store wrote below it still is.
   */
  seenThrough?: number;
  /** Reconnect delay to hint to EventSource clients (`retry:`), ms. */
  retryMs?: number;
  /** Stop the call when the client disconnects (one-shot streams); otherwise it runs on, resumable. */
  stopOnDisconnect: boolean;
  /** What the stream may hold for a client that does not keep up. */
  limits?: StreamLimits;
}

/** Answer with the call's events (after `afterSeq`), followed live, then its response. */
export function streamCall(c: Context, call: CallView, options: CallStreamOptions): Response {
  const watcher = call.watch(options.afterSeq ?? -1);
  const batches = options.seenThrough === undefined ? watcher : unseen(watcher, options.seenThrough);
  const preamble = options.retryMs === undefined ? undefined : `retry: ${options.retryMs}\n`;
  const limits = options.limits ?? DEFAULT_STREAM_LIMITS;
  const onCut = (stallS: number) => {
    options.logger.warn(
      { call_id: call.id, req_id: call.requestId, stall_s: stallS },
      'SSE stream cut: the client took no data (limits.stream_stall_s)',
    );
    const next = options.stopOnDisconnect
      ? 'the call was stopped; read the stream as it comes, or start the call with POST /tool/calls to follow it at your pace'
      : `reconnect with Last-Event-ID to continue where you left off`;
    const err = new GatewayError(
      'unavailable',
      `this stream was cut: the client took no data for ${stallS} s while output waited (limits.stream_stall_s); ${next}`,
      {
        retryable: !options.stopOnDisconnect,
      },
    );
    return sseFrame('tool/error', JSON.stringify(errorMessage(err, call.requestId, TOOLS_CAPABILITY)));
  };
  // The stream belongs to the call's owner, whoever reads it (a bearer token, or the call's access_token).
  const onRevoked = (reason: string) =>
    sseFrame(
      'tool/error',
      JSON.stringify(errorMessage(new GatewayError('unauthorized', reason), call.requestId, TOOLS_CAPABILITY)),
    );
  return streamSse(
    c,
    {
      heartbeatS: options.heartbeatS,
      preamble,
      stallS: limits.stallS,
      onCut,
      owner: { principal: call.principal, credential: call.credential },
      onRevoked,
    },
    async (sink) => {
      sink.onDisconnect(() => {
        if (options.stopOnDisconnect) void call.stop('disconnect');
        watcher.close();
      });
      try {
        await pipeCall(call, batches, sink, limits.unsentBytes);
      } catch (err) {
        options.logger.error({ err, call_id: call.id }, 'SSE stream failed');
        sink.write(
          sseFrame('tool/error', JSON.stringify(errorMessage(asGatewayError(err), call.requestId, TOOLS_CAPABILITY))),
        );
      }
    },
  );
}

/** The batches without the events (and gaps) up to `seen`. */
async function* unseen(watcher: AsyncIterable<EventBatch>, seen: number): AsyncGenerator<EventBatch> {
  for await (const batch of watcher) {
    const events = batch.events.filter((ev) => ev.seq === undefined || ev.seq > seen);
    const gap =
      batch.gap && batch.gap.to > seen ? { from: Math.max(batch.gap.from, seen + 1), to: batch.gap.to } : undefined;
    if (events.length || gap) yield gap ? { events, gap } : { events };
  }
}

/** Id of the final `tool/call/resp` frame: one past the last event's seq. */
export function responseEventId(call: CallView): number {
  return call.eventCount;
}

/**
 * Write a call's events as `tool/event` frames (id = seq), then its
 * `tool/call/resp`. At most about `unsentBytes` go to the client before
 * waiting for it to take them; meanwhile events wait in the call.
 */
export async function pipeCall(
  call: CallView,
  watcher: AsyncIterable<EventBatch>,
  sink: SseSink,
  unsentBytes = DEFAULT_STREAM_LIMITS.unsentBytes,
): Promise<void> {
  for await (const batch of watcher) {
    let frames = '';
    if (batch.gap) {
      const notice = call.gapNotice(batch.gap);
      frames += sseFrame('tool/event', JSON.stringify(notice), notice.seq);
    }
    for (const ev of batch.events) {
      frames += sseFrame('tool/event', JSON.stringify(ev), ev.seq);
      if (frames.length >= unsentBytes) {
        if (!sink.write(frames)) await sink.drain();
        frames = '';
        if (sink.closed) return;
      }
    }
    if (frames && !sink.write(frames)) await sink.drain();
    if (sink.closed) return;
  }
  if (sink.closed) return;
  sink.write(sseFrame('tool/call/resp', JSON.stringify(call.response), responseEventId(call)));
}
