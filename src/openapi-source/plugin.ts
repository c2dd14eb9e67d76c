/**
 * The OpenAPI plugin: every selected operation of every configured OpenAPI
 * document becomes a tool named `<source id>_<operationId>`, kind "openapi".
 * Sources load in parallel and are isolated: one whose document fails to load
 * is reported in GET /sources and retried, and never stops the others or
 * delays the gateway past `openapi.start_wait_ms`.
 */
import type { Agent } from 'undici';
import type { Logger, PluginHost, ToolContext, ToolPlugin } from '../engine/index.js';
import { RemoteToolSet } from '../engine/remote-tool-set.js';
import type { OpenApiSourceStatus, ToolDefinitionInput } from '../protocol/index.js';
import { AddressPolicy } from '../tools/http/address.js';
import type { HttpConfig } from '../tools/http/config.js';
import type { OpenApiConfig } from './config.js';
import type { OpenApiSource } from './source.js';
import type { OperationTool } from './tool-definition.js';

export const OPENAPI_PLUGIN_NAME = 'openapi';

export class OpenApiPlugin implements ToolPlugin {
  readonly name = OPENAPI_PLUGIN_NAME;
  readonly dynamic = true;
  private sources: OpenApiSource[] = [];
  private readonly agents: Agent[] = [];
  private readonly tools = new RemoteToolSet<OperationTool, OpenApiSource>({
    noun: 'OpenAPI source',
    onClash: (c) =>
      this.logger.warn(
        { tool: c.tool, openapi_source: c.source, kept: c.kept },
        `tool "${c.tool}" of OpenAPI source "${c.source}" skipped: source "${c.kept}" (configured earlier) already offers that name`,
      ),
    onChange: () => this.host?.toolsChanged(),
  });
  private host: PluginHost | undefined;

  constructor(
    private readonly settings: OpenApiConfig,
    /** tools.http: its address rules (for sources without allow_private) and max_redirects. */
    private readonly http: HttpConfig,
    private readonly env: NodeJS.ProcessEnv,
    private logger: Logger,
  ) {}

  listTools(): readonly ToolDefinitionInput[] {
    return this.tools.definitions;
  }

  async start(host: PluginHost): Promise<void> {
    this.host = host;
    this.logger = host.logger;
    const configured = Object.entries(this.settings.sources);
    if (configured.length === 0) return;
    // Loaded only when a source is configured (undici, the dereferencer, the YAML parser).
    const [{ OpenApiSource }, { createGuardedAgent }] = await Promise.all([
      import('./source.js'),
      import('../tools/http/dispatcher.js'),
    ]);
    const guarded = createGuardedAgent(new AddressPolicy(this.http));
    const open = createGuardedAgent(new AddressPolicy({ allow_hosts: [], allow_private: true }));
    this.agents.push(guarded, open);
    this.sources = configured.map(
      ([id, cfg]) =>
        new OpenApiSource(id, cfg, {
          dispatcher: cfg.allow_private ? open : guarded,
          env: this.env,
          maxSpecBytes: this.settings.max_spec_bytes,
          maxRedirects: this.http.max_redirects,
          logger: this.logger,
          changed: () => this.tools.rebuild(this.sources.filter((s) => s.state !== 'failed')),
        }),
    );
    const loading = Promise.all(this.sources.map((s) => s.start()));
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([loading, new Promise<void>((r) => (bound = setTimeout(r, this.settings.start_wait_ms)))]);
    clearTimeout(bound);
  }

  executeTool(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> {
    const { tool, source } = this.tools.lookup(name);
    return source.call(tool, args, ctx);
  }

  /** Each source's state, in configuration order. */
  status(): OpenApiSourceStatus[] {
    return this.sources.map((s) => s.status());
  }

  async stop(): Promise<void> {
    for (const s of this.sources) s.stop();
    await Promise.allSettled(this.agents.map((a) => a.destroy()));
  }
}
