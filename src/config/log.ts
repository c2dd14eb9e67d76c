/** The `log` config section. */
import { z } from 'zod';

export const LogConfig = z.strictObject({
  /** Lowest level written (LOG_LEVEL, when set, wins); a reload applies a change. Default info. */
  level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).optional(),
});
export type LogConfig = z.output<typeof LogConfig>;
