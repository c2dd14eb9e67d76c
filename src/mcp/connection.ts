/**
 * One configured MCP server, kept connected: spawn (stdio) or reach (Streamable
 * HTTP), initialize, list its tools, call them. Supervised: when the process
 * exits or the connection drops, calls in flight fail saying so and the server
 * is started again with backoff; one that never comes up is retried the same
 * way and never holds up the gateway or other servers.
 *
 * Over HTTP the session is the server's: one that restarted no longer knows
 * it and answers 404 (the spec's "initialize again"; some answer 400 naming
 * the session). The connection then initializes again at once, and a call
 * refused that way (it never ran) is sent once more on the new session. A
 * request that cannot reach the server, or an event stream that breaks, is a
 * lost connection: calls in flight fail at once, and it is reconnected with
 * backoff (see http-fetch.ts).
 */
import { basename } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { ToolError, compileJsonSchema, type Logger, type ToolContext } from '../engine/index.js';
import type { ToolDefinitionInput } from '../protocol/index.js';
import { toolNamePart } from '../wire/tool-name.js';
import { HINT_TAGS } from '../wire/mcp-hints.js';
import type { McpConfig, McpServerConfig } from './config.js';
import { parametersFromSchema } from './schema.js';
import { eventPacing, mcpFetchFor, mcpPool, withCredential } from './http-fetch.js';
import { Credential, scrub } from '../security/credential.js';
import { scrubValue } from '../security/secret-scrub.js';
import { readBounded } from '../security/dispatcher-fetch.js';
import { sandboxAvailable, sandboxedCommand, type SandboxedCommand } from './sandbox.js';
import { ScratchQuota } from './scratch.js';
import { StderrTail } from './stderr-tail.js';
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

/** How often a sandboxed server's data directory is measured against its quota, ms; and this long after calls. */
const SCRATCH_CHECK_MS = 10_000;
const SCRATCH_AFTER_CALL_MS = 1000;

