/** OpenAPI descriptions and schemas of the call resources (POST/GET/DELETE /tool/calls…). */
import { createRoute } from '@hono/zod-openapi';
import { z } from 'zod';
import { ErrorMessage, ToolCallRequest, ToolCallResponse } from '../../protocol/index.js';
import { SseCallPayload, examples, requestExamples, tryItExamples } from './tools.spec.js';

export const CallState = z.enum(['awaiting_approval', 'running', 'completed', 'failed', 'canceled']).meta({
  id: 'CallState',
  description:
    '`awaiting_approval`: held until a person approves it (approvals; its `status` event names the approval); ' +
    '`failed`: the tool failed or timed out, or its approval was denied or expired; `canceled`: DELETE, or the gateway shut down while it ran',
});

const links = {
  events_url: z.url().meta({
    description: 'SSE stream of the call (GET; usable as `new EventSource(events_url)`); resumable with Last-Event-ID',
  }),
  result_url: z.url().meta({ description: 'This call resource (GET for its state and result, DELETE to cancel)' }),
};

export const CallAccepted = z
  .object({
    call_id: z.string().meta({ description: 'Id of the call resource' }),
    state: CallState,
    ...links,
  })
  .meta({ id: 'CallAccepted', description: 'A call started in the background' });
export type CallAccepted = z.output<typeof CallAccepted>;

export const CallResource = z
  .object({
    call_id: z.string(),
    req_id: z.string().meta({ description: 'Id of the tool/call/req that started it' }),
    tool_name: z.string(),
    state: CallState,
    created_at: z.number().meta({ description: 'Unix time, seconds' }),
    events: z.int().meta({ description: 'Number of events emitted so far (their seqs are 0..events-1)' }),
    ...links,
    result: ToolCallResponse.optional().meta({ description: 'The final response, once the call is no longer running' }),
  })
  .meta({ id: 'CallResource', description: 'A call started with POST /tool/calls' });
export type CallResource = z.output<typeof CallResource>;

const CALL_ID = '0b9e4c1a-3f57-4d2e-8a61-5c7f2d9e1b34';
const callUrls = {
  events_url: `http://127.0.0.1:8080/tool/calls/${CALL_ID}/events`,
  result_url: `http://127.0.0.1:8080/tool/calls/${CALL_ID}`,
};
const acceptedExample = { call_id: CALL_ID, state: 'running', ...callUrls };
const resourceExample = (state: 'completed' | 'canceled') => ({
  call_id: CALL_ID,
  req_id: 'g7h8i9',
  tool_name: 'read_file',
  state,
  created_at: 1716123457.1,
  events: 1,
  ...callUrls,
  result: {
    ...examples.callResponse,
    data:
      state === 'completed'
        ? examples.callResponse.data
        : {
            success: false,
            tool_name: 'read_file',
            error: 'tool "read_file" was canceled',
            error_code: 'tool_error',
            duration_ms: 40,
          },
  },
});

const error = (description: string) => ({
  description,
  content: { 'application/json': { schema: ErrorMessage } },
});

const callIdParam = z.object({
  id: z.string().meta({ param: { name: 'id', in: 'path' }, description: 'call_id from POST /tool/calls' }),
});

const notFound = error(
  'No call with this id: never created, or finished longer ago than `calls.retain_s` (`not_found`)',
);

export const startCallRoute = createRoute({
  method: 'post',
  path: '/tool/calls',
  operationId: 'startCall',
  tags: ['tools'],
  summary: 'Start a call in the background (a call resource)',
  description:
    'Validates and starts the call like POST /tool/call, then answers at once with 202, the call id and its URLs ' +
    '(`Location` is `result_url`). Events are always recorded (`streaming` is forced on). The call runs until it ' +
    'finishes, times out or is canceled with DELETE; watching its events or disconnecting does not affect it.',
  request: {
    body: {
      required: true,
      content: {
        'application/json': {
          schema: ToolCallRequest,
          examples: requestExamples(tryItExamples.callRequest, examples.callRequest),
        },
      },
    },
  },
  responses: {
    202: {
      description: 'The call is running',
      content: { 'application/json': { schema: CallAccepted, example: acceptedExample } },
    },
    400: error('Malformed JSON or a request of the wrong shape (`invalid_request`)'),
    403: error('The tool is not allowed for this caller (`tool_denied`)'),
    404: error('No tool of that name (`unknown_tool`)'),
    413: error('Request body over `server.body_limit_bytes` (`payload_too_large`)'),
    422: error("Arguments do not match the tool's input_parameters (`invalid_arguments`)"),
    503: error('The gateway is shutting down (`unavailable`)'),
  },
});

export const getCallRoute = createRoute({
  method: 'get',
  path: '/tool/calls/{id}',
  operationId: 'getCall',
  tags: ['tools'],
  summary: 'State of a call resource, and its result once finished',
  request: { params: callIdParam },
  responses: {
    200: {
      description: 'The call',
      content: { 'application/json': { schema: CallResource, example: resourceExample('completed') } },
    },
    404: notFound,
  },
});

export const cancelCallRoute = createRoute({
  method: 'delete',
  path: '/tool/calls/{id}',
  operationId: 'cancelCall',
  tags: ['tools'],
  summary: 'Cancel a running call',
  description:
    'Aborts the tool; the state becomes `canceled` and every watcher of its events gets the final response. ' +
    'A call that already finished is left as it is (the answer shows its state).',
  request: { params: callIdParam },
  responses: {
    200: {
      description: 'The call after the cancel',
      content: { 'application/json': { schema: CallResource, example: resourceExample('canceled') } },
    },
    404: notFound,
  },
});

export const callEventsRoute = createRoute({
  method: 'get',
  path: '/tool/calls/{id}/events',
  operationId: 'callEvents',
  tags: ['tools'],
  summary: "Follow a call's events (Server-Sent Events, EventSource-compatible, resumable)",
  description:
    'Replays the kept events after `Last-Event-ID` (or `?after=SEQ`; the header wins), follows new ones live, ' +
    'then sends `event: tool/call/resp` and ends. Each `tool/event` has `id: <seq>`; the response has the id ' +
    'one past the last seq. A `retry:` hint is sent first. Events dropped by `calls.max_events` before the client ' +
    'read them are reported by one `status` event naming the gap. After the response, a reconnect with its id ' +
    'gets 204 (EventSource then stops). Several clients may watch one call; disconnecting does not stop it.',
  request: {
    params: callIdParam,
    query: z.object({
      after: z
        .string()
        .optional()
        .meta({ description: 'Seq of the last event already seen (-1 = from the start); Last-Event-ID wins' }),
    }),
    headers: z.object({
      'last-event-id': z.string().optional().meta({ description: 'Sent by EventSource when it reconnects' }),
    }),
  },
  responses: {
    200: {
      description: 'The event stream',
      content: { 'text/event-stream': { schema: SseCallPayload, example: examples.event } },
    },
    204: { description: 'The call finished and the client has seen its response: nothing more to send' },
    400: error(
      '`Last-Event-ID` / `after` is not a seq, or is ahead of the events of a call running on this instance (`invalid_request`; on another instance, whose view of the call can lag, the stream waits for the events after it)',
    ),
    404: notFound,
  },
});
