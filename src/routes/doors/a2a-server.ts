/**
 * The gateway as an A2A agent, on Hono: GET /.well-known/agent-card.json and
 * the JSON-RPC endpoint (a2a_server.path). HTTP in, A2AHandler, HTTP out —
 * JSON for a result, Server-Sent Events (one JSON-RPC response per `data:`)
 * for a stream. The guard in front is the REST routes' one (Host, Origin,
 * bearer token); the card may be read without a token and then lists no
 * skills when auth is on.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import {
  A2AHandler,
  agentCard,
  asRpcError,
  parseRpcRequest,
  rpcError,
  rpcResult,
  RPC,
  RpcError,
  type A2AServerConfig,
  type RpcId,
  type RpcStream,
} from '../../a2a-server/index.js';
import {
  GatewayError,
  type Admitted,
  type Call,
  type CallStore,
  type Caller,
  type Engine,
  type Logger,
} from '../../engine/index.js';
import { nestsDeeperThan, readBytes } from '../http/body.js';
import type { HttpLimits } from '../http/limits.js';
import { onClientGone } from '../http/disconnect.js';
import { requestHeader } from '../http/node.js';
import { requestLogger } from '../http/request.js';
import { sendJson } from '../http/respond.js';
import { sseFrame, streamSse } from '../http/sse.js';
import { publicUrl, type PublicUrlOptions } from '../http/urls.js';

export const AGENT_CARD_PATH = '/.well-known/agent-card.json';

export interface A2AServerRouteDeps {
  config: A2AServerConfig;
  engine: Engine;
  /** Where tasks (calls) are kept: the call resources' store. */
  store: CallStore;
  logger: Logger;
  /** Gateway version, on the card. */
  version: string;
  /** Body size, JSON nesting and heartbeats. */
  limits: HttpLimits;
  /** calls.retain_s */
  retainS: number;
  urls: PublicUrlOptions;
  /** Who is calling, from the request and the session id it sent (a round trip when sessions are shared). */
  caller: (c: Context, sessionId: string) => Caller | Promise<Caller>;
  /** A call's shared admission (store.kind redis), undefined when it needs none. */
  admit?: (principal: string | null, sessionId: string) => Promise<Admitted> | undefined;
  /** Whether the gateway requires a bearer token (auth configured). */
  bearer: boolean;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

export function registerA2AServerRoutes(app: OpenAPIHono, deps: A2AServerRouteDeps): void {
  const { engine, config } = deps;
  const handler = new A2AHandler({
    engine,
    store: deps.store,
    logger: deps.logger,
    callTimeoutS: config.call_timeout_s,
    retainS: deps.retainS,
    defaultSkill: config.default_skill,
  });
  const principalOf = (c: Context) => c.get('principal')?.name ?? null;

  app.get(AGENT_CARD_PATH, async (c) => {
    // With auth on, a card read without a token lists no skills (the guard let it through for this).
    const anonymous = deps.bearer && principalOf(c) === null;
    let tools: ReturnType<A2AHandler['skills']> = [];
    if (!anonymous) {
      try {
        const found = a2aCaller(c, deps);
        tools = handler.skills(found instanceof Promise ? await found : found);
      } catch {
        tools = []; // no usable session: nothing this request could call
      }
    }
    return c.json(
      agentCard({
        config,
        version: deps.version,
        endpoint: publicUrl(c, deps.urls, config.path),
        tools,
        bearer: deps.bearer,
      }),
      200,
      { 'Cache-Control': 'no-store' },
    );
  });

  app.post(config.path, async (c) => {
    const logger = requestLogger(c, deps.logger);
    let id: RpcId = null;
    try {
      const bytes = await readBytes(c, deps.limits.bodyLimitBytes);
      const json = parseBody(bytes, deps.limits.maxJsonDepth);
      if (typeof json === 'object' && json !== null && 'id' in json) {
        const given = (json as { id: unknown }).id;
        if (typeof given === 'string' || typeof given === 'number') id = given;
      }
      const req = parseRpcRequest(json);
      const found = a2aCaller(c, deps, bytes.byteLength);
      const caller = found instanceof Promise ? await found : found;
      const owner = caller.principal;
      // Tasks are bound to the credential that started them, not just its name (a token rotated under the name is another).
      const credential = c.get('principal')?.credential;
      if (credential !== undefined) caller.credential = credential;
      const outcome = await handler.handle(req, {
        dialect: /^\s*1\./.test(requestHeader(c, 'a2a-version') ?? '') ? '1.0' : '0.3',
        caller,
        owns: (call: Call) =>
          !deps.bearer || (call.caller.principal === owner && call.caller.credential === caller.credential),
        inputBytes: bytes.byteLength,
        logger,
        onClientGone: (fn) => onClientGone(c, fn),
        admit: deps.admit && (() => deps.admit!(caller.principal, caller.sessionId)),
        card: deps.bearer
          ? (tools) =>
              agentCard({
                config,
                version: deps.version,
                endpoint: publicUrl(c, deps.urls, config.path),
                tools,
                bearer: true,
              })
          : undefined,
      });
      if ('result' in outcome) return sendJson(c, rpcResult(req.id, outcome.result));
      return streamRpc(c, req.id, outcome.stream, deps.limits.heartbeatS, logger);
    } catch (err) {
      const e = asRpcError(err);
      if (e.code === RPC.INTERNAL_ERROR && !(err instanceof GatewayError))
        logger.error({ err, path: c.req.path }, 'A2A request failed');
      // A client that accepts only an event stream (a streaming method's) reads its error from one.
      if (acceptsOnlySse(requestHeader(c, 'accept'))) {
        return streamSse(c, { heartbeatS: deps.limits.heartbeatS }, (sink) => {
          sink.write(sseFrame(undefined, JSON.stringify(rpcError(id, e))));
          return Promise.resolve();
        });
      }
      return sendJson(c, rpcError(id, e));
    }
  });
}

