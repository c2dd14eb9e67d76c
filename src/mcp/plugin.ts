/**
 * The MCP plugin: every tool of every configured MCP server becomes a gateway
 * tool named `<server id>_<tool>`, kind "mcp". Servers start in parallel and
 * are isolated: one that fails is reported in GET /mcp-servers, retried with
 * backoff, and never stops or delays the gateway past `mcp.start_wait_ms`.
 */
import type { Logger, PluginHost, ToolConflict, ToolContext, ToolPlugin } from '../engine/index.js';
import { RemoteToolSet } from '../engine/remote-tool-set.js';
import type { McpServerStatus, ToolDefinitionInput } from '../protocol/index.js';
import { scrubbedCall } from '../security/secret-scrub.js';
import type { McpConfig } from './config.js';
// Types only: the connection module (the MCP SDK client) is loaded when a server is configured.
import type { McpServerConnection, McpTool } from './connection.js';
import type { PerPrincipalServer } from './per-principal.js';

/** A configured server: one connection, or one instance per principal (per_principal). */
type McpSource = McpServerConnection | PerPrincipalServer;

export const MCP_PLUGIN_NAME = 'mcp';

export class McpPlugin implements ToolPlugin {
  readonly name = MCP_PLUGIN_NAME;
  readonly dynamic = true;
  private servers: McpSource[] = [];
  /** The servers' tools merged in configuration order: an earlier server wins a name. */
  private readonly tools = new RemoteToolSet<McpTool, McpSource>({
    noun: 'MCP server',
    onClash: (c) =>
      this.logger.warn(
        { tool: c.tool, server: c.source, kept: c.kept },
        `tool "${c.tool}" of MCP server "${c.source}" skipped: server "${c.kept}" (configured earlier) already offers that name`,
      ),
    onChange: () => this.host?.toolsChanged(),
  });
  private host: PluginHost | undefined;
  private logger: Logger;
  /** The `refresh_s` timers, one per server that has it. */
  private readonly refreshTimers: NodeJS.Timeout[] = [];

  constructor(
    private readonly settings: McpConfig,
    logger: Logger,
    /** Quota of a sandboxed server's data directory, bytes (tools.fs.max_workspace_bytes); null for none. */
    private readonly scratchBytes: number | null = null,
    /** server.state_dir, where sandboxed servers' data directories are by default. */
    private readonly stateDir = './state',
    /** Where the servers' `auth` `*_env` are looked up. */
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.logger = logger;
  }

  listTools(): readonly ToolDefinitionInput[] {
    return this.tools.definitions;
  }

  async start(host: PluginHost): Promise<void> {
    this.host = host;
    this.logger = host.logger;
    const configured = Object.entries(this.settings.servers);
    if (configured.length === 0) return;
    const { McpServerConnection } = await import('./connection.js');
    const { PerPrincipalServer } = await import('./per-principal.js');
    this.servers = configured.map(([id, cfg]) => {
      const Source = cfg.per_principal ? PerPrincipalServer : McpServerConnection;
      return new Source(
        id,
        cfg,
        this.settings,
        this.logger.child({ mcp_server: id }),
        () => this.tools.rebuild(this.servers),
        this.scratchBytes,
        this.stateDir,
        this.env,
      );
    });
    const enabled = this.servers.filter((s) => s.config.enabled);
    if (enabled.length === 0) return;
    for (const s of enabled) if (s.config.refresh_s !== undefined) this.refreshEvery(s, s.config.refresh_s);
    const starting = Promise.all(enabled.map((s) => s.start()));
    // Wait a little for the servers, never long: one that comes up later joins then.
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([starting, new Promise<void>((r) => (bound = setTimeout(r, this.settings.start_wait_ms)))]);
    clearTimeout(bound);
  }

  /** Re-list a server's tools every `seconds` (mcp.servers.<id>.refresh_s), one re-list at a time. */
  private refreshEvery(server: McpSource, seconds: number): void {
    let running = false;
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      server
        .refreshTools()
        .catch((err: unknown) =>
          this.logger.warn({ mcp_server: server.id, error: (err as Error).message }, 'tool list refresh failed'),
        )
        .finally(() => (running = false));
    }, seconds * 1000);
    timer.unref();
    this.refreshTimers.push(timer);
  }

  async executeTool(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> {
    const { tool, source } = this.tools.lookup(name);
    // A server may echo the credential the gateway sent it: the caller gets it redacted.
    return scrubbedCall(
      () => source.secrets(),
      ctx,
      (ctx) => source.call(tool, args, ctx),
    );
  }

  /** Each server's state for GET /mcp-servers; `conflicts` are the registry's skipped tools (a native tool won). */
  status(conflicts: readonly ToolConflict[] = []): McpServerStatus[] {
    return this.servers.map((s) => {
      const { tools, clashes, lost } = this.tools.contribution(s, conflicts, this.name);
      return {
        id: s.id,
        transport: s.transportKind,
        sandboxed: s.sandboxed,
        target: s.config.url !== undefined ? redactUrl(s.config.url) : s.config.command!,
        state: s.state,
        server_name: s.serverName,
        pid: s.pid,
        tools,
        skipped: [
          ...clashes.map((c) => ({
            tool: c.tool,
            reason: `MCP server "${c.kept}" (configured earlier) offers that name`,
          })),
          ...lost.map((l) => ({ tool: l.tool, reason: `plugin "${l.kept}" offers that name` })),
          ...s.skipped,
        ],
        restarts: s.restarts,
        last_error: s.lastError,
        last_started: s.lastStarted === null ? null : new Date(s.lastStarted).toISOString(),
      };
    });
  }

  async stop(): Promise<void> {
    for (const t of this.refreshTimers) clearInterval(t);
    await Promise.all(this.servers.map((s) => s.stop()));
  }
}

/** A URL without user:password (never shown or logged). */
function redactUrl(url: string): string {
  const u = new URL(url);
  if (!u.username && !u.password) return url;
  u.username = '';
  u.password = '';
  return u.href;
}
