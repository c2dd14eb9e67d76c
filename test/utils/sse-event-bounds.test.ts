/**
 * utils/sse-event-bounds.ts: where SSE events end and how long each is, with
 * every line ending the SSE spec allows, fed in chunks split anywhere.
 */
import { describe, expect, it } from 'vitest';
import { SseEventBounds } from '../../src/utils/sse-event-bounds.js';

/** Feed `text` split at `cuts`; the event ends seen (absolute offsets) and the longest event. */
function scan(text: string, cuts: number[]) {
  const bounds = new SseEventBounds();
  const buf = Buffer.from(text);
  const ends: number[] = [];
  let largest = 0;
  let at = 0;
  for (const cut of [...cuts, buf.length]) {
    const r = bounds.scan(buf.subarray(at, cut));
    if (r.end > 0) ends.push(at + r.end);
    largest = Math.max(largest, r.largest);
    at = cut;
  }
  return { ends, largest, open: bounds.current };
}

describe('SseEventBounds', () => {
  it('finds the end of the last event of each chunk with LF, CRLF and CR line ends', () => {
    const lf = 'data: a\n\ndata: bb\n\ndata: c';
    expect(scan(lf, [])).toEqual({ ends: [lf.indexOf('data: c')], largest: 10, open: 7 });
    const crlf = 'data: a\r\n\r\ndata: b';
    expect(scan(crlf, [])).toEqual({ ends: [11], largest: 10, open: 7 });
    // The CRLF of the blank line split between two chunks: its LF goes with the event it ends.
    expect(scan(crlf, [10])).toEqual({ ends: [10, 11], largest: 10, open: 7 });
    expect(scan('data: a\r\rdata: b', [])).toEqual({ ends: [9], largest: 9, open: 7 });
  });

  it('counts an event across chunks, and one that has not ended yet', () => {
    const big = `data: ${'x'.repeat(1000)}`;
    const r = scan(`${big}\n\n${big}`, [100, 500, 1006, 1007, 1500]);
    expect(r.ends).toEqual([1008]);
    expect(r.largest).toBe(1008);
    expect(r.open).toBe(1006);
  });
});

describe('SseEventBounds, LF-only streams (the fast path) against a reference', () => {
  /** Event ends and sizes of the whole text at once, the SSE way: an event ends at an empty line. */
  function reference(text: string) {
    const ends: number[] = [];
    let largest = 0;
    let start = 0;
    let lineStart = 0;
    for (let i = 0; i < text.length; i++) {
      if (text[i] !== '\n') continue;
      if (i === lineStart) {
        ends.push(i + 1);
        largest = Math.max(largest, i + 1 - start);
        start = i + 1;
      }
      lineStart = i + 1;
    }
    return { ends, largest, open: text.length - start };
  }

  it('finds the same ends and sizes however the text is cut', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 300; round++) {
      let text = '';
      const length = 1 + Math.floor(random() * 200);
      for (let i = 0; i < length; i++) text += random() < 0.25 ? '\n' : 'a';
      const cuts = [
        ...new Set(Array.from({ length: Math.floor(random() * 6) }, () => Math.floor(random() * text.length))),
      ]
        .sort((a, b) => a - b)
        .filter((c) => c > 0);
      const got = scan(text, cuts);
      const want = reference(text);
      // scan() reports only the last end of each chunk.
      expect(want.ends).toEqual(expect.arrayContaining(got.ends));
      if (want.ends.length) expect(got.ends.at(-1)).toBe(want.ends.at(-1));
      expect({ largest: got.largest, open: got.open }).toEqual({ largest: want.largest, open: want.open });
    }
  });
});
