/**
 * ToolAPI: the TypeScript twin of the spec's Client API ("Client API —
 * ToolAPI"), over this gateway's HTTP routes. Built on the types generated
 * from the OpenAPI document (./schema.ts) and openapi-fetch; streams are read
 * with fetch + eventsource-parser. Web-standard APIs only, so it runs in Node
 * (≥ 20) and in browsers alike.
 *
 * Errors the gateway answers to a call (unknown tool, invalid arguments,
 * denied, …) become a ToolResult with `success: false` and `error_code`, as
 * the spec's example expects. Only a gateway that cannot be reached or
 * answers something that is not the protocol throws a `ToolAPIError`.
 */
import createClient, { type Client } from 'openapi-fetch';
import { createParser } from 'eventsource-parser';
import type { components, paths } from './schema.js';

type Schemas = components['schemas'];
export type ToolDefinition = Required<Schemas['ToolDefinition']>;
export type ToolEvent = Schemas['ToolEvent'];
export type ToolResult = Required<Omit<Schemas['ToolResult'], 'events'>> & { events: ToolEvent[] };
export type ErrorMessage = Schemas['Error'];

/** The handshake messages (POST /handshake), as in src/protocol/handshake.ts. */
export interface HandshakeRequest {
  agent_id?: string;
  agent_caps?: string[];
  auth_token?: string | null;
}
export interface HandshakeResponse {
  type: 'handshake/resp';
  id: string;
  version: string;
  ts: number;
  req_id: string;
  session_id: string;
  accepted_caps: { capability: string; enabled: boolean; metadata: Record<string, unknown> }[];
  max_parallel: number;
  ok: boolean;
  reason: string;
}

