/**
 * Where pending approvals are listed and decided: the store port of approvals. A held call lives on the instance
 * that received it (its owner: the `Call` cannot move); what approvers list, and the decisions they make, go
 * through this store. In memory (one instance) it is this process's list; with Redis (store/redis/approvals.ts)
 * every instance lists every instance's pending approvals, a decision is claimed there exactly once and handed
 * to the owner, which applies it.
 */
import { GatewayError } from '../errors.js';

/** What an approver decides. */
export type Decision = 'approve' | 'deny';

/** What an approver sees of a pending approval (GET /admin/approvals), wherever its call is held. */
export interface ApprovalSummary {
  id: string;
  call_id: string;
  req_id: string;
  tool_name: string;
  kind: string;
  arguments: Record<string, unknown>;
  principal: string | null;
  session_id: string;
  door: string;
  correlation_id: string;
  rule: string;
  /** Unix seconds. */
  created_at: number;
  expires_at: number;
  url: string;
  /** The instance holding the call (the store's instance id). */
  owner: string;
}

/** A change of the pending list, on any instance sharing the store. */
export type ApprovalEvent =
  | { type: 'approval.pending'; summary: ApprovalSummary }
  | {
      type: 'approval.decided';
      id: string;
      call_id: string;
      /** canceled: its call ended while waiting (or the instance holding it was lost). */
      decision: Decision | 'expired' | 'canceled';
      approver: string | null;
    };

/** A decision made on one instance for a call held on another, already checked and claimed. */
export interface DeliveredDecision {
  id: string;
  decision: Decision;
  reason: string;
  /** The arguments to run with (the edit, checked on the deciding instance), when edited. */
  arguments?: Record<string, unknown>;
  approver: string | null;
}

export interface ApprovalStore {
  /** This instance's id: the owner written into the summaries of the calls it holds. */
  readonly instance: string;
  /** A call was held here. */
  add(summary: ApprovalSummary): void;
  /** A call held here left the list (`event`: how), whoever decided. */
  remove(id: string, event: ApprovalEvent & { type: 'approval.decided' }): void;
  /** The pending approvals of every instance sharing the store, oldest first. */
  list(): ApprovalSummary[] | Promise<ApprovalSummary[]>;
  get(id: string): ApprovalSummary | undefined | Promise<ApprovalSummary | undefined>;
  /** Take the decision on `id`: true for exactly one decider; it leaves the list at once. */
  claim(id: string): boolean | Promise<boolean>;
  /** Hand a claimed decision to the instance holding the call (`summary.owner`); resolves once it applied it (throws not_found or unavailable). */
  deliver(summary: ApprovalSummary, decision: DeliveredDecision): Promise<void>;
  /** Where decisions made on other instances for calls held here come in: `apply` applies one, or throws (not_found) when its call no longer waits. */
  serve(apply: (decision: DeliveredDecision) => void): void;
  /** Changes made on other instances (this instance's own are told by Approvals). */
  watch(listener: (event: ApprovalEvent) => void): () => void;
}

/** One instance: the pending list is this process's. */
export class MemoryApprovalStore implements ApprovalStore {
  readonly instance = 'local';
  private readonly pending = new Map<string, ApprovalSummary>();

  add(summary: ApprovalSummary): void {
    this.pending.set(summary.id, summary);
  }

  remove(id: string): void {
    this.pending.delete(id);
  }

  list(): ApprovalSummary[] {
    return [...this.pending.values()];
  }

  get(id: string): ApprovalSummary | undefined {
    return this.pending.get(id);
  }

  claim(id: string): boolean {
    return this.pending.delete(id);
  }

  deliver(): Promise<void> {
    // Every call is held here: nothing is ever delivered elsewhere.
    return Promise.reject(new GatewayError('internal', 'no other instance shares this gateway'));
  }

  serve(): void {}

  watch(): () => void {
    return () => {};
  }
}
