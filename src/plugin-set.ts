/**
 * The plugins a config asks for and the tool registry built from them: one
 * set per config. A reload builds the next set from the previous one: a
 * group whose config section is unchanged is carried over as it is (its
 * child processes and connections too), the others are created anew; the
 * groups no longer used are stopped once the calls running on them finish.
 */
import type { GatewayConfig } from './config/index.js';
import { ToolRegistry, type Engine, type Logger, type ToolPlugin } from './engine/index.js';
import { loadConfiguredPlugins } from './operator-plugins/load.js';
import { nativePlugins, workspacesOf, type Workspaces } from './tools/index.js';
import { A2APlugin, a2aPlugin } from './a2a/index.js';
import { McpPlugin } from './mcp/plugin.js';
import { OpenApiPlugin } from './openapi-source/plugin.js';

/** The plugin groups, each built from its own config sections. */
interface Groups {
  native: ToolPlugin[];
  a2a: ToolPlugin[];
  mcp: ToolPlugin[];
  openapi: ToolPlugin[];
  configured: ToolPlugin[];
  /** Given by the embedding code (createGateway's `plugins`); never re-created. */
  extra: ToolPlugin[];
}

/** The config each group is built from; a group is re-created when this changes. */
const SECTIONS: Record<Exclude<keyof Groups, 'extra'>, (c: GatewayConfig) => unknown> = {
  native: (c) => c.tools,
  a2a: (c) => [c.agents, c.a2a],
  // mcp.serve is the gateway's own MCP door, not the servers'; the workspace quota and the state directory are their data directories'.
  mcp: (c) => ({ ...c.mcp, serve: undefined, scratch: c.tools.fs.max_workspace_bytes, state_dir: c.server.state_dir }),
  // tools.http: the address rules and redirect limit the sources' requests follow.
  openapi: (c) => [c.openapi, c.tools.http],
  configured: (c) => c.plugins,
};

/** Told when a plugin's tools changed (an agent card arrived, an MCP server restarted). */
export type ToolsChanged = (plugin: ToolPlugin) => void;

export class PluginSet {
  /** Every plugin in registration order: native tool groups first (they win name clashes), then agents, MCP servers, OpenAPI sources, configured, extra. */
  readonly all: readonly ToolPlugin[];
  readonly registry: ToolRegistry;

  private constructor(
    private readonly groups: Groups,
    private readonly config: GatewayConfig,
    logger: Logger,
  ) {
    this.all = [
      ...groups.native,
      ...groups.a2a,
      ...groups.mcp,
      ...groups.openapi,
      ...groups.configured,
      ...groups.extra,
    ];
    this.registry = new ToolRegistry(this.all, logger);
  }

  /**
   * Build and start the plugins of `config` (reusing the unchanged groups of `previous`), then list their tools.
   * Throws the start-up error of the first plugin that fails, after stopping the ones it created.
   */
  static async start(
    config: GatewayConfig,
    logger: Logger,
    options: {
      extra?: readonly ToolPlugin[];
      previous?: PluginSet;
      toolsChanged: ToolsChanged;
      /** A principal's own workspace quota (security's quotaOf), for the native tools. */
      quotaOf?: (principal: string | null) => number | undefined;
      /** Where credentials' `*_env` are looked up (default: process.env). */
      env?: NodeJS.ProcessEnv;
    },
  ): Promise<PluginSet> {
    const { previous } = options;
    const same = (group: keyof typeof SECTIONS) =>
      previous !== undefined &&
      JSON.stringify(SECTIONS[group](previous.config)) === JSON.stringify(SECTIONS[group](config));
    const created: ToolPlugin[] = [];
    try {
      const build = async (group: keyof typeof SECTIONS, make: () => ToolPlugin[] | Promise<ToolPlugin[]>) => {
        if (same(group)) return previous!.groups[group];
        const plugins = await make();
        created.push(...plugins);
        return plugins;
      };
      const groups: Groups = {
        native: await build('native', () =>
          nativePlugins(config.tools, logger, options.env ?? process.env, options.quotaOf),
        ),
        a2a: await build('a2a', () => [a2aPlugin(config.agents, config.a2a, logger, options.env ?? process.env)]),
        mcp: await build('mcp', () => [
          new McpPlugin(
            config.mcp,
            logger,
            config.tools.fs.max_workspace_bytes,
            config.server.state_dir,
            options.env ?? process.env,
          ),
        ]),
        openapi: await build('openapi', () => [
          new OpenApiPlugin(config.openapi, config.tools.http, options.env ?? process.env, logger),
        ]),
        configured: await build('configured', () => loadConfiguredPlugins(config.plugins, logger)),
        extra: previous?.groups.extra ?? [...(options.extra ?? [])],
      };
      const set = new PluginSet(groups, config, logger);
      const fresh = previous ? created : set.all;
      await Promise.all(
        fresh.map(async (plugin) => {
          try {
            await plugin.start?.({
              logger: logger.child({ plugin: plugin.name }),
              toolsChanged: () => options.toolsChanged(plugin),
            });
          } catch (err) {
            throw new Error(`plugin "${plugin.name}" failed to start: ${(err as Error).message}`, { cause: err });
          }
        }),
      );
      set.registry.rebuild();
      return set;
    } catch (err) {
      if (previous) await Promise.allSettled(created.map((p) => p.stop?.()));
      throw err;
    }
  }

  has(plugin: ToolPlugin): boolean {
    return this.all.includes(plugin);
  }

  /** The plugins of this set that `next` does not carry over. */
  leftBehind(next: PluginSet): ToolPlugin[] {
    return this.all.filter((p) => !next.has(p));
  }

  get a2a(): A2APlugin | undefined {
    return this.all.find((p): p is A2APlugin => p instanceof A2APlugin);
  }

  /** The native tools' workspaces (GET /admin/workspaces), when the file tools or the shell are on. */
  get workspaces(): Workspaces | undefined {
    return workspacesOf(this.groups.native);
  }

  get mcp(): McpPlugin | undefined {
    return this.all.find((p): p is McpPlugin => p instanceof McpPlugin);
  }

  get openapi(): OpenApiPlugin | undefined {
    return this.all.find((p): p is OpenApiPlugin => p instanceof OpenApiPlugin);
  }

  /** Stop every plugin (gateway shutdown). */
  async stop(): Promise<void> {
    await Promise.allSettled(this.all.map((p) => p.stop?.()));
  }
}

/** Stop `plugins` once the calls running on their tools have settled (new calls no longer reach them). */
export async function retirePlugins(plugins: readonly ToolPlugin[], engine: Engine): Promise<void> {
  if (plugins.length === 0) return;
  const retired = new Set(plugins);
  const running = [...engine.runningCalls()].filter((call) => retired.has(call.tool.plugin)).map((call) => call.result);
  await Promise.allSettled(running);
  await Promise.allSettled(plugins.map((p) => p.stop?.()));
}