export interface ToolAPIOptions {
  /** The gateway's base URL, e.g. "http://127.0.0.1:8080". */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>` (and as the handshake's auth_token). */
  token?: string;
  /** Session to send with every request; `handshake()` sets it. */
  sessionId?: string;
  /** Extra headers for every request (e.g. X-Request-Id). */
  headers?: Record<string, string>;
  /** A fetch implementation (default: the global one). */
  fetch?: typeof fetch;
}

export interface ListOptions {
  /** Search query: empty lists the active tools; non-empty ranks tools by relevance. */
  query?: string;
  /** Only tools that have all of these tags. */
  tags?: string[];
  /** Only tools of this kind ("native", "a2a", …). */
  kind?: string;
  /** Include deferred tools (search mode). */
  includeDeferred?: boolean;
  signal?: AbortSignal;
}

export interface CallOptions {
  /** Ask for events while the tool runs (streamed over SSE). Implied by `onEvent`. */
  streaming?: boolean;
  /** Called with each ToolEvent as it arrives. */
  onEvent?: (event: ToolEvent) => void;
  /** Per-call wall-clock limit, seconds (rounded up to whole seconds; the gateway default is 30). */
  timeout?: number;
  /** Ties the call to an agent turn for tracing. */
  correlationId?: string;
  /** Abort the request (the gateway stops the tool when the connection closes). */
  signal?: AbortSignal;
}

/** The gateway could not be reached, or answered something other than the protocol. */
export class ToolAPIError extends Error {
  /** An A2E error code when the gateway sent one, else "connection_failed" or "bad_response". */
  readonly code: string;
  /** HTTP status, when there was a response. */
  readonly status: number | undefined;
  readonly detail: Record<string, unknown> | null;
  constructor(
    code: string,
    message: string,
    options: { status?: number; detail?: Record<string, unknown> | null; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ToolAPIError';
    this.code = code;
    this.status = options.status;
    this.detail = options.detail ?? null;
  }
}

/**
 * The spec's Client API over HTTP: list and search tools, call them (with live events), open a session.
 * A refused call is a result (`success: false`, `error_code`), not an exception.
 *
 * @example
 * ```ts
 * import { ToolAPI } from 'a2e-gateway/client';
 *
 * const tools = new ToolAPI({ baseUrl: 'http://127.0.0.1:8080' });
 * await tools.list();
 * const result = await tools.call('list_dir', { path: '.' }, { onEvent: (e) => console.log(e.kind, e.data) });
 * console.log(result.success ? result.data : `${result.error_code}: ${result.error}`);
 * ```
 */
export class ToolAPI {
  /** The last plain `list()` answer (no query, no filters): the set the model should see. */
  tools: ToolDefinition[] | undefined;
  /** Session sent with every request; set by `handshake()`. */
  sessionId: string;
  readonly baseUrl: string;
  private readonly client: Client<paths, 'application/json'>;
  private readonly token: string | undefined;
  private readonly fetchFn: typeof fetch;
  private readonly headers: Record<string, string>;

  constructor(options: ToolAPIOptions | string) {
    const o = typeof options === 'string' ? { baseUrl: options } : options;
    this.baseUrl = o.baseUrl.replace(/\/+$/, '');
    this.token = o.token;
    this.sessionId = o.sessionId ?? '';
    this.fetchFn = o.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.headers = { ...o.headers, ...(o.token ? { Authorization: `Bearer ${o.token}` } : {}) };
    const fetchFn = this.fetchFn;
    this.client = createClient<paths, 'application/json'>({
      baseUrl: this.baseUrl,
      headers: this.headers,
      fetch: (request) => fetchFn(request),
    });
  }

  /** Open a session (POST /handshake) asking for the tools capability; later requests carry its session id. */
  async handshake(request: HandshakeRequest = {}): Promise<HandshakeResponse> {
    const body = {
      type: 'handshake/req',
      agent_id: request.agent_id ?? '',
      agent_caps: request.agent_caps ?? ['tools'],
      auth_token: request.auth_token ?? this.token ?? null,
    };
    const response = await this.send(() =>
      this.fetchFn(`${this.baseUrl}/handshake`, {
        method: 'POST',
        headers: { ...this.headers, 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify(body),
      }),
    );
    const json = await readJson(response);
    if (!response.ok) throw errorFrom(json, response.status, 'POST /handshake');
    const answer = json as HandshakeResponse;
    if (answer.ok && answer.session_id) this.sessionId = answer.session_id;
    return answer;
  }

  /** List the active tools, or search them with `query`. Throws a ToolAPIError when the gateway refuses. */
  async list(options: ListOptions = {}): Promise<ToolDefinition[]> {
    const { data, error, response } = await this.send(() =>
      this.client.POST('/tool/list', {
        body: {
          type: 'tool/list/req',
          session_id: this.sessionId,
          query: options.query ?? '',
          filter_tags: options.tags ?? [],
          filter_kind: options.kind ?? '',
          include_deferred: options.includeDeferred ?? false,
        },
        signal: options.signal,
      }),
    );
    if (error !== undefined || !data) throw errorFrom(error, response.status, 'POST /tool/list');
    const tools = (data.tools ?? []) as ToolDefinition[];
    if (!options.query && !options.tags?.length && !options.kind) this.tools = tools;
    return tools;
  }

  /**
   * Call a tool. Resolves with its ToolResult, also when the gateway refused
   * the call (`success: false`, `error_code` says why). With `streaming` (or
   * `onEvent`) events arrive over SSE as the tool runs and are also collected
   * in `result.events`.
   */
  async call(toolName: string, args: Record<string, unknown> = {}, options: CallOptions = {}): Promise<ToolResult> {
    const streaming = options.streaming ?? options.onEvent !== undefined;
    const body = {
      type: 'tool/call/req' as const,
      session_id: this.sessionId,
      tool_name: toolName,
      arguments: args,
      correlation_id: options.correlationId ?? '',
      streaming,
      ...(options.timeout !== undefined ? { timeout: Math.max(1, Math.ceil(options.timeout)) } : {}),
    };
    if (!streaming) {
      const { data, error, response } = await this.send(() =>
        this.client.POST('/tool/call', { body, signal: options.signal }),
      );
      if (error !== undefined || !data)
        return failedResult(toolName, errorFrom(error, response.status, 'POST /tool/call'));
      return normalise(data.data);
    }
    const {
      data: stream,
      error,
      response,
    } = await this.send(() =>
      this.client.POST('/tool/call', {
        body,
        parseAs: 'stream',
        headers: { Accept: 'text/event-stream' },
        signal: options.signal,
      }),
    );
    if (error !== undefined) return failedResult(toolName, errorFrom(error, response.status, 'POST /tool/call'));
    if (!stream) throw new ToolAPIError('bad_response', 'POST /tool/call answered without a body');
    if (!response.headers.get('content-type')?.includes('text/event-stream')) {
      // A JSON answer to a streaming request: events are in data.events.
      const json = (await new Response(stream).json()) as Schemas['ToolCallResponse'];
      const result = normalise(json.data);
      for (const e of result.events) options.onEvent?.(e);
      return result;
    }
    return this.readCallStream(toolName, stream, options.onEvent);
  }

  private async readCallStream(
    toolName: string,
    stream: ReadableStream<Uint8Array>,
    onEvent: ((e: ToolEvent) => void) | undefined,
  ): Promise<ToolResult> {
    const events: ToolEvent[] = [];
    let result: ToolResult | undefined;
    let handlerError: unknown;
    const parser = createParser({
      onEvent: (message) => {
        const json = parseJson(message.data);
        if (message.event === 'tool/event') {
          const event = json as ToolEvent;
          events.push(event);
          try {
            onEvent?.(event);
          } catch (err) {
            handlerError ??= err;
          }
        } else if (message.event === 'tool/call/resp') {
          result = normalise((json as Schemas['ToolCallResponse']).data);
        } else if (message.event === 'tool/error') {
          result = failedResult(toolName, errorFrom(json, 200, 'the event stream'));
        }
      },
    });
    const reader = stream.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.feed(decoder.decode(value, { stream: true }));
        if (handlerError !== undefined) throw handlerError;
      }
    } catch (err) {
      if (isAbort(err) || err === handlerError) throw err;
      throw new ToolAPIError(
        'connection_failed',
        `the event stream of "${toolName}" broke off: ${(err as Error).message}`,
        { cause: err },
      );
    } finally {
      reader.releaseLock();
    }
    if (!result) throw new ToolAPIError('bad_response', `the event stream of "${toolName}" ended without a result`);
    if (result.events.length === 0) result.events = events;
    return result;
  }

  /** Run a request; a failure to reach the gateway becomes a ToolAPIError (an abort stays an abort). */
  private async send<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (err) {
      if (isAbort(err)) throw err;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (err as Error).message;
      throw new ToolAPIError('connection_failed', `cannot reach the gateway at ${this.baseUrl} (${why})`, {
        cause: err,
      });
    }
  }
}

function isAbort(err: unknown): boolean {
  return (err as { name?: string } | null)?.name === 'AbortError';
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  return text ? parseJson(text) : undefined;
}

/** The gateway's A2E error answer as a ToolAPIError; anything else as bad_response (also the CLI's `list`, which sends its requests itself). */
export function errorFrom(body: unknown, status: number, what: string): ToolAPIError {
  const e = body as Partial<ErrorMessage> | undefined;
  if (e && typeof e === 'object' && e.type === 'error' && typeof e.code === 'string') {
    return new ToolAPIError(e.code, e.message ?? e.code, { status, detail: e.detail ?? null });
  }
  return new ToolAPIError('bad_response', `${what} answered HTTP ${status} without an A2E error message`, { status });
}

function failedResult(toolName: string, err: ToolAPIError): ToolResult {
  return {
    success: false,
    tool_name: toolName,
    data: err.detail,
    summary: null,
    truncated: false,
    exit_code: null,
    error: err.message,
    error_code: err.code,
    duration_ms: 0,
    events: [],
  };
}

function normalise(r: Schemas['ToolResult']): ToolResult {
  return {
    success: r.success,
    tool_name: r.tool_name,
    data: r.data ?? null,
    summary: r.summary ?? null,
    truncated: r.truncated ?? false,
    exit_code: r.exit_code ?? null,
    error: r.error ?? null,
    error_code: r.error_code ?? null,
    duration_ms: r.duration_ms,
    events: r.events ?? [],
  };
}
