/** OpenAPI descriptions of the tool routes, built from the protocol schemas that validate them. */
import { createRoute } from '@hono/zod-openapi';
import { z } from 'zod';
import {
  ErrorMessage,
  ToolCallRequest,
  ToolCallResponse,
  ToolEvent,
  ToolListRequest,
  ToolListResponse,
} from '../../protocol/index.js';

/** The spec's wire examples, used as OpenAPI examples. */
export const examples = {
  listRequest: {
    type: 'tool/list/req',
    id: 'a1b2c3',
    version: '1.0',
    ts: 1716123456.789,
    filter_kind: '',
    filter_tags: [],
  },
  listResponse: {
    type: 'tool/list/resp',
    id: 'd4e5f6',
    version: '1.0',
    ts: 1716123456.8,
    req_id: 'a1b2c3',
    tools: [
      {
        name: 'read_file',
        description: 'Read file contents',
        input_parameters: [{ name: 'path', type: 'string', description: 'File path', required: true }],
        output_parameters: [],
        streaming: true,
        idempotent: true,
        tags: ['fs'],
        version: '1.0.0',
        toolkit: null,
      },
    ],
  },
  callRequest: {
    type: 'tool/call/req',
    id: 'g7h8i9',
    version: '1.0',
    ts: 1716123457.1,
    session_id: 's1k2l3',
    tool_name: 'read_file',
    arguments: { path: '/etc/hostname' },
    correlation_id: '',
    streaming: true,
    timeout: 30,
  },
  event: {
    type: 'tool/event',
    id: 'j0k1l2',
    version: '1.0',
    ts: 1716123457.15,
    kind: 'progress',
    req_id: 'g7h8i9',
    data: { pct: 50, message: 'Reading...' },
    seq: 0,
  },
  callResponse: {
    type: 'tool/call/resp',
    id: 'm3n4o5',
    version: '1.0',
    ts: 1716123457.2,
    req_id: 'g7h8i9',
    data: { success: true, tool_name: 'read_file', data: { content: 'my-host' }, duration_ms: 100 },
    created_at: 1716123457.2,
  },
} as const;

/**
 * What "Try it out" on /docs sends by default: requests that succeed on a default gateway (no auth, no session,
 * native tools on, an empty workspace). Each list comes first in an OpenAPI `examples` map, so Swagger UI picks it;
 * the spec's wire example follows as a named alternative.
 */
export const tryItExamples = {
  listRequest: { type: 'tool/list/req', filter_kind: '', filter_tags: [], query: '' },
  callRequest: {
    type: 'tool/call/req',
    tool_name: 'list_dir',
    arguments: { path: '.' },
    streaming: false,
    timeout: 30,
  },
} as const;

/** An `examples` map: the working default first, then the spec's wire example. */
export const requestExamples = (tryIt: object, wire: object) => ({
  try_it: { summary: 'Works on a default gateway', value: tryIt },
  spec: { summary: "The spec's wire example (its session_id and path are illustrative)", value: wire },
});

const error = (description: string) => ({
  description,
  content: { 'application/json': { schema: ErrorMessage } },
});

/** What travels in an SSE stream of a call: the payload of each event type. */
export const SseCallPayload = z.union([ToolEvent, ToolCallResponse, ErrorMessage]).meta({
  id: 'ToolCallStreamPayload',
  description:
    'The `data:` of one SSE event. `event: tool/event` (with `id: <seq>`) carries a ToolEvent; the last event, ' +
    '`event: tool/call/resp`, carries the ToolCallResponse; a failure of the stream itself ends it with ' +
    '`event: tool/error` carrying an Error. Comment lines (`: heartbeat`) keep idle connections open.',
});

export const listRoute = createRoute({
  method: 'post',
  path: '/tool/list',
  operationId: 'listTools',
  tags: ['tools'],
  summary: 'List or search tools',
  description:
    'Empty `query`: the active (non-deferred) tools. Non-empty `query`: tools ranked by relevance to the query ' +
    '(name, description, tags), deferred ones included when `include_deferred` is true. `filter_kind` and ' +
    '`filter_tags` (all must match) apply in both modes.',
  request: {
    body: {
      required: true,
      content: {
        'application/json': {
          schema: ToolListRequest,
          examples: requestExamples(tryItExamples.listRequest, examples.listRequest),
        },
      },
    },
  },
  responses: {
    200: {
      description: 'The matching tools',
      content: { 'application/json': { schema: ToolListResponse, example: examples.listResponse } },
    },
    400: error('Malformed JSON or a request of the wrong shape (`invalid_request`)'),
    401: error('Missing or wrong bearer token, or no live session when sessions are required (`unauthorized`)'),
    403: error('Host or Origin not allowed (`forbidden`)'),
    413: error('Request body over `server.body_limit_bytes` (`payload_too_large`)'),
    500: error('Unexpected gateway error (`internal`)'),
  },
});

export const callRoute = createRoute({
  method: 'post',
  path: '/tool/call',
  operationId: 'callTool',
  tags: ['tools'],
  summary: 'Call a tool (JSON, or a stream of events when streaming)',
  description:
    'Runs the tool and answers with its ToolCallResponse. With `"streaming": true` and `Accept: text/event-stream` ' +
    'the answer is a Server-Sent-Events stream: each ToolEvent as `event: tool/event` with `id: <seq>`, then one ' +
    '`event: tool/call/resp`, then the stream ends. Disconnecting stops the tool. With `"streaming": true` and a ' +
    'JSON answer, the events are collected in `data.events`. Tool failures and timeouts are 200 with ' +
    '`data.success: false` and `data.error_code: "tool_error"`.',
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
    200: {
      description: 'The result (JSON), or the event stream (SSE)',
      content: {
        'application/json': { schema: ToolCallResponse, example: examples.callResponse },
        'text/event-stream': { schema: SseCallPayload, example: examples.event },
      },
    },
    400: error('Malformed JSON or a request of the wrong shape (`invalid_request`)'),
    401: error('Missing or wrong bearer token, or no live session when sessions are required (`unauthorized`)'),
    403: error('The tool is not allowed for this caller (`tool_denied`), or Host/Origin not allowed (`forbidden`)'),
    404: error('No tool of that name (`unknown_tool`)'),
    413: error('Request body over `server.body_limit_bytes` (`payload_too_large`)'),
    422: error(
      "Arguments do not match the tool's input_parameters or exceed the argument limits (`invalid_arguments`)",
    ),
    429: error("Per-token rate limit or the session's max_parallel reached (`rate_limited`); see Retry-After"),
    500: error('Unexpected gateway error (`internal`)'),
    503: error('The gateway is shutting down or at limits.max_concurrent_calls (`unavailable`); see Retry-After'),
  },
});
