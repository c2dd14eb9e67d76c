import { z } from 'zod';

/** tools.eval — JavaScript evaluation in a WebAssembly sandbox (QuickJS). */
export const EvalConfig = z.strictObject({
  /** Offer eval_js. */
  enabled: z.boolean().default(true),
  /** Heap of the QuickJS runtime, MiB; allocating past it fails with "out of memory". */
  memory_mb: z.int().positive().max(4096).default(64),
  /** Stack of the QuickJS interpreter, KiB; deeper recursion fails with a stack overflow. */
  max_stack_kb: z.int().positive().max(65536).default(256),
  /** Default `timeout` of eval_js, seconds (never longer than the call's own timeout). */
  timeout_s: z.number().positive().default(10),
  /** Evaluations running at once (one worker thread each); more wait for a free slot within their timeout. */
  max_running: z.int().positive().default(4),
  /**
   * Evaluations one principal (auth token) may run at once, so one token's endless loops cannot take every
   * slot; its further evaluations wait, and a free slot goes to the waiting principal running the fewest.
   * Default: half of max_running, rounded up. Without auth every caller is one principal and only
   * max_running applies.
   */
  max_running_per_principal: z.int().positive().optional(),
  /** Bytes of console output kept and streamed per evaluation; beyond it console output is dropped. */
  max_console_bytes: z
    .int()
    .positive()
    .default(1024 * 1024),
});
export type EvalConfig = z.output<typeof EvalConfig>;
