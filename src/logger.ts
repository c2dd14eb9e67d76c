import { pino } from 'pino';
import type { Logger } from './engine/index.js';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

/** JSON lines on stderr (stdout is kept for the CLI's own output). */
export function createLogger(level: LogLevel = 'info'): Logger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: ['*.authorization', '*.Authorization', '*.headers.authorization', '*.token'], censor: '[redacted]' },
    },
    pino.destination({ fd: 2, sync: false }),
  ) as unknown as Logger;
}
