/**
 * The engine's one seam for tracing. The engine knows nothing of OpenTelemetry: when tracing is on, the
 * gateway hands it a CallTracer (src/observability/tracing.ts); when it is off there is none, and a call
 * costs one check of an undefined field.
 */
import type { Call } from './call.js';

export interface CallTracer {
  /**
   * Start the call's span, run `begin` (which starts the tool) with it as the active span, so the tool's
   * outgoing requests are its children, and end it when the call settles.
   */
  run(call: Call, begin: () => void): void;
  /** A call refused before it ran (unknown tool, denied, invalid arguments, over a limit). */
  refused(attempt: { tool_name: string; kind: string | null; door: string; error_code: string }): void;
}
