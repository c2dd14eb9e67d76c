/**
 * Every route group of the app, in the order createApp registers them, which is the order of the OpenAPI document:
 * one table drives both, so the document built without an app (`npm run openapi`, src/openapi.ts) cannot drift from
 * the routes a gateway serves (test/routes/openapi.test.ts compares the two). A group's OpenAPI specs live beside its handler:
 * in the handler's file, or in `<group>.spec.ts` next to it when they are long.
 */
import type { OpenAPIHono, RouteConfig } from '@hono/zod-openapi';
import { admitShared, type AccessRules } from '../security/access.js';
import type { SessionManager } from '../engine/index.js';
import type { TransportConfig } from '../transport/a2e-http/index.js';
import type { AppOptions } from './app-options.js';
import type { AdminCheck } from './http/admin.js';
import type { CallAccess } from './http/call-access.js';
import type { HttpLimits } from './http/limits.js';
import type { ProxyTrust } from './http/proxy-trust.js';
import { registerToolRoutes, type ToolRoutesDeps } from './api/tools.js';
import { callRoute, listRoute } from './api/tools.spec.js';
import { handshakeRoute, registerHandshakeRoute } from './api/handshake.js';
import { registerCallRoutes } from './api/calls.js';
import { callEventsRoute, cancelCallRoute, getCallRoute, startCallRoute } from './api/calls.spec.js';
import { adminEventsRoute, registerAdminEventsRoute } from './admin/admin-events.js';
import { agentsRoute, registerAgentRoutes } from './admin/agents.js';
import { mcpServersRoute, registerMcpServersRoute } from './admin/mcp-servers.js';
import { registerSourcesRoute, sourcesRoute } from './admin/sources.js';
import { registerReloadRoute, reloadRoute } from './admin/reload.js';
import { deleteWorkspaceRoute, registerWorkspacesRoutes, workspacesRoute } from './admin/workspaces.js';
import {
  decideApprovalRoute,
  getApprovalRoute,
  listApprovalsRoute,
  registerApprovalRoutes,
} from './admin/approvals.js';
import { readyRoute, registerReadyRoute } from './admin/ready.js';
import { metricsRoute, registerMetricsRoute } from './admin/metrics.js';
import { registerUiRoutes, uiRoute } from './pages/ui.js';
import { registerRootRoute } from './pages/root.js';
import { docsRoute, healthRoute, openapiRoute, registerDocsRoutes } from './pages/docs.js';
import { registerMcpRoute } from './doors/mcp.js';
import { mcpRoute, mcpStreamRoute } from './doors/mcp.spec.js';
import { registerA2AServerRoutes } from './doors/a2a-server.js';
import { transportRoutes } from './doors/a2e-transport.spec.js';

/** What decides the document without an app: the config's switches for the routes that may be off. */
export interface RouteSpecOptions {
  /** `mcp.serve.enabled`: POST /mcp is served. */
  mcp: boolean;
  /** `transport`: A2E's own HTTP message transport, under its path when enabled. */
  transport: TransportConfig;
}

/** What createApp worked out once for every group: the options, and the callers, checks and limits built from them. */
export interface RouteContext {
  options: AppOptions;
  limits: HttpLimits;
  basePath: string;
  proxies: ProxyTrust;
  sessions: SessionManager;
  rules: AccessRules;
  /** Who calls a REST or A2A request (a round trip to the shared store with store.kind redis). */
  caller: ToolRoutesDeps['caller'];
  admit: ToolRoutesDeps['admit'];
  admin: AdminCheck;
  /** Signed per-call access tokens, when auth is on. */
  callAccess: CallAccess | undefined;
  /** The OpenAPI document of the app, built at its first request. */
  document: () => unknown;
}

export interface RouteGroup {
  /** Its OpenAPI specs, in order. */
  specs(options: RouteSpecOptions): RouteConfig[];
  /** Registers its routes; absent for a group mounted outside createApp. */
  register?(app: OpenAPIHono, x: RouteContext): void;
}

