/**
 * POST /mcp: the gateway as an MCP server over Streamable HTTP, stateless.
 * HTTP in, `McpDoor` (mcp-server/door.ts) decides, HTTP out:
 *
 *   notification / client response → 202, no body
 *   request                          → JSON, or for a tools/call with a progressToken
 *                                      (and a client that accepts SSE) an SSE stream of
 *                                      notifications/progress + message, then the response;
 *                                      without one, a stream as soon as the tool sends a log
 *                                      message (a call that sends none is answered with JSON)
 *
 * GET /mcp is the server-initiated stream: it carries
 * notifications/tools/list_changed when the tools change (on this instance).
 *
 * Auth, Host and Origin checks are the guard's, as for every route. An
 * `Mcp-Session-Id` is issued at initialize only as a namespace for request
 * ids (cancellation); any value works on any instance, none is required.
 * Every other method (DELETE: session end, PUT, …) answers 405 with
 * `Allow: GET, POST`, which the MCP spec allows and clients handle. A client
 * that accepts only text/event-stream gets every answer as an SSE stream.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Admitted, Call, EventBatch, Logger } from '../../engine/index.js';
import {
  ProgressNotifier,
  errorMessage,
  batchOf,
  gatewayErrorMessage,
  type McpDoor,
  type McpExchange,
  type McpOutcome,
} from '../../mcp-server/door.js';
import { JSONRPC } from '../../wire/jsonrpc.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../../mcp-server/protocol.js';
import { newId } from '../../protocol/index.js';
import { nestsDeeperThan, readBytes } from '../http/body.js';
import type { HttpLimits } from '../http/limits.js';
import { onClientGone } from '../http/disconnect.js';
import { asGatewayError } from '../http/errors.js';
import { requestHeader } from '../http/node.js';
import { requestLogger } from '../http/request.js';
import { sendJson, sendJsonText } from '../http/respond.js';
import { sseFrame, streamSse } from '../http/sse.js';
import { mcpRoute, mcpStreamRoute } from './mcp.spec.js';

export const MCP_PATH = mcpRoute.path;
const SESSION_HEADER = 'mcp-session-id';

export interface McpRouteDeps {
  door: McpDoor;
  logger: Logger;
  /** Body size, JSON nesting and heartbeats. */
  limits: HttpLimits;
  /** A call's shared admission for `principal` (store.kind redis), undefined when it needs none. */
  admit?: (principal: string | null) => Promise<Admitted> | undefined;
}

const isToolsCall = (m: unknown): boolean =>
  typeof m === 'object' &&
  m !== null &&
  (m as { method?: unknown }).method === 'tools/call' &&
  (m as { id?: unknown }).id !== undefined;

