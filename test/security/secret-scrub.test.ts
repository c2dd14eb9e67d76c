/**
 * security/secret-scrub.ts: brokered secrets replaced in whatever a peer returned — strings at any depth,
 * keys too, a ToolError's message and data — and nothing copied when no secret occurs.
 */
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/engine/index.js';
import { scrubError, scrubValue } from '../../src/security/secret-scrub.js';

const S = ['s3cret-token', 'pw-123456'];

describe('scrubValue / scrubError', () => {
  it('replaces secrets in nested strings and keys; a value without any is returned as it is', () => {
    const clean = { a: ['x', { b: 'y', n: 1 }], c: null };
    expect(scrubValue(clean, S)).toBe(clean);
    const dirty = { a: ['Bearer s3cret-token', { b: 'pw-123456:pw-123456', n: 1 }], 's3cret-token': true, ok: 'ok' };
    const out = scrubValue(dirty, S);
    expect(out).toEqual({
      a: ['Bearer [redacted]', { b: '[redacted]:[redacted]', n: 1 }],
      '[redacted]': true,
      ok: 'ok',
    });
    expect(dirty.a[0]).toBe('Bearer s3cret-token'); // the input is not changed
  });

  it("a ToolError gets a scrubbed message and data; another error's message is scrubbed in place", () => {
    const e = scrubError(new ToolError('refused s3cret-token', { data: { echo: 'pw-123456' }, exitCode: 3 }), S);
    expect(e).toBeInstanceOf(ToolError);
    expect(e).toMatchObject({ message: 'refused [redacted]', data: { echo: '[redacted]' }, exitCode: 3 });
    const plain = new TypeError('got s3cret-token');
    expect(scrubError(plain, S)).toBe(plain);
    expect(plain.message).toBe('got [redacted]');
  });
});
