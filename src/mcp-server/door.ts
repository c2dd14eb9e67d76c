/**
 * The gateway as an MCP server: one JSON-RPC message in, what to answer out.
 * Independent of the transport (Streamable HTTP in routes/doors/mcp.ts, stdio in
 * mcp-server/stdio.ts) and of any web framework. Every `tools/call` goes
 * through `Engine.start` like every other door: same validation, policy,
 * timeouts, events, audit and metrics (door "mcp").
 *
 * Stateless: nothing is kept between messages except the calls in flight
 * (so `notifications/cancelled` can stop one). The transports tell their
 * clients when the tool list changes (`onToolListChanged`), as the
 * `tools.listChanged` capability promises. Messages are checked by hand
 * (the MCP SDK's schema module is not loaded at run time, see protocol.ts);
 * the SDK's types check the shapes at compile time.
 */
import type {
  CallToolResult,
  InitializeResult,
  JSONRPCMessage,
  ListToolsResult,
  ProgressToken,
  RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { GatewayError, type Admitted, type Call, type Caller, type Engine, type Logger } from '../engine/index.js';
import {
  PROTOCOL_VERSION,
  newId,
  nowTs,
  type ToolCallRequest,
  type ToolEvent,
  type ToolListRequest,
  type ToolResult,
} from '../protocol/index.js';
import {
  LATEST_PROTOCOL_VERSION,
  MAX_BATCH_MESSAGES,
  SUPPORTED_PROTOCOL_VERSIONS,
  batchesAllowed,
  checkInitialize,
  cursorOf,
} from './protocol.js';
import { mcpTool } from './tools.js';
import { JSONRPC, rpcErrorResponse } from '../wire/jsonrpc.js';

export interface McpDoorOptions {
  engine: Engine;
  /** Gateway version, in `serverInfo`. */
  version: string;
  /** Tools per `tools/list` page. */
  pageSize: number;
  /** Timeout of every `tools/call`, seconds (MCP requests carry none; clients cancel on their own). */
  callTimeoutS: number;
}

/** What the transport knows about one incoming message. */
export interface McpExchange {
  caller: Caller;
  logger: Logger;
  /** Where the message's request ids are unique (session id, connection): scopes `notifications/cancelled`. */
  scope: string;
  /** Id of the transport's request (the HTTP request id), used as the call's req_id; a fresh one when absent. */
  requestId?: string;
  /** Size of the message, for the audit record. */
  inputBytes: number;
  /** A tools/call's shared admission (store.kind redis), decided before handle(); see Admission.adopt. */
  admitted?: Admitted;
  /**
   * The transport can send a call's log messages without a progressToken (stdio; HTTP when the client accepts an
   * SSE answer): the call keeps its events then, as it does for a progressToken.
   */
  hearsLogs?: boolean;
  /**
   * The protocol version in use: the MCP-Protocol-Version header over HTTP, what initialize agreed on stdio.
   * Absent: 2025-03-26, as the spec says a server must assume when the header is missing.
   */
  protocolVersion?: string;
}

/** What to answer. */
export type McpOutcome =
  /** A notification or a client's response: nothing to answer (HTTP 202). */
  | { kind: 'accepted' }
  /** One JSON-RPC response. */
  | { kind: 'reply'; message: JSONRPCMessage; initialized?: boolean }
  /** A running tool call: stream its notifications (when asked), then answer with `door.callReply`. */
  | { kind: 'call'; id: RequestId; call: Call; progressToken: ProgressToken | undefined };

const SERVER_INFO = { name: 'a2e-gateway', title: 'A2E tool gateway' } as const;
const INSTRUCTIONS =
  'Tools of an A2E gateway: native tools, plugins, remote A2A agents and MCP servers behind one policy. ' +
  'Long calls report progress when the request carries a progressToken; cancel them with notifications/cancelled.';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isRequestId = (v: unknown): v is RequestId => typeof v === 'string' || Number.isSafeInteger(v);

export class McpDoor {
  private readonly engine: Engine;
  private readonly options: McpDoorOptions;
  /**
   * Calls in flight, for notifications/cancelled: by who may cancel them (the session scope and the principal),
   * then by JSON-RPC id (a Map tells 1 from "1", as JSON-RPC does).
   */
  private readonly inflight = new Map<string, Map<RequestId, Call>>();

  constructor(options: McpDoorOptions) {
    this.engine = options.engine;
    this.options = options;
  }

  /** Handle one parsed JSON-RPC message. Never throws: every failure is a JSON-RPC error. */
  handle(message: unknown, ex: McpExchange): McpOutcome {
    if (Array.isArray(message)) {
      // The transport takes a batch apart (batchOf) when the version allows one; here it is one too many.
      return reply(
        errorMessage(
          null,
          JSONRPC.INVALID_REQUEST,
          batchesAllowed(ex.protocolVersion)
            ? 'a JSON-RPC batch may not contain a batch; send its messages in the outer one'
            : `JSON-RPC batches are not supported under MCP ${ex.protocolVersion} (2025-06-18 removed them); send one message per request`,
        ),
      );
    }
    if (!isObject(message) || message.jsonrpc !== '2.0') {
      return reply(
        errorMessage(null, JSONRPC.INVALID_REQUEST, 'not a JSON-RPC 2.0 message: send an object with "jsonrpc": "2.0"'),
      );
    }
    const { id, method } = message;
    if (typeof method !== 'string') {
      // A response to a request of ours (we send none) or garbage.
      if (id !== undefined && ('result' in message || 'error' in message)) return { kind: 'accepted' };
      return reply(
        errorMessage(
          isRequestId(id) ? id : null,
          JSONRPC.INVALID_REQUEST,
          'a JSON-RPC request needs a string "method"',
        ),
      );
    }
    if (id === undefined) {
      this.notification(method, message.params, ex);
      return { kind: 'accepted' };
    }
    if (!isRequestId(id)) {
      return reply(errorMessage(null, JSONRPC.INVALID_REQUEST, 'the request "id" must be a string or an integer'));
    }
    const params = message.params;
    if (params !== undefined && !isObject(params)) {
      return reply(errorMessage(id, JSONRPC.INVALID_PARAMS, `"params" of ${method} must be an object`));
    }
    try {
      switch (method) {
        case 'tools/call':
          return this.call(id, params, ex);
        case 'tools/list':
          return reply(result(id, this.list(params, ex.caller)));
        case 'initialize':
          return { kind: 'reply', message: result(id, this.initialize(params)), initialized: true };
        case 'ping':
          return reply(result(id, {}));
        case 'logging/setLevel':
          // Accepted so clients that set a level work; the door is stateless, so tools' log events are always sent.
          return reply(result(id, {}));
        default:
          return reply(
            errorMessage(
              id,
              JSONRPC.METHOD_NOT_FOUND,
              `method "${method.slice(0, 100)}" is not supported: this gateway serves tools (tools/list, tools/call) and ping`,
            ),
          );
      }
    } catch (err) {
      if (err instanceof McpParamsError) return reply(errorMessage(id, JSONRPC.INVALID_PARAMS, err.message));
      if (
        err instanceof GatewayError &&
        err.code === 'invalid_arguments' &&
        inputErrorsAreToolErrors(ex.protocolVersion)
      ) {
        // SEP-1303: the model reads a tool execution error and can correct its arguments; a protocol error it never sees.
        return reply(
          result(id, { content: [{ type: 'text', text: err.message }], isError: true } satisfies CallToolResult),
        );
      }
      if (err instanceof GatewayError) return reply(gatewayErrorMessage(id, err));
      ex.logger.error({ err, method }, 'MCP request failed');
      return reply(
        errorMessage(
          id,
          JSONRPC.INTERNAL_ERROR,
          'internal error in the gateway; it was logged. Retry, or report it if it persists',
        ),
      );
    }
  }

  private initialize(params: Record<string, unknown> | undefined): InitializeResult {
    const { problem, version: asked } = checkInitialize(params ?? {});
    if (problem) throw new McpParamsError(`invalid initialize params: ${problem}`);
    return {
      protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(asked) ? asked : LATEST_PROTOCOL_VERSION,
      capabilities: { tools: { listChanged: true }, logging: {} },
      serverInfo: { ...SERVER_INFO, version: this.options.version },
      instructions: INSTRUCTIONS,
    };
  }

  private list(params: Record<string, unknown> | undefined, caller: Caller): ListToolsResult {
    let cursor: string | undefined;
    try {
      cursor = cursorOf(params ?? {});
    } catch (err) {
      throw new McpParamsError(`invalid tools/list params: ${(err as Error).message}`);
    }
    const tools = this.engine.list(LIST_ALL, caller);
    const start = cursor === undefined ? 0 : cursorStart(cursor, tools);
    const end = Math.min(tools.length, start + this.options.pageSize);
    const page: ListToolsResult = { tools: tools.slice(start, end).map(mcpTool) };
    if (end < tools.length) page.nextCursor = makeCursor(end, tools[end - 1]!.name);
    return page;
  }

  private call(id: RequestId, params: Record<string, unknown> | undefined, ex: McpExchange): McpOutcome {
    const name = params?.name;
    if (typeof name !== 'string' || name.length === 0)
      throw new McpParamsError('tools/call needs params.name: the name of the tool (tools/list shows them)');
    const args = params!.arguments ?? {};
    if (!isObject(args))
      throw new McpParamsError("params.arguments of tools/call must be an object of the tool's arguments");
    const meta = params!._meta;
    let progressToken: ProgressToken | undefined;
    let correlationId = '';
    if (meta !== undefined) {
      if (!isObject(meta)) throw new McpParamsError('params._meta must be an object');
      const token = meta.progressToken;
      if (token !== undefined) {
        if (!isRequestId(token)) throw new McpParamsError('params._meta.progressToken must be a string or an integer');
        progressToken = token;
      }
      if (typeof meta['a2e/correlation_id'] === 'string') correlationId = meta['a2e/correlation_id'];
    }
    const req: ToolCallRequest = {
      type: 'tool/call/req',
      id: ex.requestId ?? newId(),
      version: PROTOCOL_VERSION,
      ts: nowTs(),
      session_id: ex.caller.sessionId,
      tool_name: name,
      arguments: args,
      correlation_id: correlationId,
      // Events are kept only when someone will hear them.
      streaming: progressToken !== undefined || ex.hearsLogs === true,
      timeout: this.options.callTimeoutS,
    };
    const call = this.engine.start(req, ex.caller, {
      inputBytes: ex.inputBytes,
      logger: ex.logger,
      door: 'mcp',
      admitted: ex.admitted,
    });
    const owner = ownerKey(ex.scope, ex.caller);
    let calls = this.inflight.get(owner);
    if (calls === undefined) this.inflight.set(owner, (calls = new Map()));
    calls.set(id, call);
    void call.result.then(() => {
      if (calls.get(id) !== call) return;
      calls.delete(id);
      if (calls.size === 0 && this.inflight.get(owner) === calls) this.inflight.delete(owner);
    });
    return { kind: 'call', id, call, progressToken };
  }

  private notification(method: string, params: unknown, ex: McpExchange): void {
    if (method !== 'notifications/cancelled' || !isObject(params) || !isRequestId(params.requestId)) return;
    const call = this.inflight.get(ownerKey(ex.scope, ex.caller))?.get(params.requestId);
    if (!call) return; // already finished, or never ours: the spec says to ignore it
    ex.logger.info({ call_id: call.id, tool: call.tool.definition.name }, 'MCP client cancelled the call');
    call.stop('cancel');
  }

  /**
   * Call `send` with notifications/tools/list_changed whenever the tools change (a source's tools appear, change or
   * go, a reload, the shell sandbox's check ending) until the returned function is called. Clients then list again.
   */
  onToolListChanged(send: (message: JSONRPCMessage) => void): () => void {
    return this.engine.toolList.watch(() => send(TOOLS_LIST_CHANGED));
  }

  /** The response to a settled call. */
  callReply(id: RequestId, call: Call): JSONRPCMessage {
    return result(id, callToolResult(call.response!.data, call.tool.definition.kind === 'mcp'));
  }

  /**
   * The response to a settled call as JSON text: `JSON.stringify(callReply(id, call))`.
   * The common answer (a successful gateway tool returning an object) is written straight from the JSON
   * of the data the engine already has (made to measure it against the output cap, or a native tool's JSON
   * text, not parsed), used both as the text content and as `structuredContent`, instead of building the
   * reply's objects and serialising the data again, twice.
   */
  callReplyText(id: RequestId, call: Call): string {
    const r = call.response!.data;
    if (r.success && !r.truncated && call.tool.definition.kind !== 'mcp') {
      // JSON text of an object starts with `{` (JSON.stringify writes no leading space); anything else takes the long way.
      const kept = call.takeDataJson();
      const data =
        kept !== undefined
          ? kept.charCodeAt(0) === 123
            ? kept
            : undefined
          : isObject(r.data)
            ? JSON.stringify(r.data)
            : undefined;
      if (data !== undefined) {
        return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":${JSON.stringify(data)}}],"structuredContent":${data}}}`;
      }
    }
    return JSON.stringify(this.callReply(id, call));
  }
}

class McpParamsError extends Error {}

/**
 * The messages of a JSON-RPC batch the door will take one by one, or the error to answer instead; undefined when
 * `message` is no batch, or one the version does not allow (handle() refuses it then).
 */
export function batchOf(
  message: unknown,
  protocolVersion: string | undefined,
): { messages: unknown[] } | { refused: JSONRPCMessage } | undefined {
  if (!Array.isArray(message) || !batchesAllowed(protocolVersion)) return undefined;
  if (message.length === 0)
    return {
      refused: errorMessage(null, JSONRPC.INVALID_REQUEST, 'an empty JSON-RPC batch: send at least one message'),
    };
  if (message.length > MAX_BATCH_MESSAGES) {
    return {
      refused: errorMessage(
        null,
        JSONRPC.INVALID_REQUEST,
        `a JSON-RPC batch of ${message.length} messages; at most ${MAX_BATCH_MESSAGES}: split it`,
      ),
    };
  }
  return { messages: message };
}

/** Since 2025-11-25 (SEP-1303) arguments that fail the tool's schema are a tool execution error, before it -32602. */
export function inputErrorsAreToolErrors(protocolVersion: string | undefined): boolean {
  return (protocolVersion ?? '2025-03-26') >= '2025-11-25';
}

const TOOLS_LIST_CHANGED: JSONRPCMessage = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' };

const LIST_ALL: ToolListRequest = {
  type: 'tool/list/req',
  id: '',
  version: PROTOCOL_VERSION,
  ts: 0,
  session_id: '',
  filter_kind: '',
  filter_tags: [],
  query: '',
  include_deferred: false,
};

/** Who may cancel a call: its session scope and principal (no string built for the common sessionless, tokenless case). */
const ownerKey = (scope: string, caller: Caller) =>
  scope === '' && caller.principal === null ? '' : `${scope}\u0000${caller.principal ?? ''}`;

const reply = (message: JSONRPCMessage): McpOutcome => ({ kind: 'reply', message });

function result(id: RequestId, value: object): JSONRPCMessage {
  return { jsonrpc: '2.0', id, result: value as Record<string, unknown> };
}

export function errorMessage(id: RequestId | null, code: number, message: string, data?: unknown): JSONRPCMessage {
  return rpcErrorResponse(id, code, message, data) as JSONRPCMessage;
}

/** A refusal of the engine as a JSON-RPC error; `data.error_code` is the gateway's code. */
export function gatewayErrorMessage(id: RequestId | null, err: GatewayError): JSONRPCMessage {
  const code =
    err.code === 'unknown_tool' || err.code === 'invalid_arguments'
      ? JSONRPC.INVALID_PARAMS
      : err.code === 'invalid_request'
        ? JSONRPC.INVALID_REQUEST
        : err.code === 'internal'
          ? JSONRPC.INTERNAL_ERROR
          : JSONRPC.SERVER_ERROR;
  // The REST hint names the REST route; an MCP client lists tools with tools/list.
  const message = err.message.replace(
    'POST /tool/list to see the available tools.',
    'tools/list shows the available tools.',
  );
  return errorMessage(id, code, message, {
    error_code: err.code,
    retryable: err.retryable,
    ...(err.detail ? { detail: err.detail } : {}),
  });
}

/**
 * A ToolResult as MCP's CallToolResult: the data as `structuredContent` (an
 * object; anything else is wrapped as `{ result }`) and as text, or for a
 * failure `isError` with the error text. A tool that came from an MCP server
 * (`kind: "mcp"`, data `{ text, content, structuredContent? }`) goes back out
 * as it came in: its typed items (images, audio, resources) and structure kept.
 */
export function callToolResult(r: ToolResult, mcpSourced = false): CallToolResult {
  const data = r.data;
  const out: CallToolResult = { content: [] };
  if (mcpSourced && isObject(data) && Array.isArray(data.content)) {
    out.content = data.content as CallToolResult['content'];
    if (isObject(data.structuredContent)) out.structuredContent = data.structuredContent;
    if (!r.success) {
      out.isError = true;
      if (out.content.length === 0) out.content = [{ type: 'text', text: r.error ?? 'the tool failed' }];
    }
  } else {
    if (r.success) out.content = [{ type: 'text', text: typeof data === 'string' ? data : JSON.stringify(data) }];
    else {
      out.isError = true;
      out.content = [{ type: 'text', text: r.error ?? 'the tool failed' }];
    }
    if (data !== null) out.structuredContent = isObject(data) ? data : { result: data };
  }
  if (r.truncated) out._meta = { 'a2e/truncated': true };
  return out;
}

/**
 * Sends a call's events as MCP notifications: log messages always, progress when the request had a progressToken;
 * `progress` must increase with every notification.
 */
export class ProgressNotifier {
  private last = -1;

  constructor(private readonly token: ProgressToken | undefined) {}

  /** The notification for one event, or undefined when it has none. */
  notification(ev: ToolEvent): JSONRPCMessage | undefined {
    switch (ev.kind) {
      case 'progress':
      case 'status': {
        if (this.token === undefined) return undefined;
        // A status has no percentage: it nudges progress up (from 0 when it comes first, as a wait for approval does).
        const pct = ev.kind === 'progress' ? ev.data.pct : this.last < 0 ? 0 : -1;
        this.last = pct > this.last ? pct : this.last + 0.001;
        return {
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: { progressToken: this.token, progress: this.last, total: 100, message: ev.data.message },
        };
      }
      case 'log':
        return {
          jsonrpc: '2.0',
          method: 'notifications/message',
          params: { level: LOG_LEVELS[ev.data.level] ?? 'info', logger: 'tool', data: ev.data.message },
        };
      default:
        return undefined;
    }
  }
}

const LOG_LEVELS: Record<string, string> = {
  trace: 'debug',
  debug: 'debug',
  info: 'info',
  notice: 'notice',
  warn: 'warning',
  warning: 'warning',
  error: 'error',
  fatal: 'critical',
  critical: 'critical',
};

// ---------------------------------------------------------------- cursors

/** An opaque cursor: the offset of the next page and the name of the tool before it. */
function makeCursor(offset: number, lastName: string): string {
  return Buffer.from(JSON.stringify([offset, lastName])).toString('base64url');
}

/** Where the page of `cursor` starts; after the named tool when the list changed in between. */
function cursorStart(cursor: string, tools: readonly { name: string }[]): number {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  if (
    !Array.isArray(decoded) ||
    !Number.isSafeInteger(decoded[0]) ||
    decoded[0] < 0 ||
    typeof decoded[1] !== 'string'
  ) {
    throw new McpParamsError('invalid cursor: pass the nextCursor of a previous tools/list answer as it was');
  }
  const [offset, name] = decoded as [number, string];
  if (tools[offset - 1]?.name === name) return offset;
  const at = tools.findIndex((t) => t.name === name);
  return at >= 0 ? at + 1 : Math.min(offset, tools.length);
}
