/** Assembles the HTTP app: routes, error mapping, the OpenAPI document. */
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { GatewayError, SessionManager, type CallStore, type Caller, type Engine, type Logger, type PrincipalStreams } from '../engine/index.js';
import { admitCaller, admitShared, findCaller, resolveCaller } from '../security/access.js';
import { signedCallAccess } from './http/call-access.js';
import { registerCallRoutes } from './calls.js';
import type { AgentStatus } from '../protocol/index.js';
import { registerAgentRoutes } from './agents.js';
import { adminCheck } from './http/admin.js';
import { registerReadyRoute } from './ready.js';
import { registerRootRoute } from './root.js';
import { registerDocsRoutes } from './docs.js';
import { asGatewayError, errorResponse } from './http/errors.js';
import { guardCheck, type GuardOptions } from './http/guard.js';
import { registerHandshakeRoute } from './handshake.js';
import { registerToolRoutes } from './tools.js';
import { registerMetricsRoute } from './metrics.js';
import { buildDocument, type OpenApiDocument } from './openapi/document.js';
import { requestContext, requestLogger } from './http/request.js';
import { registerA2AServerRoutes } from './a2a-server.js';
import type { A2AServerConfig } from '../a2a-server/index.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import { proxyTrust, type TrustProxySetting } from './http/proxy-trust.js';
import { DEFAULT_HTTP_LIMITS, type HttpLimits } from './http/limits.js';
import type { McpDoor } from '../mcp-server/door.js';
import { registerMcpRoute } from './mcp.js';
import { registerMcpServersRoute } from './mcp-servers.js';
import { registerSourcesRoute } from './sources.js';
import type { McpServerStatus, SourceStatus } from '../protocol/index.js';
import { registerAdminEventsRoute } from './admin-events.js';
import { registerUiRoutes } from './ui.js';
import type { StoreHealth } from '../store/index.js';
import { registerReloadRoute } from './reload.js';
import type { ReloadOutcome } from '../reload/reloader.js';
import { tracingOn } from '../observability/tracing.js';
import { traceRequests } from './trace.js';

export interface AppOptions {
  engine: Engine;
  logger: Logger;
  /** Body size, JSON nesting, heartbeats and stream limits, for every route (the config's defaults for any not given). */
  limits?: Partial<HttpLimits>;
  /** Gateway version, shown in the OpenAPI document. */
  version: string;
  caller?: (c: Context, sessionId: string) => Caller;
  /** Call resources (POST /tool/calls): where they are kept, the EventSource `retry:` hint, retention for messages. */
  calls: {
    store: CallStore;
    retryMs: number;
    retainS: number;
    /** `calls.max_retained` and `calls.max_retained_per_principal`, for the 404 of a call that was dropped. */
    maxRetained?: number;
    maxRetainedPerPrincipal?: number;
  };
  /** The shared store's state, for GET /healthz (default: memory, always ok). */
  store?: () => StoreHealth;
  /** `server.base_path` ("" or e.g. "/a2e"): every route is served under it. */
  basePath?: string;
  /** `server.trust_proxy`: the proxies trusted for X-Forwarded-For (client address) and X-Forwarded-Proto / -Host (returned URLs). */
  trustProxy?: TrustProxySetting;
  /** The A2A agents' health, for GET /agents. */
  agents?: () => AgentStatus[];
  /** What plugins still check after start, for GET /readyz. */
  loading?: () => string[];
  /** Served at GET /metrics; also counts open SSE streams. */
  metrics?: GatewayMetrics;
  /** Host/Origin checks, authentication, sessions; without it the app is open (for embedding and docs). */
  security?: AppSecurity;
  /** The MCP door, served at POST /mcp when given. */
  mcp?: McpDoor;
  /** The MCP servers' state, for GET /mcp-servers. */
  mcpServers?: () => McpServerStatus[];
  /** Every tool source in one shape, for GET /sources. */
  sources?: () => SourceStatus[];
  /** The gateway as an A2A agent (agent card and JSON-RPC endpoint); not served when absent or disabled. */
  a2aServer?: A2AServerConfig;
  /** Re-reads the config (POST /admin/reload); refused when absent. */
  reload?: (trigger: string) => Promise<ReloadOutcome>;
  /** `ui.enabled` (the console at GET /ui); undefined = on for a loopback bind or when auth is on. */
  ui?: { enabled?: boolean };
}

