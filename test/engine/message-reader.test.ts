/** The one message reader every door uses (engine/message-reader.ts): bytes → UTF-8 → JSON → object → schema. */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/index.js';
import { checkMessage, decodeMessage, nestsDeeperThan, type MessageWording } from '../../src/engine/message-reader.js';
import { ToolCallRequest } from '../../src/protocol/index.js';

const wording: MessageWording = {
  subject: 'the thing',
  invalid: 'invalid thing',
  emptyHint: 'send one',
  objectHint: 'a JSON object',
};
const bytes = (text: string) => new TextEncoder().encode(text);

function refusal(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('expected a refusal');
}

describe('message reader', () => {
  it.each([
    ['nothing', new Uint8Array(0), /^the thing is empty; send one$/],
    ['only whitespace', bytes(' \n\t'), /^the thing is empty; send one$/],
    ['invalid UTF-8', Uint8Array.from([0x7b, 0xff, 0x7d]), /^the thing is not valid UTF-8; encode the JSON as UTF-8$/],
    ['broken JSON', bytes('{"a":'), /^the thing is not valid JSON: /],
    ['an array', bytes('[1,2]'), /^the thing must be a JSON object$/],
    ['a string', bytes('"x"'), /^the thing must be a JSON object$/],
    ['null', bytes('null'), /^the thing must be a JSON object$/],
  ])('refuses %s with invalid_request, naming what the door read', (_name, input, message) => {
    const err = refusal(() => decodeMessage(input, wording, 64));
    expect(err.code).toBe('invalid_request');
    expect(err.message).toMatch(message);
  });

  it('refuses nesting deeper than maxDepth before parsing, and only when a depth is given', () => {
    const deep = bytes(`{"a":${'['.repeat(40)}${']'.repeat(40)}}`);
    const err = refusal(() => decodeMessage(deep, wording, 20));
    expect(err.message).toBe(
      'the thing nests arrays/objects deeper than 20 levels (limits.max_json_depth); flatten the data',
    );
    expect(err.detail).toEqual({ max_depth: 20 });
    expect(decodeMessage(deep, wording)).toHaveProperty('a');
    expect(decodeMessage(deep, wording, 64)).toHaveProperty('a');
    // Brackets inside strings do not count.
    expect(nestsDeeperThan(bytes(`{"a":"${'['.repeat(100)}"}`), 2)).toBe(false);
  });

  it('checks the schema and lists each problem', () => {
    const ok = checkMessage(ToolCallRequest, { tool_name: 'echo', arguments: {} }, wording);
    expect(ok.tool_name).toBe('echo');
    const err = refusal(() => checkMessage(ToolCallRequest, { tool_name: 5, arguments: [] }, wording));
    expect(err.code).toBe('invalid_request');
    expect(err.message).toMatch(/^invalid thing: /);
    const problems = (err.detail as { problems: Array<{ path: string }> }).problems;
    expect(problems.map((p) => p.path).sort()).toEqual(['arguments', 'tool_name']);
  });
});
