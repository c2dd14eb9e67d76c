/**
 * The file tools worker's answer pipe (tools/fs/worker/answer-stream.ts) keeps a
 * line only up to its limit: an answer's JSON text over it fails that one
 * call, saying so, and reading resyncs after it; a header line over it is the
 * worker's fault (the reader throws: the worker is stopped).
 */
import { describe, expect, it } from 'vitest';
import { FrameReader, frameOf } from '../../src/tools/fs/worker/answer-stream.js';
import type { FromWorker } from '../../src/tools/fs/worker/worker-protocol.js';

const LIMIT = 1000;
const output = (id: number, json: string): FromWorker => ({
  type: 'done',
  id,
  used: null,
  answer: { kind: 'output', json, summary: undefined, exitCode: null, truncated: false },
});

function read(bytes: Buffer, chunk: number): FromWorker<Uint8Array>[] {
  const got: FromWorker<Uint8Array>[] = [];
  const reader = new FrameReader((m) => got.push(m), LIMIT);
  for (let at = 0; at < bytes.length; at += chunk) reader.push(bytes.subarray(at, at + chunk));
  return got;
}

describe('file tools worker answers over the line limit', () => {
  const big = JSON.stringify('x'.repeat(50 * LIMIT));
  const bytes = Buffer.from(
    [
      output(1, '"before"'),
      output(2, big),
      { type: 'event', id: 3, kind: 'status', data: 'after' } as FromWorker,
      output(3, '"after"'),
    ]
      .map(frameOf)
      .join(''),
  );

  it.each([7, 64, 999, 4096, bytes.length])(
    'fails only the call whose answer is too large, in chunks of %i bytes',
    (chunk) => {
      const got = read(bytes, chunk);
      expect(got.map((m) => (m.type === 'done' ? [m.id, m.answer.kind] : [m.type]))).toEqual([
        [1, 'output'],
        [2, 'tool_error'],
        ['event'],
        [3, 'output'],
      ]);
      const failed = got[1] as Extract<FromWorker<Uint8Array>, { type: 'done' }>;
      expect(failed.answer).toEqual({
        kind: 'tool_error',
        message: `the answer is ${big.length} bytes, more than the ${LIMIT} the file tools may send; ask for less (a smaller limit, a narrower path or pattern)`,
        data: null,
        exitCode: null,
        truncated: false,
      });
      const last = got[3] as Extract<FromWorker<Uint8Array>, { type: 'done' }>;
      expect(last.answer.kind === 'output' && Buffer.from(last.answer.json).toString()).toBe('"after"');
    },
  );

  it('a header line over the limit is refused (the worker misbehaved)', () => {
    const reader = new FrameReader(() => {}, LIMIT);
    const line = `{"type":"event","id":1,"kind":"status","data":"${'y'.repeat(2 * LIMIT)}"}`;
    expect(() => reader.push(Buffer.from(`${line}\n`))).toThrow(
      `a line of ${line.length} bytes on the answer pipe, over ${LIMIT}`,
    );
  });
});
