/**
 * The tool registry: merges the plugins' manifests into one name → tool map,
 * compiles each tool's argument validator once, and keeps the search index.
 */
import { ToolDefinition } from '../protocol/index.js';
import { compileArguments, type ArgumentValidator } from './arguments.js';
import { compileJsonSchema } from './json-schema.js';
import { toolLineMembers } from './line-members.js';
import type { Logger, ToolPlugin } from './plugin.js';
import { ToolSearchIndex, fuseRankings } from './search.js';
import { similarNames } from '../utils/similar.js';

export interface RegisteredTool {
  readonly definition: ToolDefinition;
  readonly plugin: ToolPlugin;
  readonly validate: ArgumentValidator;
  /** `,"tool":…,"kind":…`: the tool's part of each of its calls' outcome lines, as JSON members (call-line.ts). */
  readonly lineMembers: string;
}

/** A tool its plugin cannot offer on this host (ToolPlugin.unavailableTools), and why. */
export interface UnavailableEntry {
  readonly definition: ToolDefinition;
  readonly reason: string;
}

/** A tool left out because an earlier plugin already offers its name. */
export interface ToolConflict {
  tool: string;
  kept: string;
  skipped: string;
}

export class ToolRegistry {
  private readonly plugins: readonly ToolPlugin[];
  private readonly logger: Logger;
  private byName = new Map<string, RegisteredTool>();
  private ordered: RegisteredTool[] = [];
  private searchIndex = new ToolSearchIndex([]);
  private skipped: ToolConflict[] = [];
  private checking: RegisteredTool[] = [];
  private missing = new Map<string, UnavailableEntry>();

  constructor(plugins: readonly ToolPlugin[], logger: Logger) {
    this.plugins = plugins;
    this.logger = logger;
  }

  /**
   * Re-read every plugin's manifest. Within static plugins a duplicate name
   * is a configuration error (thrown); a dynamic plugin's clashing tool is
   * skipped, logged and reported in `conflicts`, so a remote peer can never
   * shadow a local tool.
   */
  rebuild(): void {
    const byName = new Map<string, RegisteredTool>();
    const ordered: RegisteredTool[] = [];
    const skipped: ToolConflict[] = [];
    // Static plugins first, whatever their position: a dynamic (remote) tool never shadows a local one.
    const order = [...this.plugins.filter((p) => !p.dynamic), ...this.plugins.filter((p) => p.dynamic)];
    for (const plugin of order) {
      for (const raw of plugin.listTools()) {
        const tool = this.register(plugin, raw);
        const existing = byName.get(tool.definition.name);
        if (existing) {
          if (!plugin.dynamic && !existing.plugin.dynamic) {
            throw new Error(
              `tool "${tool.definition.name}" is offered by both plugin "${existing.plugin.name}" and plugin "${plugin.name}"; rename or disable one of them`,
            );
          }
          skipped.push({ tool: tool.definition.name, kept: existing.plugin.name, skipped: plugin.name });
          continue;
        }
        byName.set(tool.definition.name, tool);
        ordered.push(tool);
      }
    }
    // Tools a plugin is still checking: callable by name (the call waits for the check), not listed.
    const pending: RegisteredTool[] = [];
    for (const plugin of order) {
      for (const raw of plugin.pendingTools?.() ?? []) {
        const tool = this.register(plugin, raw);
        if (byName.has(tool.definition.name)) continue;
        byName.set(tool.definition.name, tool);
        pending.push(tool);
      }
    }
    // Tools a plugin cannot offer here: not callable, but a call to one is told why.
    const missing = new Map<string, UnavailableEntry>();
    for (const plugin of order) {
      for (const { tool, reason } of plugin.unavailableTools?.() ?? []) {
        const parsed = ToolDefinition.safeParse(tool);
        if (parsed.success && !byName.has(parsed.data.name))
          missing.set(parsed.data.name, { definition: parsed.data, reason });
      }
    }
    for (const c of skipped) {
      this.logger.warn(
        c,
        `tool "${c.tool}" from plugin "${c.skipped}" skipped: plugin "${c.kept}" already offers that name`,
      );
    }
    this.byName = byName;
    this.ordered = ordered;
    this.checking = pending;
    this.missing = missing;
    this.skipped = skipped;
    this.searchIndex = new ToolSearchIndex(ordered.filter((t) => !t.plugin.searchTools).map((t) => t.definition));
  }

  private register(plugin: ToolPlugin, raw: unknown): RegisteredTool {
    const parsed = ToolDefinition.safeParse(raw);
    const label = `plugin "${plugin.name}"`;
    if (!parsed.success) {
      const name = (raw as { name?: unknown } | null)?.name;
      const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
      throw new Error(
        `${label} offers an invalid tool definition${typeof name === 'string' ? ` "${name}"` : ''}: ${problems}`,
      );
    }
    try {
      const { input_schema: schema, input_parameters: params } = parsed.data;
      // A tool's own JSON Schema, when it has one, is the complete rule; input_parameters only approximates it.
      return {
        definition: parsed.data,
        plugin,
        validate: schema ? compileJsonSchema(schema) : compileArguments(params),
        lineMembers: toolLineMembers(parsed.data),
      };
    } catch (err) {
      throw new Error(`${label}, tool "${parsed.data.name}": ${(err as Error).message}`, { cause: err });
    }
  }

  get(name: string): RegisteredTool | undefined {
    return this.byName.get(name);
  }

  all(): readonly RegisteredTool[] {
    return this.ordered;
  }

  /** Tools callable but not listed yet, while their plugin checks them (ToolPlugin.pendingTools). */
  pending(): readonly RegisteredTool[] {
    return this.checking;
  }

  /** A tool its plugin cannot offer here, by name (ToolPlugin.unavailableTools). */
  unavailable(name: string): UnavailableEntry | undefined {
    return this.missing.get(name);
  }

  /** Every tool a plugin cannot offer here, for GET /healthz and GET /readyz. */
  allUnavailable(): Array<{ name: string; reason: string }> {
    return [...this.missing.values()].map((u) => ({ name: u.definition.name, reason: u.reason }));
  }

  get conflicts(): readonly ToolConflict[] {
    return this.skipped;
  }

  /** Names close to `name` (another case, containing it, or a few edits away), closest first, to suggest on unknown_tool. */
  similarNames(name: string, max = 3): string[] {
    return similarNames(
      name,
      this.ordered.map((t) => t.definition.name),
      max,
    );
  }

  /**
   * Rank `candidates` against `query`: BM25 for tools of plugins without
   * their own search, each custom plugin's own ranking, fused.
   */
  search(query: string, tags: readonly string[], candidates: readonly RegisteredTool[]): ToolDefinition[] {
    const allowed = new Set(candidates.map((t) => t.definition));
    const rankings: ToolDefinition[][] = [this.searchIndex.search(query).filter((d) => allowed.has(d))];
    const custom = new Map<ToolPlugin, ToolDefinition[]>();
    for (const t of candidates) {
      if (!t.plugin.searchTools) continue;
      const list = custom.get(t.plugin) ?? [];
      list.push(t.definition);
      custom.set(t.plugin, list);
    }
    for (const [plugin, tools] of custom) {
      // Map back by name: a plugin may return copies, and must not add tools that were filtered out.
      const own = new Map(tools.map((d) => [d.name, d]));
      rankings.push(plugin.searchTools!(query, tags, tools).flatMap((d) => own.get(d.name) ?? []));
    }
    return fuseRankings(rankings);
  }
}
