/**
 * The gateway's configuration, validated once at start. Every object is
 * strict: an unknown key is an error naming it, never silently ignored.
 */
import { z } from 'zod';
import { ToolsConfig } from '../tools/config.js';
import { A2AConfig, AgentsConfig } from '../a2a/config.js';
import { BasePath } from './base-path.js';
import { CallsConfig } from '../store/calls-config.js';
import { PluginsConfig } from '../operator-plugins/config.js';
import { ApprovalsConfig } from '../security/approvals-config.js';
import {
  AuditConfig,
  AuthConfig,
  LimitsConfig,
  PolicyConfig,
  SessionsConfig,
  serverSecurityFields,
} from '../security/config.js';

import { TransportConfig } from '../transport/a2e-http/config.js';
import { LimitsSection } from './memory.js';
import { StoreConfig } from '../store/config.js';
import { Workers } from './workers.js';
import { TrustProxy } from './trust-proxy.js';
import { McpConfig } from '../mcp/config.js';
import { OpenApiConfig } from '../openapi-source/config.js';
import { A2AServerConfig } from '../a2a-server/config.js';
import { UiConfig } from './ui.js';
import { LogConfig } from './log.js';
import { TelemetryConfig } from '../observability/config.js';

export { CallsConfig };

const MiB = 1024 * 1024;

export const ServerConfig = z.strictObject({
  /** Interface to bind. */
  host: z.string().min(1).default('127.0.0.1'),
  /** Port to bind; 0 picks a free one. */
  port: z.int().min(0).max(65535).default(8080),
  /** Upper bound on any call's `timeout`, seconds. */
  max_timeout_s: z.int().positive().default(300),
  /** Interval of SSE comment heartbeats, seconds. */
  heartbeat_s: z.number().positive().default(15),
  /** Largest accepted request body, bytes. */
  body_limit_bytes: z.int().positive().default(MiB),
  /** Byte cap on a result's data (as JSON); larger results are truncated. */
  max_output_bytes: z
    .int()
    .positive()
    .default(4 * MiB),
  /** On SIGTERM/SIGINT, how long running calls may take to finish before they are stopped, seconds. */
  shutdown_grace_s: z.number().min(0).default(10),
  /** Path prefix every route is served under, e.g. "/a2e" behind a reverse proxy ("" = none). */
  base_path: BasePath.default(''),
  /**
   * Proxies trusted to say where a request came from: `true` (= 1) or a number of proxy hops in front of the
   * gateway, or a list of the proxies' addresses / CIDR ranges. The client's address (for per-address session
   * quotas) is then the X-Forwarded-For entry the outermost trusted proxy appended (with `1`: the last one; make
   * the edge proxy set the header, nginx: `proxy_set_header X-Forwarded-For $remote_addr;`), and returned URLs
   * follow X-Forwarded-Proto / X-Forwarded-Host. With a list, a request whose peer is not listed is taken as is.
   */
  trust_proxy: TrustProxy.default(false),
  /**
   * Directory where the gateway keeps what must outlive a restart: each sandboxed MCP server's data directory
   * (`mcp/<id>`, see mcp.servers.<id>.data_dir). Relative to the directory the gateway starts in; created when needed.
   */
  state_dir: z.string().min(1).default('./state'),
  /** Gateway processes to run on this machine (Node's cluster), or "auto" = one per CPU; more than 1 needs `store.kind: redis`. */
  workers: Workers.default(1),
  ...serverSecurityFields,
});

export { AuditConfig, AuthConfig, LimitsConfig, PolicyConfig, SessionsConfig };

export const GatewayConfig = z.strictObject({
  server: ServerConfig.prefault({}),
  calls: CallsConfig.prefault({}),
  tools: ToolsConfig.prefault({}),
  agents: AgentsConfig.default(() => ({})),
  a2a: A2AConfig.prefault({}),
  policy: PolicyConfig.prefault({}),
  auth: AuthConfig.optional(),
  approvals: ApprovalsConfig.prefault({}),
  plugins: PluginsConfig.default(() => []),
  sessions: SessionsConfig.prefault({}),
  limits: LimitsSection.prefault({}),
  audit: AuditConfig.prefault({}),
  transport: TransportConfig.prefault({}),
  mcp: McpConfig.prefault({}),
  /** OpenAPI documents whose operations become tools (docs/openapi-sources.md). */
  openapi: OpenApiConfig.prefault({}),
  store: StoreConfig.prefault({}),
  a2a_server: A2AServerConfig.prefault({}),
  ui: UiConfig.prefault({}),
  log: LogConfig.prefault({}),
  telemetry: TelemetryConfig.default(() => ({})),
});
export type GatewayConfig = z.output<typeof GatewayConfig>;
export type GatewayConfigInput = z.input<typeof GatewayConfig>;
