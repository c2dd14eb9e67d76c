/**
 * utils/capped-lines.ts (newline framing of a peer's stream, each line at
 * most maxBytes, resyncing after an oversized one) and mcp/oversized-message.ts
 * (which call an oversized MCP message answers), fed chunk by chunk as pipes
 * deliver them.
 */
import { describe, expect, it } from 'vitest';
import { CappedLines } from '../../src/utils/capped-lines.js';
import { JsonRpcIdScan } from '../../src/mcp/oversized-message.js';

function reader(maxBytes: number) {
  const seen: string[] = [];
  let head = '';
  const lines = new CappedLines(maxBytes, {
    line: (b) => seen.push(b.toString()),
    overflow: (h) => (head = h.toString()),
    overflowEnd: (bytes) => seen.push(`<${bytes} bytes skipped, head ${head}>`),
  });
  return { lines, seen };
}

describe('CappedLines', () => {
  it('splits lines across and within chunks, drops a trailing \\r, and keeps a line of exactly maxBytes', () => {
    const { lines, seen } = reader(5);
    for (const c of ['ab', 'c\nde', 'f\r\n', '\n12345\nx']) lines.push(Buffer.from(c));
    lines.end();
    expect(seen).toEqual(['abc', 'def', '', '12345', 'x']);
  });

  it('skips a line over maxBytes without keeping it, reports its length and first bytes, and resyncs at the next newline', () => {
    const { lines, seen } = reader(4);
    lines.push(Buffer.from('ok\nabc'));
    lines.push(Buffer.from('defgh'));
    for (let i = 0; i < 1000; i++) lines.push(Buffer.alloc(1000, 0x78));
    lines.push(Buffer.from('yy\nnext\n'));
    expect(seen).toEqual(['ok', `<${8 + 1000 * 1000 + 2} bytes skipped, head abcd>`, 'next']);
  });
});

const scan = (...parts: string[]) => {
  const s = new JsonRpcIdScan();
  for (const p of parts) s.feed(Buffer.from(p));
  return s;
};

describe('JsonRpcIdScan', () => {
  it("finds a response's id wherever it is (TS SDK: last; Python SDK: first), across chunks", () => {
    expect(
      scan('{"result":{"content":[{"type":"text","text":"', 'x'.repeat(1000), '"}]},"jsonrpc":"2.0","i', 'd":7}')
        .responseId,
    ).toBe(7);
    const first = scan('{"jsonrpc":"2.0","id":"a-\\"1","result":{"text":"');
    expect(first.settled).toBe(true);
    expect(first.responseId).toBe('a-"1');
  });

  it('is not fooled by an "id" inside the result, keys inside strings, or escaped quotes', () => {
    const s = scan('{"result":{"id":99,"text":"\\",\\"id\\":5,\\"method\\":1"},', '"error_not":1,"id":3}');
    expect(s.responseId).toBe(3);
  });

  it('gives no id for a request or notification from the server, or for a non-object', () => {
    expect(
      scan('{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{"x":"', 'y', '"}}').responseId,
    ).toBeUndefined();
    expect(scan('{"jsonrpc":"2.0","method":"notifications/message","params":{}}').responseId).toBeUndefined();
    expect(scan('[{"id":1,"result":{}}]').responseId).toBeUndefined();
    expect(scan('{"id":{"x":1},"result":{}}').responseId).toBeUndefined();
  });
});
