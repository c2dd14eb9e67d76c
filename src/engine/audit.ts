/** One audit record per call attempt, including refused ones. Never argument values. */
export interface AuditRecord {
  ts: number;
  session_id: string;
  principal: string | null;
  req_id: string;
  correlation_id: string;
  tool_name: string;
  kind: string | null;
  success: boolean;
  error_code: string | null;
  duration_ms: number;
  input_bytes: number;
  output_bytes: number;
  /** The door the call came through when it was not the REST routes (e.g. "a2a"). */
  door?: string;
}

export type AuditSink = (record: AuditRecord) => void;

export const noAudit: AuditSink = () => {};
