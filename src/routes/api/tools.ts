/**
 * POST /tool/list and POST /tool/call (JSON and SSE). HTTP in, engine call,
 * HTTP out: no tool logic here.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { Caller, Engine, Logger } from '../../engine/index.js';
import { ToolCallRequest, ToolListRequest, newId, nowTs, PROTOCOL_VERSION } from '../../protocol/index.js';
import { readJson } from '../http/body.js';
import { startCall } from '../http/caller.js';
import type { AdmittedCaller } from '../../security/access.js';
import { onClientGone } from '../http/disconnect.js';
import { streamCall } from '../http/call-stream.js';
import type { HttpLimits } from '../http/limits.js';
import { accessLineOf, requestLogger } from '../http/request.js';
import { sendJson, sendJsonBody, jsonResponse } from '../http/respond.js';
import { callRoute, listRoute } from './tools.spec.js';
import { requestHeader } from '../http/node.js';

export interface ToolRoutesDeps {
  engine: Engine;
  logger: Logger;
  /** Body size, JSON nesting, heartbeats and stream limits. */
  limits: HttpLimits;
  /** Who is calling, from the request and the session_id it sent (sessions and auth fill this in). */
  caller: (c: Context, sessionId: string) => Caller | Promise<Caller>;
  /** The caller of a call, admitted by the shared store when it needs one (store.kind redis). */
  admit: (c: Context, sessionId: string) => Caller | Promise<AdmittedCaller>;
}

export function registerToolRoutes(app: OpenAPIHono, deps: ToolRoutesDeps): void {
  const { engine } = deps;
  const { bodyLimitBytes, maxJsonDepth, heartbeatS, streams } = deps.limits;

  app.openAPIRegistry.registerPath(listRoute);
  app.post(listRoute.path, async (c) => {
    const { value: req } = await readJson(c, ToolListRequest, bodyLimitBytes, { maxDepth: maxJsonDepth });
    const found = deps.caller(c, req.session_id);
    const caller = found instanceof Promise ? await found : found;
    return jsonResponse(c, {
      type: 'tool/list/resp',
      id: newId(),
      version: PROTOCOL_VERSION,
      ts: nowTs(),
      req_id: req.id,
      tools: engine.list(req, caller),
    });
  });

  app.openAPIRegistry.registerPath(callRoute);
  app.post(callRoute.path, async (c) => {
    const { value: req, bytes } = await readJson(c, ToolCallRequest, bodyLimitBytes, { maxDepth: maxJsonDepth });
    const sse = req.streaming && acceptsEventStream(requestHeader(c, 'accept'));
    // One JSON answer to this one call: its outcome line is the request's access line too.
    if (!sse) accessLineOf(c)?.carryCallLine();
    const options = { inputBytes: bytes, logger: requestLogger(c, deps.logger) };
    const started = startCall(c, req, bytes, deps, options);
    const call = started instanceof Promise ? await started : started;
    if (sse) return streamCall(c, call, { heartbeatS, logger: call.logger, stopOnDisconnect: true, limits: streams });
    const stop = onClientGone(c, () => call.stop('disconnect'));
    await call.result;
    stop();
    return req.streaming ? sendJson(c, call.responseWithEvents()) : sendJsonBody(c, call.responseJson('\n')!);
  });
}

export function acceptsEventStream(accept: string | undefined): boolean {
  return accept !== undefined && accept.includes('text/event-stream');
}
