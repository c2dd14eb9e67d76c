/**
 * Builds a whole gateway from a config: plugins → registry → engine → HTTP
 * app, plus listening and graceful shutdown. Used by the CLI and by tests.
 */
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { ConfigError, type GatewayConfig } from './config/index.js';
import {
  Engine,
  MemoryCallStore,
  ToolRegistry,
  type AuditSink,
  type Logger,
  type Policy,
  type ToolPlugin,
} from './engine/index.js';
import { createLogger } from './logger.js';
import { combineAudit, GatewayMetrics } from './observability/metrics.js';
import { loadConfiguredPlugins } from './plugins/load.js';
import { checkPolicyRules } from './config/policy-check.js';
import { createApp, openApiDocument } from './routes/index.js';
import { buildSecurity, checkBind, isLoopbackAddress, type Security } from './security/index.js';
import { mountA2eTransport } from './routes/a2e-transport.js';
import { bearerTokenAuth } from './transport/a2e-http/auth.js';
import type { A2eHttpTransport } from './transport/a2e-http/index.js';
import { nativePlugins } from './tools/index.js';
import { A2APlugin, a2aPlugin } from './a2a/index.js';
import { AgentStatus } from './protocol/index.js';
import { McpDoor } from './mcp-server/door.js';
import { McpPlugin } from './mcp/plugin.js';
import { startTelemetry } from './observability/telemetry.js';
import { callTracer } from './observability/tracing.js';

const pkg = createRequire(import.meta.url)('../package.json') as { version: string };
export const VERSION = pkg.version;

export interface GatewayOptions {
  config: GatewayConfig;
  /** Extra plugins, registered after the built-in ones (native tools, agents). */
  plugins?: ToolPlugin[];
  logger?: Logger;
  /** Extra audit sink, next to the audit file of `audit.path`. */
  audit?: AuditSink;
  /** Replaces the policy built from `policy` and `auth` (sessions' capability gating included). */
  policy?: Policy;
  /** Where `auth.tokens[].token_env` are looked up; default process.env. */
  env?: NodeJS.ProcessEnv;
}

export interface Gateway {
  readonly config: GatewayConfig;
  readonly app: OpenAPIHono;
  readonly engine: Engine;
  readonly registry: ToolRegistry;
  readonly logger: Logger;
  readonly metrics: GatewayMetrics;
  /** Authenticator, sessions, policy and limits (for other doors, e.g. the A2E transport). */
  readonly security: Security;
  /** A2E's own HTTP message transport (undefined when `transport.enabled` is false). */
  readonly transport: A2eHttpTransport | undefined;
  /** Start listening on `server.host`:`server.port` (or the given ones). Resolves with the real address (`url` includes `server.base_path`). */
  listen(port?: number, host?: string): Promise<{ url: string; host: string; port: number }>;
  /** Stop accepting, let running calls finish within the grace period, stop the rest, stop plugins. */
  close(): Promise<void>;
}

/** Plugins the config asks for: native tool groups first (they win name clashes), then A2A agents, then MCP servers. */
export function builtinPlugins(config: GatewayConfig, logger: Logger): ToolPlugin[] {
  return [...nativePlugins(config.tools, logger), a2aPlugin(config.agents, config.a2a, logger), new McpPlugin(config.mcp, logger)];
}

