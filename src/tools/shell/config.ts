import { z } from 'zod';

/** tools.shell — sandboxed command execution. */
export const ShellConfig = z.strictObject({
  enabled: z.boolean().default(true),
});
export type ShellConfig = z.output<typeof ShellConfig>;
