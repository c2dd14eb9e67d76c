/**
 * Public API of a2e-gateway (the package's main entry).
 *
 * Every export is listed here on purpose: what an application embedding the
 * gateway, a plugin author or another door needs. Anything not listed is an
 * internal of its module and may change without notice. Plugin modules should
 * import from `a2e-gateway/plugin` (no runtime dependencies) and HTTP clients
 * from `a2e-gateway/client`.
 */

// The gateway: build one from a config, serve it, close it.
export { createGateway, builtinPlugins, openApiFor, VERSION, type Gateway, type GatewayOptions } from './server.js';
export { createApp, openApiDocument, type AppOptions, type HttpLimits } from './routes/index.js';
export { createLogger, type LogLevel } from './logger.js';

// Configuration.
export { defineConfig, parseConfig, loadConfigFile, expandEnv, ConfigError } from './config/index.js';
export {
  GatewayConfig,
  type GatewayConfigInput,
  ServerConfig,
  CallsConfig,
  AuditConfig,
  AuthConfig,
  LimitsConfig,
  PolicyConfig,
  SessionsConfig,
} from './config/index.js';

// The plugin contract (also offered, without runtime dependencies, by `a2e-gateway/plugin`).
export {
  ToolError,
  GatewayError,
  ToolOutput,
  type Logger,
  type LogFn,
  type PluginHost,
  type ToolContext,
  type ToolPlugin,
  type UnavailableTool,
} from './engine/index.js';
export type { PluginFactory, PluginFactoryContext } from './operator-plugins/factory.js';

// The engine, for other doors and embedding applications: one Call lifecycle for every door.
export {
  Engine,
  type EngineOptions,
  type EngineLimits,
  type StartOptions,
  ToolRegistry,
  type RegisteredTool,
  type ToolConflict,
  type Call,
  type CallState,
  type StopReason,
  type CallLimits,
  type CallStore,
  type CallRetention,
  MemoryCallStore,
  type Session,
  type SessionStore,
  MemorySessionStore,
  type RateLimiter,
  MemoryRateLimiter,
  type Caller,
  type Policy,
  type PolicyDecision,
  allowAll,
  ANONYMOUS,
  type AuditRecord,
  type AuditSink,
  noAudit,
} from './engine/index.js';

// Authentication and access rules.
export {
  bearerToken,
  buildPolicy,
  compileRules,
  createAuthenticator,
  resolveCaller,
  type AccessRules,
  type Authenticate,
  type Principal,
  type Security,
} from './security/index.js';

// A2E messages (zod schemas that are also the TypeScript types).
export {
  PROTOCOL_VERSION,
  PARAMETER_TYPES,
  ToolParameter,
  ToolDefinition,
  type ToolDefinitionInput,
  TOOL_EVENT_KINDS,
  ToolEvent,
  type ToolEventKind,
  type ToolEventDataMap,
  type ProgressData,
  type StatusData,
  type ArtifactData,
  type LogData,
  ToolResult,
  ToolListRequest,
  ToolListResponse,
  ToolCallRequest,
  ToolCallResponse,
  ERROR_CODES,
  type ErrorCode,
  ErrorMessage,
  A2E_CAPABILITIES,
  type A2ECapability,
  HandshakeRequest,
  HandshakeResponse,
  type AcceptedCapability,
  Ping,
  Pong,
  Shutdown,
  AgentStatus,
  AgentsResponse,
  McpServerStatus,
  McpServersResponse,
  FIELD_LIMITS,
} from './protocol/index.js';

// A2A agents as a tool source.
export {
  A2APlugin,
  a2aPlugin,
  A2A_PLUGIN_NAME,
  A2AConfig,
  AgentConfig,
  AgentsConfig,
  parseAgentsConfig,
  type AgentDescriptor,
  type AgentConfigInput,
  type RunContext,
  type RunResult,
  type RunMetadata,
  type Artifact,
} from './a2a/index.js';
