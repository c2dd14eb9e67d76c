import { z } from 'zod';

/** tools.eval — JavaScript evaluation in a WebAssembly sandbox. */
export const EvalConfig = z.strictObject({
  enabled: z.boolean().default(true),
});
export type EvalConfig = z.output<typeof EvalConfig>;
