/**
 * The file tools worker's framed answers (tools/fs/worker/answer-stream.ts): every message arrives whole and in order
 * however the pipe cuts its bytes, an output answer's JSON text arrives as it was sent (its UTF-8 bytes, which the
 * gateway answers with as they are), and anything that is not a frame is refused.
 */
import { describe, expect, it } from 'vitest';
import { FrameReader, frameOf } from '../../src/tools/fs/worker/answer-stream.js';
import type { FromWorker } from '../../src/tools/fs/worker/worker-protocol.js';

const listing = JSON.stringify({
  path: 'dir',
  entries: [
    { path: 'dir/é "quoted" ☃ 😀.txt', type: 'file' },
    { path: 'dir/line\nbreak', type: 'file' },
  ],
  truncated: false,
});

const messages: FromWorker[] = [
  { type: 'ready' },
  { type: 'event', id: 1, kind: 'status', data: { message: 'scanned 5000 entries\nand more' } },
  {
    type: 'done',
    id: 1,
    used: 12,
    answer: { kind: 'output', json: listing, summary: { lines: 2 }, exitCode: null, truncated: true },
  },
  { type: 'done', id: 2, used: null, answer: { kind: 'value', value: { ok: 'yes' } } },
  {
    type: 'done',
    id: 3,
    used: null,
    answer: { kind: 'tool_error', message: 'a.txt does not exist', data: null, exitCode: null, truncated: false },
  },
  {
    type: 'done',
    id: 4,
    used: null,
    answer: { kind: 'output', json: '""', summary: undefined, exitCode: 0, truncated: false },
  },
];

/** An output answer's JSON text: the reader hands it on as UTF-8 bytes. */
const textOf = (json: string | Uint8Array) => (typeof json === 'string' ? json : Buffer.from(json).toString('utf8'));

/** What JSON carries of a message (an undefined member is left out either way), its JSON text as text. */
const asJson = (m: FromWorker | FromWorker<Uint8Array>) =>
  JSON.parse(
    JSON.stringify(
      m.type === 'done' && m.answer.kind === 'output'
        ? { ...m, answer: { ...m.answer, json: textOf(m.answer.json) } }
        : m,
    ),
  ) as unknown;

function readAll(chunks: Buffer[]): FromWorker<Uint8Array>[] {
  const got: FromWorker<Uint8Array>[] = [];
  const reader = new FrameReader((m) => got.push(m));
  for (const c of chunks) reader.push(c);
  return got;
}

describe('file tools worker answers, framed', () => {
  const bytes = Buffer.from(messages.map(frameOf).join(''));

  it("writes an output answer's JSON text as its own line, not escaped inside the header", () => {
    const frame = frameOf(messages[2]!);
    const [header, text, after] = frame.split('\n');
    expect(text).toBe(listing);
    expect(after).toBe('');
    expect(JSON.parse(header!)).toEqual({
      type: 'done',
      id: 1,
      used: 12,
      answer: { kind: 'output', summary: { lines: 2 }, exitCode: null, truncated: true },
    });
  });

  it('reads every message whole and in order from one chunk', () => {
    expect(readAll([bytes]).map(asJson)).toEqual(messages.map(asJson));
  });

  it('reads the same when the bytes are cut at any offset, even inside a character', () => {
    for (let cut = 1; cut < bytes.length; cut++) {
      const got = readAll([bytes.subarray(0, cut), bytes.subarray(cut)]);
      expect(got.map(asJson), `cut at ${cut}`).toEqual(messages.map(asJson));
    }
  });

  it('reads the same one byte at a time', () => {
    const chunks = Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
    expect(readAll(chunks).map(asJson)).toEqual(messages.map(asJson));
  });

  it('keeps the JSON text exactly as sent, as its UTF-8 bytes, in a copy of its own', () => {
    const chunk = Buffer.from(bytes);
    const got = readAll([chunk]);
    const done = got[2] as Extract<FromWorker<Uint8Array>, { type: 'done' }>;
    expect(done.answer.kind).toBe('output');
    const json = (done.answer as { json: string | Uint8Array }).json;
    expect(json).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(json as Uint8Array).equals(Buffer.from(listing))).toBe(true);
    // Not a view of the read it came in (a kept answer would hold that whole read).
    chunk.fill(0);
    expect(textOf(json)).toBe(listing);
  });

  it('writes JSON text holding a newline (pretty-printed) again on one line, with the same value', () => {
    const pretty = JSON.stringify({ a: [1, 2], b: 'x\ny' }, null, 2);
    const m: FromWorker = {
      type: 'done',
      id: 9,
      used: null,
      answer: { kind: 'output', json: pretty, summary: undefined, exitCode: null, truncated: false },
    };
    const frame = frameOf(m);
    expect(frame.split('\n')).toHaveLength(3);
    const [got] = readAll([Buffer.from(frame)]);
    const json = textOf((got as { answer: { json: string | Uint8Array } }).answer.json);
    expect(json).not.toContain('\n');
    expect(JSON.parse(json)).toEqual({ a: [1, 2], b: 'x\ny' });
  });

  it('holds a message back until its last line arrives', () => {
    const got: FromWorker<Uint8Array>[] = [];
    const reader = new FrameReader((m) => got.push(m));
    const frame = Buffer.from(frameOf(messages[2]!));
    const headerEnd = frame.indexOf(0x0a) + 1;
    reader.push(frame.subarray(0, headerEnd));
    expect(got).toEqual([]);
    reader.push(frame.subarray(headerEnd, frame.length - 1));
    expect(got).toEqual([]);
    reader.push(frame.subarray(frame.length - 1));
    expect(got).toHaveLength(1);
  });

  it('refuses a line that is not JSON', () => {
    const reader = new FrameReader(() => {});
    expect(() => reader.push(Buffer.from('not json\n'))).toThrow(SyntaxError);
  });
});
