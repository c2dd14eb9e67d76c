/** The security building blocks on their own: rules, rate limiter, shape limits, loopback names, tokens, nesting scan. */
import { describe, expect, it } from 'vitest';
import { MemoryRateLimiter, type ToolDefinition } from '../../src/index.js';
import { checkShape } from '../../src/engine/admission.js';
import { nestsDeeperThan } from '../../src/routes/http/body.js';
import {
  bearerToken,
  compileRules,
  createAuthenticator,
  isLoopbackAddress,
  isLoopbackHostHeader,
} from '../../src/security/index.js';
import { sha256 } from './helpers.js';

const tool = (name: string, extra: Partial<ToolDefinition> = {}) =>
  ({ name, tags: [], kind: 'native', ...extra }) as ToolDefinition;

describe('tool rules', () => {
  it('matches globs on the exact, case-sensitive name', () => {
    const m = compileRules(['read_*', 'a.b', 'x?z']);
    expect(m(tool('read_file'))).toBe(true);
    expect(m(tool('read_'))).toBe(true);
    expect(m(tool('xread_file'))).toBe(false);
    expect(m(tool('READ_file'))).toBe(false);
    expect(m(tool('a.b'))).toBe(true);
    expect(m(tool('aXb'))).toBe(false); // "." is literal
    expect(m(tool('xyz'))).toBe(true);
    expect(m(tool('x\u{1F600}z'))).toBe(true); // "?" is one character, astral ones too
    expect(m(tool('xz'))).toBe(false);
    expect(m(tool('read_file\nother'))).toBe(true); // "*" spans anything, newlines included
  });

  it('matches tag: and kind: rules, and nothing for an empty list', () => {
    const m = compileRules(['tag:fs', 'kind:a2a']);
    expect(m(tool('t', { tags: ['x', 'fs'] }))).toBe(true);
    expect(m(tool('t', { kind: 'a2a' }))).toBe(true);
    expect(m(tool('t', { tags: ['FS'] }))).toBe(false);
    expect(compileRules([])(tool('anything'))).toBe(false);
  });
});

describe('MemoryRateLimiter', () => {
  it('allows the burst, then refills at the rate, per key', () => {
    let now = 0;
    const r = new MemoryRateLimiter(2, 3, () => now);
    expect([r.take('a'), r.take('a'), r.take('a')]).toEqual([0, 0, 0]);
    expect(r.take('a')).toBeCloseTo(0.5);
    expect(r.take('b')).toBe(0);
    now = 500;
    expect(r.take('a')).toBe(0);
    expect(r.take('a')).toBeGreaterThan(0);
    now = 100_000;
    expect([r.take('a'), r.take('a'), r.take('a'), r.take('a') > 0]).toEqual([0, 0, 0, true]);
  });
});

describe('checkShape', () => {
  const limits = { maxDepth: 8, maxStringLength: 5, maxArrayItems: 3 };
  it('finds the first value over a limit, with its path', () => {
    expect(checkShape({ a: [1, 2, 3], b: 'abcde', c: { d: null } }, limits)).toBeNull();
    expect(checkShape({ a: [1, 2, 3, 4] }, limits)).toMatchObject({ path: 'arguments.a' });
    expect(checkShape({ a: { b: ['abcdef'] } }, limits)).toMatchObject({ path: 'arguments.a.b.0' });
    expect(checkShape({ abcdef: 1 }, limits)?.message).toMatch(/key/);
  });

  it('walks hostile nesting without recursion', () => {
    let deep: unknown = [];
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(checkShape({ deep }, limits)?.message).toMatch(/deeper than 8/);
    expect(checkShape({ deep }, { ...limits, maxDepth: 1_000_000 })).toBeNull();
  });
});

describe('nestsDeeperThan', () => {
  const bytes = (s: string) => new TextEncoder().encode(s);
  it('counts brackets outside strings only, escapes included', () => {
    expect(nestsDeeperThan(bytes('{"a":[[1]]}'), 3)).toBe(false);
    expect(nestsDeeperThan(bytes('{"a":[[[1]]]}'), 3)).toBe(true);
    expect(nestsDeeperThan(bytes('{"a":"[[[[[[\\"[[[[["}'), 1)).toBe(false);
    expect(nestsDeeperThan(bytes('{"a\\\\":[[1]]}'), 2)).toBe(true); // an escaped backslash ends before the quote
    expect(nestsDeeperThan(bytes('[{}][{}][{}]'), 2)).toBe(false);
  });
});

describe('loopback', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.1', false],
    ['::ffff:10.0.0.1', false],
    ['localhost', false], // names are not addresses
  ])('isLoopbackAddress(%j) is %s', (a, want) => expect(isLoopbackAddress(a)).toBe(want));

  it.each([
    ['localhost:8080', true],
    ['LocalHost', true],
    ['localhost.', true],
    ['a.b.localhost:1', true],
    ['127.0.0.1', true],
    ['[::1]:80', true],
    ['[::ffff:127.0.0.1]', true],
    ['localhost.attacker.example', false],
    ['attacker.example', false],
    ['127.0.0.256', false],
    ['127.1', false],
    ['2130706433', false],
    ['[::2]', false],
    ['localhost:80:80', false],
    ['', false],
  ])('isLoopbackHostHeader(%j) is %s', (h, want) => expect(isLoopbackHostHeader(h)).toBe(want));
});

describe('tokens', () => {
  const auth = createAuthenticator(
    {
      tokens: [
        { name: 'one', token_sha256: sha256('secret-one'), deny: [] },
        { name: 'two', token_env: 'T2', deny: ['x'] },
      ],
    },
    { T2: 'secret-two' },
  );
  it('maps a token to its principal, and anything else to null', () => {
    expect(auth('secret-one')?.name).toBe('one');
    expect(auth('secret-two')).toMatchObject({ name: 'two', deny: ['x'] });
    for (const bad of ['secret-one ', 'SECRET-ONE', 'secret-on', '', null, undefined, 'x'.repeat(10_000)])
      expect(auth(bad)).toBeNull();
  });

  it('parses only well-formed Bearer headers', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer abc')).toBe('abc');
    expect(bearerToken('Bearer  abc ')).toBe('abc');
    for (const h of [undefined, '', 'Bearer', 'Bearer ', 'Basic abc', 'Bearer a b', 'Bearerabc'])
      expect(bearerToken(h)).toBeNull();
  });
});
