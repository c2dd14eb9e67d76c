/**
 * eval_js over real HTTP: values, console streaming, and the limits (time,
 * stack, memory) each ending in a tool_error while the gateway keeps serving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callBody, openSse, postJson, startGateway, type TestGateway } from '../helpers/server.js';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startGateway({ config: { tools: { shell: { enabled: false }, eval: { memory_mb: 32 } } } });
});
afterAll(async () => {
  await gw?.close();
});

async function evalJs(code: string, args: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const res = await postJson(`${gw.url}/tool/call`, callBody('eval_js', { code, ...args }, extra));
  expect(res.status).toBe(200);
  return res.json.data;
}

/** The gateway still answers, and a new evaluation still works. */
async function expectStillServing(): Promise<void> {
  const r = await evalJs('"still " + "here"');
  expect(r).toMatchObject({ success: true, data: { result: 'still here' } });
}

describe('eval_js', () => {
  it('is listed as a native, streaming, idempotent tool', async () => {
    const res = await postJson(`${gw.url}/tool/list`, { query: 'evaluate javascript code', include_deferred: true });
    const tool = res.json.tools.find((t: { name: string }) => t.name === 'eval_js');
    expect(tool).toMatchObject({ kind: 'native', streaming: true, idempotent: true });
  });

  it('returns the JSON value of the last expression', async () => {
    const r = await evalJs(
      'const xs = [1, 2, 3];\nfunction double(x) { return x * 2 }\n({ doubled: xs.map(double), sum: xs.reduce((a, b) => a + b) })',
    );
    expect(r).toMatchObject({
      success: true,
      data: { result: { doubled: [2, 4, 6], sum: 6 }, type: 'object', console: [] },
    });
    expect((await evalJs('undefined')).data).toMatchObject({ result: null, type: 'undefined' });
    expect((await evalJs('Promise.resolve(6 * 7)')).data.result).toBe(42);
    // Jobs the code queued run before the result is taken, also when the result is not a promise.
    const queued = await evalJs('const o = { n: 1 }; Promise.resolve().then(() => { o.n = 2; console.log("ran") }); o');
    expect(queued.data).toMatchObject({ result: { n: 2 }, console: ['ran'] });
  });

  it("converts the result with the context's own JSON.stringify, whatever the code set it to", async () => {
    const r = await evalJs('JSON.stringify = () => "\\"hijacked\\""; ({ kept: true, toJSON() { return "own" } })');
    expect(r).toMatchObject({ success: true, data: { result: 'own', type: 'object' } });
    expect((await evalJs('JSON.stringify = 1; [1, 2]')).data.result).toEqual([1, 2]);
  });

  it('streams console output as log events and returns it too', async () => {
    const sse = await openSse(`${gw.url}/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(
        callBody(
          'eval_js',
          { code: 'console.log("hello", {a: 1}); console.warn("careful"); console.error([1, 2]); 7' },
          { streaming: true },
        ),
      ),
    });
    const events = await sse.rest();
    expect(events.map((e) => e.event)).toEqual(['tool/event', 'tool/event', 'tool/event', 'tool/call/resp']);
    expect(events.slice(0, 3).map((e) => e.json.data)).toEqual([
      { level: 'info', message: 'hello {"a":1}' },
      { level: 'warn', message: 'careful' },
      { level: 'error', message: '[1,2]' },
    ]);
    expect(events[3]!.json.data).toMatchObject({
      success: true,
      data: { result: 7, console: ['hello {"a":1}', 'careful', '[1,2]'] },
    });
  });

  it('starts every evaluation from a clean slate', async () => {
    expect((await evalJs('globalThis.leftover = 41; leftover + 1')).data.result).toBe(42);
    expect((await evalJs('typeof leftover')).data.result).toBe('undefined');
  });

  it('sees no host functions', async () => {
    const r = await evalJs(
      '[typeof require, typeof process, typeof fetch, typeof setTimeout, typeof globalThis.std, typeof globalThis.os]',
    );
    expect(r.data.result).toEqual(Array(6).fill('undefined'));
  });

  it('reports an exception with its type and message', async () => {
    const r = await evalJs('null.x');
    expect(r).toMatchObject({ success: false, error_code: 'tool_error' });
    expect(r.error).toMatch(/^code threw TypeError: /);
    expect((await evalJs('throw new RangeError("too far")')).error).toContain('RangeError: too far');
    expect((await evalJs('10n')).error).toContain('cannot be converted to JSON');
  });

  it('stops an infinite loop at its timeout, and serves other calls meanwhile', async () => {
    const started = performance.now();
    const loop = evalJs('while (true) {}', { timeout: 3 });
    // A second evaluation completes while the loop still runs: the loop is off the main thread.
    await expectStillServing();
    expect(performance.now() - started).toBeLessThan(2500);
    const r = await loop;
    expect(r).toMatchObject({ success: false, error_code: 'tool_error' });
    expect(r.error).toContain('ran past its deadline');
    await expectStillServing();
  });

  it('stops the evaluation when the call itself times out', async () => {
    const r = await evalJs('for (;;) {}', { timeout: 60 }, { timeout: 1 });
    expect(r).toMatchObject({ success: false, error_code: 'tool_error' });
    expect(r.error).toContain('timed out after 1 s');
    await expectStillServing();
  });

  it('ends deep recursion with a stack error', async () => {
    const r = await evalJs('function down(n) { return down(n + 1) + 1 }\ndown(0)');
    expect(r).toMatchObject({ success: false, error_code: 'tool_error' });
    expect(r.error).toContain('overflowed the stack');
    expect(r.error).toContain('max_stack_kb');
    await expectStillServing();
  });

  it('ends a memory hog with an out-of-memory error', async () => {
    for (const code of [
      'const keep = []; for (let i = 0; ; i++) keep.push("x".repeat(1000) + i)', // many medium strings
      'const big = "x".repeat(1 << 28); big.length', // one huge allocation
      'const arrays = []; for (;;) arrays.push(new Array(100000).fill(1))',
    ]) {
      const r = await evalJs(code, { timeout: 20 });
      expect(r, code).toMatchObject({ success: false, error_code: 'tool_error' });
      expect(r.error, code).toContain('ran out of memory (limit tools.eval.memory_mb = 32 MiB)');
    }
    await expectStillServing();
  });

  it('runs at most max_running evaluations at once; others wait for a slot', async () => {
    const g = await startGateway({ config: { tools: { shell: { enabled: false }, eval: { max_running: 1 } } } });
    try {
      const order: string[] = [];
      const call = (code: string, timeout: number) =>
        postJson(`${g.url}/tool/call`, callBody('eval_js', { code, timeout })).then((r) => {
          order.push(code);
          return r.json.data;
        });
      const loop = call('for (;;) {}', 2);
      const quick = call('"after the loop"', 20);
      const [first, second] = await Promise.all([loop, quick]);
      expect(first.error).toContain('ran past its deadline');
      expect(second).toMatchObject({ success: true, data: { result: 'after the loop' } });
      expect(order).toEqual(['for (;;) {}', '"after the loop"']);
    } finally {
      await g.close();
    }
  });

  it('rejects a non-positive timeout', async () => {
    const r = await evalJs('1', { timeout: 0 });
    expect(r).toMatchObject({ success: false, error_code: 'tool_error' });
    expect(r.error).toContain('timeout must be a positive number');
  });
});
