/**
 * The `Call` lifecycle and its event replay at the engine's own level: no HTTP, a real Engine and registry,
 * real timers and promises. The doors' suites (tool-call, call-resources, sse, a2e-transport) test the same
 * behaviour through HTTP; here each rule is pinned where it is implemented.
 */
import { describe, expect, it } from 'vitest';
import {
  ANONYMOUS,
  Engine,
  ToolError,
  ToolOutput,
  ToolRegistry,
  type AuditRecord,
  type EngineLimits,
  type Logger,
  type ToolContext,
} from '../../src/index.js';
import { LazyChildLogger } from '../../src/engine/index.js';
import type { Call } from '../../src/engine/call.js';
import { JsonText } from '../../src/utils/json-text.js';
import { ToolCallRequest, type ToolEvent } from '../../src/protocol/index.js';
import { RemoteCall, type RemoteCallHost } from '../../src/store/redis/remote-call.js';
import { crashTool, deferred, definePlugin, echoTool, failTool } from '../helpers/plugins.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
/** A remote view's store, for what needs none of it. */
const NO_HOST = {} as RemoteCallHost;

/** A tool the test drives: it hands its context out, then finishes when told (or never, ignoring its signal). */
function remoteTool() {
  let ctx: ToolContext | undefined;
  let started = deferred<ToolContext>();
  let finish = deferred<unknown>();
  const tool = [
    { name: 'remote', description: 'Emits and finishes when the test says so' },
    (_args: Record<string, unknown>, c: ToolContext) => {
      ctx = c;
      started.resolve(c);
      return finish.promise;
    },
  ] as const;
  return {
    tool,
    /** The running tool's context, once it has started. */
    started: () => started.promise,
    get ctx() {
      return ctx!;
    },
    finish: (value: unknown) => finish.resolve(value),
    reset() {
      started = deferred<ToolContext>();
      finish = deferred<unknown>();
    },
  };
}

function setup(limits: Partial<EngineLimits> = {}) {
  const remote = remoteTool();
  const audits: AuditRecord[] = [];
  const plugin = definePlugin('engine-test', [echoTool, failTool, crashTool, [remote.tool[0], remote.tool[1]]]);
  const engine = new Engine({
    registry: new ToolRegistry([plugin], quiet),
    logger: quiet,
    limits: { maxTimeoutS: 30, maxOutputBytes: 1 << 20, maxEvents: 1000, maxBufferedEvents: 100_000, ...limits },
    audit: (r) => audits.push(r),
  });
  engine.registry.rebuild();
  const start = (tool: string, extra: Record<string, unknown> = {}): Call =>
    engine.start(ToolCallRequest.parse({ tool_name: tool, arguments: {}, streaming: true, ...extra }), ANONYMOUS);
  return { engine, remote, audits, start };
}

