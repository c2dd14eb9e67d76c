/**
 * What the engine offers the layers around it, by name: anything not listed is an internal of its module
 * (dependency-free helpers live in src/utils/ and are imported from there).
 */
export { GatewayError, ToolError } from './errors.js';
export { asGatewayError, errorMessage, TOOLS_CAPABILITY } from './error-message.js';
export {
  ToolOutput,
  type LogFn,
  type Logger,
  type PluginHost,
  type ToolContext,
  type ToolPlugin,
  type UnavailableTool,
} from './plugin.js';
export { ANONYMOUS, allowAll, type Caller, type Policy, type PolicyDecision } from './policy.js';
export { combineAudit, noAudit, type AuditRecord, type AuditSink } from './audit.js';
export {
  Admission,
  MemoryRateLimiter,
  rateLimited,
  sessionFull,
  type AdmissionOptions,
  type Admitted,
  type RateLimiter,
} from './admission.js';
export { ToolRegistry, type RegisteredTool, type ToolConflict } from './registry.js';
export type { Call, CallLimits, CallState, StopReason } from './call.js';
export { writeCallLine } from './call-line.js';
export { gapNotice, type EventBatch, type Watcher } from './call-events.js';
export { MemoryCallStore, type CallRetention, type CallStore, type CallView, type CallWatch } from './call-store.js';
export { isCallId } from './call-id.js';
export {
  Engine,
  LIST_TOOLS_HINT,
  type EngineLimits,
  type EngineOptions,
  type EngineSettings,
  type StartOptions,
} from './engine.js';
export {
  MemorySessionStore,
  SessionManager,
  quotaKey,
  type Session,
  type SessionStore,
  type SharedSessionStore,
} from './sessions.js';
export { PrincipalStreams } from './principal-streams.js';
export {
  LazyChildLogger,
  PLAIN_LINE,
  levelEnabled,
  type CallLineCarrier,
  type PlainLineWriter,
} from './child-logger.js';
export { compileJsonSchema } from './json-schema.js';
export { describeCall, type CallActivity } from './activity.js';
export type { CallTracer } from './tracing.js';
export {
  Approvals,
  type ApprovalChange,
  type Decision,
  type DecisionInput,
  type PendingApproval,
} from './approvals/approvals.js';
export type { ApprovalGate, ApprovalNeed } from './approvals/gate.js';
export {
  MemoryApprovalStore,
  type ApprovalEvent,
  type ApprovalStore,
  type ApprovalSummary,
  type DeliveredDecision,
} from './approvals/approval-store.js';
