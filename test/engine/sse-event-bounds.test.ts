/**
 * engine/sse-event-bounds.ts: where SSE events end and how long each is, with
 * every line ending the SSE spec allows, fed in chunks split anywhere.
 */
import { describe, expect, it } from 'vitest';
import { SseEventBounds } from '../../src/engine/sse-event-bounds.js';

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
