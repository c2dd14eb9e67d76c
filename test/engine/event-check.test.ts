/** Events a plugin emits are checked at emit(): bad ones are dropped and logged once per tool; the call goes on. Engine level, no HTTP. */
import { describe, expect, it } from 'vitest';
import { ANONYMOUS, Engine, ToolRegistry, type Logger, type ToolContext } from '../../src/index.js';
import { eventProblem, isToolEvent } from '../../src/engine/event-check.js';
import { ToolCallRequest, ToolEvent } from '../../src/protocol/index.js';
import { definePlugin } from '../helpers/plugins.js';

interface Line {
  level: string;
  obj: Record<string, unknown>;
  msg: string;
}

function recordingLogger(lines: Line[]): Logger {
  const at = (level: string) => (obj: object | string, msg?: string) =>
    lines.push(
      typeof obj === 'string'
        ? { level, obj: {}, msg: obj }
        : { level, obj: obj as Record<string, unknown>, msg: msg ?? '' },
    );
  const logger: Logger = {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => logger,
  };
  return logger;
}

const bad = [
  ['custom', { message: 'x' }],
  ['progress', { message: 'no pct' }],
  ['progress', { pct: 'x', message: 'pct is text' }],
  ['artifact', { name: 'a.txt', mime: 'text/plain', chunk: 'c' }],
  ['log', null],
] as const;

const emitBadThenGood = (ctx: ToolContext) => {
  ctx.emit('status', { message: 'first' });
  for (const [kind, data] of bad) ctx.emit(kind as never, data as never);
  ctx.emit('progress', { pct: 100, message: 'done' });
  return { ok: true };
};

function setup() {
  const lines: Line[] = [];
  const logger = recordingLogger(lines);
  const plugin = definePlugin('buggy', [
    [
      { name: 'buggy_events', description: 'Emits invalid events between valid ones' },
      (_a, ctx) => emitBadThenGood(ctx),
    ],
    [
      { name: 'other_buggy', description: 'Emits one invalid event' },
      (_a, ctx) => (ctx.emit('custom' as never, {} as never), { ok: true }),
    ],
  ]);
  const engine = new Engine({
    registry: new ToolRegistry([plugin], logger),
    logger,
    limits: { maxTimeoutS: 30, maxOutputBytes: 1 << 20, maxEvents: 100, maxBufferedEvents: 1000 },
  });
  engine.registry.rebuild();
  const run = async (tool: string) => {
    const call = engine.start(ToolCallRequest.parse({ tool_name: tool, arguments: {}, streaming: true }), ANONYMOUS);
    await call.result;
    return call.responseWithEvents()!;
  };
  const warnings = () => lines.filter((l) => l.level === 'warn' && /not a valid ToolEvent/.test(l.msg));
  return { run, warnings };
}

describe('events are checked at emit()', () => {
  it('drops bad events, keeps the good ones numbered from 0, and the call succeeds', async () => {
    const { run } = setup();
    const response = await run('buggy_events');
    expect(response.data.success).toBe(true);
    expect(response.data.events.map((e) => [e.kind, e.seq])).toEqual([
      ['status', 0],
      ['progress', 1],
    ]);
    for (const e of response.data.events) expect(ToolEvent.safeParse(e).success).toBe(true);
  });

  it('logs once per tool, saying what was wrong', async () => {
    const { run, warnings } = setup();
    await run('buggy_events');
    await run('buggy_events');
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]!.obj).toMatchObject({
      tool_name: 'buggy_events',
      problem: 'kind "custom" is not one of progress, status, artifact, log',
    });
    expect(warnings()[0]!.msg).toContain('progress {pct: integer, message}');
    await run('other_buggy');
    expect(warnings().map((w) => w.obj.tool_name)).toEqual(['buggy_events', 'other_buggy']);
  });

  it('names the field for a known kind with the wrong data', () => {
    expect(eventProblem('progress', { message: 'no pct' })).toMatch(/^data\.pct: /);
    expect(eventProblem('progress', { pct: 'x', message: 'm' })).toMatch(/^data\.pct: .*number/);
    expect(eventProblem('artifact', { name: 'a', mime: 'm', chunk: 'c' })).toMatch(/^data\.final: /);
    expect(eventProblem(7, {})).toBe('kind number is not one of progress, status, artifact, log');
  });

  it('the hand check agrees with the protocol schemas', () => {
    const good = [
      ['progress', { pct: 50, message: 'half', extra: 1 }],
      ['status', { message: 's' }],
      ['log', { level: 'info', message: 'l' }],
      ['artifact', { name: 'a', mime: 'text/plain', chunk: 'c', final: true }],
    ] as const;
    for (const [kind, data] of good) {
      expect(isToolEvent(kind, data), kind).toBe(true);
      expect(ToolEvent.safeParse({ kind, data }).success).toBe(true);
    }
    for (const [kind, data] of [...bad, ['progress', { pct: 1.5, message: 'm' }], ['status', 'text']] as const) {
      expect(isToolEvent(kind, data), `${kind} ${JSON.stringify(data)}`).toBe(false);
      expect(ToolEvent.safeParse({ kind, data }).success).toBe(false);
    }
  });
});