export function registerMcpRoute(app: OpenAPIHono, deps: McpRouteDeps): void {
  const { door } = deps;
  const { bodyLimitBytes, maxJsonDepth: maxDepth, heartbeatS } = deps.limits;
  app.openAPIRegistry.registerPath(mcpRoute);
  app.openAPIRegistry.registerPath(mcpStreamRoute);

  app.post(MCP_PATH, async (c) => {
    const accept = requestHeader(c, 'accept') ?? '*/*';
    const acceptsSse = accept.includes('text/event-stream');
    const acceptsJson = accept.includes('application/json') || accept.includes('*/*');
    if (!acceptsSse && !acceptsJson) {
      return jsonRpcError(c, 406, 'Accept must include application/json or text/event-stream (MCP clients send both)');
    }
    if (!(requestHeader(c, 'content-type') ?? '').includes('application/json')) {
      return jsonRpcError(c, 415, 'Content-Type must be application/json: send one JSON-RPC message');
    }
    const version = requestHeader(c, 'mcp-protocol-version');
    if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return jsonRpcError(
        c,
        400,
        `MCP-Protocol-Version ${JSON.stringify(version.slice(0, 40))} is not supported; this gateway speaks ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`,
      );
    }

    let bytes: Uint8Array;
    try {
      bytes = await readBytes(c, bodyLimitBytes);
    } catch (err) {
      return jsonRpcError(c, 413, asGatewayError(err).message);
    }
    if (nestsDeeperThan(bytes, maxDepth)) {
      return jsonRpcError(
        c,
        400,
        `the message nests arrays/objects deeper than ${maxDepth} levels (limits.max_json_depth); flatten the data`,
      );
    }
    let message: unknown;
    try {
      // On Node the body is already a Buffer: no second view of its memory.
      message = JSON.parse(
        (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString(
          'utf8',
        ),
      );
    } catch (err) {
      return sendJson(
        c,
        errorMessage(null, JSONRPC.PARSE_ERROR, `the body is not valid JSON: ${(err as Error).message}`),
        400,
      );
    }

    const principal = c.get('principal')?.name ?? null;
    const session = requestHeader(c, SESSION_HEADER) ?? '';
    const logger = requestLogger(c, deps.logger);
    const batch = batchOf(message, version);
    if (batch) {
      if ('refused' in batch) return sendJson(c, batch.refused, 400);
      const replies = await answerBatch(c, deps, batch.messages, {
        caller: { sessionId: '', principal },
        logger,
        scope: session,
        inputBytes: 0,
        protocolVersion: version,
      });
      if (replies.length === 0) return c.body(null, 202);
      if (!acceptsJson)
        return c.body(sseFrame('message', JSON.stringify(replies)), 200, {
          'Content-Type': 'text/event-stream',
          'Cache-Control': 'no-cache',
        });
      return sendJson(c, replies, 200);
    }
    // With a shared store (store.kind redis) a token's tools/call takes its rate limit there first, in one round trip.
    const admitting = deps.admit && isToolsCall(message) ? deps.admit(principal) : undefined;
    const admitted = admitting && (await admitting.catch((err: unknown) => ({ refused: asGatewayError(err) })));
    let outcome: McpOutcome;
    try {
      outcome = door.handle(message, {
        caller: { sessionId: '', principal },
        logger,
        scope: session,
        requestId: c.get('requestId'),
        inputBytes: bytes.byteLength,
        admitted,
        protocolVersion: version,
        hearsLogs: acceptsSse,
      });
      if (outcome.kind !== 'call' && admitted && 'release' in admitted) admitted.release(); // refused before it started
    } catch (err) {
      // handle() answers every failure itself; this is only a bug's safety net.
      logger.error({ err }, 'MCP door failed');
      return sendJson(c, gatewayErrorMessage(null, asGatewayError(err)), 500);
    }

    switch (outcome.kind) {
      case 'accepted':
        return c.body(null, 202);
      case 'reply':
        if (outcome.initialized && !session) c.header('Mcp-Session-Id', newId());
        if (isInvalidRequest(outcome.message)) return sendJson(c, outcome.message, 400);
        // A client that accepts only SSE gets its answer as a stream of one event.
        if (!acceptsJson)
          return c.body(sseFrame('message', JSON.stringify(outcome.message)), 200, {
            'Content-Type': 'text/event-stream',
            'Cache-Control': 'no-cache',
          });
        if (outcome.initialized) return c.json(outcome.message);
        return sendJson(c, outcome.message, 200);
      case 'call': {
        const { call, id, progressToken } = outcome;
        const notifier = new ProgressNotifier(progressToken);
        const watcher = acceptsSse ? call.watch() : undefined;
        // Asked for progress (or SSE only): a stream from the start. Otherwise JSON, unless the tool sends a
        // notification (a log message) before it ends: the answer becomes a stream then, with it first.
        let frames = '';
        if (watcher && acceptsJson && progressToken === undefined) {
          const stop = onClientGone(c, () => call.stop('disconnect'));
          while (!frames) {
            const batch = await watcher.next();
            if (!batch) break; // settled without a notification
            frames = framesOf(batch, notifier);
          }
          stop();
        }
        if (watcher && (frames || progressToken !== undefined || !acceptsJson)) {
          return streamSse(c, { heartbeatS }, async (sink) => {
            sink.onDisconnect(() => call.stop('disconnect'));
            if (frames && !sink.write(frames)) await sink.drain();
            for await (const batch of watcher) {
              const more = framesOf(batch, notifier);
              if (more && !sink.write(more)) await sink.drain();
              if (sink.closed) return;
            }
            // A cancelled request gets no response (the client has given up on it).
            if (call.stoppedBy !== 'cancel') sink.write(sseFrame('message', door.callReplyText(id, call)));
          });
        }
        watcher?.close();
        await settled(c, call);
        return sendJsonText(c, door.callReplyText(id, call));
      }
    }
  });

  // The server-initiated stream: notifications/tools/list_changed, until the client goes.
  app.get(MCP_PATH, (c) => {
    if (!(requestHeader(c, 'accept') ?? '').includes('text/event-stream')) {
      return jsonRpcError(
        c,
        406,
        `GET ${MCP_PATH} is the notification stream: send Accept: text/event-stream (requests go in POST ${MCP_PATH})`,
      );
    }
    return streamSse(c, { heartbeatS }, (sink) => {
      let gone!: () => void;
      const done = new Promise<void>((resolve) => (gone = resolve));
      const stop = door.onToolListChanged((message) => sink.write(sseFrame('message', JSON.stringify(message))));
      sink.onDisconnect(gone);
      return done.finally(stop);
    });
  });
  // Every other method (DELETE, PUT, OPTIONS, …), after POST and GET: one catch-all, so the app's generic 405 (which
  // lists the methods a path has routes for) never names a method that is only refused.
  app.all(MCP_PATH, (c) =>
    jsonRpcError(
      c,
      405,
      `${c.req.method} ${MCP_PATH} is not supported: this MCP server is stateless and keeps no session to end; POST sends requests, GET opens the notification stream`,
      {
        Allow: 'GET, POST',
      },
    ),
  );
}

