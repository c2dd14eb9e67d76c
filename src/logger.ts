import { pino } from 'pino';
import { writeSync } from 'node:fs';
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
      ? loadPretty()({
          destination: 2,
          sync: true,
          colorize: true,
          singleLine: true,
          translateTime: 'SYS:HH:MM:ss.l',
          ignore: 'pid,hostname',
        })
      : lineBatcher(writeStderr);
  const logger = pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          '*.authorization',
          '*.Authorization',
          '*.headers.authorization',
          '*.token',
          '*.auth_token',
          '*.password',
          '*.secret',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
  Object.defineProperty(logger, PLAIN_LINE, { value: plainLineWriter(logger, destination) });
  return logger as unknown as Logger;
}

/**
 * stderr written synchronously, one write per batch, as Node itself writes
 * process.stderr to a file, a pipe or a socket on Linux (and pino its default
 * destination). Lines arrive whole and in the order they were logged, and
 * nothing is pending at exit. To a file a write only copies into the page
 * cache; done asynchronously it cost a threadpool round trip per batch, which
 * measured as most of what logging at info cost. To a pipe whose reader
 * stops reading, the writes wait for it, as every process's do (a container
 * runtime's non-blocking log mode is the remedy on that side).
 */
function writeStderr(lines: string): void {
  // Nearly every batch goes whole in one write of the string itself, with no Buffer made for it; what a write
  // did not take (a pipe that is full, or non-blocking and not ready) goes on as bytes from where it stopped.
  let written = 0;
  try {
    written = writeSync(2, lines);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return; // see below: lost, the gateway goes on
  }
  if (written === Buffer.byteLength(lines)) return;
  const buffer = Buffer.from(lines);
  for (let at = written; at < buffer.length; ) {
    try {
      at += writeSync(2, buffer, at);
    } catch (err) {
      // stderr opened non-blocking by whoever handed it to us: wait for the reader, as a blocking one would.
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') Atomics.wait(PAUSE, 0, 0, 1);
      // Disk full, stderr closed or its reader gone: these lines are lost, the gateway goes on.
      else return;
    }
  }
}

/** What Atomics.wait sleeps on between two tries of a write stderr could not take yet. */
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

const batchers = new Set<WeakRef<{ flushSync(): void }>>();
let exitHook = false;

/**
 * Lines written in one turn of the event loop go to stderr in one write, not
 * one write per line. What is pending at exit is written synchronously, as
 * pino does for its own destination.
 */
function lineBatcher(writeLines: (lines: string) => void): { write(line: string): boolean; flushSync(): void } {
  let pending = '';
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending === '') return;
    const lines = pending;
    pending = '';
    writeLines(lines);
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
  // A few messages make up nearly every plain line ("call succeeded", "request finished"): the last one's JSON is kept.
  let lastMsg = '';
  let lastMsgJson = '""';
  return (level, bindings, fields, msg) => {
    if (!logger.isLevelEnabled(level)) return;
    const now = Date.now();
    if (now !== lastMs) {
      lastMs = now;
      lastTime = new Date(now).toISOString();
    }
    if (msg !== lastMsg) {
      lastMsg = msg;
      lastMsgJson = JSON.stringify(msg);
    }
    const bindingsText = typeof bindings === 'string' ? bindings : members(bindings);
    const fieldsText = typeof fields === 'string' ? fields : members(fields);
    destination.write(
      `{"level":${LEVEL_NUMBERS[level]},"time":"${lastTime}"${bindingsText}${fieldsText},"msg":${lastMsgJson}}\n`,
    );
  };
}

/**
 * `,"key":value,…` of an object's members, as pino writes them (undefined values left out, as
 * JSON.stringify leaves them out): one JSON.stringify per object rather than two per member.
 */
function members(object: Record<string, unknown>): string {
  const json = JSON.stringify(object);
  return json.length > 2 ? `,${json.slice(1, -1)}` : '';
}