export const ROUTE_TABLE: readonly RouteGroup[] = [
  {
    specs: () => [listRoute, callRoute],
    register: (app, x) =>
      registerToolRoutes(app, {
        engine: x.options.engine,
        logger: x.options.logger,
        limits: x.limits,
        caller: x.caller,
        admit: x.admit,
      }),
  },
  {
    specs: () => [handshakeRoute],
    register: (app, x) =>
      registerHandshakeRoute(app, {
        sessions: x.sessions,
        authenticate: x.options.security?.authenticate,
        limits: x.limits,
        proxies: x.proxies,
      }),
  },
  {
    specs: () => [startCallRoute, getCallRoute, cancelCallRoute, callEventsRoute],
    register: (app, { options, ...x }) =>
      registerCallRoutes(app, {
        engine: options.engine,
        store: options.calls.store,
        logger: options.logger,
        limits: x.limits,
        retryMs: options.calls.retryMs,
        retainS: options.calls.retainS,
        maxRetained: options.calls.maxRetained,
        maxRetainedPerPrincipal: options.calls.maxRetainedPerPrincipal,
        urls: { basePath: x.basePath, proxies: x.proxies },
        admit: x.admit,
        access: x.callAccess,
      }),
  },
  {
    specs: () => [adminEventsRoute],
    register: (app, { options, ...x }) =>
      registerAdminEventsRoute(app, {
        engine: options.engine,
        store: options.calls.store,
        access: x.callAccess,
        urls: { basePath: x.basePath, proxies: x.proxies },
        limits: x.limits,
        retryMs: options.calls.retryMs,
        isApprover: options.security?.isApprover,
        authOn: options.security?.authenticate !== undefined,
      }),
  },
  {
    specs: () => [uiRoute],
    register: (app, { options }) =>
      registerUiRoutes(app, {
        enabled: options.ui?.enabled,
        authOn: options.security?.authenticate !== undefined,
        loopbackBind: options.security?.loopbackBind ?? (() => true),
      }),
  },
  {
    specs: () => [agentsRoute],
    register: (app, x) => registerAgentRoutes(app, { agents: x.options.agents ?? (() => []), admin: x.admin }),
  },
  {
    specs: () => [mcpServersRoute],
    register: (app, x) => registerMcpServersRoute(app, { servers: x.options.mcpServers ?? (() => []), admin: x.admin }),
  },
  {
    specs: () => [sourcesRoute],
    register: (app, x) => registerSourcesRoute(app, { sources: x.options.sources ?? (() => []), admin: x.admin }),
  },
  {
    specs: () => [reloadRoute],
    register: (app, x) => registerReloadRoute(app, { reload: x.options.reload, admin: x.admin }),
  },
  {
    specs: () => [listApprovalsRoute, getApprovalRoute, decideApprovalRoute],
    register: (app, { options, limits }) => {
      const security = options.security;
      registerApprovalRoutes(app, {
        approvals: options.engine.approvals,
        isApprover:
          security?.isApprover ?? ((principal) => principal !== null && (security?.admins?.has(principal) ?? false)),
        authOn: security?.authenticate !== undefined,
        limits,
      });
    },
  },
  {
    specs: () => [workspacesRoute, deleteWorkspaceRoute],
    register: (app, x) =>
      registerWorkspacesRoutes(app, { workspaces: x.options.workspaces ?? (() => undefined), admin: x.admin }),
  },
  {
    specs: () => [readyRoute],
    register: (app, { options }) =>
      registerReadyRoute(app, {
        agents: options.agents ?? (() => []),
        loading: options.loading,
        unavailable: () => options.engine.registry.allUnavailable(),
        stopping: () => options.engine.stopping,
      }),
  },
  {
    // GET /: a page for people, not in the document.
    specs: () => [],
    register: (app, { options, basePath }) =>
      registerRootRoute(app, {
        basePath,
        version: options.version,
        ui: options.ui?.enabled !== false,
        mcp: options.mcp !== undefined,
        a2a: options.a2aServer?.enabled === true,
      }),
  },
  {
    specs: (o) => (o.mcp ? [mcpRoute, mcpStreamRoute] : []),
    register: (app, { options, sessions, rules, limits }) => {
      if (!options.mcp) return;
      registerMcpRoute(app, {
        door: options.mcp,
        logger: options.logger,
        limits,
        admit: sessions.shared && ((principal) => admitShared(rules, principal)),
      });
    },
  },
  {
    specs: () => [metricsRoute],
    register: (app, { options, admin }) => {
      if (options.metrics) registerMetricsRoute(app, options.metrics, admin);
    },
  },
  {
    // The A2A door: its agent card describes it, not the document.
    specs: () => [],
    register: (app, { options, ...x }) => {
      if (!options.a2aServer?.enabled) return;
      registerA2AServerRoutes(app, {
        config: options.a2aServer,
        engine: options.engine,
        store: options.calls.store,
        logger: options.logger,
        version: options.version,
        limits: x.limits,
        retainS: options.calls.retainS,
        urls: { basePath: x.basePath, proxies: x.proxies },
        caller: x.caller,
        admit: x.sessions.shared && ((principal, sessionId) => admitShared(x.rules, principal, sessionId)),
        bearer: options.security?.authenticate !== undefined,
      });
    },
  },
  {
    specs: () => [healthRoute, openapiRoute, docsRoute],
    register: (app, { options, document }) =>
      registerDocsRoutes(app, { engine: options.engine, document, store: options.store }),
  },
  {
    // The A2E transport: server.ts mounts it after createApp (mountA2eTransport), with the transport it opens; so last.
    specs: (o) => {
      if (!o.transport.enabled) return [];
      const t = transportRoutes(o.transport.path);
      return [t.session, t.send, t.stream, t.health];
    },
  },
];

/** Every route's OpenAPI spec for a config, in the document's order, without building an app. */
export function routeSpecs(options: RouteSpecOptions): RouteConfig[] {
  return ROUTE_TABLE.flatMap((group) => group.specs(options));
}
