/**
 * Calls held for a person's approval. The engine holds a gated call here instead of running it; an approver's
 * decision (POST /admin/approvals/{id}) releases it with its arguments (maybe edited, checked again) or ends it
 * `tool_denied`; so does the wait limit. A call stopped while it waits (cancel, disconnect, shutdown) leaves the
 * list as it settles. Every decision is one audit record (which also feeds the approvals metrics).
 * The call stays on the instance that holds it; its summary goes to the approval store (approval-store.ts), where
 * approvers on any instance list it and decide: a decision made elsewhere comes back here to be applied.
 */
import { randomBytes } from 'node:crypto';
import { GatewayError } from '../errors.js';
import type { AuditRecord } from '../audit.js';
import type { Call } from '../call.js';
import type { ApprovalGate, ApprovalNeed } from './gate.js';
import {
  MemoryApprovalStore,
  type ApprovalEvent,
  type ApprovalStore,
  type ApprovalSummary,
  type Decision,
  type DeliveredDecision,
} from './approval-store.js';

export type { Decision } from './approval-store.js';

/** One held call. */
export interface PendingApproval {
  /** Unguessable (144 random bits): it is what an approver acts on, and tells nobody else anything. */
  readonly id: string;
  readonly call: Call;
  /** The rule that gated it, as written in the config of its time. */
  readonly rule: string;
  /** The arguments the caller sent (validated). */
  readonly arguments: Record<string, unknown>;
  /** Unix seconds. */
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly url: string;
  /** What approvers see of it, on every instance sharing the store. */
  readonly summary: ApprovalSummary;
}

export interface DecisionInput {
  decision: Decision;
  reason?: string;
  /** Replacement arguments (approve only); checked like a call's own. */
  arguments?: Record<string, unknown>;
}

/** What happened to a pending approval, for watchers (the console through /admin/events). */
export type ApprovalChange =
  | { type: 'approval.pending'; approval: PendingApproval }
  | {
      type: 'approval.decided';
      approval: PendingApproval;
      decision: Decision | 'expired' | 'canceled';
      approver: string | null;
    };

export interface ApprovalsOptions {
  gate: ApprovalGate;
  /** The arguments of an edit, checked as the call's own were (shape limits, the tool's schema); throws invalid_arguments. */
  check: (call: Call, args: Record<string, unknown>) => Record<string, unknown>;
  audit: (call: Call, approval: NonNullable<AuditRecord['approval']>) => void;
  /** Run a released call's tool (the engine's begin, under its tracer). */
  begin: (call: Call) => void;
  /** The arguments of an edit of a call held on another instance, checked against this instance's tool of that name. */
  checkTool: (toolName: string, args: Record<string, unknown>) => Record<string, unknown>;
  /** The URL path of an approval (GET/POST), under the gateway's base path. */
  urlOf?: (id: string) => string;
  /** Where pending approvals are listed and decided (default: this process's memory). */
  store?: ApprovalStore;
}

export class Approvals {
  private readonly pending = new Map<string, PendingApproval & { timer: NodeJS.Timeout }>();
  private readonly byCall = new Map<Call, string>();
  private readonly watchers = new Set<(change: ApprovalChange) => void>();
  /** The pending list approvers read and decide on (shared by every instance with Redis). */
  readonly store: ApprovalStore;

  constructor(private readonly options: ApprovalsOptions) {
    this.store = options.store ?? new MemoryApprovalStore();
    this.store.serve((decision) => this.apply(decision));
  }

  /** The gate's answer for a call about to start (undefined: it runs at once). */
  need(call: Call, args: Record<string, unknown>): ApprovalNeed | undefined {
    return this.options.gate.need(call.caller, call.tool.definition, args);
  }

  /** Hold `call` (registered, not begun) until someone decides or `need.timeoutS` passes. */
  hold(call: Call, args: Record<string, unknown>, need: ApprovalNeed): PendingApproval {
    const id = randomBytes(18).toString('base64url');
    const createdAt = Date.now() / 1000;
    const timer = setTimeout(() => this.expire(id, need.timeoutS), need.timeoutS * 1000);
    timer.unref();
    const url = this.options.urlOf?.(id) ?? `/admin/approvals/${id}`;
    const expiresAt = createdAt + need.timeoutS;
    const summary: ApprovalSummary = {
      id,
      call_id: call.id,
      req_id: call.requestId,
      tool_name: call.toolName,
      kind: call.tool.definition.kind,
      arguments: args,
      principal: call.principal,
      session_id: call.caller.sessionId,
      door: call.door,
      correlation_id: call.request.correlation_id,
      rule: need.rule,
      created_at: createdAt,
      expires_at: expiresAt,
      url,
      owner: this.store.instance,
    };
    const approval = { id, call, rule: need.rule, arguments: args, createdAt, expiresAt, url, summary, timer };
    this.pending.set(id, approval);
    this.byCall.set(call, id);
    this.store.add(summary);
    call.hold();
    call.emit('status', {
      message: `awaiting approval: tool "${call.toolName}" runs once a person approves it (rule "${need.rule}"); it waits up to ${need.timeoutS} s`,
      approval: { id, url, expires_at: approval.expiresAt },
    });
    this.tell({ type: 'approval.pending', approval });
    return approval;
  }

  get size(): number {
    return this.pending.size;
  }

