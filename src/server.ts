/**
 * Wiring: builds a whole gateway from a config — plugins → registry →
 * engine → HTTP app. Listening is src/listen.ts, the OpenAPI document
 * src/openapi.ts. Used by the CLI and by tests.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { GatewayConfig } from './config/index.js';
import {
  Engine,
  combineAudit,
  MemoryCallStore,
  ToolRegistry,
  type AuditSink,
  type EngineSettings,
  type Logger,
  type Policy,
  type ToolPlugin,
} from './engine/index.js';
import { createLogger } from './logger.js';
import { GatewayMetrics } from './observability/metrics.js';
import { checkPolicyRules } from './config/policy-check.js';
import { createApp, type AppOptions } from './routes/index.js';
import { notifyApprovals } from './approval-notify.js';
import { buildSecurity, type ReloadedSecurity, type Security } from './security/index.js';
import { mountA2eTransport } from './routes/doors/a2e-transport.js';
import type { HttpLimits } from './routes/http/limits.js';
import { bearerTokenAuth } from './transport/a2e-http/auth.js';
import type { A2eTransport } from './transport/a2e-http/index.js';
import { nativePlugins } from './tools/index.js';
import { a2aPlugin } from './a2a/index.js';
import { AgentStatus } from './protocol/index.js';
import { McpDoor } from './mcp-server/door.js';
import { McpPlugin } from './mcp/plugin.js';
import { openStores, type Stores } from './store/index.js';
import { HttpListener, type ListenAddress } from './listen.js';
import { PluginSet, retirePlugins } from './plugin-set.js';
import { Reloader, type ReloadOutcome } from './reload/reloader.js';
import { listSources } from './source-list.js';
import { VERSION } from './version.js';
import { startTelemetry } from './observability/telemetry.js';
import { callTracer } from './observability/tracing.js';

export { VERSION } from './version.js';
export { openApiFor } from './openapi.js';

export interface GatewayOptions {
  config: GatewayConfig;
  /** Extra plugins, registered after the built-in ones (native tools, agents). */
  plugins?: ToolPlugin[];
  logger?: Logger;
  /** Extra audit sink, next to the audit file of `audit.path`. */
  audit?: AuditSink;
  /** Replaces the policy built from `policy` and `auth` (sessions' capability gating included). */
  policy?: Policy;
  /** Where `auth.tokens[].token_env` and the credentials' `*_env` (openapi.sources.<id>.auth) are looked up; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** How a reload reads the config again (the CLI re-reads its file); without it, reload() is refused. */
  loadConfig?: () => Promise<GatewayConfig>;
}

export interface Gateway {
  /** The config in force (after the latest reload). */
  readonly config: GatewayConfig;
  readonly app: OpenAPIHono;
  readonly engine: Engine;
  readonly registry: ToolRegistry;
  readonly logger: Logger;
  readonly metrics: GatewayMetrics;
  /** Authenticator, sessions, policy and limits (for other doors, e.g. the A2E transport). */
  readonly security: Security;
  /** A2E's own HTTP message transport (undefined when `transport.enabled` is false). */
  readonly transport: A2eTransport | undefined;
  /** Where shared state lives (`store.kind`). */
  readonly stores: Stores;
  /** Start listening on `server.host`:`server.port` (or the given ones). Resolves with the real address (`url` includes `server.base_path`). */
  listen(port?: number, host?: string): Promise<ListenAddress>;
  /** Stop accepting, let running calls finish within the grace period, stop the rest, stop plugins. */
  close(): Promise<void>;
  /** Re-read the config (`loadConfig`) and put what can change live in force for new calls; see docs/reload.md. */
  reload(trigger?: string): Promise<ReloadOutcome>;
}

/** Plugins the config asks for: native tool groups first (they win name clashes), then A2A agents, then MCP servers. */
export function builtinPlugins(config: GatewayConfig, logger: Logger): ToolPlugin[] {
  return [
    ...nativePlugins(config.tools, logger),
    a2aPlugin(config.agents, config.a2a, logger),
    new McpPlugin(config.mcp, logger, config.tools.fs.max_workspace_bytes, config.server.state_dir),
  ];
}

/**
 * Build a gateway from a validated config: plugins, engine, security and the HTTP app. Nothing listens until
 * `listen()`; `close()` drains running calls and stops the plugins.
 *
 * @example
 * ```ts
 * import { createGateway, defineConfig } from 'a2e-gateway';
 *
 * const gateway = await createGateway({ config: defineConfig({ server: { port: 0 } }), plugins: [myPlugin] });
 * const { url } = await gateway.listen();
 * // POST `${url}/tool/call` …
 * await gateway.close();
 * ```
 */
