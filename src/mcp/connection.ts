/**
 * One configured MCP server, kept connected: spawn (stdio) or reach (Streamable
 * HTTP), initialize, list its tools, call them. Supervised: when the process
 * exits or the connection drops, calls in flight fail saying so and the server
 * is started again with backoff; one that never comes up is retried the same
 * way and never holds up the gateway or other servers.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  LoggingMessageNotificationSchema,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { ToolError, compileJsonSchema, type Logger, type ToolContext } from '../engine/index.js';
import type { ToolDefinitionInput } from '../protocol/index.js';
import { sanitize } from '../a2a/tools.js';
import { HINT_TAGS } from '../mcp-server/tools.js';
import type { McpConfig, McpServerConfig } from './config.js';
import { parametersFromSchema } from './schema.js';
import { eventPacing, mcpFetchFor } from './http-fetch.js';
import { sandboxAvailable, sandboxedCommand, type SandboxedCommand } from './sandbox.js';
import { ProcessTransport } from './stdio.js';
import { MESSAGE_TOO_LARGE } from './oversized-message.js';
import { serverAttributes, startClientSpan, tracedFetchOf, tracingOn } from '../observability/tracing.js';

export type McpServerState = 'disabled' | 'starting' | 'ready' | 'restarting' | 'failed' | 'stopped';

/** One tool of the server, under its gateway name. */
export interface McpTool {
  readonly name: string;
  readonly remoteName: string;
  readonly definition: ToolDefinitionInput;
}

/** Environment every stdio server gets (the gateway's own environment is not passed on). */
const BASE_ENV_KEYS = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'USER', 'LOGNAME'];

export class McpServerConnection {
  state: McpServerState;
  tools: McpTool[] = [];
  lastError: string | null = null;
  restarts = 0;
  lastStarted: number | null = null;
  serverName: string | null = null;
  private client: Client | undefined;
  private transport: Transport | undefined;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;
  private readonly running = new Set<ToolContext>();
  /** The sandbox of a stdio server that runs in one (made once, its workspace removed at stop). */
  private sandbox: SandboxedCommand | undefined;
  /** Whether this stdio server runs in the sandbox (decided at its first start). */
  sandboxed = false;
  /** Rejected calls' names that were skipped: invalid schema or not in the allow list. */
  skipped: { tool: string; reason: string }[] = [];

  constructor(
    readonly id: string,
    readonly config: McpServerConfig,
    private readonly settings: McpConfig,
    /** Bound to `mcp_server: id` (its lines name the server without repeating it). */
    private readonly logger: Logger,
    private readonly toolsChanged: () => void,
  ) {
    this.state = config.enabled ? 'starting' : 'disabled';
  }

  get transportKind(): 'stdio' | 'http' {
    return this.config.command !== undefined ? 'stdio' : 'http';
  }

  get pid(): number | null {
    return this.transport instanceof ProcessTransport ? (this.transport.pid ?? null) : null;
  }

