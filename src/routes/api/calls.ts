/**
 * Call resources: POST /tool/calls starts a call in the background; GET
 * /tool/calls/{id} reads it; GET /tool/calls/{id}/events follows its events
 * (EventSource-compatible, resumable with Last-Event-ID); DELETE cancels it.
 * HTTP in, engine and CallStore, HTTP out.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import {
  GatewayError,
  isCallId,
  type CallStore,
  type CallView,
  type Caller,
  type Engine,
  type Logger,
} from '../../engine/index.js';
import { ToolCallRequest } from '../../protocol/index.js';
import { readJson } from '../http/body.js';
import { streamCall } from '../http/call-stream.js';
import type { HttpLimits } from '../http/limits.js';
import { requestLogger } from '../http/request.js';
import {
  callEventsRoute,
  cancelCallRoute,
  getCallRoute,
  startCallRoute,
  type CallAccepted,
  type CallResource,
} from './calls.spec.js';
import { publicUrl, type PublicUrlOptions } from '../http/urls.js';
import { requestHeader } from '../http/node.js';
import { startCall } from '../http/caller.js';
import type { AdmittedCaller } from '../../security/access.js';
import { jsonResponse } from '../http/respond.js';
import { openCallAccess, type CallAccess } from '../http/call-access.js';

export interface CallRoutesDeps {
  engine: Engine;
  store: CallStore;
  logger: Logger;
  /** Body size, JSON nesting, heartbeats and stream limits. */
  limits: HttpLimits;
  /** `retry:` hint for EventSource clients, ms. */
  retryMs: number;
  /** How long finished calls are kept (for error messages), seconds. */
  retainS: number;
  /** `calls.max_retained` (of all tokens) and `calls.max_retained_per_principal` (of one), for error messages. */
  maxRetained?: number;
  maxRetainedPerPrincipal?: number;
  urls: PublicUrlOptions;
  /** Who is calling, from the request and the session_id it sent. */
  /** The caller of a call, admitted by the shared store when it needs one (store.kind redis). */
  admit: (c: Context, sessionId: string) => Caller | Promise<AdmittedCaller>;
  access?: CallAccess;
}