/**
 * The caller of an A2A request, door "a2a": the bearer token's principal.
 * A2A has no handshake, so `sessions.required` (an A2E rule) does not apply;
 * a session sent in X-Session-Id is still checked and used. Refusals are audited.
 */
function a2aCaller(c: Context, deps: A2AServerRouteDeps, inputBytes = 0): Caller | Promise<Caller> {
  const sessionId = requestHeader(c, 'x-session-id');
  if (!sessionId) return { sessionId: '', principal: c.get('principal')?.name ?? null, door: 'a2a' };
  const refused = (err: unknown): never => {
    if (err instanceof GatewayError && c.req.method === 'POST') {
      deps.engine.recordRefused({
        tool_name: '',
        req_id: c.get('requestId') ?? '',
        principal: c.get('principal')?.name ?? null,
        error_code: err.code,
        input_bytes: inputBytes,
        door: 'a2a',
      });
    }
    throw err;
  };
  try {
    const found = deps.caller(c, sessionId);
    return found instanceof Promise
      ? found.then((caller) => ({ ...caller, door: 'a2a' }), refused)
      : { ...found, door: 'a2a' };
  } catch (err) {
    return refused(err);
  }
}

const acceptsOnlySse = (accept: string | undefined) =>
  accept !== undefined && accept.includes('text/event-stream') && !/application\/json|\*\/\*/.test(accept);

function parseBody(bytes: Uint8Array, maxDepth: number): unknown {
  if (bytes.byteLength === 0)
    throw new RpcError(
      RPC.INVALID_REQUEST,
      'request body is empty; send a JSON-RPC 2.0 request (Content-Type: application/json)',
    );
  if (nestsDeeperThan(bytes, maxDepth)) {
    throw new RpcError(
      RPC.INVALID_REQUEST,
      `request body nests arrays/objects deeper than ${maxDepth} levels (limits.max_json_depth); flatten the data`,
    );
  }
  try {
    return JSON.parse(utf8.decode(bytes));
  } catch (err) {
    throw new RpcError(RPC.PARSE_ERROR, `request body is not valid UTF-8 JSON: ${(err as Error).message}`);
  }
}

/** A stream of results as SSE, one JSON-RPC response per event. The task runs on if the client goes away. */
function streamRpc(c: Context, id: RpcId, stream: RpcStream, heartbeatS: number, logger: Logger): Response {
  return streamSse(c, { heartbeatS }, async (sink) => {
    sink.onDisconnect(() => stream.close());
    try {
      for await (const item of stream.items) {
        if (!sink.write(sseFrame(undefined, JSON.stringify(rpcResult(id, item))))) await sink.drain();
        if (sink.closed) break;
      }
    } catch (err) {
      logger.error({ err }, 'A2A stream failed');
      sink.write(sseFrame(undefined, JSON.stringify(rpcError(id, asRpcError(err)))));
    } finally {
      stream.close();
    }
  });
}
