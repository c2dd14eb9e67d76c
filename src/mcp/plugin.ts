/**
 * The MCP plugin: every tool of every configured MCP server becomes a gateway
 * tool named `<server id>_<tool>`, kind "mcp". Servers start in parallel and
 * are isolated: one that fails is reported in GET /mcp-servers, retried with
 * backoff, and never stops or delays the gateway past `mcp.start_wait_ms`.
 */
import { ToolError, type Logger, type PluginHost, type ToolConflict, type ToolContext, type ToolPlugin } from '../engine/index.js';
import type { McpServerStatus, ToolDefinitionInput } from '../protocol/index.js';
import type { McpConfig } from './config.js';
// Types only: the connection module (the MCP SDK client) is loaded when a server is configured.
import type { McpServerConnection, McpTool } from './connection.js';

export const MCP_PLUGIN_NAME = 'mcp';

export class McpPlugin implements ToolPlugin {
  readonly name = MCP_PLUGIN_NAME;
  readonly dynamic = true;
  private servers: McpServerConnection[] = [];
  private manifest: ToolDefinitionInput[] = [];
  private byName = new Map<string, { tool: McpTool; server: McpServerConnection }>();
  /** Tools left out because an earlier-configured server offers the same name. */
  private clashes: { tool: string; server: string; kept: string }[] = [];
  private host: PluginHost | undefined;
  private logger: Logger;
  /** The `refresh_s` timers, one per server that has it. */
  private readonly refreshTimers: NodeJS.Timeout[] = [];

  constructor(
    private readonly settings: McpConfig,
    logger: Logger,
  ) {
    this.logger = logger;
  }

  listTools(): readonly ToolDefinitionInput[] {
    return this.manifest;
  }

  async start(host: PluginHost): Promise<void> {
    this.host = host;
    this.logger = host.logger;
    const configured = Object.entries(this.settings.servers);
    if (configured.length === 0) return;
    const { McpServerConnection } = await import('./connection.js');
    this.servers = configured.map(
      ([id, cfg]) => new McpServerConnection(id, cfg, this.settings, this.logger.child({ mcp_server: id }), () => this.rebuildManifest()),
    );
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
  private refreshEvery(server: McpServerConnection, seconds: number): void {
    let running = false;
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      server
        .refreshTools()
        .catch((err: unknown) => this.logger.warn({ mcp_server: server.id, error: (err as Error).message }, 'tool list refresh failed'))
        .finally(() => (running = false));
    }, seconds * 1000);
    timer.unref();
    this.refreshTimers.push(timer);
  }

  /** Merge the servers' tools in configuration order; an earlier server wins a name. */
  private rebuildManifest(): void {
    const byName = new Map<string, { tool: McpTool; server: McpServerConnection }>();
    const clashes: { tool: string; server: string; kept: string }[] = [];
    for (const server of this.servers) {
      for (const tool of server.tools) {
        const existing = byName.get(tool.name);
        if (existing) {
          clashes.push({ tool: tool.name, server: server.id, kept: existing.server.id });
          continue;
        }
        byName.set(tool.name, { tool, server });
      }
    }
    for (const c of clashes) {
      if (!this.clashes.some((o) => o.tool === c.tool && o.server === c.server)) {
        this.logger.warn(c, `tool "${c.tool}" of MCP server "${c.server}" skipped: server "${c.kept}" (configured earlier) already offers that name`);
      }
    }
    const manifest = [...byName.values()].map((t) => t.tool.definition);
    const changed = JSON.stringify(manifest) !== JSON.stringify(this.manifest);
    this.byName = byName;
    this.clashes = clashes;
    this.manifest = manifest;
    if (changed) this.host?.toolsChanged();
  }

  async executeTool(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> {
    const found = this.byName.get(name);
    if (!found) throw new ToolError(`tool "${name}" is no longer offered by its MCP server; POST /tool/list to see the current tools`);
    return found.server.call(found.tool, args, ctx);
  }

  /** Each server's state for GET /mcp-servers; `conflicts` are the registry's skipped tools (a native tool won). */
  status(conflicts: readonly ToolConflict[] = []): McpServerStatus[] {
    const lost = new Map(conflicts.filter((c) => c.skipped === this.name).map((c) => [c.tool, c.kept]));
    return this.servers.map((s) => {
      const owned = s.tools.filter((t) => this.byName.get(t.name)?.server === s);
      return {
        id: s.id,
        transport: s.transportKind,
        sandboxed: s.sandboxed,
        target: s.config.url !== undefined ? redactUrl(s.config.url) : s.config.command!,
        state: s.state,
        server_name: s.serverName,
        pid: s.pid,
        tools: owned.filter((t) => !lost.has(t.name)).map((t) => t.name),
        skipped: [
          ...this.clashes.filter((c) => c.server === s.id).map((c) => ({ tool: c.tool, reason: `MCP server "${c.kept}" (configured earlier) offers that name` })),
          ...owned.filter((t) => lost.has(t.name)).map((t) => ({ tool: t.name, reason: `plugin "${lost.get(t.name)!}" offers that name` })),
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
