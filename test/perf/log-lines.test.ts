/**
 * The access and call lines skip pino's generic path (no child logger, no
 * redaction pass): they must come out exactly as pino writes the same line.
 */
import { describe, expect, it } from 'vitest';
import {
  ANONYMOUS,
  Engine,
  LazyChildLogger,
  ToolRegistry,
  writeCallLine,
  type Logger,
} from '../../src/engine/index.js';
import { plainLine } from '../../src/engine/child-logger.js';
import { createLogger } from '../../src/logger.js';
import { ToolCallRequest } from '../../src/protocol/index.js';
import { definePlugin } from '../helpers/plugins.js';

function capture() {
  const lines: string[] = [];
  return { lines, destination: { write: (s: string) => lines.push(...s.split('\n').filter(Boolean)) } };
}
const withoutTime = (line: string) => line.replace(/"time":"[^"]+"/, '"time":"T"');

describe('plain log lines', () => {
  it('are byte for byte the line a pino child writes, undefined fields left out, odd characters escaped', () => {
    const { lines, destination } = capture();
    const root = createLogger('info', { destination });
    const fields = {
      method: 'POST',
      path: '/tool/"call"\n\u2028é',
      status: 200,
      duration_ms: 3,
      aborted: undefined,
      nested: { a: [1, 'x'] },
    };
    new LazyChildLogger(root, { request_id: 'r-1' }).line('info', fields, 'request finished');
    root.child({ request_id: 'r-1' }).info(fields, 'request finished');
    plainLine(root, 'warn', { tool: 'echo' }, 'call failed');
    root.warn({ tool: 'echo' }, 'call failed');
    expect(lines).toHaveLength(4);
    expect(withoutTime(lines[0]!)).toBe(withoutTime(lines[1]!));
    expect(withoutTime(lines[2]!)).toBe(withoutTime(lines[3]!));
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 30,
      request_id: 'r-1',
      path: '/tool/"call"\n\u2028é',
      msg: 'request finished',
    });
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
    new LazyChildLogger(root, { request_id: 'r-3' }).info(
      { headers: { authorization: 'Bearer sk-secret' } },
      'with a header',
    );
    expect(lines[0]).not.toContain('sk-secret');
    expect(lines[0]).toContain('[redacted]');
  });

  it("a call's line, built as text or through the request's child, is byte for byte the line pino writes for its fields (with and without access fields)", async () => {
    const { lines, destination } = capture();
    const root = createLogger('info', { destination });
    const plugin = definePlugin('line-test', [
      [{ name: 'say "hi"', description: 'Answers' }, async () => ({ ok: true })],
      [
        { name: 'fails', description: 'Throws' },
        async () => {
          throw new Error('no');
        },
      ],
      [{ name: 'hangs', description: 'Never answers' }, () => new Promise(() => {})],
    ]);
    const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
    const engine = new Engine({
      registry: new ToolRegistry([plugin], quiet),
      logger: quiet,
      limits: { maxTimeoutS: 30, maxOutputBytes: 1 << 20, maxEvents: 10, maxBufferedEvents: 100 },
    });
    engine.registry.rebuild();
    // viaChild: the request's child logger was already made, so the line goes through it as a fields object.
    for (const [tool, viaChild] of [
      ['say "hi"', false],
      ['fails', false],
      ['hangs', false],
      ['say "hi"', true],
      ['hangs', true],
    ] as const) {
      for (const access of [
        undefined,
        { method: 'POST', path: '/tool/"call"\n\u2028', status: 200, request_duration_ms: 4, aborted: true as const },
      ]) {
        const log = new LazyChildLogger(root, { request_id: 'r\n"4"' });
        // The line is carried elsewhere (as a request's access line would): the engine writes none, the test writes it.
        log.callLineCarrier = { carry: () => true };
        if (viaChild) log.info('the request logs something of its own first');
        const call = engine.start(
          ToolCallRequest.parse({ id: 'req "é"\u2028', tool_name: tool, arguments: {} }),
          ANONYMOUS,
          { logger: log },
        );
        if (tool === 'hangs') call.stop('cancel');
        await call.result;
        lines.length = 0;
        writeCallLine(call, access);
        const r = call.response!.data;
        root.child({ request_id: 'r\n"4"' }).info(
          {
            tool: r.tool_name,
            kind: call.tool.definition.kind,
            outcome: r.success ? 'success' : r.error_code,
            stopped_by: call.stoppedBy,
            duration_ms: r.duration_ms,
            call_id: call.id,
            req_id: call.request.id,
            ...access,
          },
          r.success ? 'call succeeded' : 'call failed',
        );
        expect(lines).toHaveLength(2);
        expect(withoutTime(lines[0]!)).toBe(withoutTime(lines[1]!));
        if (tool === 'hangs')
          expect(JSON.parse(lines[0]!)).toMatchObject({ stopped_by: 'cancel', outcome: 'tool_error' });
      }
    }
  });
});
