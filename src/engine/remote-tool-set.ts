/**
 * The tools of a plugin that merges several remote sources — the A2A
 * plugin's agents, the MCP plugin's servers — each with a tool list that
 * changes over time. Sources merge in configuration order: an earlier source
 * keeps a name, a later one's tool of that name is skipped and reported once.
 * The plugin keeps its own sources and status shape; this keeps the name
 * map, the clashes and the manifest, and tells the host when it changed.
 */
import type { ToolDefinitionInput } from '../protocol/index.js';
import { ToolError } from './errors.js';
import type { ToolConflict } from './registry.js';

/** One tool of a remote source, under its gateway name. */
export interface RemoteTool {
  readonly name: string;
  readonly definition: ToolDefinitionInput;
}

/** A configured source (agent, server) and the tools it offers now. */
export interface RemoteSource<T extends RemoteTool> {
  readonly id: string;
  readonly tools: readonly T[];
}

/** A tool of `source` left out because the earlier-configured source `kept` offers the same name. */
export interface RemoteClash {
  tool: string;
  source: string;
  kept: string;
}

/** What one source contributes, for a status view. */
export interface RemoteContribution {
  /** Tools it offers that are callable (gateway names). */
  tools: string[];
  /** Its tools an earlier-configured source took the name of. */
  clashes: RemoteClash[];
  /** Its tools a local plugin or native tool took the name of, and that plugin. */
  lost: { tool: string; kept: string }[];
}

export class RemoteToolSet<T extends RemoteTool, S extends RemoteSource<T>> {
  private manifest: ToolDefinitionInput[] = [];
  private byName = new Map<string, { tool: T; source: S }>();
  private clashes: RemoteClash[] = [];

  constructor(
    private readonly options: {
      /** What a source is called in messages: "agent", "MCP server". */
      noun: string;
      /** Report a clash (called once per clash, when it first appears). */
      onClash(clash: RemoteClash): void;
      /** The merged tool list changed (PluginHost.toolsChanged). */
      onChange(): void;
    },
  ) {}

  /** The merged definitions (the plugin's listTools()). */
  get definitions(): readonly ToolDefinitionInput[] {
    return this.manifest;
  }

  /** Merge the sources' current tools again. */
  rebuild(sources: Iterable<S>): void {
    const byName = new Map<string, { tool: T; source: S }>();
    const clashes: RemoteClash[] = [];
    for (const source of sources) {
      for (const tool of source.tools) {
        const existing = byName.get(tool.name);
        if (existing) clashes.push({ tool: tool.name, source: source.id, kept: existing.source.id });
        else byName.set(tool.name, { tool, source });
      }
    }
    for (const c of clashes) {
      if (!this.clashes.some((o) => o.tool === c.tool && o.source === c.source)) this.options.onClash(c);
    }
    const manifest = [...byName.values()].map((t) => t.tool.definition);
    const changed = JSON.stringify(manifest) !== JSON.stringify(this.manifest);
    this.byName = byName;
    this.clashes = clashes;
    this.manifest = manifest;
    if (changed) this.options.onChange();
  }

  /**
   * The tool a call names and its source. The registry only routes names it listed, so a miss means the
   * source dropped the tool since: say so, whatever door the call came through.
   */
  lookup(name: string): { tool: T; source: S } {
    const found = this.byName.get(name);
    if (!found)
      throw new ToolError(
        `tool "${name}" is no longer offered by its ${this.options.noun}; list the tools again to see the current ones`,
      );
    return found;
  }

  /**
   * What `source` contributes. `conflicts` are the registry's skipped tools; those this plugin (`plugin`)
   * lost to another plugin are reported as `lost`, not as its tools.
   */
  contribution(source: S, conflicts: readonly ToolConflict[], plugin: string): RemoteContribution {
    const owned = source.tools.filter((t) => this.byName.get(t.name)?.source === source);
    const lost = new Map<string, string>();
    for (const c of conflicts) if (c.skipped === plugin) lost.set(c.tool, c.kept);
    return {
      tools: owned.filter((t) => !lost.has(t.name)).map((t) => t.name),
      clashes: this.clashes.filter((c) => c.source === source.id),
      lost: owned.filter((t) => lost.has(t.name)).map((t) => ({ tool: t.name, kept: lost.get(t.name)! })),
    };
  }
}
