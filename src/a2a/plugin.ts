/**
 * The A2A plugin: every skill of every configured agent becomes a tool.
 * Agents load in parallel and are isolated: one that fails is logged and
 * offers no tools, and never stops or delays the gateway past a short bound.
 * Cards are re-fetched every `a2a.refresh_s`.
 */
import {
  ToolError,
  type Logger,
  type PluginHost,
  type ToolConflict,
  type ToolContext,
  type ToolPlugin,
} from '../engine/index.js';
import { RemoteToolSet } from '../engine/remote-tool-set.js';
import type { AgentStatus, ToolDefinitionInput } from '../protocol/index.js';
import { checkEndpointOrigin, fetchCard } from './card.js';
import { AgentClient, type RunResult } from './client.js';
import { agentHeaders, type A2AConfig, type AgentDescriptor, type AgentsConfig } from './config.js';
import { Credential, scrub } from '../security/credential.js';
import { scrubbedCall, scrubValue } from '../security/secret-scrub.js';
import { PeerHttp } from './http.js';
import { toolsFromCard, type AgentTool } from './tools.js';

export const A2A_PLUGIN_NAME = 'a2a';

interface AgentEntry {
  /** The agent's name in the config (agents.<name>). */
  id: string;
  agent: AgentDescriptor;
  state: AgentStatus['state'];
  client: AgentClient | undefined;
  tools: AgentTool[];
  cardJson: string | undefined;
  lastError: string | null;
  lastFetched: number | null;
  lastAttempt: number | null;
}

export class A2APlugin implements ToolPlugin {
  readonly name = A2A_PLUGIN_NAME;
  readonly dynamic = true;
  private readonly http: PeerHttp;
  private readonly entries: AgentEntry[];
  /** The agents' tools merged in configuration order: an earlier agent wins a name. */
  private readonly tools = new RemoteToolSet<AgentTool, AgentEntry>({
    noun: 'agent',
    onClash: (c) =>
      this.logger.warn(
        { tool: c.tool, agent: c.source, kept: c.kept },
        `tool "${c.tool}" of agent "${c.source}" skipped: agent "${c.kept}" (configured earlier) already offers that name`,
      ),
    onChange: () => this.host?.toolsChanged(),
  });
  private host: PluginHost | undefined;
  private logger: Logger;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private readonly stopping = new AbortController();

  constructor(
    agents: AgentsConfig,
    private readonly settings: A2AConfig,
    logger: Logger,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.logger = logger;
    this.http = new PeerHttp(undefined, settings.max_message_bytes);
    this.entries = Object.entries(agents).map(([name, cfg]) => ({
      id: name,
      agent: { name, ...cfg, credential: this.credentialOf(cfg, env) },
      state: cfg.enabled ? 'loading' : 'disabled',
      client: undefined,
      tools: [],
      cardJson: undefined,
      lastError: null,
      lastFetched: null,
      lastAttempt: null,
    }));
  }

  listTools(): readonly ToolDefinitionInput[] {
    return this.tools.definitions;
  }

  async start(host: PluginHost): Promise<void> {
    this.host = host;
    this.logger = host.logger;
    if (!this.entries.some((e) => e.agent.enabled)) return;
    const loading = this.refresh();
    // Wait a little for the cards, never long: an agent that answers later joins then.
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([loading, new Promise<void>((r) => (bound = setTimeout(r, this.settings.start_wait_ms)))]);
    clearTimeout(bound);
    this.timer = setInterval(() => void this.refresh(), this.settings.refresh_s * 1000);
    this.timer.unref();
  }

