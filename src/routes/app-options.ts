/** What createApp takes: the engine, the stores and sources it reports on, security, and the doors it serves. */
import type { Context } from 'hono';
import type { CallStore, Caller, Engine, Logger, PrincipalStreams, SessionManager } from '../engine/index.js';
import type { AgentStatus, McpServerStatus, SourceStatus } from '../protocol/index.js';
import type { A2AServerConfig } from '../a2a-server/index.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { McpDoor } from '../mcp-server/door.js';
import type { StoreHealth } from '../store/index.js';
import type { ReloadOutcome } from '../reload/reloader.js';
import type { GuardOptions } from './http/guard.js';
import type { HttpLimits } from './http/limits.js';
import type { TrustProxySetting } from './http/proxy-trust.js';
import type { WorkspaceAdmin } from './admin/workspaces.js';

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
  /** The native tools' workspaces (GET/DELETE /admin/workspaces); undefined when neither fs nor shell is on. */
  workspaces?: () => WorkspaceAdmin | undefined;
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
  /** May this principal list and decide approvals (approvals.approvers)? Nobody but admins when not given. */
  isApprover?: (principal: string | null) => boolean;
}