/**
 * The answers to a JSON-RPC batch (2025-03-26): each message handled as if it came alone, with the same limits
 * and admission, concurrently; the answer is the array of responses once every call in it has ended (its calls'
 * notifications are not sent: a client that wants progress sends the call on its own).
 */
async function answerBatch(
  c: Context,
  deps: McpRouteDeps,
  messages: unknown[],
  ex: McpExchange,
): Promise<JSONRPCMessage[]> {
  const answers = await Promise.all(
    messages.map(async (message): Promise<JSONRPCMessage | undefined> => {
      const admitting = deps.admit && isToolsCall(message) ? deps.admit(ex.caller.principal) : undefined;
      const admitted = admitting && (await admitting.catch((err: unknown) => ({ refused: asGatewayError(err) })));
      const outcome = deps.door.handle(message, {
        ...ex,
        admitted,
        inputBytes: Buffer.byteLength(JSON.stringify(message) ?? ''),
      });
      if (outcome.kind !== 'call' && admitted && 'release' in admitted) admitted.release();
      if (outcome.kind === 'accepted') return undefined;
      if (outcome.kind === 'reply') return outcome.message;
      await settled(c, outcome.call);
      // A cancelled request gets no response (the client has given up on it).
      return outcome.call.stoppedBy === 'cancel' ? undefined : deps.door.callReply(outcome.id, outcome.call);
    }),
  );
  return answers.filter((a): a is JSONRPCMessage => a !== undefined);
}

/** The SSE frames of a batch's notifications ('' when it has none). */
function framesOf(batch: EventBatch, notifier: ProgressNotifier): string {
  let frames = '';
  for (const ev of batch.events) {
    const note = notifier.notification(ev);
    if (note) frames += sseFrame('message', JSON.stringify(note));
  }
  return frames;
}

/** Wait for the call, stopping it if the client goes away first (its answer would have nowhere to go). */
async function settled(c: Context, call: Call): Promise<void> {
  if (call.settled) return;
  const stop = onClientGone(c, () => call.stop('disconnect'));
  await call.result;
  stop();
}

function isInvalidRequest(message: JSONRPCMessage): boolean {
  const error = (message as { error?: { code: number } }).error;
  return error !== undefined && (error.code === JSONRPC.INVALID_REQUEST || error.code === JSONRPC.PARSE_ERROR);
}

function jsonRpcError(
  c: Context,
  status: 400 | 405 | 406 | 413 | 415,
  message: string,
  headers?: Record<string, string>,
): Response {
  return c.json(errorMessage(null, JSONRPC.INVALID_REQUEST, message), status, headers);
}