export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const { config } = options;
  const logger = options.logger ?? createLogger('warn');
  // Before anything that makes spans or outgoing requests; loads the OpenTelemetry SDK only when configured.
  const telemetry = await startTelemetry(config.telemetry, options.env ?? process.env, VERSION, logger);
  // Read on scrape only, after `engine` exists.
  const metrics = new GatewayMetrics({ inFlight: (): number => engine.running });
  const configured = await loadConfiguredPlugins(config.plugins, logger);
  const plugins = [...builtinPlugins(config, logger), ...configured, ...(options.plugins ?? [])];
  const registry = new ToolRegistry(plugins, logger);

  let started = false;
  const rebuild = () => {
    if (!started) return;
    try {
      registry.rebuild();
    } catch (err) {
      logger.error({ err }, 'tool list update rejected; keeping the previous tools');
    }
  };
  await Promise.all(
    plugins.map(async (plugin) => {
      try {
        await plugin.start?.({ logger: logger.child({ plugin: plugin.name }), toolsChanged: rebuild });
      } catch (err) {
        throw new Error(`plugin "${plugin.name}" failed to start: ${(err as Error).message}`, { cause: err });
      }
    }),
  );
  registry.rebuild();
  started = true;
  checkPolicyRules(config, registry.all(), logger);

  const security = buildSecurity(config, options.env ?? process.env, logger);
  const engine: Engine = new Engine({
    registry,
    logger,
    policy: options.policy ?? security.policy,
    audit: combineAudit(options.audit, metrics.audit, security.auditFile?.sink),
    admission: security.admission,
    tracer: telemetry && callTracer,
    limits: {
      maxTimeoutS: config.server.max_timeout_s,
      maxOutputBytes: config.server.max_output_bytes,
      maxEvents: config.calls.max_events,
      maxBufferedEvents: config.calls.max_buffered_events,
      maxEventBytes: config.limits.call_events_bytes,
      retainedEventBytes: config.limits.call_retained_events_bytes,
      eventsTotalBytes: config.limits.events_total_bytes,
    },
  });
  const mcpServe = config.mcp.serve;
  const app = createApp({
    engine,
    logger,
    metrics,
    mcp: mcpServe.enabled
      ? new McpDoor({ engine, version: VERSION, pageSize: mcpServe.page_size, callTimeoutS: mcpServe.timeout_s ?? config.server.max_timeout_s })
      : undefined,
    version: VERSION,
    bodyLimitBytes: config.server.body_limit_bytes,
    heartbeatS: config.server.heartbeat_s,
    calls: callResources(config),
    streams: { unsentBytes: config.limits.stream_unsent_bytes, stallS: config.limits.stream_stall_s },
    basePath: config.server.base_path,
    trustProxy: config.server.trust_proxy,
    agents: () => plugins.find((p): p is A2APlugin => p instanceof A2APlugin)?.status(registry.conflicts) ?? [],
    mcpServers: () => plugins.find((p): p is McpPlugin => p instanceof McpPlugin)?.status(registry.conflicts) ?? [],
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
      maxJsonDepth: config.limits.max_json_depth,
      // No door authenticates on its own terms: with auth, the A2E transport's routes want the bearer token too.
      admins: new Set(config.auth?.tokens.filter((t) => t.admin).map((t) => t.name)),
    },
  });
  const a2a = plugins.find((p): p is A2APlugin => p instanceof A2APlugin);
  if (a2a) metrics.reportAgentStates(() => countAgentStates(a2a.status()));
  const transport = mountA2eTransport(app, {
    engine,
    logger,
    config: config.transport,
    heartbeatS: config.server.heartbeat_s,
    bodyLimitBytes: config.server.body_limit_bytes,
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
    streams: { unsentBytes: config.limits.stream_unsent_bytes, stallS: config.limits.stream_stall_s },
  });

  // Until listen() says otherwise; decides whether Host headers must name loopback.
  let loopbackBind = true;
  let server: Server | undefined;
  let closing: Promise<void> | undefined;

  return {
    config,
    app,
    engine,
    registry,
    logger,
    metrics,
    security,
    transport,
    listen(port = config.server.port, host = config.server.host) {
      const requestTimeout = config.server.request_timeout_s * 1000;
      server = createAdaptorServer({
        fetch: app.fetch,
        serverOptions: {
          // Node's defaults (300 s, checked every 30 s) let slow clients hold connections for minutes.
          requestTimeout,
          headersTimeout: Math.min(config.server.headers_timeout_s * 1000, requestTimeout),
          connectionsCheckingInterval: 1000,
        },
      }) as Server;
      const s = server;
      return new Promise((resolve, reject) => {
        s.once('error', reject);
        s.listen(port, host, () => {
          s.off('error', reject);
          const address = s.address() as AddressInfo;
          const bind = checkBind(address.address, config);
          if (bind.error) {
            s.close();
            reject(new ConfigError(bind.error));
            return;
          }
          if (bind.warning) logger.warn({ address: address.address }, bind.warning);
          loopbackBind = isLoopbackAddress(address.address);
          const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
          resolve({ url: `http://${shownHost}:${address.port}${config.server.base_path}`, host: address.address, port: address.port });
        });
      });
    },
    close() {
      closing ??= (async () => {
        const s = server;
        const serverClosed = s ? new Promise<void>((resolve) => s.close(() => resolve())) : Promise.resolve();
        s?.closeIdleConnections();
        await engine.shutdown(config.server.shutdown_grace_s * 1000);
        await transport?.close(); // flush the calls' last answers to A2E transport streams, then end them
        // Streams end as their calls settle; give them a moment to flush, then drop what is left.
        await Promise.race([serverClosed, new Promise((r) => setTimeout(r, 1000).unref())]);
        s?.closeAllConnections();
        await serverClosed;
        await Promise.allSettled(plugins.map((p) => p.stop?.()));
        await security.close();
        await telemetry?.shutdown(); // exports the last spans
      })();
      return closing;
    },
  };
}

/** Agents per state, every state present (0 included) so a dashboard can alert on `failed > 0`. */
function countAgentStates(agents: readonly AgentStatus[]): Record<string, number> {
  const counts: Record<string, number> = Object.fromEntries(AgentStatus.shape.state.options.map((s) => [s, 0]));
  for (const a of agents) counts[a.state] = (counts[a.state] ?? 0) + 1;
  return counts;
}

/** The OpenAPI document of a gateway with this config (routes only; tools do not appear in it). */
export function openApiFor(config: GatewayConfig): ReturnType<typeof openApiDocument> {
  const logger = createLogger('silent');
  const engine: Engine = new Engine({
    registry: new ToolRegistry([], logger),
    logger,
    limits: { maxTimeoutS: 1, maxOutputBytes: 1, maxEvents: 1, maxBufferedEvents: 1 },
  });
  const metrics = new GatewayMetrics({ inFlight: () => 0, processMetrics: false });
  const mcp = config.mcp.serve.enabled ? new McpDoor({ engine, version: VERSION, pageSize: 1, callTimeoutS: 1 }) : undefined;
  const app = createApp({ engine, logger, metrics, version: VERSION, bodyLimitBytes: 1, heartbeatS: 1, calls: callResources(config), mcp });
  void mountA2eTransport(app, { engine, logger, config: config.transport, heartbeatS: 1, bodyLimitBytes: 1 })?.close();
  return openApiDocument(app, VERSION, config.server.base_path);
}

/** Where call resources are kept, from the `calls:` section. */
function callResources(config: GatewayConfig): { store: MemoryCallStore; retryMs: number; retainS: number } {
  const { retain_s, max_retained, retry_ms } = config.calls;
  const store = new MemoryCallStore({ retainMs: retain_s * 1000, maxRetained: max_retained, maxRetainedBytes: config.limits.retained_calls_bytes });
  return { store, retryMs: retry_ms, retainS: retain_s };
}
