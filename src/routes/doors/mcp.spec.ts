/** OpenAPI description of the MCP door (POST /mcp). The messages themselves are MCP's (JSON-RPC 2.0); see docs/mcp.md. */
import { createRoute } from '@hono/zod-openapi';
import { z } from 'zod';
import { ErrorMessage } from '../../protocol/index.js';

const JsonRpcMessage = z
  .looseObject({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.int()]).optional().meta({ description: 'Request id; absent on notifications' }),
    method: z.string().optional().meta({ description: 'initialize, tools/list, tools/call, ping, notifications/…' }),
    params: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'JsonRpcMessage', description: 'One MCP JSON-RPC 2.0 message (batches are not accepted)' });

const JsonRpcErrorResponse = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.int()]).nullable(),
    error: z.object({
      code: z.int().meta({
        description:
          '-32700 parse error, -32600 invalid request, -32601 unknown method, -32602 invalid params, -32000 refused by the gateway',
      }),
      message: z.string().meta({ description: 'What was wrong and how to fix it' }),
      data: z.unknown().optional().meta({ description: 'For gateway refusals: { error_code, retryable, detail }' }),
    }),
  })
  .meta({ id: 'JsonRpcErrorResponse', description: 'A JSON-RPC error answer' });

const callExample = {
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params: { name: 'read_file', arguments: { path: 'README.md' }, _meta: { progressToken: 'p7' } },
};
/** What "Try it out" sends by default: a call that succeeds on a default gateway (native tools, empty workspace). */
const tryItExample = {
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'list_dir', arguments: { path: '.' } },
};
const resultExample = {
  jsonrpc: '2.0',
  id: 7,
  result: {
    content: [{ type: 'text', text: '{"content":"# My project"}' }],
    structuredContent: { content: '# My project' },
  },
};
const sseExample =
  'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p7","progress":50,"total":100,"message":"Reading..."}}\n\n' +
  `event: message\ndata: ${JSON.stringify(resultExample)}\n\n`;

const rpcError = (description: string, code: number, message: string) => ({
  description,
  content: {
    'application/json': {
      schema: JsonRpcErrorResponse,
      example: { jsonrpc: '2.0', id: null, error: { code, message } },
    },
  },
});

export const mcpRoute = createRoute({
  method: 'post',
  path: '/mcp',
  operationId: 'mcp',
  tags: ['mcp'],
  summary: 'MCP server (Streamable HTTP, stateless): initialize, tools/list, tools/call, ping',
  description:
    'One JSON-RPC 2.0 message per request, as the Model Context Protocol specifies (2025-06-18 and newer). Send ' +
    '`Accept: application/json, text/event-stream`. A tools/call with `_meta.progressToken` answers with an SSE stream of ' +
    'notifications/progress (and notifications/message for log events) while the tool runs, then the response; ' +
    'everything else answers JSON. Notifications (notifications/cancelled stops the named call) answer 202. ' +
    'The bearer token, policy, audit and metrics are the same as for POST /tool/call.',
  request: {
    body: {
      required: true,
      content: {
        'application/json': {
          schema: JsonRpcMessage,
          examples: {
            try_it: { summary: 'Works on a default gateway', value: tryItExample },
            progress: { summary: 'With a progress token: answered as an SSE stream', value: callExample },
          },
        },
      },
    },
  },
  responses: {
    200: {
      description: 'The JSON-RPC response, or an SSE stream of notifications that ends with it',
      content: {
        'application/json': { schema: JsonRpcMessage, example: resultExample },
        'text/event-stream': {
          schema: z.string().meta({ description: '`event: message` frames, each one JSON-RPC message' }),
          example: sseExample,
        },
      },
    },
    202: { description: 'A notification (or a response to the server) was accepted' },
    400: rpcError(
      'Not JSON, not a JSON-RPC 2.0 message, or an unsupported MCP-Protocol-Version',
      -32600,
      'not a JSON-RPC 2.0 message: send an object with "jsonrpc": "2.0"',
    ),
    401: {
      description: 'The gateway requires a token (`unauthorized`)',
      content: { 'application/json': { schema: ErrorMessage } },
    },
    406: rpcError(
      'Accept names neither application/json nor text/event-stream',
      -32600,
      'Accept must include application/json or text/event-stream (MCP clients send both)',
    ),
    413: rpcError(
      'The message is larger than server.body_limit_bytes',
      -32600,
      'request body is larger than 1048576 bytes (server.body_limit_bytes); send less data',
    ),
    415: rpcError(
      'Content-Type is not application/json',
      -32600,
      'Content-Type must be application/json: send one JSON-RPC message',
    ),
  },
});

const listChangedExample = 'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n';

export const mcpStreamRoute = createRoute({
  method: 'get',
  path: '/mcp',
  operationId: 'mcpNotifications',
  tags: ['mcp'],
  summary: "MCP server's notification stream (SSE): notifications/tools/list_changed",
  description:
    'The Streamable HTTP GET stream: stays open (with heartbeat comments) and carries ' +
    "`notifications/tools/list_changed` whenever the tools change (a source's tools appear, change or go, a reload), " +
    'as the `tools.listChanged` capability says; list again with tools/list. Needs `Accept: text/event-stream`; ' +
    'any `Mcp-Session-Id` or none. MCP clients open it themselves after initialize.',
  responses: {
    200: {
      description: 'The notification stream',
      content: {
        'text/event-stream': {
          schema: z.string().meta({ description: '`event: message` frames, each one JSON-RPC notification' }),
          example: listChangedExample,
        },
      },
    },
    401: {
      description: 'The gateway requires a token (`unauthorized`)',
      content: { 'application/json': { schema: ErrorMessage } },
    },
    406: rpcError(
      'Accept does not name text/event-stream',
      -32600,
      'GET /mcp is the notification stream: send Accept: text/event-stream (requests go in POST /mcp)',
    ),
  },
});