export function registerCallRoutes(app: OpenAPIHono, deps: CallRoutesDeps): void {
  const { store } = deps;
  const { bodyLimitBytes, maxJsonDepth, heartbeatS, streams } = deps.limits;
  const access = deps.access ?? openCallAccess;

  const resultUrl = (c: Context, call: CallView) =>
    publicUrl(c, deps.urls, `/tool/calls/${encodeURIComponent(call.id)}`);
  const eventsUrl = (c: Context, call: CallView) => {
    const query = new URLSearchParams(access.eventsQuery(call)).toString();
    return `${resultUrl(c, call)}/events${query ? `?${query}` : ''}`;
  };
  // Why a finished call may be gone: its age, its token's share, or the backstop of all tokens together.
  const dropped = [
    `${deps.retainS} s after it finished (calls.retain_s)`,
    ...(deps.maxRetainedPerPrincipal === undefined
      ? []
      : [
          `as the oldest of its token's finished calls beyond calls.max_retained_per_principal (${deps.maxRetainedPerPrincipal})`,
        ]),
    ...(deps.maxRetained === undefined
      ? []
      : [
          `or as the oldest of all when all tokens together held more than calls.max_retained (${deps.maxRetained}) or limits.retained_calls_bytes`,
        ]),
  ].join(', ');
  // A malformed id is echoed only in part (it is the caller's text, of any length).
  const notFound = (id: string) =>
    new GatewayError(
      'not_found',
      `no call "${id.slice(0, 100)}": it was never started here, or it finished and was dropped: ${dropped}. ` +
        'Start calls with POST /tool/calls and use the call_id it returns; read a result within calls.retain_s of its end',
      { detail: { call_id: id.slice(0, 100) } },
    );
  /** The call with the id a request names; a malformed id never reaches the store (it is answered like an unknown one). */
  const lookUp = (id: string) => (isCallId(id) ? store.find(id) : undefined);
  // GET and DELETE need the owner; another owner's call is answered like one that does not exist.
  const find = async (c: Context): Promise<CallView> => {
    const id = c.req.param('id') ?? '';
    const call = await lookUp(id);
    if (!call || access.ownedBy?.(c, call) === false) throw notFound(id);
    return call;
  };
  const resource = (c: Context, call: CallView): CallResource => ({
    call_id: call.id,
    req_id: call.requestId,
    tool_name: call.toolName,
    state: call.state,
    created_at: call.createdAt,
    events: call.eventCount,
    events_url: eventsUrl(c, call),
    result_url: resultUrl(c, call),
    ...(call.response ? { result: call.response } : {}),
  });

  app.openAPIRegistry.registerPath(startCallRoute);
  app.post(startCallRoute.path, async (c) => {
    const { value: req, bytes } = await readJson(c, ToolCallRequest, bodyLimitBytes, { maxDepth: maxJsonDepth });
    // Events are what a call resource is watched for: always record them.
    const started = startCall(c, { ...req, streaming: true }, bytes, deps, {
      inputBytes: bytes,
      logger: requestLogger(c, deps.logger),
    });
    const call = started instanceof Promise ? await started : started;
    // A shared store registers the call before anyone is told its id (it answers 503 when it cannot; the call is then stopped).
    const kept = store.put(call);
    if (kept) {
      try {
        await kept;
      } catch (err) {
        call.stop('cancel');
        throw err;
      }
    }
    const body: CallAccepted = {
      call_id: call.id,
      state: call.state,
      events_url: eventsUrl(c, call),
      result_url: resultUrl(c, call),
    };
    return jsonResponse(c, body, 202, { Location: body.result_url });
  });

  app.openAPIRegistry.registerPath(getCallRoute);
  app.get('/tool/calls/:id', async (c) => jsonResponse(c, resource(c, await find(c))));

  app.openAPIRegistry.registerPath(cancelCallRoute);
  app.delete('/tool/calls/:id', async (c) => {
    const call = await find(c);
    await call.stop('cancel');
    return jsonResponse(c, resource(c, call));
  });

  app.openAPIRegistry.registerPath(callEventsRoute);
  app.get('/tool/calls/:id/events', async (c) => {
    // The event stream checks access itself (owner or per-call token), before telling whether the call exists.
    const id = c.req.param('id') ?? '';
    const call = await lookUp(id);
    if (access.checkEvents(c, id, call) === 'not_found' || !call) throw notFound(id);
    const after = lastSeenSeq(c);
    // A view read from the shared store may not have the events the client saw yet: the stream waits for those after them.
    if (after >= call.eventCount && !(call.lags && !call.settled)) {
      // The client has everything. 204 makes EventSource stop instead of reconnecting forever.
      if (call.settled) return c.body(null, 204);
      throw new GatewayError(
        'invalid_request',
        `Last-Event-ID/after ${after} is ahead of this call: it has emitted ${call.eventCount} event(s) so far ` +
          `(seqs 0..${call.eventCount - 1}). Resume from a seq you received, or -1 for the start`,
        { detail: { after, events: call.eventCount } },
      );
    }
    // Ahead of a lagging view: follow from what it holds (its final response may come below `after`), skipping what the client saw.
    const ahead = after >= call.eventCount;
    return streamCall(c, call, {
      heartbeatS,
      logger: requestLogger(c, deps.logger),
      retryMs: deps.retryMs,
      afterSeq: ahead ? call.eventCount - 1 : after,
      ...(ahead ? { seenThrough: after } : {}),
      stopOnDisconnect: false,
      limits: streams,
    });
  });
}

/** The seq the client last saw: Last-Event-ID (what EventSource sends on reconnect) wins over ?after=. */
function lastSeenSeq(c: Context): number {
  const header = requestHeader(c, 'last-event-id');
  const [source, raw] =
    header !== undefined && header.trim() !== '' ? ['Last-Event-ID', header] : ['after', c.req.query('after')];
  if (raw === undefined || raw === '') return -1;
  const value = raw.trim();
  if (!/^(?:-1|0|[1-9]\d{0,14})$/.test(value)) {
    throw new GatewayError(
      'invalid_request',
      `${source} must be an event seq (an integer ≥ -1), got "${value.slice(0, 40)}"`,
      {
        detail: { [source]: value.slice(0, 40) },
      },
    );
  }
  return Number(value);
}