  /** Re-fetch every enabled agent's card (at most one refresh at a time). */
  refresh(): Promise<void> {
    this.refreshing ??= Promise.all(this.entries.filter((e) => e.agent.enabled).map((e) => this.load(e))).then(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /** The agent's `auth` from the environment; an unset variable fails each load of the agent, naming it. */
  private credentialOf(cfg: AgentsConfig[string], env: NodeJS.ProcessEnv): Credential | Error | null {
    if (!cfg.auth) return null;
    try {
      return new Credential(cfg.auth, env, (url, init, max) => this.http.fetchText(url, init, max));
    } catch (err) {
      return err as Error;
    }
  }

  private async load(entry: AgentEntry): Promise<void> {
    const { agent } = entry;
    entry.lastAttempt = Date.now();
    const signal = AbortSignal.any([
      this.stopping.signal,
      AbortSignal.timeout(Math.min(agent.timeout_ms, this.settings.card_timeout_ms)),
    ]);
    try {
      // A card echoing the credential into a skill's description shows it redacted.
      const resolved = scrubValue(
        await fetchCard(this.http, agent.card, await agentHeaders(agent), signal),
        secretsOf(agent),
      );
      checkEndpointOrigin(resolved, agent);
      const json = JSON.stringify(resolved);
      if (json !== entry.cardJson || !entry.client) {
        // A new or changed card: new tools (an unchanged card keeps its client and any dialect switch).
        const client = new AgentClient(agent, resolved, this.http, this.logger);
        entry.client = client;
        entry.tools = toolsFromCard(resolved, client, this.logger);
        entry.cardJson = json;
        this.logger.info(
          {
            agent: agent.name,
            tools: entry.tools.map((t) => t.name),
            dialect: resolved.dialect,
            endpoint: redactUrl(resolved.endpoint),
          },
          `agent "${agent.name}" offers ${entry.tools.length} tool(s)`,
        );
      }
      entry.state = 'ok';
      entry.lastError = null;
      entry.lastFetched = Date.now();
    } catch (err) {
      if (this.stopping.signal.aborted) return;
      const message = signal.aborted
        ? `the agent card did not arrive within ${Math.min(agent.timeout_ms, this.settings.card_timeout_ms)} ms`
        : scrub((err as Error).message, secretsOf(agent));
      entry.state = 'failed';
      entry.lastError = message;
      // A peer that was up keeps its last tools (calls say what is wrong); one never seen offers none.
      this.logger.warn(
        { agent: agent.name, card: redactUrl(agent.card), error: message },
        `agent "${agent.name}" could not be loaded: ${message}`,
      );
    }
    this.tools.rebuild(this.entries);
  }

  async executeTool(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> {
    const found = this.tools.lookup(name);
    // An agent may echo the credential the gateway sent it: the caller gets it redacted.
    return scrubbedCall(
      () => secretsOf(found.source.agent),
      ctx,
      async (ctx) => {
        const result = await found.tool.execute({ task: String(args.task) }, ctx);
        // ToolResult.data: {output, state, artifacts, metadata}, on success and on failure alike.
        const { error, success: _success, ...data } = result satisfies RunResult;
        if (!result.success) throw new ToolError(error ?? `agent "${found.source.id}" task ${result.state}`, { data });
        return data;
      },
    );
  }

  /**
   * Each agent's health for GET /agents. `conflicts` are the registry's
   * skipped tools; this plugin's ones name the tool another plugin kept.
   */
  status(conflicts: readonly ToolConflict[] = []): AgentStatus[] {
    return this.entries.map((e) => {
      const { tools, clashes, lost } = this.tools.contribution(e, conflicts, this.name);
      const skipped = [
        ...clashes.map((c) => ({ tool: c.tool, kept_by: `agent ${c.kept}` })),
        ...lost.map((l) => ({ tool: l.tool, kept_by: `plugin ${l.kept}` })),
      ];
      const resolved = e.client?.resolved;
      return {
        name: e.agent.name,
        card: redactUrl(e.agent.card),
        state: e.state,
        agent_name: resolved?.card.name ?? null,
        dialect: e.client?.dialectName ?? null,
        endpoint: resolved ? redactUrl(resolved.endpoint) : null,
        streaming: resolved?.streaming ?? false,
        tools,
        skipped,
        last_error: e.lastError,
        last_fetched: e.lastFetched === null ? null : new Date(e.lastFetched).toISOString(),
        last_attempt: e.lastAttempt === null ? null : new Date(e.lastAttempt).toISOString(),
      };
    });
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopping.abort();
    await this.http.close();
  }
}

/** The A2A plugin for the `agents` and `a2a` config sections. */
export function a2aPlugin(
  agents: AgentsConfig,
  settings: A2AConfig,
  logger: Logger,
  env: NodeJS.ProcessEnv = process.env,
): A2APlugin {
  return new A2APlugin(agents, settings, logger, env);
}

/** The secret values an agent's credential holds. */
function secretsOf(agent: AgentDescriptor): string[] {
  return agent.credential instanceof Credential ? agent.credential.secrets() : [];
}

/** A URL without user:password (never shown or logged). */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return url;
    u.username = '';
    u.password = '';
    return u.href;
  } catch {
    return url;
  }
}
