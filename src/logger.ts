import { pino } from 'pino';
import pretty from 'pino-pretty';
import type { Logger } from './engine/index.js';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

export interface LoggerOptions {
  /** Human-readable, coloured lines instead of JSON (the CLI turns it on when stderr is a terminal). */
  pretty?: boolean;
}

/** JSON lines on stderr (stdout is kept for the CLI's own output). */
export function createLogger(level: LogLevel = 'info', options: LoggerOptions = {}): Logger {
  const destination = options.pretty
    ? pretty({ destination: 2, sync: true, colorize: true, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' })
    : pino.destination({ fd: 2, sync: false });
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['*.authorization', '*.Authorization', '*.headers.authorization', '*.token', '*.auth_token', '*.password', '*.secret'],
        censor: '[redacted]',
      },
    },
    destination,
  ) as unknown as Logger;
}
