/**
 * The hot path's hand-written shortcuts must never change an answer: each
 * is compared with the zod schema it stands in for, on generated inputs.
 * Also guards the cheap structural choices the call overhead relies on.
 */
import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { compileArguments } from '../../src/engine/arguments.js';
import { Deadlines, type Deadline } from '../../src/utils/deadlines.js';
import { EntryList } from '../../src/utils/entry-list.js';
import { LabeledCounter, LabeledHistogram } from '../../src/observability/labeled-metrics.js';
import {
  ToolCallRequest,
  fastToolCallRequest,
  messageParser,
  parserFor,
  type ToolParameter,
} from '../../src/protocol/index.js';
import { definePlugin } from '../helpers/plugins.js';
import { postJson, startGateway } from '../helpers/server.js';

/** A small deterministic PRNG, so a failure can be reproduced. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
const pick = <T>(rand: () => number, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

const ABSENT = Symbol('absent');
// Per field: values the schema accepts, then values it refuses (picked now and then).
const FIELD_VALUES: Record<string, [valid: readonly unknown[], invalid: readonly unknown[]]> = {
  type: [
    [ABSENT, 'tool/call/req'],
    ['tool/list/req', '', null, 1],
  ],
  id: [
    [ABSENT, 'r1', ''],
    [null, 7],
  ],
  version: [
    [ABSENT, '1.0', '2.0'],
    [null, 1],
  ],
  ts: [
    [ABSENT, 1716123457.1, 0, -1],
    [null, '1716123457'],
  ],
  session_id: [
    [ABSENT, '', 's1'],
    [null, false],
  ],
  tool_name: [
    ['echo', 'read_file'],
    [ABSENT, '', null, 3, ['echo']],
  ],
  arguments: [
    [{}, { text: 'hi' }, { a: { b: [1, 2] } }],
    [ABSENT, [], null, 'x', JSON.parse('{"__proto__":{"x":1}}')],
  ],
  correlation_id: [
    [ABSENT, '', 'turn-1'],
    [null, 0],
  ],
  streaming: [
    [ABSENT, true, false],
    [null, 'true', 0],
  ],
  timeout: [
    [ABSENT, 30, 1, 2 ** 53 - 1],
    [0, -5, 1.5, 2 ** 53, '30', null],
  ],
  extra: [[ABSENT], ['unknown field']],
};

function generate(rand: () => number): Record<string, unknown> {
  const msg: Record<string, unknown> = {};
  for (const [field, [valid, invalid]] of Object.entries(FIELD_VALUES)) {
    const v = pick(rand, rand() < 0.06 ? invalid : valid);
    if (v !== ABSENT) msg[field] = v;
  }
  return msg;
}

describe('fast tool/call/req parse', () => {
  const schema = messageParser(ToolCallRequest);

  it('accepts only what the schema accepts, and returns exactly what it returns', () => {
    const rand = prng(42);
    let fast = 0;
    let rejected = 0;
    for (let i = 0; i < 20_000; i++) {
      // id and ts are generated when absent: give them, so both outputs are comparable.
      const msg = { id: 'fixed', ts: 1.5, ...generate(rand) };
      const zod = schema(structuredClone(msg));
      const quick = fastToolCallRequest(structuredClone(msg));
      if (quick === undefined) {
        if (!zod.success) rejected++;
        continue;
      }
      fast++;
      expect(zod.success, JSON.stringify(msg)).toBe(true);
      expect(quick).toStrictEqual(zod.data);
    }
    // Both branches were really exercised.
    expect(fast).toBeGreaterThan(100);
    expect(rejected).toBeGreaterThan(100);
  });

  it('fills id and ts like the schema when they are absent', () => {
    const r = fastToolCallRequest({ tool_name: 'echo', arguments: { text: 'hi' } })!;
    expect(r).toMatchObject({
      type: 'tool/call/req',
      version: '1.0',
      session_id: '',
      correlation_id: '',
      streaming: false,
      timeout: 30,
    });
    expect(r.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Math.abs(r.ts - Date.now() / 1000)).toBeLessThan(60);
  });

  it('takes the fast path for the common request, and the schema words the errors otherwise', () => {
    const parse = parserFor(ToolCallRequest);
    expect(parse({ type: 'tool/call/req', tool_name: 'echo', arguments: { text: 'hi' } }).success).toBe(true);
    const bad = parse({ tool_name: 'echo', arguments: { text: 'hi' }, timeout: 0 });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues[0]!.path).toEqual(['timeout']);
  });

  it('copies the arguments, like the schema', () => {
    const args = { text: 'hi' };
    expect(fastToolCallRequest({ tool_name: 'echo', arguments: args })!.arguments).not.toBe(args);
  });
});

describe('fast argument check', () => {
  const PARAMS: ToolParameter[][] = [
    [{ name: 'text', type: 'string', description: '', required: true }],
    [
      { name: 'n', type: 'integer', description: '', required: true },
      { name: 'x', type: 'number', description: '', required: false },
      { name: 'flag', type: 'boolean', description: '', required: false },
    ],
    // A parameter named like an Object.prototype member must still be required to be present.
    [
      { name: 'toString', type: 'string', description: '', required: true },
      { name: 'other', type: 'string', description: '', required: false },
    ],
    // Enums (read_file's `encoding`): a string one of the values; an integer whose String() is one of them.
    [
      { name: 'text', type: 'string', description: '', required: true },
      { name: 'encoding', type: 'string', description: '', required: false, enum: ['utf8', 'base64'] },
      { name: 'n', type: 'integer', description: '', required: false, enum: ['1', '0'] },
    ],
    // An object without declared properties (http_request's `headers`): a record of anything.
    [
      { name: 'text', type: 'string', description: '', required: true },
      { name: 'headers', type: 'object', description: '', required: false },
    ],
  ];
  const VALUES = [
    's',
    '',
    1,
    0,
    -3,
    1.5,
    2 ** 60,
    true,
    false,
    null,
    [],
    {},
    '1',
    'utf8',
    'base64',
    'UTF8',
    { a: '1', B: 2 },
    JSON.parse('{"__proto__": {"x": "1"}, "y": "2"}'),
  ];
  const KEYS = ['text', 'n', 'x', 'flag', 'toString', 'other', 'unknown', '__proto__', 'encoding', 'headers'];

  it.each(PARAMS.map((p) => [p.map((x) => x.name).join(','), p] as const))(
    '%s: same verdict and value as the schema',
    (_n, params) => {
      const withFast = compileArguments(params);
      const schemaOnly = compileArguments(params, { fastPath: false });
      const rand = prng(7);
      let ok = 0;
      for (let i = 0; i < 5000; i++) {
        const args: Record<string, unknown> = {};
        const n = Math.floor(rand() * 4);
        for (let k = 0; k < n; k++) args[pick(rand, KEYS)] = pick(rand, VALUES);
        const a = withFast(structuredClone(args));
        const b = schemaOnly(structuredClone(args));
        expect(a, JSON.stringify(args)).toStrictEqual(b);
        if (a.ok) ok++;
      }
      expect(ok).toBeGreaterThan(20);
    },
  );
});

describe('hot-path structure', () => {
  it("routes with Hono's RegExpRouter (a route it cannot take would drop every request to the slower TrieRouter)", async () => {
    const echo = definePlugin('p', [[{ name: 'echo', description: 'Echo' }, () => ({ ok: true })]]);
    const gw = await startGateway({ plugins: [echo] });
    try {
      const res = await postJson(`${gw.url}/tool/call`, { type: 'tool/call/req', tool_name: 'echo', arguments: {} });
      expect(res.status).toBe(200);
      const router = gw.gateway.app.router as unknown as { activeRouter: { name: string } };
      expect(router.activeRouter.name).toBe('RegExpRouter');
    } finally {
      await gw.close();
    }
  });
});

describe('grouped call deadlines', () => {
  it('expires an item no earlier than its timeout, and a removed one never', async () => {
    const expired: string[] = [];
    let done!: () => void;
    const allDone = new Promise<void>((r) => (done = r));
    const deadlines = new Deadlines<string>((item) => {
      expired.push(item);
      if (item === 'last') done();
    });
    const started = performance.now();
    deadlines.add('early', 20);
    const removed = deadlines.add('removed', 20);
    deadlines.remove(removed);
    deadlines.remove(removed); // twice is a no-op
    deadlines.add('last', 60);
    await allDone;
    expect(performance.now() - started).toBeGreaterThanOrEqual(60 - 1);
    expect(expired).toEqual(['early', 'last']);
  });
});

describe('entry lists (running calls, deadline slots)', () => {
  it('keeps values oldest first, removes each once, and only from its own list', () => {
    const list = new EntryList<string>();
    const other = new EntryList<string>();
    const a = list.add('a');
    const b = list.add('b');
    const c = list.add('c');
    const d = list.add('d');
    expect([...list]).toEqual(['a', 'b', 'c', 'd']);
    expect(other.remove(b)).toBe(false);
    expect(list.remove(b)).toBe(true);
    expect(list.remove(b)).toBe(false);
    expect(list.remove(d)).toBe(true); // the last
    expect(list.remove(a)).toBe(true); // the first
    expect([...list]).toEqual(['c']);
    expect(list.size).toBe(1);
    expect(list.shift()).toBe('c');
    expect(list.remove(c)).toBe(false);
    expect(list.shift()).toBeUndefined();
    expect(list.size).toBe(0);
    list.add('e');
    expect([...list]).toEqual(['e']);
  });

  it('goes on past a value removed while it is being visited', () => {
    const list = new EntryList<number>();
    const entries = [1, 2, 3, 4].map((n) => list.add(n));
    const seen: number[] = [];
    for (const n of list) {
      seen.push(n);
      list.remove(entries[n - 1]!);
    }
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(list.size).toBe(0);
  });

  it('goes on past the next value removed while the current one is being visited', () => {
    const list = new EntryList<number>();
    const entries = [1, 2, 3, 4].map((n) => list.add(n));
    const seen: number[] = [];
    for (const n of list) {
      seen.push(n);
      if (n === 1) list.remove(entries[1]!); // 2, not yet visited
    }
    expect(seen).toEqual([1, 3, 4]);
    expect([...list]).toEqual([1, 3, 4]);
  });
});

describe('per-call metrics', () => {
  it('expose the call counter and a cumulative duration histogram in the Prometheus format', async () => {
    const registry = new Registry();
    const calls = new LabeledCounter('t_calls_total', 'calls', registry);
    const duration = new LabeledHistogram('t_duration_seconds', 'duration', [0.01, 0.1, 1], registry);
    const echo = duration.sample({ tool: 'echo', kind: 'native' });
    for (const s of [0.005, 0.05, 0.05, 5]) duration.observe(echo, s);
    calls.inc(calls.sample({ tool: 'echo', outcome: 'success' }));
    // The same label set is the same sample.
    calls.inc(calls.sample({ tool: 'echo', outcome: 'success' }));
    // A sample never counted is not exposed.
    calls.sample({ tool: 'idle', outcome: 'success' });
    const text = await registry.metrics();
    expect(text).toContain('# TYPE t_calls_total counter');
    expect(text).toContain('t_calls_total{tool="echo",outcome="success"} 2');
    expect(text).toContain('# TYPE t_duration_seconds histogram');
    for (const [le, n] of [
      ['0.01', 1],
      ['0.1', 3],
      ['1', 3],
      ['+Inf', 4],
    ] as const) {
      expect(text).toContain(`t_duration_seconds_bucket{tool="echo",kind="native",le="${le}"} ${n}`);
    }
    expect(text).toContain('t_duration_seconds_sum{tool="echo",kind="native"} 5.105');
    expect(text).toContain('t_duration_seconds_count{tool="echo",kind="native"} 4');
    expect(text).not.toContain('idle');
  });
});

describe('grouped call deadlines, under churn', () => {
  it('expires every item still waiting, none removed, and stops ticking when nothing waits', async () => {
    const expired = new Set<number>();
    const deadlines = new Deadlines<number>((n) => expired.add(n));
    const kept: number[] = [];
    for (let n = 0; n < 2000; n++) {
      const deadline = deadlines.add(n, 5 + (n % 40));
      if (n % 3 === 0) kept.push(n);
      else deadlines.remove(deadline);
    }
    // A zero timeout still expires (its slot lies ahead of the ticker).
    deadlines.add(-1, 0);
    await expect.poll(() => expired.size, { timeout: 5000 }).toBe(kept.length + 1);
    expect([...expired].sort((a, b) => a - b)).toEqual([-1, ...kept]);
    await expect.poll(() => (deadlines as unknown as { ticker?: unknown }).ticker, { timeout: 5000 }).toBeUndefined();
  });

  it('lets an item remove its own deadline while it expires (a call settling as it times out)', async () => {
    const expired: string[] = [];
    const own = new Map<string, Deadline<string>>();
    const deadlines = new Deadlines<string>((item) => {
      deadlines.remove(own.get(item)!); // what Call.settle does when stop('timeout') settles it
      expired.push(item);
    });
    for (const item of ['a', 'b', 'c']) own.set(item, deadlines.add(item, 5));
    await expect.poll(() => expired.length, { timeout: 5000 }).toBe(3);
    expect(expired).toEqual(['a', 'b', 'c']);
    expect((deadlines as unknown as { waiting: number }).waiting).toBe(0);
    await expect.poll(() => (deadlines as unknown as { ticker?: unknown }).ticker, { timeout: 5000 }).toBeUndefined();
  });
});