  /** Pending approvals, oldest first. */
  list(): PendingApproval[] {
    return [...this.pending.values()];
  }

  get(id: string): PendingApproval | undefined {
    return this.pending.get(id);
  }

  /**
   * An approver's decision, on whichever instance holds the call. Throws not_found (decided, expired, canceled,
   * never existed, or another approver's decision came first), forbidden (one's own call without
   * approvals.allow_self), invalid_arguments (an edit the tool refuses: the approval stays pending) or unavailable
   * (the shared store or the instance holding the call does not answer). Resolves once the decision is applied.
   */
  async decide(id: string, input: DecisionInput, approver: string | null): Promise<ApprovalSummary> {
    const summary = await this.store.get(id);
    if (!summary) throw notPending();
    if (approver !== null && approver === summary.principal && !this.options.gate.selfAllowed()) {
      throw new GatewayError(
        'forbidden',
        `token "${approver}" started this call, and nobody approves their own call; ask another approver (approvals.approvers), or set approvals.allow_self: true`,
      );
    }
    const local = this.pending.get(id);
    let edited: Record<string, unknown> | undefined;
    if (input.decision === 'approve' && input.arguments !== undefined) {
      edited = local
        ? this.options.check(local.call, input.arguments)
        : this.options.checkTool(summary.tool_name, input.arguments);
    }
    if (!(await this.store.claim(id))) throw notPending();
    const decision: DeliveredDecision = {
      id,
      decision: input.decision,
      reason: input.reason?.trim() ?? '',
      ...(edited ? { arguments: edited } : {}),
      approver,
    };
    if (summary.owner === this.store.instance) this.apply(decision);
    else await this.store.deliver(summary, decision);
    return summary;
  }

  /** Apply a claimed decision to a call held here (decided here or on another instance). Throws not_found when it no longer waits. */
  apply(decision: DeliveredDecision): PendingApproval {
    const approval = this.pending.get(decision.id);
    if (!approval) throw notPending();
    const { id, approver, reason } = decision;
    const args = decision.arguments ?? approval.arguments;
    this.remove(approval, decision.decision, approver);
    this.options.audit(approval.call, {
      id,
      decision: decision.decision,
      approver,
      reason,
      wait_ms: Math.round((Date.now() / 1000 - approval.createdAt) * 1000),
      arguments: approval.arguments,
      ...(decision.arguments ? { edited_arguments: args } : {}),
    });
    this.tell({ type: 'approval.decided', approval, decision: decision.decision, approver });
    if (decision.decision === 'approve') {
      if (approval.call.release(args)) this.options.begin(approval.call);
    } else approval.call.refuse(`denied by ${approver ?? 'an approver'}${reason ? `: ${reason}` : ''}`);
    return approval;
  }

  /** The engine: `call` settled (it may have been stopped while waiting). */
  settled(call: Call): void {
    const id = this.byCall.get(call);
    if (id === undefined) return;
    const approval = this.pending.get(id);
    if (!approval) return;
    this.remove(approval, 'canceled', null);
    this.tell({ type: 'approval.decided', approval, decision: 'canceled', approver: null });
  }

  /** Follow the approvals of every instance sharing the store as they come and go (this instance's and the others'). */
  watchAll(listener: (event: ApprovalEvent) => void): () => void {
    const stopLocal = this.watch((change) =>
      listener(
        change.type === 'approval.pending'
          ? { type: 'approval.pending', summary: change.approval.summary }
          : {
              type: 'approval.decided',
              id: change.approval.id,
              call_id: change.approval.call.id,
              decision: change.decision,
              approver: change.approver,
            },
      ),
    );
    const stopShared = this.store.watch(listener);
    return () => (stopLocal(), stopShared());
  }

  /** Follow this instance's approvals as they come and go; returns the function that stops following. */
  watch(listener: (change: ApprovalChange) => void): () => void {
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  private expire(id: string, timeoutS: number): void {
    const approval = this.pending.get(id);
    if (!approval) return;
    this.remove(approval, 'expired', null);
    this.options.audit(approval.call, {
      id,
      decision: 'expired',
      approver: null,
      reason: '',
      wait_ms: Math.round(timeoutS * 1000),
      arguments: approval.arguments,
    });
    this.tell({ type: 'approval.decided', approval, decision: 'expired', approver: null });
    approval.call.refuse(
      `the approval of tool "${approval.call.toolName}" expired after ${timeoutS} s without a decision (approvals.timeout_s); call again when an approver is available`,
    );
  }

  private remove(
    approval: PendingApproval & { timer: NodeJS.Timeout },
    decision: Decision | 'expired' | 'canceled',
    approver: string | null,
  ): void {
    clearTimeout(approval.timer);
    this.pending.delete(approval.id);
    this.byCall.delete(approval.call);
    this.store.remove(approval.id, {
      type: 'approval.decided',
      id: approval.id,
      call_id: approval.call.id,
      decision,
      approver,
    });
  }

  private tell(change: ApprovalChange): void {
    for (const w of this.watchers) {
      try {
        w(change);
      } catch {
        // A watcher's failure is its own (a closed stream); the decision stands.
      }
    }
  }
}

function notPending(): GatewayError {
  return new GatewayError(
    'not_found',
    'no pending approval with this id: it was decided, expired, or its call ended; GET /admin/approvals lists the pending ones',
  );
}
