import { pino } from 'pino';
import { createRequire } from 'node:module';
import type PinoPretty from 'pino-pretty';
import { PLAIN_LINE, type Logger, type PlainLineWriter } from './engine/index.js';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

export interface LoggerOptions {
  /** Human-readable, coloured lines instead of JSON (the CLI turns it on when stderr is a terminal). */
  pretty?: boolean;
  /** Where JSON lines go instead of stderr (tests). */
  destination?: { write(line: string): unknown };
}

/** pino-pretty is loaded only for a terminal: a gateway logging JSON lines never loads it. */
const loadPretty = () => createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;

const LEVEL_NUMBERS = { debug: 20, info: 30, warn: 40, error: 50 } as const;

/** JSON lines on stderr (stdout is kept for the CLI's own output). */
export function createLogger(level: LogLevel = 'info', options: LoggerOptions = {}): Logger {
  const destination = options.destination
    ? options.destination
    : options.pretty
    ? loadPretty()({ destination: 2, sync: true, colorize: true, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' })
    : lineBatcher(pino.destination({ fd: 2, sync: false }));
  const logger = pino(
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
  );
  Object.defineProperty(logger, PLAIN_LINE, { value: plainLineWriter(logger, destination) });
  return logger as unknown as Logger;
}

interface FileDestination {
  write(data: string): boolean;
  flushSync(): void;
}

const batchers = new Set<WeakRef<FileDestination>>();
let exitHook = false;

/**
 * Lines written in one turn of the event loop go to stderr in one write. Under
 * load the asynchronous file destination would otherwise start one write (a
 * threadpool round trip) for nearly every line. What is pending at exit is
 * written synchronously, as pino does for its own destination.
 */
function lineBatcher(destination: FileDestination): FileDestination {
  let pending = '';
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending === '') return;
    const lines = pending;
    pending = '';
    destination.write(lines);
  };
  const batcher = {
    write(line: string): boolean {
      pending += line;
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
      return true;
    },
    flushSync(): void {
      flush();
      destination.flushSync();
    },
  };
  batchers.add(new WeakRef(batcher));
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const ref of batchers) {
        try {
          ref.deref()?.flushSync();
        } catch {
          // a destroyed destination: nothing more can be written
        }
      }
    });
  }
  return batcher;
}

/**
 * The per-request lines (access, call outcome) written without pino's generic
 * path: no child logger for the request's bindings, no redaction pass (their
 * fields are ids, names, numbers — never a header, token or argument), one
 * string built by hand. The line is byte for byte what pino writes for
 * `logger.child(bindings)[level](fields, msg)`: level, time, bindings, fields,
 * msg, undefined values left out; the same destination, so pretty output and
 * ordering with the other lines are kept.
 */
function plainLineWriter(logger: pino.Logger, destination: { write(line: string): unknown }): PlainLineWriter {
  let lastMs = 0;
  let lastTime = '';
  return (level, bindings, fields, msg) => {
    if (!logger.isLevelEnabled(level)) return;
    const now = Date.now();
    if (now !== lastMs) {
      lastMs = now;
      lastTime = new Date(now).toISOString();
    }
    let line = `{"level":${LEVEL_NUMBERS[level]},"time":"${lastTime}"`;
    for (const key in bindings) line += member(key, bindings[key]);
    for (const key in fields) line += member(key, fields[key]);
    destination.write(`${line},"msg":${JSON.stringify(msg)}}\n`);
  };
}

function member(key: string, value: unknown): string {
  return value === undefined ? '' : `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
}