  /** Connect; resolves when the first attempt has succeeded or failed (a failure schedules the next). */
  async start(): Promise<void> {
    if (!this.config.enabled || this.stopping) return;
    this.lastStarted = Date.now();
    const client = new Client({ name: 'a2e-gateway', version: '1' }, { capabilities: {} });
    let transport: Transport;
    try {
      transport = await this.makeTransport();
    } catch (err) {
      this.client = client;
      this.fail(client, (err as Error).message);
      return;
    }
    this.client = client;
    this.transport = transport;
    client.onerror = (err) => this.logger.warn({ error: err.message }, `MCP server "${this.id}": ${err.message}`);
    client.onclose = () => this.closed(client);
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      void this.loadTools(client).catch((err: unknown) => this.logger.warn({ error: (err as Error).message }, 'tool list refresh failed'));
    });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      const { level, data } = n.params;
      const message = typeof data === 'string' ? data : JSON.stringify(data);
      // MCP log messages name no request: every call running on this server hears them.
      for (const ctx of this.running) ctx.emit('log', { level, message });
    });
    try {
      await client.connect(transport, { timeout: this.settings.connect_timeout_ms });
      this.serverName = client.getServerVersion()?.name ?? null;
      await this.loadTools(client);
      if (this.client !== client) return;
      this.state = 'ready';
      this.lastError = null;
      this.failures = 0;
      this.logger.info({ tools: this.tools.map((t) => t.name), pid: this.pid }, `MCP server "${this.id}" offers ${this.tools.length} tool(s)`);
    } catch (err) {
      if (this.client !== client || this.stopping) return;
      this.fail(client, describeStartError(err, this.settings.connect_timeout_ms));
    }
  }

  private async makeTransport(): Promise<Transport> {
    const c = this.config;
    if (c.url !== undefined) {
      // With tracing on, each POST carries the active span's traceparent (the MCP call's client span).
      const fetch = mcpFetchFor({ maxBytes: this.settings.max_message_bytes, serverId: this.id });
      return new StreamableHTTPClientTransport(new URL(c.url), { requestInit: { headers: c.headers }, fetch: tracingOn ? tracedFetchOf(fetch) : fetch });
    }
    const limits = { maxMessageBytes: this.settings.max_message_bytes, serverId: this.id };
    const onStderr = (line: string) => this.logger.info({ stderr: line }, `MCP server "${this.id}" stderr`);
    if (c.sandbox !== false) {
      if (!this.sandbox) {
        const unavailable = await sandboxAvailable();
        if (unavailable && c.sandbox === true) throw new Error(`sandbox: true, but ${unavailable}`);
        if (unavailable) {
          this.logger.warn({ reason: unavailable }, `MCP server "${this.id}" runs unconfined: ${unavailable} (set sandbox: false to silence this)`);
        } else {
          this.sandbox = sandboxedCommand(this.id, c, { PATH: process.env.PATH ?? '' });
          this.sandboxed = true;
          this.logger.info({ mounts: this.sandbox.mounts, network: c.network }, `MCP server "${this.id}" runs in the sandbox`);
        }
      }
      if (this.sandbox) {
        // bwrap gets an empty environment; the server's own is set inside the sandbox.
        return new ProcessTransport({ file: this.sandbox.file, args: this.sandbox.args, env: {}, diesWithParent: true, onStderr, ...limits });
      }
    }
    const env: Record<string, string> = {};
    for (const k of BASE_ENV_KEYS) if (process.env[k] !== undefined) env[k] = process.env[k]!;
    Object.assign(env, c.env);
    return new ProcessTransport({ file: c.command!, args: c.args, env, cwd: c.cwd, onStderr, ...limits });
  }

  /** Re-read the tool list now (`refresh_s`); a server that is not ready re-reads it when it is back. */
  async refreshTools(): Promise<void> {
    const client = this.client;
    if (client && this.state === 'ready') await this.loadTools(client);
  }

  /** Read the server's whole tool list (every page) and map it. */
  private async loadTools(client: Client): Promise<void> {
    const listed: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const r = await client.listTools(cursor ? { cursor } : {}, { timeout: this.settings.connect_timeout_ms });
      listed.push(...r.tools);
      cursor = r.nextCursor;
      if (!cursor) break;
    }
    if (this.client !== client) return;
    const allow = this.config.tools && new Set(this.config.tools);
    const tools: McpTool[] = [];
    const skipped: { tool: string; reason: string }[] = [];
    for (const tool of listed) {
      if (allow && !allow.has(tool.name)) continue;
      try {
        tools.push(this.mapTool(tool));
      } catch (err) {
        skipped.push({ tool: tool.name, reason: (err as Error).message });
        this.logger.warn({ tool: tool.name, error: (err as Error).message }, `tool "${tool.name}" of MCP server "${this.id}" left out: ${(err as Error).message}`);
      }
    }
    this.tools = tools;
    this.skipped = skipped;
    this.toolsChanged();
  }

  private mapTool(tool: Tool): McpTool {
    const schema = tool.inputSchema as Record<string, unknown>;
    compileJsonSchema(schema); // an invalid schema leaves the tool out here, not the registry's rebuild
    const hints = tool.annotations ?? {};
    const tags = new Set<string>();
    for (const [hint, tag] of Object.entries(HINT_TAGS)) if (hints[hint as keyof typeof hints] === true) tags.add(tag);
    tags.add('mcp');
    const name = `${sanitize(this.id)}_${sanitize(tool.name)}`;
    const title = tool.title ?? hints.title;
    return {
      name,
      remoteName: tool.name,
      definition: {
        name,
        description: tool.description || title || `Tool "${tool.name}" of the MCP server "${this.id}"`,
        input_parameters: parametersFromSchema(schema),
        input_schema: schema,
        streaming: true,
        idempotent: hints.idempotentHint === true,
        tags: [...tags],
        toolkit: this.id,
        kind: 'mcp',
      },
    };
  }

  /** Call one tool of this server. */
  async call(tool: McpTool, args: Record<string, unknown>, ctx: ToolContext): Promise<{ text: string; content: CallToolResult['content']; structuredContent?: unknown }> {
    const client = this.client;
    if (!client || this.state !== 'ready') {
      throw new ToolError(
        `MCP server "${this.id}" is ${this.state}${this.lastError ? ` (${this.lastError})` : ''}; ${this.state === 'disabled' ? 'enable it in mcp.servers' : 'retry shortly'}`,
      );
    }
    // The server's own limit is the SDK's timeout; when the call's deadline comes first the engine stops the call
    // (its signal makes the SDK send notifications/cancelled), so the SDK's clock gets a second's slack then.
    const remaining = ctx.deadline - Date.now();
    const timeout = Math.max(1, remaining < this.config.timeout_ms ? remaining + 1000 : this.config.timeout_ms);
    // The SDK sends notifications/cancelled whenever the signal it was given aborts, even after the answer came;
    // the engine aborts ctx.signal when every call ends. So the SDK gets a signal that follows ctx.signal only
    // while the request is in flight (else each call would cost the server a second, spurious message).
    const inFlight = new AbortController();
    const forward = () => inFlight.abort(ctx.signal.reason);
    ctx.signal.addEventListener('abort', forward, { once: true });
    if (ctx.signal.aborted) forward();
    this.running.add(ctx);
    let result: CallToolResult;
    const invoke = () =>
      client.callTool({ name: tool.remoteName, arguments: args }, undefined, {
        signal: inFlight.signal,
        timeout,
        onprogress: ({ progress, total, message }) => {
          const pct = total ? Math.max(0, Math.min(100, Math.round((progress / total) * 100))) : 0;
          ctx.emit('progress', { pct, message: message ?? `${progress}${total ? ` of ${total}` : ''}`, progress, ...(total === undefined ? {} : { total }) });
        },
      });
    // Over HTTP the call's SSE answer is read only as fast as the caller takes its events (see http-fetch.ts). Over
    // stdio it cannot be: one pipe carries every call's messages, and holding it for one slow reader would hold all.
    const paced = ctx.streaming && this.transportKind === 'http' ? () => eventPacing.run(() => ctx.eventsTaken(), invoke) : invoke;
    const span = tracingOn ? this.callSpan(tool) : undefined;
    try {
      result = (await (span ? span.run(paced) : paced())) as CallToolResult;
      if (result.isError) span?.fail({ name: 'tool_error' });
    } catch (err) {
      span?.fail(err);
      if (ctx.signal.aborted) throw ctx.signal.reason;
      throw this.callError(err, timeout);
    } finally {
      ctx.signal.removeEventListener('abort', forward);
      span?.end();
      this.running.delete(ctx);
    }
    const content = result.content ?? [];
    const text = content
      .filter((c): c is { type: 'text'; text: string } => c.type === 'text')
      .map((c) => c.text)
      .join('\n');
    const data = { text, content, ...(result.structuredContent === undefined ? {} : { structuredContent: result.structuredContent }) };
    if (result.isError) throw new ToolError(text || `tool "${tool.remoteName}" of MCP server "${this.id}" reported an error`, { data });
    return data;
  }

  /** The client span of one tools/call (MCP semantic conventions): the server and tool, never the arguments. */
  private callSpan(tool: McpTool) {
    return startClientSpan(`tools/call ${tool.remoteName}`, {
      'mcp.method.name': 'tools/call',
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': tool.remoteName,
      'a2e.mcp.server': this.id,
      'network.transport': this.transportKind === 'stdio' ? 'pipe' : 'tcp',
      ...(this.config.url === undefined ? {} : serverAttributes(new URL(this.config.url))),
    });
  }

  private callError(err: unknown, timeoutMs: number): ToolError {
    if (err instanceof McpError) {
      if (err.code === ErrorCode.ConnectionClosed) {
        const status = this.transport instanceof ProcessTransport ? this.transport.exitStatus : undefined;
        return new ToolError(`MCP server "${this.id}" went away while the call ran${status ? ` (${status})` : ''}; it is being restarted, retry the call`);
      }
      if (err.code === ErrorCode.RequestTimeout) {
        return new ToolError(`MCP server "${this.id}" did not answer within ${timeoutMs} ms (mcp.servers.${this.id}.timeout_ms or the call's timeout); the call was cancelled`);
      }
      // An answer over mcp.max_message_bytes: its error (oversized-message.ts) says all.
      if (err.code === MESSAGE_TOO_LARGE) return new ToolError(err.message.replace(/^MCP error -?\d+: /, ''));
      return new ToolError(`MCP server "${this.id}" refused the call: ${err.message}`);
    }
    return new ToolError(`MCP server "${this.id}" failed the call: ${(err as Error).message}`);
  }

  /** The connection closed: unexpected unless we are stopping or replaced it. */
  private closed(client: Client): void {
    if (this.client !== client || this.stopping) return;
    const status = this.transport instanceof ProcessTransport ? this.transport.exitStatus : undefined;
    this.fail(client, this.transportKind === 'stdio' ? `the server process exited${status ? ` (${status})` : ''}` : 'the connection closed');
  }

  private fail(client: Client, message: string): void {
    this.client = undefined;
    this.state = this.tools.length > 0 ? 'restarting' : 'failed';
    this.lastError = message;
    void client.close().catch(() => undefined);
    const delay = Math.min(this.settings.restart_max_ms, this.settings.restart_min_ms * 2 ** this.failures);
    this.failures++;
    this.logger.warn({ error: message, retry_in_ms: delay }, `MCP server "${this.id}": ${message}; starting it again in ${delay} ms`);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.restarts++;
      void this.start();
    }, delay);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    if (this.state !== 'disabled') this.state = 'stopped';
    await client?.close().catch(() => undefined);
    this.sandbox?.cleanup();
  }
}

function describeStartError(err: unknown, timeoutMs: number): string {
  if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
    return `the server did not answer initialize/tools/list within ${timeoutMs} ms (mcp.connect_timeout_ms)`;
  }
  if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed) return 'the server closed the connection during start-up';
  return `could not start: ${(err as Error).message}`;
}