export interface AppSecurity extends GuardOptions {
  sessions: SessionManager;
  sessionsRequired: boolean;
  /** Names of the tokens with `admin: true` (may read /metrics and /agents when auth is on). */
  admins?: ReadonlySet<string>;
  /** The streams open here by principal; a reload that revokes a credential ends those opened with it. */
  streams?: PrincipalStreams;
  /** Is this credential still configured (per-call access tokens of a revoked one stop working)? */
  credentialLive?: (credential: string) => boolean;
}

export function createApp(options: AppOptions): OpenAPIHono {
  const basePath = options.basePath ?? '';
  const proxies = proxyTrust(options.trustProxy);
  // Routes are declared without the base path (so is the OpenAPI document); Hono serves them under it.
  const app = basePath ? new OpenAPIHono().basePath(basePath) : new OpenAPIHono();
  const { logger, metrics } = options;
  const limits: HttpLimits = { ...DEFAULT_HTTP_LIMITS, ...options.limits };

  app.onError((err, c) => {
    const gatewayError = asGatewayError(err);
    if (gatewayError.code === 'internal') requestLogger(c, logger).error({ err, path: c.req.path }, 'unhandled error');
    return errorResponse(c, gatewayError);
  });

  const security = options.security;
  const sessions = security?.sessions ?? new SessionManager({ ttlS: 3600, maxParallel: 0 });
  if (tracingOn) app.use('*', traceRequests()); // first, so refused requests have spans too
  // One middleware for every request: its id and logger, then the guard's checks.
  app.use(
    '*',
    requestContext({
      logger,
      streamOpened: metrics && (() => metrics.streamOpened()),
      principalStreams: security?.streams,
      check: security
        ? guardCheck({
            ...security,
            basePath,
            // A refused POST to a door that starts calls is an audited call attempt (the body is never read).
            onRefused: (c, err, path) => {
              if (c.req.method === 'POST' && (path === '/tool/call' || path === '/tool/calls')) {
                options.engine.recordRefused({ tool_name: '', req_id: c.get('requestId') ?? '', error_code: err.code });
              }
              if (c.req.method === 'POST' && options.a2aServer?.enabled && path === options.a2aServer.path) {
                options.engine.recordRefused({ tool_name: '', req_id: c.get('requestId') ?? '', error_code: err.code, door: 'a2a' });
              }
            },
          })
        : undefined,
    }),
  );
  const caller =
    options.caller ??
    (security
      ? (c: Context, sessionId: string) => withCredential(c, resolveCaller(security, c.get('principal')?.name ?? null, sessionId))
      : (_c: Context, sessionId: string) => resolveCaller({ sessions, sessionsRequired: false }, null, sessionId));
  // With sessions in a shared store (store.kind redis), finding a session, and admitting a call, may take a round trip.
  const rules = security ?? { sessions, sessionsRequired: false };
  const sharedCaller = (c: Context, sessionId: string) => {
    const found = findCaller(rules, c.get('principal')?.name ?? null, sessionId);
    return found instanceof Promise ? found.then((caller) => withCredential(c, caller)) : withCredential(c, found);
  };
  const admit =
    options.caller ??
    ((c: Context, sessionId: string) => {
      const admitted = admitCaller(rules, c.get('principal')?.name ?? null, sessionId);
      return admitted instanceof Promise ? admitted.then((a) => (withCredential(c, a.caller), a)) : withCredential(c, admitted);
    });

  app.notFound((c) => {
    const routes = app.routes.filter((r) => r.method !== 'ALL' && routePattern(r.path).test(c.req.path));
    // A route for this very method that answered "not found" (e.g. an unknown docs asset) is a 404, not a 405.
    if (routes.length > 0 && !routes.some((r) => r.method === c.req.method)) {
      const allowed = [...new Set(routes.map((r) => r.method))].join(', ');
      return errorResponse(
        c,
        new GatewayError('method_not_allowed', `${c.req.method} is not supported on ${c.req.path}; use ${allowed}`, {
          detail: { allow: allowed },
        }),
      );
    }
    return errorResponse(
      c,
      new GatewayError('not_found', `no route ${c.req.method} ${c.req.path}; GET ${basePath}/openapi.json lists the routes`),
    );
  });

  registerToolRoutes(app, {
    engine: options.engine,
    logger,
    limits,
    caller: sessions.shared && !options.caller ? sharedCaller : caller,
    admit,
  });
  registerHandshakeRoute(app, {
    sessions,
    authenticate: security?.authenticate,
    limits,
    proxies,
  });

  const accessKey = options.calls.store.accessKey?.bind(options.calls.store);
  const callAccess = security?.authenticate ? signedCallAccess(accessKey, security.credentialLive) : undefined;
  registerCallRoutes(app, {
    engine: options.engine,
    store: options.calls.store,
    logger,
    limits,
    retryMs: options.calls.retryMs,
    retainS: options.calls.retainS,
    maxRetained: options.calls.maxRetained,
    maxRetainedPerPrincipal: options.calls.maxRetainedPerPrincipal,
    urls: { basePath, proxies },
    admit,
    access: callAccess,
  });
  registerAdminEventsRoute(app, {
    engine: options.engine,
    store: options.calls.store,
    access: callAccess,
    urls: { basePath, proxies },
    limits,
    retryMs: options.calls.retryMs,
  });
  registerUiRoutes(app, {
    enabled: options.ui?.enabled,
    authOn: security?.authenticate !== undefined,
    loopbackBind: security?.loopbackBind ?? (() => true),
  });

  const admin = adminCheck(security?.authenticate ? (security.admins ?? new Set()) : undefined);
  registerAgentRoutes(app, { agents: options.agents ?? (() => []), admin });
  registerMcpServersRoute(app, { servers: options.mcpServers ?? (() => []), admin });
  registerSourcesRoute(app, { sources: options.sources ?? (() => []), admin });
  registerReloadRoute(app, { reload: options.reload, admin });
  registerReadyRoute(app, {
    agents: options.agents ?? (() => []),
    loading: options.loading,
    unavailable: () => options.engine.registry.allUnavailable(),
    stopping: () => options.engine.stopping,
  });
  registerRootRoute(app, {
    basePath,
    version: options.version,
    ui: options.ui?.enabled !== false,
    mcp: options.mcp !== undefined,
    a2a: options.a2aServer?.enabled === true,
  });
  if (options.mcp) {
    registerMcpRoute(app, {
      door: options.mcp,
      logger,
      limits,
      admit: sessions.shared && ((principal) => admitShared(rules, principal)),
    });
  }
  if (metrics) registerMetricsRoute(app, metrics, admin);

  if (options.a2aServer?.enabled) {
    registerA2AServerRoutes(app, {
      config: options.a2aServer,
      engine: options.engine,
      store: options.calls.store,
      logger,
      version: options.version,
      limits,
      retainS: options.calls.retainS,
      urls: { basePath, proxies },
      caller: sessions.shared && !options.caller ? sharedCaller : caller,
      admit: sessions.shared && ((principal, sessionId) => admitShared(rules, principal, sessionId)),
      bearer: security?.authenticate !== undefined,
    });
  }

  let document: unknown;
  registerDocsRoutes(app, {
    engine: options.engine,
    document: () => (document ??= openApiDocument(app, options.version, basePath)),
    store: options.store,
  });
  return app;
}

export function openApiDocument(app: OpenAPIHono, version: string, basePath = ''): OpenApiDocument {
  return buildDocument(app.openAPIRegistry, version, basePath);
}

/** A Hono route path ("/tool/calls/:id") as a regex matching concrete paths. */
function routePattern(path: string): RegExp {
  const source = path
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}$`);
}

/** Bind a REST caller to the credential the request authenticated with: the calls it starts belong to that credential. */
function withCredential(c: Context, caller: Caller): Caller {
  const credential = c.get('principal')?.credential;
  if (credential !== undefined) caller.credential = credential;
  return caller;
}
