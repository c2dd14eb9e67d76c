/** OpenAPI descriptions of the A2E message transport's routes, from the protocol schemas. */
import { createRoute } from '@hono/zod-openapi';
import { z } from 'zod';
import {
  ErrorMessage,
  HandshakeRequest,
  HandshakeResponse,
  Ping,
  Pong,
  Shutdown,
  ToolCallRequest,
  ToolCallResponse,
  ToolEvent,
  ToolListRequest,
  ToolListResponse,
} from '../../protocol/index.js';

export const TransportErrorMessage = ErrorMessage.extend({
  detail: z.record(z.string(), z.unknown()).meta({ description: 'Structured detail ({} when there is none)' }),
  capability_name: z.string().meta({ description: '"tools" for tool messages, "" otherwise' }),
}).meta({ id: 'A2ETransportError', description: 'An A2E error message as sent on the transport stream' });

const SessionCreated = z
  .object({
    session_id: z
      .string()
      .meta({ description: 'Send as X-Session-Id on /send and /stream', example: '9f86d081884c7d659a2feaa0c55ad015' }),
  })
  .meta({ id: 'A2ETransportSession' });

const Detail = z
  .object({ detail: z.string().meta({ description: 'What was wrong and how to fix it' }) })
  .meta({ id: 'A2ETransportDetail' });

const Accepted = z.object({ ok: z.literal(true) }).meta({ id: 'A2ETransportAccepted' });

export const IncomingMessage = z
  .union([HandshakeRequest, Ping, Shutdown, ToolListRequest, ToolCallRequest])
  .meta({ id: 'A2EIncomingMessage', description: 'One A2E message from the agent' });

export const OutgoingMessage = z
  .union([HandshakeResponse, Pong, ToolListResponse, ToolEvent, ToolCallResponse, TransportErrorMessage])
  .meta({
    id: 'A2EOutgoingMessage',
    description:
      'The `data:` of one SSE frame (`id: <n>` numbers the frames of the session). Answers carry `req_id` = the request id; ' +
      "a call's tool/event frames (seq from 0) all come before its tool/call/resp. Comment lines are heartbeats.",
  });

const sessionHeader = z.object({
  'x-session-id': z
    .string()
    .meta({ description: 'The session_id from POST /session', example: '9f86d081884c7d659a2feaa0c55ad015' }),
});

/** Transport refusals are `{"detail": …}`, as the reference A2E transport answers them (not A2E Error messages). */
const detail = (description: string, example: string) => ({
  description,
  content: { 'application/json': { schema: Detail, example: { detail: example } } },
});

const examples = {
  handshake: {
    type: 'handshake/req',
    id: 'c0ffee00c0ffee00c0ffee00c0ffee00',
    agent_id: 'my-agent',
    agent_caps: ['tools'],
    auth_token: '',
  },
  event: {
    type: 'tool/event',
    id: '3b8f8a5e2c1d4f6a9b0c7d1e2f3a4b5c',
    version: '1.0',
    ts: 1716123457.15,
    kind: 'progress',
    req_id: 'g7h8i9',
    data: { pct: 50, message: 'Reading...' },
    seq: 0,
  },
  missing: 'missing X-Session-Id header; POST /session first and send its session_id in X-Session-Id',
  unknown: 'unknown or expired session; POST /session to open a new one',
  foreign: 'this session belongs to another token; open your own with POST /session and your token',
};

/** With auth every transport route wants the bearer token, like every other door; refused by the gate as on REST. */
const unauthorized = {
  description: 'Auth is configured and the request has no or a wrong `Authorization: Bearer` token (`unauthorized`)',
  content: { 'application/json': { schema: ErrorMessage } },
};

