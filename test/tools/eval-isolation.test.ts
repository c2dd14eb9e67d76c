/**
 * eval_js isolation while workers reuse their QuickJS instance: each evaluation tries to leave something
 * behind (globals, prototypes, atoms, memory contents, a runaway loop, exhausted memory or stack, a thrown
 * exception) and the next one, in the same worker, must see none of it. A2E_EVAL_CHECK_RESET makes the
 * worker compare its whole WebAssembly memory with the new instance's after each reset, and fail every
 * later evaluation if one byte differs: the last check of each case is that evaluations still succeed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

let gw: TestGateway;

beforeAll(async () => {
  process.env.A2E_EVAL_CHECK_RESET = '1';
  // One slot: evaluations run one after another in the same few workers, as they reuse their instances.
  gw = await startGateway({
    config: { tools: { shell: { enabled: false }, eval: { memory_mb: 32, max_running: 1 } } },
  });
});
afterAll(async () => {
  delete process.env.A2E_EVAL_CHECK_RESET;
  await gw?.close();
});

async function evalJs(code: string, args: Record<string, unknown> = {}) {
  const res = await postJson(`${gw.url}/tool/call`, callBody('eval_js', { code, ...args }));
  expect(res.status).toBe(200);
  return res.json.data;
}

async function value(code: string): Promise<unknown> {
  const r = await evalJs(code);
  expect(r, code).toMatchObject({ success: true });
  return r.data.result;
}

/** What a fresh evaluation sees of its globals and prototypes (names only). */
const LANDSCAPE =
  '[Object.getOwnPropertyNames(globalThis).sort(), Object.getOwnPropertyNames(Object.prototype).sort(), ' +
  'Object.getOwnPropertyNames(Array.prototype).sort(), Object.getOwnPropertyNames(String.prototype).sort()]';

/** A clean evaluation, several times so that every worker's instance is checked. */
async function expectClean(landscape: unknown): Promise<void> {
  for (let i = 0; i < 3; i++) expect(await value(LANDSCAPE)).toEqual(landscape);
}

describe('eval_js isolation between evaluations in a reused instance', () => {
  let landscape: unknown;
  beforeAll(async () => {
    landscape = await value(LANDSCAPE);
  });

  it('leaves no globals and no changed prototypes behind, also after a thrown exception', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await evalJs(
        'globalThis.leak = 1; Object.prototype.polluted = "yes"; Array.prototype.push = () => "hijacked"; ' +
          'String.prototype.trim = function () { return "hijacked" }; JSON.stringify = () => "\\"hijacked\\""; ' +
          'throw new Error("after polluting")',
      );
      expect(r.error).toContain('after polluting');
    }
    expect(await value('[typeof leak, ({}).polluted, [].push(1), " x ".trim(), JSON.stringify({a: 1})]')).toEqual([
      'undefined',
      null, // undefined in an array is null in JSON
      1,
      'x',
      '{"a":1}',
    ]);
    await expectClean(landscape);
  });

  it('leaves no atoms, symbols or shapes behind', async () => {
    // Thousands of new property names and registered symbols: atoms of the runtime that made them.
    const made = await value(
      'for (let i = 0; i < 5000; i++) { globalThis["secret_atom_" + i] = i; Symbol.for("secret_symbol_" + i) } ' +
        'Object.getOwnPropertyNames(globalThis).filter((n) => n.startsWith("secret_atom_")).length',
    );
    expect(made).toBe(5000);
    expect(await value('Object.getOwnPropertyNames(globalThis).filter((n) => n.startsWith("secret_")).length')).toBe(0);
    await expectClean(landscape);
  });

  it('leaves no memory contents behind', async () => {
    // A marker written all over 4 MiB, as bytes and as strings; the next evaluation's fresh buffers are zero.
    await value(
      'const b = new Uint8Array(4 << 20); b.fill(0xa5); globalThis.s = "SECRET-".repeat(100000); b.length + s.length',
    );
    expect(await value('const b = new Uint8Array(8 << 20); b.every((x) => x === 0)')).toBe(true);
    await expectClean(landscape);
  });

  it('serves the next evaluation cleanly after a runaway one was interrupted', async () => {
    const r = await evalJs('globalThis.leak = 1; Object.prototype.polluted = 1; while (true) {}', { timeout: 1 });
    expect(r.error).toContain('ran past its deadline');
    expect(await value('[typeof leak, typeof ({}).polluted]')).toEqual(['undefined', 'undefined']);
    await expectClean(landscape);
  });

  it('gives the next evaluation its whole memory and stack after one exhausted them', async () => {
    const oom = await evalJs(
      'Object.prototype.polluted = 1; const keep = []; for (let i = 0; ; i++) keep.push("x".repeat(1000) + i)',
      { timeout: 20 },
    );
    expect(oom.error).toContain('ran out of memory');
    // Most of the 32 MiB limit is free again: the exhausted heap is not this evaluation's.
    expect(
      await value(
        'const keep = []; for (let i = 0; i < 20000; i++) keep.push("y".repeat(1000) + i); [keep.length, typeof ({}).polluted]',
      ),
    ).toEqual([20000, 'undefined']);
    const deep = await evalJs('function down(n) { return down(n + 1) + 1 }\ndown(0)');
    expect(deep.error).toContain('overflowed the stack');
    expect(await value('function down(n) { return n === 0 ? 0 : down(n - 1) + 1 }\ndown(1000)')).toBe(1000);
    await expectClean(landscape);
  });

  it('draws Math.random afresh for every evaluation (no two evaluations see the same sequence)', async () => {
    const draws = new Set();
    for (let i = 0; i < 8; i++) draws.add(await value('[Math.random(), Math.random()].join()'));
    expect(draws.size).toBe(8);
  });

  it('keeps console working after an evaluation deleted it and its functions were freed', async () => {
    for (let i = 0; i < 4; i++) {
      // Deleting the last reference frees the console's functions, whose host references the runtime then drops.
      expect(await value('delete globalThis.console; typeof console')).toBe('undefined');
      // Several times: evaluations alternate between the plugin's workers, and the one that deleted it must be among them.
      for (let j = 0; j < 3; j++) {
        const r = await evalJs(`console.log("still here ${i}.${j}"); typeof console.log`);
        expect(r).toMatchObject({ success: true, data: { result: 'function', console: [`still here ${i}.${j}`] } });
      }
    }
    await expectClean(landscape);
  });

  it('zeroes all the stack a deep evaluation wrote, measured from the lowest stack pointer it reached', async () => {
    // Recursion, nested JSON and a backtracking regular expression go deep into the C stack; the memory check
    // fails every later evaluation if the reset left one byte of it. Several times: evaluations alternate workers.
    const deep =
      'function f(n) { return n ? f(n - 1) + 1 : 0 }; ' +
      '[f(400), JSON.stringify(JSON.parse("[".repeat(300) + "]".repeat(300))).length, /(a|b)*c/.test("ab".repeat(2000) + "c")]';
    for (let i = 0; i < 4; i++) {
      expect(await value(deep)).toEqual([400, 600, true]);
      expect(await value('1 + 1')).toBe(2);
    }
    await expectClean(landscape);
  });

  it('reuses instances: many evaluations in a row all succeed with the memory check on', async () => {
    for (let i = 0; i < 30; i++) {
      expect(
        await value(
          `const xs = Array.from({length: ${100 * i}}, (_, k) => ({k, s: "v" + k})); [xs.length, typeof leak]`,
        ),
      ).toEqual([100 * i, 'undefined']);
    }
  });
});