/** Every event (and gap) a watcher sees until the call is over. */
async function drain(
  call: Call,
  afterSeq = -1,
): Promise<{ seqs: number[]; gaps: Array<{ from: number; to: number }> }> {
  const seqs: number[] = [];
  const gaps: Array<{ from: number; to: number }> = [];
  for await (const batch of call.watch(afterSeq)) {
    if (batch.gap) gaps.push(batch.gap);
    for (const e of batch.events) seqs.push(e.seq);
  }
  return { seqs, gaps };
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('Call lifecycle', () => {
  it('runs → completed, settles once with a ToolCallResponse, audits once', async () => {
    const { start, audits } = setup();
    const call = start('echo', { arguments: { text: 'hi' }, id: 'req-1' });
    expect(call.state).toBe('running');
    expect(call.settled).toBe(false);
    const response = await call.result;
    expect(call.state).toBe('completed');
    expect(call.settled).toBe(true);
    expect(call.response).toBe(response);
    expect(response).toMatchObject({
      type: 'tool/call/resp',
      req_id: 'req-1',
      data: { success: true, tool_name: 'echo', data: { text: 'hi' }, error_code: null },
    });
    expect(call.stoppedBy).toBeUndefined();
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({ tool_name: 'echo', success: true, door: 'rest', req_id: 'req-1' });
  });

  it('a ToolError → failed with its data and exit code; any other error → failed with a generic tool_error', async () => {
    const { start } = setup();
    const failed = await start('fail', { arguments: { message: 'nope' } }).result;
    expect(failed.data).toMatchObject({
      success: false,
      error: 'nope',
      error_code: 'tool_error',
      data: { partial: true },
      exit_code: 3,
    });
    const crash = start('crash');
    const crashed = await crash.result;
    expect(crash.state).toBe('failed');
    expect(crashed.data.error).toMatch(/^tool "crash" failed: /);
    expect(crashed.data.error).not.toContain('/home/secret-user');
  });

  it.each([
    ['cancel', 'canceled', 'AbortError', /was canceled/],
    ['disconnect', 'canceled', 'AbortError', /client disconnected/],
    ['shutdown', 'canceled', 'AbortError', /shutting down; retry the call/],
  ] as const)('stop(%s) → %s, aborts the tool signal (%s) and says why', async (reason, state, abortName, message) => {
    const { start, remote, audits } = setup();
    const call = start('remote');
    const ctx = await remote.started();
    expect(ctx.signal.aborted).toBe(false);
    call.stop(reason);
    expect(call.state).toBe(state);
    expect(call.stoppedBy).toBe(reason);
    expect(ctx.signal.aborted).toBe(true);
    expect((ctx.signal.reason as DOMException).name).toBe(abortName);
    const response = await call.result;
    expect(response.data).toMatchObject({ success: false, error_code: 'tool_error' });
    expect(response.data.error).toMatch(message);
    expect(audits).toHaveLength(1);
  });

  it('ctx.onStop: called once with the stop reason (the signal’s), not after its removal, never when the call finishes on its own', async () => {
    const { start, remote } = setup();
    const call = start('remote');
    const ctx = await remote.started();
    const seen: DOMException[] = [];
    const removed: DOMException[] = [];
    ctx.onStop((r) => seen.push(r));
    ctx.onStop((r) => removed.push(r))();
    call.stop('cancel');
    call.stop('timeout');
    expect(seen.map((r) => r.name)).toEqual(['AbortError']);
    expect(seen[0]!.message).toMatch(/was canceled/);
    expect(seen[0]).toBe(ctx.signal.reason);
    expect(removed).toEqual([]);
    // Asked after the stop: called at once.
    const late: DOMException[] = [];
    ctx.onStop((r) => late.push(r));
    expect(late).toEqual([seen[0]]);

    remote.reset();
    const finished = start('remote');
    const ctx2 = await remote.started();
    const never: DOMException[] = [];
    ctx2.onStop((r) => never.push(r));
    remote.finish({ ok: true });
    await finished.result;
    ctx2.onStop((r) => never.push(r));
    expect(never).toEqual([]);
    expect(ctx2.signal.aborted).toBe(true); // the signal still says the call is over
  });

  it('a call past its timeout is stopped with reason timeout → failed, TimeoutError on the signal', async () => {
    const { start, remote } = setup();
    const call = start('remote', { timeout: 1 });
    const ctx = await remote.started();
    const aborted = new Promise<unknown>((resolve) =>
      ctx.signal.addEventListener('abort', () => resolve(ctx.signal.reason), { once: true }),
    );
    const response = await call.result;
    expect(call.state).toBe('failed');
    expect(call.stoppedBy).toBe('timeout');
    expect(response.data.error).toMatch(/timed out after 1 s and was stopped; raise the request's "timeout"/);
    expect(((await aborted) as DOMException).name).toBe('TimeoutError');
  });

  it('settles once: a late return, a late emit and a second stop change nothing', async () => {
    const { start, remote, audits } = setup();
    const call = start('remote');
    const ctx = await remote.started();
    ctx.emit('status', { message: 'before' });
    call.stop('cancel');
    const first = call.response;
    remote.finish({ late: true });
    ctx.emit('status', { message: 'after the answer' });
    call.stop('timeout');
    await call.result;
    // The tool's own late result has had every chance to land.
    await new Promise((resolve) => setImmediate(resolve));
    expect(call.response).toBe(first);
    expect(call.state).toBe('canceled');
    expect(call.stoppedBy).toBe('cancel');
    expect(call.eventCount).toBe(1);
    expect(audits).toHaveLength(1);
  });

  it('a tool that finishes on its own aborts its signal too (so its leftovers stop)', async () => {
    const { start, remote } = setup();
    const call = start('remote');
    const ctx = await remote.started();
    remote.finish('done');
    await call.result;
    expect(call.state).toBe('completed');
    expect(ctx.signal.aborted).toBe(true);
  });
});

describe('events and watchers', () => {
  it('numbers events from 0; a watcher gets live events, then ends when the call settles', async () => {
    const { start, remote } = setup();
    const call = start('remote');
    const ctx = await remote.started();
    const watched = drain(call);
    for (let i = 0; i < 5; i++) ctx.emit('progress', { pct: i * 20, message: `step ${i}` });
    remote.finish({ ok: true });
    expect((await watched).seqs).toEqual(range(0, 4));
    expect(call.keptEvents.map((e: ToolEvent) => e.seq)).toEqual(range(0, 4));
  });

  it('replays after a seq: watch(n) starts at n+1, for a running and for a settled call', async () => {
    const { start, remote } = setup();
    const call = start('remote');
    const ctx = await remote.started();
    for (let i = 0; i < 6; i++) ctx.emit('log', { level: 'info', message: `line ${i}` });
    const resumed = drain(call, 2);
    ctx.emit('log', { level: 'info', message: 'line 6' });
    remote.finish(null);
    expect((await resumed).seqs).toEqual(range(3, 6));
    // After settling: the whole replay, then the end.
    expect((await drain(call, -1)).seqs).toEqual(range(0, 6));
    expect((await drain(call, 6)).seqs).toEqual([]);
  });

  it('every watcher gets every event; closing one does not disturb the others or the call', async () => {
    const { start, remote } = setup();
    const call = start('remote');
    const ctx = await remote.started();
    const a = drain(call);
    const quitter = call.watch();
    const b = drain(call);
    ctx.emit('status', { message: 'one' });
    const firstOfQuitter = await quitter.next();
    quitter.close();
    expect(await quitter.next()).toBeNull();
    ctx.emit('status', { message: 'two' });
    remote.finish(null);
    expect(firstOfQuitter!.events.map((e) => e.seq)).toEqual([0]);
    expect((await a).seqs).toEqual([0, 1]);
    expect((await b).seqs).toEqual([0, 1]);
    expect(call.state).toBe('completed');
  });

  it('keeps at most calls.max_events when nobody watches; a late watcher gets a gap notice, then the rest', async () => {
    const { start, remote } = setup({ maxEvents: 10 });
    const call = start('remote');
    const ctx = await remote.started();
    for (let i = 0; i < 200; i++) ctx.emit('progress', { pct: 50, message: `e${i}` });
    remote.finish(null);
    await call.result;
    const first = call.firstSeq;
    expect(first).toBeGreaterThan(0);
    expect(call.keptEvents.length).toBeLessThanOrEqual(200 - first);
    const { seqs, gaps } = await drain(call);
    expect(gaps).toEqual([{ from: 0, to: first - 1 }]);
    expect(seqs).toEqual(range(first, 199));
    // The notice a door sends for the gap: a status event carrying seq gap.to, so resuming after it continues right after.
    const notice = call.gapNotice(gaps[0]!);
    expect(notice).toMatchObject({ type: 'tool/event', kind: 'status', seq: first - 1 });
    expect((notice.data as { message: string }).message).toMatch(
      new RegExp(`events 0\\.\\.${first - 1} .*continues with event ${first}`),
    );
    expect(call.responseWithEvents()!.data.truncated).toBe(true);
  });

  it('a call read from Redis on another instance gives the same gap notice as the call itself', async () => {
    const { start, remote } = setup({});
    const call = start('remote');
    await remote.started();
    // The view another instance makes of the call's hash (its store is not asked for a notice).
    const view = new RemoteCall(NO_HOST, call.id, {
      owner: 'other',
      req: call.requestId,
      tool: 'remote',
      state: 'running',
      events: '0',
    });
    const gap = { from: 3, to: 41 };
    const { id: _a, ts: _b, ...local } = call.gapNotice(gap);
    const { id: _c, ts: _d, ...remoteNotice } = view.gapNotice(gap);
    expect(remoteNotice).toEqual(local);
    remote.finish(null);
    await call.result;
  });

  it('holds events a watcher has not read yet beyond max_events, up to max_buffered_events; past that the watcher gets a gap', async () => {
    const { start, remote } = setup({ maxEvents: 10, maxBufferedEvents: 500 });
    const call = start('remote');
    const ctx = await remote.started();
    const slow = call.watch();
    for (let i = 0; i < 300; i++) ctx.emit('progress', { pct: 1, message: `e${i}` });
    expect(call.firstSeq).toBe(0); // nothing dropped: the slow watcher still needs them
    for (let i = 300; i < 2000; i++) ctx.emit('progress', { pct: 1, message: `e${i}` });
    expect(call.firstSeq).toBeGreaterThan(0); // the hard cap wins over the slow watcher
    remote.finish(null);
    const seqs: number[] = [];
    const gaps: Array<{ from: number; to: number }> = [];
    for await (const batch of slow) {
      if (batch.gap) gaps.push(batch.gap);
      seqs.push(...batch.events.map((e) => e.seq));
    }
    expect(gaps).toHaveLength(1);
    expect(gaps[0]!.from).toBe(0);
    expect(seqs).toEqual(range(gaps[0]!.to + 1, 1999));
  });
});

describe('event byte budgets', () => {
  const big = (i: number) => ({ level: 'info' as const, message: `${i} ${'x'.repeat(10_000)}` });

  it('a running call keeps at most its own event bytes; the oldest go first, whoever still has to read them', async () => {
    const { start, remote, engine } = setup({ maxEventBytes: 100_000, retainedEventBytes: 30_000 });
    const call = start('remote');
    const ctx = await remote.started();
    const watcher = call.watch();
    for (let i = 0; i < 50; i++) ctx.emit('log', big(i));
    expect(call.firstSeq).toBeGreaterThan(0);
    expect(call.retainedBytes).toBeLessThanOrEqual(100_000);
    expect(engine.eventBytes).toBe(call.retainedBytes);
    const batch = await watcher.next();
    expect(batch!.gap).toEqual({ from: 0, to: call.firstSeq - 1 });
    watcher.close();
    // Settled: the running total is released, and the call keeps only retainedEventBytes of the newest events.
    remote.finish(null);
    await call.result;
    expect(engine.eventBytes).toBe(0);
    const kept = call.keptEvents;
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(4); // ~10 KB each, 30 KB retained
    expect(kept.at(-1)!.seq).toBe(49);
  });

  it("over the running calls' shared budget, the call that emits drops its own oldest events", async () => {
    const { start, remote, engine } = setup({ maxEventBytes: 1 << 20, eventsTotalBytes: 150_000 });
    const first = start('remote');
    const ctx1 = await remote.started();
    remote.reset();
    const second = start('remote');
    const ctx2 = await remote.started();
    for (let i = 0; i < 10; i++) ctx1.emit('log', big(i)); // ~100 KB, under the total
    expect(first.firstSeq).toBe(0);
    for (let i = 0; i < 10; i++) ctx2.emit('log', big(i)); // pushes the total over: the second call trims itself
    expect(second.firstSeq).toBeGreaterThan(0);
    expect(first.firstSeq).toBe(0);
    expect(engine.eventBytes).toBeLessThanOrEqual(150_000 + 20_000);
    first.stop('cancel');
    second.stop('cancel');
    await Promise.all([first.result, second.result]);
    expect(engine.eventBytes).toBe(0);
  });
});

describe('the response as JSON text (a JSON answer)', () => {
  // Results of every shape a plugin can return: the text must be what JSON.stringify writes for the response.
  const outcomes: Array<[string, () => unknown]> = [
    ['plain object', () => ({ text: 'hi' })],
    [
      'escapes and non-ASCII',
      () => ({ text: 'a "quoted" \\ line\nwith\ttabs, é, 😀 and \u2028', n: -0, big: 1e21, small: 5e-7 }),
    ],
    ['nested arrays', () => [1, [2, [3, { x: null }]], 'z']],
    ['string', () => 'just text'],
    ['number', () => 42.5],
    ['null', () => null],
    ['undefined', () => undefined],
    ['a function (JSON leaves it out)', () => () => 1],
    ['a Date (its toJSON)', () => new Date(0)],
    ['an object with toJSON', () => ({ toJSON: (key: string) => ({ key }) })],
    ['a Buffer', () => Buffer.from('ab')],
    ['undefined members', () => ({ a: undefined, b: 1 })],
    ['too large (cut to the cap)', () => ({ text: 'x'.repeat(5000), more: ['y'.repeat(3000)] })],
    ['ToolOutput', () => new ToolOutput({ data: { out: 'ok' }, summary: 'done "ok"', exitCode: 0, truncated: true })],
    ['ToolOutput, odd summary', () => new ToolOutput({ data: 1, summary: { not: 'a string' }, exitCode: Number.NaN })],
    [
      'ToolOutput of JSON text (JsonText)',
      () =>
        new ToolOutput({
          data: new JsonText(JSON.stringify({ entries: [{ path: 'a "b" é', type: 'file' }] })),
          summary: 's',
        }),
    ],
    [
      'JSON text over the cap (parsed, then cut)',
      () => new ToolOutput({ data: new JsonText(JSON.stringify({ text: 'x'.repeat(5000), n: 1 })) }),
    ],
    [
      'ToolOutput of JSON text as UTF-8 bytes',
      () =>
        new ToolOutput({
          data: new JsonText(Buffer.from(JSON.stringify({ entries: [{ path: 'a "b" é ✓', type: 'file' }] }))),
          summary: 'é',
        }),
    ],
    [
      'JSON bytes over the cap (parsed, then cut)',
      () => new ToolOutput({ data: new JsonText(Buffer.from(JSON.stringify({ text: 'é'.repeat(3000), n: 1 }))) }),
    ],
    [
      'ToolError',
      () => {
        throw new ToolError('it "failed"\n', { data: { partial: [1] }, exitCode: 2 });
      },
    ],
    [
      'other error',
      () => {
        throw new Error('boom');
      },
    ],
  ];

  for (const [name, run] of outcomes) {
    it(`${name}: responseJson() is JSON.stringify(response)`, async () => {
      const plugin = definePlugin('json-text', [
        [{ name: 'out', description: 'Returns what the test says' }, async () => run()],
      ]);
      const engine = new Engine({
        registry: new ToolRegistry([plugin], quiet),
        logger: quiet,
        limits: { maxTimeoutS: 30, maxOutputBytes: 4096, maxEvents: 1000, maxBufferedEvents: 100_000 },
      });
      engine.registry.rebuild();
      const req = ToolCallRequest.parse({ id: 'req "1" ✓', tool_name: 'out', arguments: {} });
      const call = engine.start(req, ANONYMOUS);
      await call.result;
      expect(textOf(call.responseJson('\n'))).toBe(`${JSON.stringify(call.response)}\n`);
      // Built once: a second read is the same text (from the response itself).
      expect(call.responseJson()).toBe(JSON.stringify(call.response));
    });
  }

  it.each([
    ['text', (json: string) => json],
    ['UTF-8 bytes', (json: string) => Buffer.from(json)],
  ])(
    'data given as JSON %s is answered as it is, and parsed only when read, to the same value',
    async (form, given) => {
      const value = {
        path: 'dir',
        entries: [
          { path: 'dir/a "quoted" name', type: 'file' },
          { path: 'dir/é ✓', type: 'dir' },
        ],
        truncated: false,
      };
      const json = JSON.stringify(value);
      const parsed: string[] = [];
      const realParse = JSON.parse;
      const plugin = definePlugin('json-text', [
        [
          { name: 'out', description: 'Returns JSON text' },
          async () => new ToolOutput({ data: new JsonText(given(json)) }),
        ],
      ]);
      const engine = new Engine({
        registry: new ToolRegistry([plugin], quiet),
        logger: quiet,
        limits: { maxTimeoutS: 30, maxOutputBytes: 4096, maxEvents: 1000, maxBufferedEvents: 100_000 },
      });
      engine.registry.rebuild();
      const call = engine.start(ToolCallRequest.parse({ tool_name: 'out', arguments: {} }), ANONYMOUS);
      await call.result;
      JSON.parse = ((text: string, ...rest: []) => (parsed.push(text), realParse(text, ...rest))) as typeof JSON.parse;
      try {
        const answer = call.responseJson()!;
        // Bytes in, bytes out: the door sends them without the text ever being decoded.
        expect(typeof answer === 'string').toBe(form === 'text');
        const text = textOf(answer);
        expect(text).toContain(`"data":${json},`);
        expect(parsed).toEqual([]); // answered without parsing it
        expect(call.response!.data.data).toEqual(value);
        expect(parsed).toEqual([json]);
        expect(call.response!.data.data).toBe(call.response!.data.data); // parsed once
        expect(parsed).toHaveLength(1);
        expect(realParse(text)).toEqual(realParse(JSON.stringify(call.response)));
      } finally {
        JSON.parse = realParse;
      }
      expect(Object.keys(call.response!.data)).toEqual([
        'success',
        'tool_name',
        'data',
        'summary',
        'truncated',
        'exit_code',
        'error',
        'error_code',
        'duration_ms',
        'events',
      ]);
      call.response!.data.data = 'replaced';
      expect(call.response!.data.data).toBe('replaced');
    },
  );

  it('a call stopped before its tool answers (timeout, cancel) answers the same text', async () => {
    const { engine, remote } = setup();
    const call = engine.start(ToolCallRequest.parse({ tool_name: 'remote', arguments: {} }), ANONYMOUS);
    await remote.started();
    call.stop('cancel');
    await call.result;
    expect(call.responseJson()).toBe(JSON.stringify(call.response));
    expect(JSON.parse(textOf(call.responseJson()))).toMatchObject({
      data: { error: expect.stringMatching(/was canceled/) },
    });
  });
});

describe('what a door gets of a settled call: it asks, or is asked; it owes the engine nothing', () => {
  /** A logger that keeps its lines (the engine writes a call's outcome line through it). */
  function keeping() {
    const lines: Array<{ fields: unknown; msg: string }> = [];
    const write = (fields: unknown, msg?: string) => void lines.push({ fields, msg: msg ?? '' });
    const log: Logger = { debug: write, info: write, warn: write, error: write, child: () => log };
    return { log, lines };
  }
  const turnEnds = () => new Promise<void>((resolve) => setImmediate(resolve));

  function engineWith(log: Logger) {
    const plugin = definePlugin('take', [
      [{ name: 'out', description: 'Answers an object' }, async () => ({ text: 'hi "there"' })],
    ]);
    const engine = new Engine({
      registry: new ToolRegistry([plugin], quiet),
      logger: log,
      limits: { maxTimeoutS: 30, maxOutputBytes: 4096, maxEvents: 10, maxBufferedEvents: 100 },
    });
    engine.registry.rebuild();
    return engine;
  }

  it("a door asks for the data's JSON after the call settles, with no start option; once the turn is over it is gone and the response is serialised afresh", async () => {
    const engine = engineWith(quiet);
    const call = engine.start(ToolCallRequest.parse({ tool_name: 'out', arguments: {} }), ANONYMOUS);
    await call.result;
    expect(call.takeDataJson()).toBe(JSON.stringify({ text: 'hi "there"' }));
    expect(call.takeDataJson()).toBeUndefined(); // taken once
    const later = engine.start(ToolCallRequest.parse({ tool_name: 'out', arguments: {} }), ANONYMOUS);
    await later.result;
    await turnEnds();
    expect(later.takeDataJson()).toBeUndefined(); // a call kept past its turn holds only its response
    expect(textOf(later.responseJson('\n'))).toBe(`${JSON.stringify(later.response)}\n`);
  });

  it("the engine asks the call's logger, as the call settles, whether a line of its own carries the outcome line: then it writes none", async () => {
    const { log, lines } = keeping();
    const engine = engineWith(quiet);
    const outcomeLines = () => lines.filter((l) => l.msg === 'call succeeded');
    const asked: Call[] = [];
    for (const carries of [true, false, undefined]) {
      const request = new LazyChildLogger(log, { request_id: `r-${carries}` });
      if (carries !== undefined) request.callLineCarrier = { carry: (c) => (asked.push(c), carries) };
      lines.length = 0;
      const call = engine.start(ToolCallRequest.parse({ tool_name: 'out', arguments: {} }), ANONYMOUS, {
        logger: request,
      });
      await call.result;
      // Written (or not) as it settled, before the door's code after `await call.result` runs.
      expect(outcomeLines(), `carrier says ${carries}`).toHaveLength(carries ? 0 : 1);
      if (carries !== undefined) expect(asked.at(-1)).toBe(call);
    }
    expect(asked).toHaveLength(2);
  });
});

/** responseJson()'s answer as text: it is a string, or UTF-8 bytes. */
function textOf(answer: string | Uint8Array | undefined): string {
  if (answer === undefined) throw new Error('the call has not settled');
  return typeof answer === 'string' ? answer : Buffer.from(answer).toString('utf8');
}