/** How long a connection replaced for a lost session waits for its requests' own refusals before it is closed, ms. */
const RETIRE_GRACE_MS = 3000;

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
  /**
   * Connections the server gave a session: only for them is a 404 a lost session. A stateless server (no
   * Mcp-Session-Id) may answer 404 to the GET stream it does not serve; that is no reason to initialize again.
   */
  private readonly withSession = new WeakSet<Client>();
  /** Progress handlers of the calls in flight, by the progress token each call sent. */
  private readonly progress = new Map<string, (p: { progress: number; total?: number; message?: string }) => void>();
  private progressSeq = 0;
  /** Calls waiting for the server to be back after it lost their session: told on each start's outcome. */
  private readonly startWaiters = new Set<() => void>();
  /** A new session is being initialized because the server lost ours: calls wait for it instead of failing. */
  private reinitializing = false;
  /** Requests in flight per connection: one replaced for a lost session is closed once they are answered. */
  private readonly inFlight = new WeakMap<Client, number>();
  /** Connections replaced for a lost session (and why), closed when their last request is answered. */
  private readonly retired = new WeakMap<Client, string>();
  /** The sandbox of a stdio server that runs in one (made once; its data directory stays). */
  private sandbox: SandboxedCommand | undefined;
  /** Whether this stdio server runs in the sandbox (decided at its first start). */
  sandboxed = false;
  /** The sandbox's data directory against its quota, measured after calls, every SCRATCH_CHECK_MS and before each start. */
  private scratch: ScratchQuota | undefined;
  private scratchTimer: NodeJS.Timeout | undefined;
  private scratchSoon: NodeJS.Timeout | undefined;
  /** The last client's close (its process stopping), awaited at stop. */
  private closing: Promise<void> = Promise.resolve();
  /** Rejected calls' names that were skipped: invalid schema or not in the allow list. */
  skipped: { tool: string; reason: string }[] = [];
  /** What a stdio server last wrote to stderr during this start, for the error when it does not come up. */
  private readonly stderrTail: StderrTail;
  /** The credential of a server at a `url` with `auth` (made at each start). */
  private credential: Credential | null = null;

  constructor(
    readonly id: string,
    readonly config: McpServerConfig,
    private readonly settings: McpConfig,
    /** Bound to `mcp_server: id` (its lines name the server without repeating it). */
    private readonly logger: Logger,
    private readonly toolsChanged: () => void,
    /** Quota of the data directory of a sandboxed server, bytes; null for none. */
    private readonly scratchBytes: number | null = null,
    /** server.state_dir: a sandboxed server's data directory is `mcp/<id>` in it unless `data_dir` is set. */
    private readonly stateDir = './state',
    /** Where `auth`'s `*_env` are looked up. */
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.state = config.enabled ? 'starting' : 'disabled';
    this.stderrTail = new StderrTail(Object.values(config.env));
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
    this.stderrTail.clear();
    const client = new Client({ name: 'a2e-gateway', version: '1' }, { capabilities: {} });
    let transport: Transport;
    try {
      transport = await this.makeTransport(client);
    } catch (err) {
      this.client = client;
      this.fail(client, (err as Error).message);
      return;
    }
    this.client = client;
    this.transport = transport;
    client.onerror = (err) => {
      // A request refused for the session: the server restarted. Acted on after the request's own rejection has
      // reached its caller (a call sends itself again; closing the client first would fail it as a lost connection).
      if (isSessionGone(err) && this.withSession.has(client)) setImmediate(() => this.sessionGone(client, err));
      else this.logger.warn({ error: err.message }, `MCP server "${this.id}": ${err.message}`);
    };
    client.onclose = () => this.closed(client);
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      void this.loadTools(client).catch((err: unknown) =>
        this.logger.warn({ error: (err as Error).message }, 'tool list refresh failed'),
      );
    });
    try {
      await client.connect(transport, { timeout: this.settings.connect_timeout_ms });
      if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined)
        this.withSession.add(client);
      this.hearCallNotifications(transport);
      this.serverName = client.getServerVersion()?.name ?? null;
      await this.loadTools(client);
      if (this.client !== client) return;
      this.state = 'ready';
      this.lastError = null;
      this.failures = 0;
      this.logger.info(
        { tools: this.tools.map((t) => t.name), pid: this.pid },
        `MCP server "${this.id}" offers ${this.tools.length} tool(s)`,
      );
      this.startEnded();
    } catch (err) {
      if (this.client !== client || this.stopping) return;
      this.fail(client, this.withStderr(describeStartError(err, this.settings.connect_timeout_ms)));
    }
  }

  /**
   * A call's progress and log notifications are handled as they arrive, in order with its response. The SDK
   * client hands notifications to their handlers a microtask later but settles a response at once, so a
   * server's last notification before its answer (progress 100 of 100, "done") reached the call after it had
   * ended, and was lost. So they are taken off the transport here, before the SDK sees them.
   */
  private hearCallNotifications(transport: Transport): void {
    const sdk = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const method = (message as { method?: unknown }).method;
      const params = (message as { params?: Record<string, unknown> }).params;
      if (method === 'notifications/progress' && params) {
        this.progress.get(params.progressToken as string)?.(
          params as { progress: number; total?: number; message?: string },
        );
        return;
      }
      if (method === 'notifications/message' && params) {
        const { level, data } = params;
        const text = typeof data === 'string' ? data : JSON.stringify(data);
        // MCP log messages name no request: every call running on this server hears them.
        for (const ctx of this.running) ctx.emit('log', { level: String(level), message: text });
        return;
      }
      sdk?.(message, extra);
    };
  }

  private async makeTransport(client: Client): Promise<Transport> {
    const c = this.config;
    if (c.url !== undefined) {
      const bounded = mcpFetchFor({ maxBytes: this.settings.max_message_bytes, serverId: this.id }, (reason) =>
        this.connectionLost(client, reason),
      );
      // An unset variable fails this start (reported as the server's last_error, naming the variable).
      const credential = c.auth
        ? new Credential(c.auth, this.env, (url, init, max) => readBounded(mcpPool(), new URL(url), max, init))
        : null;
      this.credential = credential;
      const fetch = credential ? withCredential(bounded, credential, new URL(c.url).origin) : bounded;
      // With tracing on, each POST carries the active span's traceparent (the MCP call's client span).
      return new StreamableHTTPClientTransport(new URL(c.url), {
        requestInit: { headers: c.headers },
        fetch: tracingOn ? tracedFetchOf(fetch) : fetch,
      });
    }
    const limits = { maxMessageBytes: this.settings.max_message_bytes, serverId: this.id };
    const onStderr = (line: string) => {
      this.stderrTail.push(line);
      this.logger.info({ stderr: line }, `MCP server "${this.id}" stderr`);
    };
    if (c.sandbox !== false) {
      if (!this.sandbox) {
        const unavailable = await sandboxAvailable((names) =>
          this.logger.info(
            { removed: names },
            `removed ${names.length} scratch folder(s) that gateways no longer running left behind`,
          ),
        );
        if (unavailable && c.sandbox === true) throw new Error(`sandbox: true, but ${unavailable}`);
        if (unavailable) {
          this.logger.warn(
            { reason: unavailable },
            `MCP server "${this.id}" runs unconfined: ${unavailable} (set sandbox: false to silence this)`,
          );
        } else {
          this.sandbox = sandboxedCommand(
            this.id,
            c,
            { PATH: process.env.PATH ?? '' },
            this.scratchBytes,
            this.stateDir,
          );
          this.sandboxed = true;
          if (this.scratchBytes !== null) this.watchScratch(new ScratchQuota(this.sandbox.dataDir, this.scratchBytes));
          const { mounts, rwMounts, dataDir } = this.sandbox;
          this.logger.info(
            { mounts, rw_mounts: rwMounts, data_dir: dataDir, network: c.network },
            `MCP server "${this.id}" runs in the sandbox`,
          );
        }
      }
      if (this.sandbox) {
        // A data directory over its quota is not written more: the server waits (retried with backoff) until it is not.
        const used = this.scratch && (await this.scratch.over());
        if (used) throw new Error(this.overQuota(used, 'the server is not started until it holds less'));
        // bwrap gets an empty environment; the server's own is set inside the sandbox.
        return new ProcessTransport({
          file: this.sandbox.file,
          args: this.sandbox.args,
          env: {},
          diesWithParent: true,
          onStderr,
          ...limits,
        });
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
    // A server that echoes its credential into a description shows it redacted.
    for (const tool of scrubValue(listed, this.secrets())) {
      if (allow && !allow.has(tool.name)) continue;
      try {
        tools.push(this.mapTool(tool));
      } catch (err) {
        skipped.push({ tool: tool.name, reason: (err as Error).message });
        this.logger.warn(
          { tool: tool.name, error: (err as Error).message },
          `tool "${tool.name}" of MCP server "${this.id}" left out: ${(err as Error).message}`,
        );
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
    const name = `${toolNamePart(this.id)}_${toolNamePart(tool.name)}`;
    const title = tool.title ?? hints.title;
    return {
      name,
      remoteName: tool.name,
      definition: {
        name,
        description: tool.description || title || `Tool "${tool.name}" of the MCP server "${this.id}"`,
        input_parameters: parametersFromSchema(schema),
        input_schema: schema,
        ...(described(tool) ? { mcp: described(tool) } : {}),
        streaming: true,
        idempotent: hints.idempotentHint === true,
        tags: [...tags],
        toolkit: this.id,
        kind: 'mcp',
      },
    };
  }

  /** The secret values its credential holds (scrubbed from whatever the server answers). */
  secrets(): string[] {
    return this.credential?.secrets() ?? [];
  }

  /** Call one tool of this server. */
  async call(
    tool: McpTool,
    args: Record<string, unknown>,
    ctx: ToolContext,
  ): Promise<{ text: string; content: CallToolResult['content']; structuredContent?: unknown }> {
    let client = this.client;
    // The server lost our session a moment ago and a new one is being initialized: wait for it.
    if ((!client || this.state !== 'ready') && this.reinitializing) client = await this.restarted(undefined, ctx);
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
    // Our own progress token (see hearCallNotifications), not the SDK's onprogress.
    const progressToken = `a2e-${++this.progressSeq}`;
    this.progress.set(progressToken, ({ progress, total, message }) => {
      const pct = total ? Math.max(0, Math.min(100, Math.round((progress / total) * 100))) : 0;
      ctx.emit('progress', {
        pct,
        message: message ?? `${progress}${total ? ` of ${total}` : ''}`,
        progress,
        ...(total === undefined ? {} : { total }),
      });
    });
    const request = (client: Client) =>
      client.callTool({ name: tool.remoteName, arguments: args, _meta: { progressToken } }, undefined, {
        signal: inFlight.signal,
        timeout,
      });
    // Over HTTP each request is counted on its connection (one replaced for a lost session waits for them).
    const invoke =
      this.transportKind === 'http' ? (client: Client) => this.counted(client, () => request(client)) : request;
    // Over HTTP the call's SSE answer is read only as fast as the caller takes its events (see http-fetch.ts). Over
    // stdio it cannot be: one pipe carries every call's messages, and holding it for one slow reader would hold all.
    const paced =
      ctx.streaming && this.transportKind === 'http'
        ? (c: Client) =>
            eventPacing.run(
              () => ctx.eventsTaken(),
              () => invoke(c),
            )
        : invoke;
    // Refused because the server lost the session: it never ran, so it is sent again once the server is initialized again.
    let used = client;
    const send = async () => {
      try {
        return await paced(used);
      } catch (err) {
        if (ctx.signal.aborted || !this.sessionGone(used, err)) throw err;
        used = await this.restarted(used, ctx);
        return paced(used);
      }
    };
    const span = tracingOn ? this.callSpan(tool) : undefined;
    try {
      result = (await (span ? span.run(send) : send())) as CallToolResult;
      if (result.isError) span?.fail({ name: 'tool_error' });
    } catch (err) {
      span?.fail(err);
      if (ctx.signal.aborted) throw ctx.signal.reason;
      throw err instanceof ToolError ? err : this.callError(err, timeout, used);
    } finally {
      ctx.signal.removeEventListener('abort', forward);
      span?.end();
      this.running.delete(ctx);
      this.progress.delete(progressToken);
      // The call may have written there: measured within a second (one walk for a burst of calls).
      if (this.scratch)
        this.scratchSoon ??= setTimeout(
          () => ((this.scratchSoon = undefined), this.checkScratch()),
          SCRATCH_AFTER_CALL_MS,
        );
    }
    const content = result.content ?? [];
    const text = content
      .filter((c): c is { type: 'text'; text: string } => c.type === 'text')
      .map((c) => c.text)
      .join('\n');
    const data = {
      text,
      content,
      ...(result.structuredContent === undefined ? {} : { structuredContent: result.structuredContent }),
    };
    if (result.isError)
      throw new ToolError(text || `tool "${tool.remoteName}" of MCP server "${this.id}" reported an error`, { data });
    return data;
  }

  /** The client span of one tools/call (MCP semantic conventions): the server and tool, never the arguments. */
  private callSpan(tool: McpTool) {
    return startClientSpan(`tools/call ${tool.remoteName}`, () => ({
      'mcp.method.name': 'tools/call',
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': tool.remoteName,
      'a2e.mcp.server': this.id,
      'network.transport': this.transportKind === 'stdio' ? 'pipe' : 'tcp',
      ...(this.config.url === undefined ? {} : serverAttributes(new URL(this.config.url))),
    }));
  }

  private callError(err: unknown, timeoutMs: number, client: Client): ToolError {
    const retired = this.retired.get(client);
    if (retired !== undefined && isConnectionClosed(err)) {
      // The server was running it in the session it lost: its answer will never come.
      return new ToolError(
        `MCP server "${this.id}" was lost while the call ran (${retired}, and it never answered the call); retry the call`,
      );
    }
    if (
      this.transportKind === 'http' &&
      (isConnectionClosed(err) || (!(err instanceof McpError) && this.state !== 'ready'))
    ) {
      // The connection was lost under the call (lastError says how); it may or may not have run.
      return new ToolError(
        `MCP server "${this.id}" was lost while the call ran (${this.lastError ?? 'the connection closed'}); it is being reconnected, retry the call`,
      );
    }
    if (err instanceof McpError) {
      if (err.code === ErrorCode.ConnectionClosed) {
        const status = this.transport instanceof ProcessTransport ? this.transport.exitStatus : undefined;
        return new ToolError(
          `MCP server "${this.id}" went away while the call ran${status ? ` (${status})` : ''}; it is being restarted, retry the call`,
        );
      }
      if (err.code === ErrorCode.RequestTimeout) {
        return new ToolError(
          `MCP server "${this.id}" did not answer within ${timeoutMs} ms (mcp.servers.${this.id}.timeout_ms or the call's timeout); the call was cancelled`,
        );
      }
      // An answer over mcp.max_message_bytes: its error (oversized-message.ts) says all.
      if (err.code === MESSAGE_TOO_LARGE) return new ToolError(err.message.replace(/^MCP error -?\d+: /, ''));
      return new ToolError(`MCP server "${this.id}" refused the call: ${capped(err.message)}`);
    }
    return new ToolError(`MCP server "${this.id}" failed the call: ${capped((err as Error).message)}`);
  }

  /**
   * Whether `err` says the server no longer knows our session (404, or a 400 that names the session). If so,
   * and `client` is still the connection in use, it is replaced at once: the spec's answer is to initialize again.
   */
  private sessionGone(client: Client, err: unknown): boolean {
    if (!isSessionGone(err) || !this.withSession.has(client)) return false;
    if (this.client === client && !this.stopping) {
      // Its other requests are answered 404 too and sent again on the new session: close it once they are. One
      // not refused by then is one the server was running in the lost session: its answer will never come.
      const why = `the server no longer knew the session (HTTP ${err.code})`;
      this.retired.set(client, why);
      setTimeout(() => void client.close().catch(() => undefined), RETIRE_GRACE_MS).unref();
      this.reinitializing = true;
      this.fail(client, `${why}; initializing again`, 0);
    }
    return true;
  }

  /** The server could not be reached or its event stream broke: fail what waits on it, reconnect with backoff. */
  private connectionLost(client: Client, reason: string): void {
    if (this.retired.has(client)) void client.close().catch(() => undefined); // its streams broke: nothing more will come
    if (this.client !== client || this.stopping) return;
    this.fail(client, `the connection was lost: ${reason}`);
  }

  /** Run one request on `client`, counted; a retired client is closed after its last one. */
  private async counted<T>(client: Client, request: () => Promise<T>): Promise<T> {
    this.inFlight.set(client, (this.inFlight.get(client) ?? 0) + 1);
    try {
      return await request();
    } finally {
      const left = this.inFlight.get(client)! - 1;
      this.inFlight.set(client, left);
      if (left === 0 && this.retired.has(client)) void client.close().catch(() => undefined);
    }
  }

  /** The connection that replaced `old` once it is ready; a ToolError when the next start fails or the call's time runs out. */
  private async restarted(old: Client | undefined, ctx: ToolContext): Promise<Client> {
    const until = Math.min(ctx.deadline, Date.now() + this.settings.connect_timeout_ms);
    for (let waited = false; ; waited = true) {
      if (this.client !== undefined && this.client !== old && this.state === 'ready') return this.client;
      if (ctx.signal.aborted) throw ctx.signal.reason;
      if (waited || Date.now() >= until) {
        throw new ToolError(
          `MCP server "${this.id}" lost the call's session and is not back yet (${this.lastError ?? 'still starting'}); retry the call shortly`,
        );
      }
      // Woken by the next start's outcome (ready or failed), the call's end, or the time limit.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, until - Date.now());
        ctx.signal.addEventListener('abort', done, { once: true });
        this.startWaiters.add(done);
        const waiters = this.startWaiters;
        function done() {
          clearTimeout(timer);
          ctx.signal.removeEventListener('abort', done);
          waiters.delete(done);
          resolve();
        }
      });
    }
  }

  /** A start succeeded or failed: wake the calls waiting for it. */
  private startEnded(): void {
    this.reinitializing = false;
    for (const wake of this.startWaiters) wake();
  }

  private watchScratch(scratch: ScratchQuota): void {
    this.scratch = scratch;
    this.scratchTimer = setInterval(() => this.checkScratch(), SCRATCH_CHECK_MS);
    this.scratchTimer.unref();
  }

  /**
   * Measure the data directory; over its quota, stop the server. Nothing in it is removed (it is the server's
   * persistent data): the server starts again once it holds less.
   */
  private checkScratch(): void {
    void this.scratch!.over().then(
      (used) => {
        const client = this.client;
        if (used === null || !client || this.stopping) return;
        this.fail(client, this.overQuota(used, 'the server was stopped and starts again once it holds less'));
      },
      (err: unknown) =>
        this.logger.warn(
          { error: (err as Error).message },
          `MCP server "${this.id}": its data directory could not be measured`,
        ),
    );
  }

  private overQuota(used: number, outcome: string): string {
    return (
      `its data directory (/workspace in its sandbox, mcp.servers.${this.id}.data_dir) holds ${used} bytes, over its quota of ` +
      `${this.scratch!.limit} bytes (tools.fs.max_workspace_bytes); ${outcome}: remove files from it or raise the quota`
    );
  }

  /** The connection closed: unexpected unless we are stopping or replaced it. */
  private closed(client: Client): void {
    if (this.client !== client || this.stopping) return;
    const status = this.transport instanceof ProcessTransport ? this.transport.exitStatus : undefined;
    this.fail(
      client,
      this.transportKind === 'stdio'
        ? this.withStderr(`the server process exited${status ? ` (${status})` : ''}`)
        : 'the connection closed',
    );
  }

  /**
   * `message` with what the server last wrote to stderr and, for npx in a sandbox without network (which waits on a
   * download that cannot happen), how to fix that: what a newcomer needs when a server does not come up.
   */
  private withStderr(message: string): string {
    const npx = this.sandboxed && !this.config.network && basename(this.config.command ?? '') === 'npx';
    const hint = npx
      ? `; its command is npx, which downloads the package first, and the sandbox has no network: set mcp.servers.${this.id}.network: true, ` +
        'or install the package (npm install) and give the path of its bin as command'
      : '';
    return message + hint + this.stderrTail.describe();
  }

  /** `client` failed: close it, report why, start again after `delay` ms (by default the backoff's next). */
  private fail(
    client: Client,
    message: string,
    delay = Math.min(this.settings.restart_max_ms, this.settings.restart_min_ms * 2 ** this.failures),
  ): void {
    const wasReady = this.client === client && this.state === 'ready';
    this.client = undefined;
    this.state = this.tools.length > 0 ? 'restarting' : 'failed';
    message = scrub(message, this.secrets());
    this.lastError = message;
    // A connection retired for a lost session is closed once its requests are answered (see counted).
    if (!this.retired.has(client) || (this.inFlight.get(client) ?? 0) === 0)
      this.closing = client.close().catch(() => undefined);
    // A failed start ends the wait of calls that hoped for it; losing a ready connection starts that wait.
    if (!wasReady) this.startEnded();
    this.failures++;
    this.logger.warn(
      { error: message, retry_in_ms: delay },
      `MCP server "${this.id}": ${message}; starting it again in ${delay} ms`,
    );
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
    clearInterval(this.scratchTimer);
    clearTimeout(this.scratchSoon);
    const client = this.client;
    this.client = undefined;
    if (this.state !== 'disabled') this.state = 'stopped';
    await client?.close().catch(() => undefined);
    await this.closing;
    await this.scratch?.close();
  }
}

/** What the server said of a tool beyond its name, description and input schema, as it said it (re-served at /mcp). */
function described(tool: Tool): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const key of ['title', 'annotations', 'outputSchema', 'icons', '_meta'] as const)
    if (tool[key] !== undefined) out[key] = tool[key];
  return Object.keys(out).length > 0 ? out : undefined;
}

/** A message from the server (an HTTP error's body is in it) as much as an error should say. */
const capped = (message: string) => (message.length > 1000 ? `${message.slice(0, 1000)}…` : message);

/** The server refused a request for its session: 404 (the spec), or a 400 that names the session (some servers). */
const isSessionGone = (err: unknown): err is StreamableHTTPError =>
  err instanceof StreamableHTTPError && (err.code === 404 || (err.code === 400 && /session/i.test(err.message)));

const isConnectionClosed = (err: unknown) => err instanceof McpError && err.code === ErrorCode.ConnectionClosed;

function describeStartError(err: unknown, timeoutMs: number): string {
  if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
    return `the server did not answer initialize/tools/list within ${timeoutMs} ms (mcp.connect_timeout_ms)`;
  }
  if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed)
    return 'the server closed the connection during start-up';
  return `could not start: ${(err as Error).message}`;
}