export function transportRoutes(base: string) {
  return {
    session: createRoute({
      method: 'post',
      path: `${base}/session`,
      operationId: 'a2eOpenSession',
      tags: ['a2e-transport'],
      summary: 'Open an A2E transport session',
      description:
        'With auth configured, send `Authorization: Bearer <token>` here and on /send and /stream: the session belongs to that ' +
        'token, and a request on it with no token or another one is refused. Sessions count against a quota per token ' +
        '(per client address without auth): at it, that owner’s least recently used idle session is closed. A session ' +
        'must complete a handshake within `transport.handshake_timeout_s`, or it is closed.',
      responses: {
        200: {
          description: 'The new session',
          content: {
            'application/json': { schema: SessionCreated, example: { session_id: '9f86d081884c7d659a2feaa0c55ad015' } },
          },
        },
        401: unauthorized,
        429: detail(
          'Every session of this token (or address) has a stream attached or calls running, and it is at its quota',
          'all 64 of your sessions (transport.max_sessions_per_principal) have a stream attached or calls running; end one with a shutdown message, then retry',
        ),
        503: detail(
          'Too many open sessions (`transport.max_sessions`), shutting down, or (`store.kind: redis`) the shared store unavailable; see Retry-After',
          'too many open sessions (transport.max_sessions = 1000); close unused ones with a shutdown message, or retry later',
        ),
      },
    }),
    send: createRoute({
      method: 'post',
      path: `${base}/send`,
      operationId: 'a2eSend',
      tags: ['a2e-transport'],
      summary: 'Send one A2E message; the answer arrives on the stream',
      description:
        'The body is one JSON message (`Content-Type: text/plain` or `application/json`). It is accepted at once; ' +
        'its answer, or an `error` with `req_id` = the message id, is sent on GET /stream.',
      request: {
        headers: sessionHeader,
        body: {
          required: true,
          content: {
            'text/plain': { schema: IncomingMessage, example: examples.handshake },
            'application/json': { schema: IncomingMessage, example: examples.handshake },
          },
        },
      },
      responses: {
        202: { description: 'Accepted', content: { 'application/json': { schema: Accepted, example: { ok: true } } } },
        400: detail('Missing X-Session-Id', examples.missing),
        401: unauthorized,
        403: detail('The session belongs to another token', examples.foreign),
        404: detail('Unknown or expired session', examples.unknown),
        413: detail(
          'Body over `server.body_limit_bytes`',
          'request body is larger than 1048576 bytes (server.body_limit_bytes); send less data',
        ),
        429: detail(
          'Too many messages waiting for the stream (`transport.max_queued`)',
          '1000 messages are waiting for GET /stream (transport.max_queued); read the stream, then send again',
        ),
        503: detail(
          'The shared store (`store.kind: redis`) is unavailable; retry after Retry-After',
          'the shared store (Redis) is unavailable, so finding the A2E transport session cannot be done right now; retry shortly',
        ),
      },
    }),
    stream: createRoute({
      method: 'get',
      path: `${base}/stream`,
      operationId: 'a2eStream',
      tags: ['a2e-transport'],
      summary: "The session's outgoing messages, as Server-Sent Events",
      description:
        'Messages queue until a stream attaches and while it reconnects. A new stream replaces the previous one. ' +
        'With `Last-Event-ID`, frames written after that id are sent again.',
      request: { headers: sessionHeader },
      responses: {
        200: {
          description: 'The event stream',
          content: { 'text/event-stream': { schema: OutgoingMessage, example: examples.event } },
        },
        400: detail('Missing X-Session-Id', examples.missing),
        401: unauthorized,
        403: detail('The session belongs to another token', examples.foreign),
        404: detail('Unknown or expired session', examples.unknown),
        503: detail(
          'The shared store (`store.kind: redis`) is unavailable; retry after Retry-After',
          'the shared store (Redis) is unavailable, so finding the A2E transport session cannot be done right now; retry shortly',
        ),
      },
    }),
    health: createRoute({
      method: 'get',
      path: `${base}/health`,
      operationId: 'a2eHealth',
      tags: ['a2e-transport'],
      summary: 'Transport liveness',
      responses: {
        200: {
          description: 'Up',
          content: {
            'application/json': {
              schema: z.object({ status: z.literal('ok') }).meta({ id: 'A2ETransportHealth' }),
              example: { status: 'ok' },
            },
          },
        },
      },
    }),
  };
}