export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const { config } = options;
  const logger = options.logger ?? createLogger('warn');
  // Before anything that makes spans or outgoing requests; loads the OpenTelemetry SDK only when configured.
  const telemetry = await startTelemetry(config.telemetry, options.env ?? process.env, VERSION, logger);
  // Read on scrape only, after `engine` exists.
  const metrics = new GatewayMetrics({ inFlight: (): number => engine.running });
  const stores = await openStores(config.store, logger, { leaseS: config.calls.owner_lease_s });
  // The plugins and tool registry in force; a reload replaces them.
  let plugins: PluginSet;
  // Set once the engine exists (no plugin reports a change before: `plugins` is unset until then).
  let toolsRebuilt = () => {};
  const rebuildTools = () => {
    try {
      plugins.registry.rebuild();
      toolsRebuilt();
    } catch (err) {
      logger.error({ err }, 'tool list update rejected; keeping the previous tools');
    }
  };
  const toolsChanged = (plugin: ToolPlugin) => {
    if (!plugins?.has(plugin)) return; // a plugin still starting (its tools are read once it has) or retired
    rebuildTools();
  };
  // Security is built after the plugins (it checks their tools' rules); a principal's quota is read from it per call.
  const built: { security?: Security } = {};
  const quotaOf = (principal: string | null) => built.security?.quotaOf(principal);
  plugins = await PluginSet.start(config, logger, { extra: options.plugins, toolsChanged, quotaOf, env: options.env });
  checkPolicyRules(config, [...plugins.registry.all(), ...plugins.registry.pending()], logger);

  const security = buildSecurity(config, options.env ?? process.env, logger, stores);
  built.security = security;
  const engine: Engine = new Engine({
    registry: plugins.registry,
    logger,
    policy: options.policy ?? security.policy,
    audit: combineAudit(options.audit, metrics.audit, security.auditFile?.sink),
    admission: security.admission,
    tracer: telemetry && callTracer,
    limits: { ...engineLimits(config), eventsTotalBytes: config.limits.events_total_bytes },
    approvals: {
      gate: security.approvals.gate,
      urlOf: (id) => `${config.server.base_path}/admin/approvals/${id}`,
      store: stores.approvalStore(),
    },
  });
  toolsRebuilt = () => engine.toolsRebuilt();
  // Mutated in place by a reload: the admin check holds this very set.
  const admins = new Set(adminNames(config));
  const mcpServe = config.mcp.serve;
  // One set of limits for every HTTP door, the A2E transport's message reader included.
  const limits: HttpLimits = {
    bodyLimitBytes: config.server.body_limit_bytes,
    maxJsonDepth: config.limits.max_json_depth,
    heartbeatS: config.server.heartbeat_s,
    streams: { unsentBytes: config.limits.stream_unsent_bytes, stallS: config.limits.stream_stall_s },
  };
  const app = createApp({
    engine,
    logger,
    metrics,
    mcp: mcpServe.enabled
      ? new McpDoor({
          engine,
          version: VERSION,
          pageSize: mcpServe.page_size,
          callTimeoutS: mcpServe.timeout_s ?? config.server.max_timeout_s,
        })
      : undefined,
    version: VERSION,
    limits,
    calls: callResources(config, stores),
    store: () => stores.health(),
    basePath: config.server.base_path,
    trustProxy: config.server.trust_proxy,
    agents: () => plugins.a2a?.status(plugins.registry.conflicts) ?? [],
    loading: () => plugins.all.flatMap((p) => p.loading?.() ?? []),
    mcpServers: () => plugins.mcp?.status(plugins.registry.conflicts) ?? [],
    sources: () => listSources(plugins),
    reload: (trigger) => reloader.reload(trigger),
    workspaces: () => plugins.workspaces,
    a2aServer: config.a2a_server,
    ui: config.ui,
    security: {
      loopbackBind: () => loopbackBind,
      corsOrigins: config.server.cors_origins,
      allowedHosts: config.server.allowed_hosts,
      authenticate: security.authenticate,
      logger,
      sessions: security.sessions,
      sessionsRequired: security.sessionsRequired,
      // No door authenticates on its own terms: with auth, the A2E transport's routes want the bearer token too.
      admins,
      streams: security.streams,
      credentialLive: (credential) => security.credentialLive(credential),
      isApprover: (principal) => security.approvals.isApprover(principal),
    },
  });
  metrics.reportAgentStates(() => countAgentStates(plugins.a2a?.status() ?? []));
  const transport = mountA2eTransport(app, {
    engine,
    logger,
    config: config.transport,
    limits,
    // Sessions belong to the bearer token that opened them; a handshake's auth_token, when sent, must be that token.
    sessions: security.sessions,
    authenticate: security.authenticate && bearerTokenAuth(security.authenticate),
    authRequired: security.authenticate !== undefined,
    sessionsRequired: security.sessionsRequired,
    trustProxy: config.server.trust_proxy,
    memory: {
      outboxSessionBytes: config.limits.outbox_session_bytes,
      outboxTotalBytes: config.limits.outbox_total_bytes,
      streamWriteBytes: config.limits.stream_unsent_bytes,
    },
    open: stores.transportSessions,
  });

  // Until listen() says otherwise; decides whether Host headers must name loopback.
  let loopbackBind = true;
  const listener = new HttpListener({
    fetch: app.fetch,
    config,
    logger,
    onBound: (loopback) => (loopbackBind = loopback),
  });
  let closing: Promise<void> | undefined;

  let running = config;
  const stopNotify = notifyApprovals({
    approvals: engine.approvals!,
    settings: () => ({ approvals: running.approvals, http: running.tools.http }),
    logger,
  });
  const env = options.env ?? process.env;
  // Plugins a reload left behind, stopping once their calls finish; close() waits for them.
  const retiring = new Set<Promise<void>>();
  const reloader = new Reloader({
    load: options.loadConfig,
    running: () => running,
    logger,
    prepare: async (next) => {
      if (engine.stopping) throw new Error('the gateway is shutting down; there is nothing to reload');
      const nextPlugins = await PluginSet.start(next, logger, { previous: plugins, toolsChanged, quotaOf, env });
      let commitSecurity: () => ReloadedSecurity;
      try {
        checkPolicyRules(next, [...nextPlugins.registry.all(), ...nextPlugins.registry.pending()], logger);
        commitSecurity = security.prepareReload(next, env);
      } catch (err) {
        await Promise.allSettled(nextPlugins.all.filter((p) => !plugins.has(p)).map((p) => p.stop?.()));
        throw err;
      }
      return () => {
        const previous = plugins;
        plugins = nextPlugins;
        // A check that ended between prepare and now (the shell sandbox) reported to a set not yet in force.
        if (nextPlugins.all.some((p) => p.pendingTools)) rebuildTools();
        engine.reconfigure({ registry: nextPlugins.registry, limits: engineLimits(next) });
        const reloaded = commitSecurity();
        // The A2E transport's sessions of a revoked credential end too (their streams already got a last frame).
        const transportEnded = Promise.resolve(transport?.endWhere(reloaded.revoked) ?? 0).catch((err: unknown) => {
          logger.error(
            { error: (err as Error).message },
            'config reload: the A2E transport sessions of removed tokens could not be closed; they expire after transport.session_idle_s',
          );
          return 0;
        });
        const sessionsEnded = Promise.all([reloaded.sessionsEnded, transportEnded]).then(([a, b]) => a + b);
        admins.clear();
        for (const name of adminNames(next)) admins.add(name);
        // LOG_LEVEL, when set, pins the level; loggers made from now on (requests, calls, new plugins) follow it.
        if (next.log.level !== running.log.level && !env.LOG_LEVEL && 'level' in logger)
          (logger as { level: string }).level = next.log.level ?? 'info';
        running = next;
        const retired = retirePlugins(previous.leftBehind(nextPlugins), engine);
        retiring.add(retired);
        void retired.finally(() => retiring.delete(retired));
        return { sessionsEnded };
      };
    },
  });

  return {
    get config() {
      return running;
    },
    app,
    engine,
    get registry() {
      return plugins.registry;
    },
    logger,
    metrics,
    security,
    transport,
    stores,
    listen: (port = config.server.port, host = config.server.host) => listener.listen(port, host),
    close() {
      closing ??= listener.close({
        calls: async () => {
          await engine.shutdown(config.server.shutdown_grace_s * 1000);
          await transport?.close(); // flush the calls' last answers to A2E transport streams, then end them
        },
        release: async () => {
          await Promise.allSettled([plugins.stop(), ...retiring]);
          stopNotify();
          await security.close();
          await stores.close();
          await telemetry?.shutdown(); // exports the last spans
        },
      });
      return closing;
    },
    reload: (trigger = 'api') => reloader.reload(trigger),
  };
}

