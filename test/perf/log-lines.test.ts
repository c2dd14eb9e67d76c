/**
 * The access and call lines skip pino's generic path (no child logger, no
 * redaction pass): they must come out exactly as pino writes the same line.
 */
import { describe, expect, it } from 'vitest';
import { LazyChildLogger, plainLine } from '../../src/engine/index.js';
import { createLogger } from '../../src/logger.js';

function capture() {
  const lines: string[] = [];
  return { lines, destination: { write: (s: string) => lines.push(...s.split('\n').filter(Boolean)) } };
}
const withoutTime = (line: string) => line.replace(/"time":"[^"]+"/, '"time":"T"');

describe('plain log lines', () => {
  it('are byte for byte the line a pino child writes, undefined fields left out, odd characters escaped', () => {
    const { lines, destination } = capture();
    const root = createLogger('info', { destination });
    const fields = { method: 'POST', path: '/tool/"call"\n\u2028é', status: 200, duration_ms: 3, aborted: undefined, nested: { a: [1, 'x'] } };
    new LazyChildLogger(root, { request_id: 'r-1' }).line('info', fields, 'request finished');
    root.child({ request_id: 'r-1' }).info(fields, 'request finished');
    plainLine(root, 'warn', { tool: 'echo' }, 'call failed');
    root.warn({ tool: 'echo' }, 'call failed');
    expect(lines).toHaveLength(4);
    expect(withoutTime(lines[0]!)).toBe(withoutTime(lines[1]!));
    expect(withoutTime(lines[2]!)).toBe(withoutTime(lines[3]!));
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 30, request_id: 'r-1', path: '/tool/"call"\n\u2028é', msg: 'request finished' });
    expect(lines[0]).not.toContain('aborted');
  });

  it('respect the level, and go through the child once the request has one (same output)', () => {
    const { lines, destination } = capture();
    const root = createLogger('warn', { destination });
    const log = new LazyChildLogger(root, { request_id: 'r-2' });
    log.line('info', { status: 200 }, 'request finished');
    expect(lines).toEqual([]);
    log.warn({ detail: 'x' }, 'first');
    log.line('error', { status: 500 }, 'request finished');
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['first', 'request finished']);
    expect(JSON.parse(lines[1]!)).toMatchObject({ level: 50, request_id: 'r-2', status: 500 });
  });

  it('other lines are still redacted', () => {
    const { lines, destination } = capture();
    const root = createLogger('info', { destination });
    new LazyChildLogger(root, { request_id: 'r-3' }).info({ headers: { authorization: 'Bearer sk-secret' } }, 'with a header');
    expect(lines[0]).not.toContain('sk-secret');
    expect(lines[0]).toContain('[redacted]');
  });
});
