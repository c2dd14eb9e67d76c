/**
 * Which calls wait for a person: the engine asks the gate after admission, policy and argument validation.
 * Built from config by the security layer (security/approval-rules.ts); a reload swaps what it answers for
 * new calls, a pending approval keeps what it was created under.
 */
import type { ToolDefinition } from '../../protocol/index.js';
import type { Caller } from '../policy.js';

/** What the gate says of a call that must wait. */
export interface ApprovalNeed {
  /** The config rule that gated it, as written (shown to approvers). */
  rule: string;
  /** How long it may wait for a decision, seconds (approvals.timeout_s when it was created). */
  timeoutS: number;
}

export interface ApprovalGate {
  /** undefined: the call runs at once. */
  need(caller: Caller, tool: ToolDefinition, args: Record<string, unknown>): ApprovalNeed | undefined;
  /** May `approver` decide a call of `caller`? False for one's own call unless approvals.allow_self. */
  selfAllowed(): boolean;
}
