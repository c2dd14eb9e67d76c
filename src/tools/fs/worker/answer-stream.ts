/**
 * What the file tools worker sends the gateway (worker-protocol.ts FromWorker)
 * as newline-framed text on a pipe of its own, not on the IPC channel.
 *
 * Why: an answer's data is JSON text already (a listing, a file's content),
 * and the IPC channel would send it as a JSON string inside a JSON message:
 * escaped on one side (every quote of a 100-entry listing), unescaped on the
 * other, ~25 µs of the two processes' CPU per listing on Node 20, and a
 * fifth more bytes through the pipe. Here each message is one line of JSON
 * (its header); a `done` with an `output` answer is followed by one more
 * line, the data's JSON text as it is. JSON text from `JSON.stringify` (or
 * fs/listing-json.ts) never holds a raw newline (one inside a string is
 * escaped); any other is written again without its whitespace first.
 * Everything the worker sends goes this way, in order: a call's events
 * always arrive before its answer.
 *
 * A line is at most `maxLineBytes`, counted before it is kept: an answer's
 * JSON text over it fails that call (its header names it) and is skipped to
 * its newline; any other line that long means the worker misbehaved.
 */
import type { Answer, FromWorker } from './worker-protocol.js';

const NEWLINE = 0x0a;

/** A done message with an output answer: its JSON text goes on the line after the header. */
type WithText<Json extends string | Uint8Array> = Extract<FromWorker<Json>, { type: 'done' }> & {
  answer: Extract<Answer<Json>, { kind: 'output' }>;
};
const hasText = <Json extends string | Uint8Array>(m: FromWorker<Json>): m is WithText<Json> =>
  m.type === 'done' && m.answer.kind === 'output';

/**
 * The frame of one message: its header line, and for an output answer the line of its JSON text.
 *
 * @example
 * frameOf({ type: 'done', id: 7, used: null, answer: { kind: 'output', json: '{"a":1}', summary: undefined, exitCode: null, truncated: false } })
 * // '{"type":"done","id":7,"used":null,"answer":{"kind":"output","exitCode":null,"truncated":false}}\n{"a":1}\n'
 */
export function frameOf(m: FromWorker): string {
  if (!hasText(m)) return `${JSON.stringify(m)}\n`;
  const { json, ...rest } = m.answer;
  const text = json.includes('\n') ? JSON.stringify(JSON.parse(json)) : json;
  return `${JSON.stringify({ type: m.type, id: m.id, used: m.used, answer: rest })}\n${text}\n`;
}

/**
 * Reads frames from the chunks of the worker's pipe, in order, handing each message on whole, an output
 * answer's JSON text as its UTF-8 bytes.
 *
 * @example
 * const reader = new FrameReader((m) => onMessage(m));
 * pipe.on('data', (chunk) => reader.push(chunk));
 */
export class FrameReader {
  /** The chunks of a line not complete yet (a chunk can end anywhere; a long file's answer spans many). */
  private parts: Buffer[] = [];
  private partsBytes = 0;
  /** A header whose JSON text line has not arrived yet. */
  private header: WithText<Uint8Array> | null = null;
  /** Bytes of a line over the limit, being skipped to its newline; -1 when none is. */
  private skipping = -1;

  constructor(
    private readonly handle: (m: FromWorker<Uint8Array>) => void,
    /** Longest line kept, bytes. */
    private readonly maxLineBytes = Infinity,
  ) {}

  /** Take the next chunk of the pipe. Throws on a line that is not the JSON it should be (the worker misbehaved). */
  push(chunk: Buffer): void {
    if (this.skipping >= 0) {
      const end = chunk.indexOf(NEWLINE);
      if (end < 0) {
        this.skipping += chunk.length;
        return;
      }
      const bytes = this.skipping + end;
      this.skipping = -1;
      this.skipped(bytes);
      chunk = chunk.subarray(end + 1);
    }
    let nl = chunk.indexOf(NEWLINE);
    if (nl < 0) {
      if (this.partsBytes + chunk.length > this.maxLineBytes) {
        this.skipping = this.partsBytes + chunk.length;
        this.parts = [];
        this.partsBytes = 0;
        return;
      }
      this.parts.push(chunk);
      this.partsBytes += chunk.length;
      return;
    }
    if (this.partsBytes + nl > this.maxLineBytes) {
      const bytes = this.partsBytes + nl;
      this.parts = [];
      this.partsBytes = 0;
      this.skipped(bytes);
      return this.push(chunk.subarray(nl + 1));
    }
    let buf = chunk;
    if (this.parts.length > 0) {
      // Joined once, when the line is complete.
      buf = Buffer.concat([...this.parts, chunk]);
      nl += this.partsBytes;
      this.parts = [];
      this.partsBytes = 0;
    }
    let start = 0;
    for (; nl >= 0; nl = buf.indexOf(NEWLINE, start)) {
      if (nl - start > this.maxLineBytes) this.skipped(nl - start);
      else this.line(buf, start, nl);
      start = nl + 1;
    }
    if (start < buf.length) {
      this.parts.push(buf.subarray(start));
      this.partsBytes = buf.length - start;
    }
  }

  /** A line of `bytes` over the limit was skipped: an answer's JSON text fails its call, anything else is the worker's fault. */
  private skipped(bytes: number): void {
    const header = this.header;
    if (!header) throw new Error(`a line of ${bytes} bytes on the answer pipe, over ${this.maxLineBytes}`);
    this.header = null;
    this.handle({
      type: 'done',
      id: header.id,
      used: header.used,
      answer: {
        kind: 'tool_error',
        message: `the answer is ${bytes} bytes, more than the ${this.maxLineBytes} the file tools may send; ask for less (a smaller limit, a narrower path or pattern)`,
        data: null,
        exitCode: null,
        truncated: false,
      },
    });
  }

  /** The line `buf[start, end)`. */
  private line(buf: Buffer, start: number, end: number): void {
    const header = this.header;
    if (header) {
      this.header = null;
      // The JSON text as bytes, to go out as they are (utils/json-text.ts); copied, so that what is kept of the
      // answer (a call resource's result) holds its own bytes, not the whole read it came in.
      header.answer.json = Buffer.from(buf.subarray(start, end));
      return this.handle(header);
    }
    // An output answer's header: its json member is the next line.
    const m = JSON.parse(buf.toString('utf8', start, end)) as FromWorker<Uint8Array>;
    if (hasText(m)) this.header = m;
    else this.handle(m);
  }
}
