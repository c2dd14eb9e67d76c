import { pino } from 'pino';
import { fstatSync, writeSync } from 'node:fs';
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
    : lineBatcher(stderrSink());
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

/** Where a batch of lines goes. */
interface LineSink {
  write(lines: string): void;
  /** Write out whatever is still pending, synchronously (at exit). */
  flushSync(): void;
}

/**
 * stderr as Node itself writes process.stderr: synchronously when it is a
 * regular file, asynchronously when it is a pipe, terminal or socket (whose
 * reader may be slow). A write to a file only copies into the page cache and
 * cannot wait on a reader; done asynchronously it cost a threadpool round trip
 * per batch — with the server pinned to one CPU, two context switches — which
 * measured as most of what logging at info costs.
 */
function stderrSink(): LineSink {
  let regularFile = false;
  try {
    regularFile = fstatSync(2).isFile();
  } catch {
    // stderr closed: the asynchronous destination reports it as pino always did
  }
  return regularFile ? fileSink(2) : streamSink(pino.destination({ fd: 2, sync: false, contentMode: 'buffer' }) as unknown as BufferStream);
}

function fileSink(fd: number): LineSink {
  return {
    write(lines) {
      try {
        const written = writeSync(fd, lines);
        const bytes = Buffer.byteLength(lines);
        if (written < bytes) {
          // A short write (disk nearly full, a signal): the rest, or the error that stops it.
          const buffer = Buffer.from(lines);
          for (let at = written; at < bytes; ) at += writeSync(fd, buffer, at);
        }
      } catch {
        // Disk full or stderr gone: these lines are lost, the gateway goes on (pino's destination does the same).
      }
    },
    flushSync() {},
  };
}

/** sonic-boom in buffer mode (its type declares strings only). */
interface BufferStream {
  write(data: Buffer): boolean;
  flushSync(): void;
}

/**
 * An asynchronous destination (pipe, terminal, socket). Each batch is encoded
 * once, into a Buffer: in its default string mode sonic-boom measures every
 * string it is given, encodes it for the write and again when the write
 * completes.
 */
function streamSink(stream: BufferStream): LineSink {
  return {
    write: (lines) => void stream.write(Buffer.from(lines)),
    flushSync: () => stream.flushSync(),
  };
}

const batchers = new Set<WeakRef<{ flushSync(): void }>>();
let exitHook = false;

/**
 * Lines written in one turn of the event loop go to stderr in one write, not
 * one write per line. What is pending at exit is written synchronously, as
 * pino does for its own destination.
 */
function lineBatcher(sink: LineSink): { write(line: string): boolean; flushSync(): void } {
  let pending = '';
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending === '') return;
    const lines = pending;
    pending = '';
    sink.write(lines);
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
      sink.flushSync();
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
    const fieldsText = typeof fields === 'string' ? fields : members(fields);
    destination.write(`{"level":${LEVEL_NUMBERS[level]},"time":"${lastTime}"${members(bindings)}${fieldsText},"msg":${JSON.stringify(msg)}}\n`);
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
