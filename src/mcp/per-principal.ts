/**
 * A stdio MCP server run as one instance per principal (mcp.servers.<id>.per_principal): a stateful server (a memory
 * graph, a browser session) keeps each principal's state in a process and a data directory of its own. One instance
 * is started at gateway start only to list the tools (they are listed once, under the server's id) and stopped once
 * it has; a principal's instance starts on its first call, stops after `idle_s` without one, and at `max_instances`
 * the least recently used idle one makes room. Instances always run in the sandbox (a server that cannot be sandboxed
 * here fails to start, with why). To the plugin it looks like one server (the same fields and calls).
 */
import { join } from 'node:path';
import { ToolError, type Logger, type ToolContext } from '../engine/index.js';
import { workspaceDirName } from '../tools/fs/principal-dir.js';
import type { McpConfig, McpServerConfig } from './config.js';
import { McpServerConnection, type McpServerState, type McpTool } from './connection.js';
import { dataDirOf } from './sandbox.js';

interface Instance {
  conn: McpServerConnection;
  /** Resolves once it is ready (rejects when it could not start). */
  ready: Promise<McpServerConnection>;
  running: number;
  lastUsed: number;
  idle: NodeJS.Timeout | undefined;
}

/** Data directory of the instance that only lists the tools (never a principal's: those end in a digest). */
const LISTING_DIR = 'tool-listing';

export class PerPrincipalServer {
  private readonly lister: McpServerConnection;
  private readonly instances = new Map<string, Instance>();
  /** Where the principals' data directories are: the server's own data directory. */
  private readonly base: string;
  private stopping = false;

  constructor(
    readonly id: string,
    readonly config: McpServerConfig,
    private readonly settings: McpConfig,
    private readonly logger: Logger,
    private readonly toolsChanged: () => void,
    private readonly scratchBytes: number | null,
    private readonly stateDir: string,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.base = dataDirOf(id, config, stateDir);
    this.lister = this.connection(LISTING_DIR, logger, () => {
      toolsChanged();
      // Listed (again, after a failed start was retried): the process is not needed any more.
      if (this.lister.state === 'ready' && !this.stopping) void this.lister.stop();
    });
  }

  private connection(dir: string, logger: Logger, toolsChanged: () => void): McpServerConnection {
    // Always sandboxed: only the sandbox gives each instance a /workspace of its own (unconfined, they would share state).
    const config = { ...this.config, sandbox: true, data_dir: join(this.base, dir) };
    return new McpServerConnection(
      this.id,
      config,
      this.settings,
      logger,
      toolsChanged,
      this.scratchBytes,
      this.stateDir,
      this.env,
    );
  }

  // What GET /mcp-servers and the tool set read: the listing instance's, with the tools it found.
  get tools(): McpTool[] {
    return this.lister.tools;
  }
  get state(): McpServerState {
    return this.lister.state === 'stopped' && this.lister.tools.length > 0 && !this.stopping
      ? 'ready'
      : this.lister.state;
  }
  get lastError(): string | null {
    return this.lister.lastError;
  }
  get restarts(): number {
    return this.lister.restarts;
  }
  get lastStarted(): number | null {
    return this.lister.lastStarted;
  }
  get serverName(): string | null {
    return this.lister.serverName;
  }
  get sandboxed(): boolean {
    return this.lister.sandboxed;
  }
  get skipped(): { tool: string; reason: string }[] {
    return this.lister.skipped;
  }
  get transportKind(): 'stdio' {
    return 'stdio';
  }
  /** No credential: `auth` is for a server at a `url`, one per principal is a command. */
  secrets(): string[] {
    return [];
  }
  /** Not one process: each principal's has its own. */
  get pid(): null {
    return null;
  }
  /** How many principals' instances run now. */
  get running(): number {
    return this.instances.size;
  }

  async start(): Promise<void> {
    await this.lister.start();
    if (this.lister.state === 'ready') await this.lister.stop();
  }

  async refreshTools(): Promise<void> {
    // The listing instance is stopped once it listed; a running principal's instance lists the same tools.
    const any = [...this.instances.values()][0];
    if (any) await (await any.ready).refreshTools();
  }

  async call(
    tool: McpTool,
    args: Record<string, unknown>,
    ctx: ToolContext,
  ): Promise<Awaited<ReturnType<McpServerConnection['call']>>> {
    const inst = this.instanceFor(ctx.principal);
    inst.running++;
    clearTimeout(inst.idle);
    try {
      const conn = await inst.ready;
      return await conn.call(tool, args, ctx);
    } finally {
      inst.running--;
      inst.lastUsed = Date.now();
      if (inst.running === 0) this.stopWhenIdle(inst);
    }
  }

  /** The principal's instance, started if it is not running; another's idle one is stopped to make room at the cap. */
  private instanceFor(principal: string | null): Instance {
    const key = workspaceDirName(principal);
    const known = this.instances.get(key);
    if (known) {
      known.lastUsed = Date.now();
      return known;
    }
    if (this.instances.size >= this.config.max_instances) {
      const idle = [...this.instances.entries()]
        .filter(([, i]) => i.running === 0)
        .sort((a, b) => a[1].lastUsed - b[1].lastUsed)[0];
      if (!idle) {
        throw new ToolError(
          `MCP server "${this.id}" runs one instance per principal and all ${this.config.max_instances} (mcp.servers.${this.id}.max_instances) ` +
            'are busy with calls; retry in a few seconds, or ask the operator to raise max_instances',
          { data: { retryable: true, retry_after_s: 5 } },
        );
      }
      this.retire(idle[0], idle[1], 'least recently used, to make room');
    }
    const conn = this.connection(key, this.logger.child({ principal }), () => {});
    const ready = conn.start().then(() => {
      if (conn.state !== 'ready') {
        const why = conn.lastError ?? conn.state;
        this.retire(key, inst, 'could not start');
        throw new ToolError(`MCP server "${this.id}" could not start an instance for you (${why}); retry shortly`, {
          data: { retryable: true, retry_after_s: 5 },
        });
      }
      return conn;
    });
    ready.catch(() => {});
    const inst: Instance = { conn, ready, running: 0, lastUsed: Date.now(), idle: undefined };
    this.instances.set(key, inst);
    this.logger.info(
      { principal, instances: this.instances.size },
      `MCP server "${this.id}": started an instance for a principal`,
    );
    return inst;
  }

  private stopWhenIdle(inst: Instance): void {
    inst.idle = setTimeout(() => {
      for (const [key, i] of this.instances)
        if (i === inst && i.running === 0) this.retire(key, i, `idle for ${this.config.idle_s} s`);
    }, this.config.idle_s * 1000);
    inst.idle.unref();
  }

  private retire(key: string, inst: Instance, why: string): void {
    if (this.instances.get(key) !== inst) return;
    this.instances.delete(key);
    clearTimeout(inst.idle);
    this.logger.info(
      { instances: this.instances.size },
      `MCP server "${this.id}": stopped a principal's instance (${why})`,
    );
    void inst.conn.stop();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const all = [...this.instances.values()];
    this.instances.clear();
    for (const i of all) clearTimeout(i.idle);
    await Promise.all([this.lister.stop(), ...all.map((i) => i.conn.stop())]);
  }
}
