/** One audit record per call attempt, including refused ones. Never argument values. */
export interface AuditRecord {
  ts: number;
  session_id: string;
  principal: string | null;
  req_id: string;
  correlation_id: string;
  tool_name: string;
  /** The door the call came through: "rest", "a2e" (the A2E transport), "mcp", … */
  door: string;
  kind: string | null;
  success: boolean;
  error_code: string | null;
  duration_ms: number;
  input_bytes: number;
  output_bytes: number;
  /**
   * Set on the record of an approval's outcome (approvals/), the one record that carries argument values: what
   * the caller sent and what the approver approved instead.
   */
  approval?: {
    id: string;
    decision: 'approve' | 'deny' | 'expired';
    approver: string | null;
    reason: string;
    wait_ms: number;
    arguments: Record<string, unknown>;
    edited_arguments?: Record<string, unknown>;
  };
}

export type AuditSink = (record: AuditRecord) => void;

export const noAudit: AuditSink = () => {};

/** Fan one audit record out to several sinks; one failing sink does not stop the others. */
export function combineAudit(...sinks: (AuditSink | undefined)[]): AuditSink {
  const list = sinks.filter((s): s is AuditSink => s !== undefined);
  return (record) => {
    let failure: unknown;
    for (const sink of list) {
      try {
        sink(record);
      } catch (err) {
        failure ??= err;
      }
    }
    if (failure !== undefined) throw failure;
  };
}
