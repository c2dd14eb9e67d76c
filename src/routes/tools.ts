/**
 * POST /tool/list and POST /tool/call (JSON and SSE). HTTP in, engine call,
 * HTTP out: no tool logic here.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { Call, Caller, Engine, EventBatch, Logger } from '../engine/index.js';
import { ToolCallRequest, ToolListRequest, newId, nowTs, PROTOCOL_VERSION } from '../protocol/index.js';
import { readJson } from './body.js';
import { asGatewayError, errorMessage } from './errors.js';
import { onClientGone } from './disconnect.js';
import { sseFrame, streamSse, type SseSink } from './sse.js';
import { callRoute, listRoute } from './tools.openapi.js';

export interface ToolRoutesDeps {
  engine: Engine;
  logger: Logger;
  bodyLimitBytes: number;
  heartbeatS: number;
  /** Who is calling (sessions and auth fill this in); anonymous by default. */
  caller: (c: Context) => Caller;
}

export function registerToolRoutes(app: OpenAPIHono, deps: ToolRoutesDeps): void {
  const { engine, bodyLimitBytes } = deps;

  app.openAPIRegistry.registerPath(listRoute);
  app.post(listRoute.path, async (c) => {
    const { value: req } = await readJson(c, ToolListRequest, bodyLimitBytes);
    return c.json({
      type: 'tool/list/resp',
      id: newId(),
      version: PROTOCOL_VERSION,
      ts: nowTs(),
      req_id: req.id,
      tools: engine.list(req, deps.caller(c)),
    });
  });

  app.openAPIRegistry.registerPath(callRoute);
  app.post(callRoute.path, async (c) => {
    const { value: req, bytes } = await readJson(c, ToolCallRequest, bodyLimitBytes);
    const call = engine.start(req, deps.caller(c), { inputBytes: bytes });
    if (req.streaming && acceptsEventStream(c.req.header('accept'))) {
      return streamCall(c, call, deps);
    }
    const stop = onClientGone(c, () => call.stop('disconnect'));
    await call.result;
    stop();
    return c.json(req.streaming ? call.responseWithEvents() : call.response);
  });
}

export function acceptsEventStream(accept: string | undefined): boolean {
  return accept !== undefined && accept.includes('text/event-stream');
}

/** One-shot stream of a call: its events, then the response. Disconnecting stops the call. */
function streamCall(c: Context, call: Call, deps: ToolRoutesDeps): Response {
  const watcher = call.watch();
  return streamSse(c, { heartbeatS: deps.heartbeatS }, async (sink) => {
    sink.onDisconnect(() => {
      call.stop('disconnect');
      watcher.close();
    });
    try {
      await pipeCall(call, watcher, sink);
    } catch (err) {
      deps.logger.error({ err, call_id: call.id }, 'SSE stream failed');
      sink.write(sseFrame('tool/error', JSON.stringify(errorMessage(asGatewayError(err), call.request.id))));
    }
  });
}

/**
 * Write a call's events as `tool/event` frames (id = seq), then its
 * `tool/call/resp`. Shared by every SSE door.
 */
export async function pipeCall(call: Call, watcher: AsyncIterable<EventBatch>, sink: SseSink): Promise<void> {
  for await (const batch of watcher) {
    let frames = '';
    if (batch.gap) {
      const notice = call.gapNotice(batch.gap);
      frames += sseFrame('tool/event', JSON.stringify(notice), notice.seq);
    }
    for (const ev of batch.events) frames += sseFrame('tool/event', JSON.stringify(ev), ev.seq);
    if (frames && !sink.write(frames)) await sink.drain();
    if (sink.closed) return;
  }
  if (sink.closed) return;
  sink.write(sseFrame('tool/call/resp', JSON.stringify(call.response)));
}