/** Per-call limits of the engine (a reload may change them). */
function engineLimits(config: GatewayConfig): EngineSettings['limits'] {
  return {
    maxTimeoutS: config.server.max_timeout_s,
    maxOutputBytes: config.server.max_output_bytes,
    maxEvents: config.calls.max_events,
    maxBufferedEvents: config.calls.max_buffered_events,
    maxEventBytes: config.limits.call_events_bytes,
    retainedEventBytes: config.limits.call_retained_events_bytes,
  };
}

/** Names of the tokens with `admin: true`. */
const adminNames = (config: GatewayConfig): string[] =>
  config.auth?.tokens.filter((t) => t.admin).map((t) => t.name) ?? [];

/** Agents per state, every state present (0 included) so a dashboard can alert on `failed > 0`. */
function countAgentStates(agents: readonly AgentStatus[]): Record<string, number> {
  const counts: Record<string, number> = Object.fromEntries(AgentStatus.shape.state.options.map((s) => [s, 0]));
  for (const a of agents) counts[a.state] = (counts[a.state] ?? 0) + 1;
  return counts;
}

/** Where call resources are kept, from the `calls:` section. */
function callResources(config: GatewayConfig, stores?: Stores): AppOptions['calls'] {
  const { retain_s, max_retained, max_retained_per_principal, retry_ms } = config.calls;
  const local = new MemoryCallStore({
    retainMs: retain_s * 1000,
    maxRetained: max_retained,
    maxRetainedPerPrincipal: max_retained_per_principal,
    maxRetainedBytes: config.limits.retained_calls_bytes,
  });
  const store = stores ? stores.callStore(local, config.calls) : local;
  return {
    store,
    retryMs: retry_ms,
    retainS: retain_s,
    maxRetained: max_retained,
    maxRetainedPerPrincipal: max_retained_per_principal,
  };
}
