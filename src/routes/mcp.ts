/**
 * POST /mcp: the gateway as an MCP server over Streamable HTTP, stateless.
 * HTTP in, `McpDoor` (mcp-server/door.ts) decides, HTTP out:
 *
 *   notification / client response → 202, no body
 *   request                          → JSON, or for a tools/call with a progressToken
 *                                      (and a client that accepts SSE) an SSE stream of
 *                                      notifications/progress + message, then the response
 *
 * GET /mcp is the server-initiated stream: it carries
 * notifications/tools/list_changed when the tools change (on this instance).
 *
 * Auth, Host and Origin checks are the guard's, as for every route. An
 * `Mcp-Session-Id` is issued at initialize only as a namespace for request
 * ids (cancellation); any value works on any instance, none is required.
 * DELETE (session end) answers 405, which the MCP spec allows and clients handle.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Admitted, Call, Logger } from '../engine/index.js';
import {
  JSONRPC_INVALID_REQUEST,
  JSONRPC_PARSE_ERROR,
  ProgressNotifier,
  errorMessage,
  gatewayErrorMessage,
  type McpDoor,
  type McpOutcome,
} from '../mcp-server/door.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../mcp-server/protocol.js';
import { newId } from '../protocol/index.js';
import { nestsDeeperThan, readBytes } from './http/body.js';
import type { HttpLimits } from './http/limits.js';
import { onClientGone } from './http/disconnect.js';
import { asGatewayError } from './http/errors.js';
import { requestHeader } from './http/node.js';
import { requestLogger } from './http/request.js';
import { sendJson, sendJsonText } from './http/respond.js';
import { sseFrame, streamSse } from './http/sse.js';
import { mcpRoute, mcpStreamRoute } from './openapi/mcp.js';

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
  typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'tools/call' && (m as { id?: unknown }).id !== undefined;

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
      return jsonRpcError(c, 400, `MCP-Protocol-Version ${JSON.stringify(version.slice(0, 40))} is not supported; this gateway speaks ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`);
    }

    let bytes: Uint8Array;
    try {
      bytes = await readBytes(c, bodyLimitBytes);
    } catch (err) {
      return jsonRpcError(c, 413, asGatewayError(err).message);
    }
    if (nestsDeeperThan(bytes, maxDepth)) {
      return jsonRpcError(c, 400, `the message nests arrays/objects deeper than ${maxDepth} levels (limits.max_json_depth); flatten the data`);
    }
    let message: unknown;
    try {
      // On Node the body is already a Buffer: no second view of its memory.
      message = JSON.parse((Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString('utf8'));
    } catch (err) {
      return sendJson(c, errorMessage(null, JSONRPC_PARSE_ERROR, `the body is not valid JSON: ${(err as Error).message}`), 400);
    }

    const principal = c.get('principal')?.name ?? null;
    const session = requestHeader(c, SESSION_HEADER) ?? '';
    const logger = requestLogger(c, deps.logger);
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
        if (outcome.initialized) return c.json(outcome.message);
        return sendJson(c, outcome.message, isInvalidRequest(outcome.message) ? 400 : 200);
      case 'call': {
        const { call, id, progressToken } = outcome;
        if (acceptsSse && (progressToken !== undefined || !acceptsJson)) {
          return streamSse(c, { heartbeatS }, async (sink) => {
            sink.onDisconnect(() => call.stop('disconnect'));
            const notifier = progressToken === undefined ? undefined : new ProgressNotifier(progressToken);
            for await (const batch of call.watch()) {
              let frames = '';
              for (const ev of batch.events) {
                const note = notifier?.notification(ev);
                if (note) frames += sseFrame('message', JSON.stringify(note));
              }
              if (frames && !sink.write(frames)) await sink.drain();
              if (sink.closed) return;
            }
            // A cancelled request gets no response (the client has given up on it).
            if (call.stoppedBy !== 'cancel') sink.write(sseFrame('message', door.callReplyText(id, call)));
          });
        }
        await settled(c, call);
        return sendJsonText(c, door.callReplyText(id, call));
      }
    }
  });

  // The server-initiated stream: notifications/tools/list_changed, until the client goes.
  app.get(MCP_PATH, (c) => {
    if (!(requestHeader(c, 'accept') ?? '').includes('text/event-stream')) {
      return jsonRpcError(c, 406, `GET ${MCP_PATH} is the notification stream: send Accept: text/event-stream (requests go in POST ${MCP_PATH})`);
    }
    return streamSse(c, { heartbeatS }, (sink) => {
      let gone!: () => void;
      const done = new Promise<void>((resolve) => (gone = resolve));
      const stop = door.onToolListChanged((message) => sink.write(sseFrame('message', JSON.stringify(message))));
      sink.onDisconnect(gone);
      return done.finally(stop);
    });
  });
  app.delete(MCP_PATH, (c) =>
    jsonRpcError(c, 405, `DELETE ${MCP_PATH} is not supported: this MCP server is stateless and keeps no session to end`, { Allow: 'GET, POST' }),
  );
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
  return error !== undefined && (error.code === JSONRPC_INVALID_REQUEST || error.code === JSONRPC_PARSE_ERROR);
}

function jsonRpcError(c: Context, status: 400 | 405 | 406 | 413 | 415, message: string, headers?: Record<string, string>): Response {
  return c.json(errorMessage(null, JSONRPC_INVALID_REQUEST, message), status, headers);
}
