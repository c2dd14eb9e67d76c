import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolContext } from '../../src/index.js';
import { crashTool, definePlugin, echoTool, failTool, outputTool, sleep } from '../helpers/plugins.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const typed = definePlugin('typed', [
  [
    {
      name: 'typed',
      description: 'Accepts every parameter type and returns what it got',
      input_parameters: [
        { name: 'name', type: 'string', description: 'a required string', required: true },
        { name: 'count', type: 'integer', description: 'an integer' },
        { name: 'ratio', type: 'number', description: 'a number' },
        { name: 'flag', type: 'boolean', description: 'a boolean' },
        { name: 'mode', type: 'string', description: 'an enum', enum: ['fast', 'slow'] },
        {
          name: 'opts',
          type: 'object',
          description: 'a nested object',
          properties: {
            depth: { name: 'depth', type: 'integer', description: 'required inside opts', required: true },
            label: { name: 'label', type: 'string', description: 'optional inside opts' },
          },
        },
        { name: 'items', type: 'array', description: 'an array' },
        { name: 'meta', type: 'object', description: 'a free-form object' },
      ],
    },
    (args) => ({ received: args }),
  ],
]);

let sideEffects = 0;
const slow = definePlugin('slow', [
  [
    {
      name: 'sleep',
      description: 'Sleeps, honouring the abort signal; schedules a side effect for when it would finish',
      input_parameters: [{ name: 'ms', type: 'integer', description: 'how long', required: true }],
    },
    async (args, ctx: ToolContext) => {
      const ms = Number(args.ms);
      const timer = setTimeout(() => sideEffects++, ms);
      ctx.signal.addEventListener('abort', () => clearTimeout(timer));
      await sleep(ms, ctx.signal);
      return { slept: ms };
    },
  ],
  [
    {
      name: 'stubborn',
      description: 'Ignores its signal and tries to emit after its deadline',
      input_parameters: [{ name: 'ms', type: 'integer', description: 'how long', required: true }],
    },
    async (args, ctx: ToolContext) => {
      await sleep(Number(args.ms));
      ctx.emit('status', { message: 'too late' });
      return { finished: true };
    },
  ],
]);

const emitter = definePlugin('emitter', [
  [
    {
      name: 'count_up',
      description: 'Emits n progress events',
      input_parameters: [{ name: 'n', type: 'integer', description: 'n', required: true }],
    },
    (args, ctx) => {
      const n = Number(args.n);
      for (let i = 0; i < n; i++) ctx.emit('progress', { pct: Math.round(((i + 1) / n) * 100), message: `step ${i}` });
      return { steps: n };
    },
  ],
]);

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({
    plugins: [definePlugin('basic', [echoTool, failTool, crashTool, outputTool]), typed, slow, emitter],
    config: {
      server: { max_output_bytes: 10_000, body_limit_bytes: 64 * 1024, max_timeout_s: 2 },
      calls: { max_events: 100 },
    },
  });
});
afterAll(() => gw.close());

const call = (tool: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  postJson(`${gw.url}/tool/call`, callBody(tool, args, extra));

describe('POST /tool/call (JSON)', () => {
  it('runs a tool and answers a ToolCallResponse', async () => {
    const r = await call('echo', { text: 'héllo ✓' }, { id: 'req-1' });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.json).toMatchObject({
      type: 'tool/call/resp',
      req_id: 'req-1',
      version: '1.0',
      data: {
        success: true,
        tool_name: 'echo',
        data: { text: 'héllo ✓' },
        truncated: false,
        error: null,
        error_code: null,
        events: [],
      },
    });
    expect(Number.isInteger(r.json.data.duration_ms)).toBe(true);
    expect(typeof r.json.created_at).toBe('number');
  });

  it('unknown tool → 404 unknown_tool, with a hint', async () => {
    const r = await call('Echo', { text: 'x' }, { id: 'r2' });
    expect(r.status).toBe(404);
    // The request's id is echoed, as on the A2E transport; a tool message's error names its capability.
    expect(r.json).toMatchObject({
      type: 'error',
      code: 'unknown_tool',
      req_id: 'r2',
      capability_name: 'tools',
      detail: {},
      retryable: false,
    });
    expect(r.json.message).toContain('"Echo"');
    expect(r.json.message).toContain('Did you mean "echo"');
  });

  it('a tool failure is 200 with success false and tool_error', async () => {
    const r = await call('fail', { message: 'disk full' });
    expect(r.status).toBe(200);
    expect(r.json.data).toMatchObject({
      success: false,
      error: 'disk full',
      error_code: 'tool_error',
      data: { partial: true },
      exit_code: 3,
    });
  });

  it('an unexpected exception is a tool_error whose message hides host paths', async () => {
    const r = await call('crash', {});
    expect(r.status).toBe(200);
    expect(r.json.data).toMatchObject({ success: false, error_code: 'tool_error' });
    expect(r.json.data.error).toContain('ENOENT');
    expect(r.json.data.error).not.toContain('/home/secret-user');
    expect(JSON.stringify(r.json)).not.toMatch(/at .*\.ts:\d+/); // no stack trace
  });

  it('output over server.max_output_bytes is truncated with truncated: true', async () => {
    const r = await call('big_output', { bytes: 50_000 });
    expect(r.json.data.success).toBe(true);
    expect(r.json.data.truncated).toBe(true);
    expect(r.json.data.summary).toBe('50000 bytes');
    expect(JSON.stringify(r.json.data.data).length).toBeLessThanOrEqual(10_000);
    expect(r.json.data.data.text).toMatch(/^x+$/);
    const small = await call('big_output', { bytes: 100 });
    expect(small.json.data.truncated).toBe(false);
    expect(small.json.data.data.text).toHaveLength(100);
  });

  it('streaming call answered as JSON collects its events in data.events, seq from 0', async () => {
    const r = await call('count_up', { n: 3 }, { streaming: true, id: 'c1' });
    expect(r.json.data.success).toBe(true);
    expect(r.json.data.events.map((e: { seq: number }) => e.seq)).toEqual([0, 1, 2]);
    expect(r.json.data.events[2]).toMatchObject({
      type: 'tool/event',
      kind: 'progress',
      req_id: 'c1',
      data: { pct: 100, message: 'step 2' },
    });
    // not streaming: no events are produced at all
    const quiet = await call('count_up', { n: 3 });
    expect(quiet.json.data.events).toEqual([]);
  });

  it('events beyond calls.max_events are dropped oldest-first and the result says truncated', async () => {
    const r = await call('count_up', { n: 250 }, { streaming: true });
    const seqs = r.json.data.events.map((e: { seq: number }) => e.seq);
    expect(seqs.length).toBeGreaterThanOrEqual(100);
    expect(seqs.length).toBeLessThan(250);
    expect(seqs.at(-1)).toBe(249);
    expect(r.json.data.truncated).toBe(true);
  });
});

describe('argument validation (422 invalid_arguments)', () => {
  const invalid = async (args: Record<string, unknown>) => {
    const r = await call('typed', args);
    expect(r.status).toBe(422);
    expect(r.json).toMatchObject({ type: 'error', code: 'invalid_arguments' });
    return r.json as { message: string; detail: { problems: { path: string; message: string }[] } };
  };

  it('accepts valid arguments of every type and passes them on', async () => {
    const args = {
      name: 'n',
      count: 3,
      ratio: 0.5,
      flag: true,
      mode: 'fast',
      opts: { depth: 2, label: 'l' },
      items: [1, 'a'],
      meta: { any: ['thing'] },
    };
    const r = await call('typed', args);
    expect(r.status).toBe(200);
    expect(r.json.data.data.received).toEqual(args);
  });

  it('null for an optional parameter counts as not given', async () => {
    const r = await call('typed', { name: 'n', count: null, opts: null });
    expect(r.status).toBe(200);
    expect(r.json.data.data.received).toEqual({ name: 'n' });
  });

  it('a missing required parameter', async () => {
    const e = await invalid({});
    expect(e.detail.problems).toEqual([{ path: 'arguments.name', message: 'required string is missing' }]);
    expect(e.message).toContain('arguments.name: required string is missing');
  });

  it('wrong types', async () => {
    const e = await invalid({ name: 1, count: '3', ratio: 'x', flag: 'yes', items: {}, meta: [] });
    const byPath = Object.fromEntries(e.detail.problems.map((p) => [p.path, p.message]));
    expect(byPath).toEqual({
      'arguments.name': 'expected string, got integer',
      'arguments.count': 'expected integer, got string',
      'arguments.ratio': 'expected number, got string',
      'arguments.flag': 'expected boolean, got string',
      'arguments.items': 'expected array, got object',
      'arguments.meta': 'expected object, got array',
    });
  });

  it('a fractional number for an integer', async () => {
    const e = await invalid({ name: 'n', count: 1.5 });
    expect(e.detail.problems[0]!.path).toBe('arguments.count');
    expect(e.detail.problems[0]!.message).toBe('expected integer, got number');
  });

  it('a value outside the enum', async () => {
    const e = await invalid({ name: 'n', mode: 'medium' });
    expect(e.detail.problems).toEqual([{ path: 'arguments.mode', message: 'must be one of: "fast", "slow"' }]);
  });

  it('nested properties: required, types and unknown keys', async () => {
    const e = await invalid({ name: 'n', opts: { label: 5, extra: true } });
    const paths = e.detail.problems.map((p) => p.path).sort();
    expect(paths).toEqual(['arguments.opts', 'arguments.opts.depth', 'arguments.opts.label']);
    expect(e.message).toContain('unknown key "extra"');
  });

  it('unknown top-level keys are rejected', async () => {
    const e = await invalid({ name: 'n', nmae: 'typo' });
    expect(e.detail.problems).toEqual([{ path: 'arguments', message: 'unknown key "nmae"; remove it' }]);
  });
});

describe('malformed requests', () => {
  it('malformed JSON → 400 invalid_request', async () => {
    const r = await postJson(`${gw.url}/tool/call`, '{"tool_name": "echo", ');
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ type: 'error', code: 'invalid_request' });
    expect(r.json.message).toContain('not valid JSON');
  });

  it('a wrong shape → 400 naming each field', async () => {
    const r = await postJson(`${gw.url}/tool/call`, { tool_name: 5, arguments: 'x', timeout: -1 });
    expect(r.status).toBe(400);
    expect(r.json.code).toBe('invalid_request');
    const paths = r.json.detail.problems.map((p: { path: string }) => p.path).sort();
    expect(paths).toEqual(['arguments', 'timeout', 'tool_name']);
  });

  it('a JSON array or an empty body → 400', async () => {
    expect((await postJson(`${gw.url}/tool/call`, '[1,2]')).status).toBe(400);
    expect((await postJson(`${gw.url}/tool/call`, '')).status).toBe(400);
  });

  it('a body over server.body_limit_bytes → 413, with or without Content-Length', async () => {
    const big = JSON.stringify(callBody('echo', { text: 'x'.repeat(100 * 1024) }));
    const r = await postJson(`${gw.url}/tool/call`, big);
    expect(r.status).toBe(413);
    expect(r.json).toMatchObject({ type: 'error', code: 'payload_too_large' });
    expect(r.json.message).toContain('server.body_limit_bytes');
    // chunked upload of unknown length
    const chunks = new ReadableStream({
      start(c) {
        for (let i = 0; i < 100; i++) c.enqueue(new TextEncoder().encode('x'.repeat(1024)));
        c.close();
      },
    });
    const res = await fetch(`${gw.url}/tool/call`, {
      method: 'POST',
      body: chunks,
      duplex: 'half',
      headers: { 'Content-Type': 'application/json' },
    } as RequestInit);
    expect(res.status).toBe(413);
    expect((await res.json()).code).toBe('payload_too_large');
  });

  it('invalid UTF-8 → 400', async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"tool_name":"echo","arguments":{"text":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}}'),
    ]);
    const res = await fetch(`${gw.url}/tool/call`, {
      method: 'POST',
      body: bytes,
      headers: { 'Content-Type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect((await res.json()).message).toContain('UTF-8');
  });

  it('unknown routes → 404 and wrong methods → 405, both as error messages', async () => {
    const r = await fetch(`${gw.url}/nope`);
    expect(r.status).toBe(404);
    expect((await r.json()).code).toBe('not_found');
    const m = await fetch(`${gw.url}/tool/call`);
    expect(m.status).toBe(405);
    expect(m.headers.get('allow')).toBe('POST');
    expect((await m.json()).message).toContain('use POST');
  });

  it('every REST error echoes the request id, names the tools capability on tool routes and has detail {}', async () => {
    const bad = await call('typed', { name: 1 }, { id: 'args-1' });
    expect(bad.status).toBe(422);
    expect(bad.json).toMatchObject({ code: 'invalid_arguments', req_id: 'args-1', capability_name: 'tools' });
    const shape = await postJson(`${gw.url}/tool/call`, { id: 'shape-1', tool_name: 5 });
    expect(shape.json).toMatchObject({ code: 'invalid_request', req_id: 'shape-1', capability_name: 'tools' });
    const list = await postJson(`${gw.url}/tool/list`, { id: 'list-1', session_id: 5 });
    expect(list.json).toMatchObject({ code: 'invalid_request', req_id: 'list-1', capability_name: 'tools' });
    const started = await postJson(`${gw.url}/tool/calls`, callBody('nope', {}, { id: 'calls-1' }));
    expect(started.json).toMatchObject({ code: 'unknown_tool', req_id: 'calls-1', capability_name: 'tools' });
    const missing = await fetch(`${gw.url}/tool/calls/no-such-call`);
    expect(await missing.json()).toMatchObject({ code: 'not_found', req_id: '', capability_name: 'tools' });
    // Not a tool message: no capability; an id that is too long is refused, not echoed.
    const route = await (await fetch(`${gw.url}/nope`)).json();
    expect(route).toMatchObject({ code: 'not_found', req_id: '', capability_name: '', detail: {} });
    const long = await postJson(`${gw.url}/tool/call`, callBody('echo', { text: 'x' }, { id: 'i'.repeat(300) }));
    expect(long.json).toMatchObject({ code: 'invalid_request', req_id: '', capability_name: 'tools' });
  });

  it('the gateway keeps serving after all of the above', async () => {
    expect((await call('echo', { text: 'still here' })).json.data.data.text).toBe('still here');
  });
});

describe('timeouts', () => {
  it('a call past its timeout is a tool_error saying so, and the tool is really stopped', async () => {
    const before = sideEffects;
    const started = performance.now();
    const r = await call('sleep', { ms: 1500 }, { timeout: 1 });
    expect(r.status).toBe(200);
    expect(r.json.data).toMatchObject({ success: false, error_code: 'tool_error' });
    expect(r.json.data.error).toContain('timed out after 1 s');
    expect(r.json.data.duration_ms).toBeGreaterThanOrEqual(990);
    // Wait until well after the tool would have finished: its side effect must never happen.
    await sleep(Math.max(0, 2000 - (performance.now() - started)));
    expect(sideEffects).toBe(before);
  });

  it('the timeout is capped by server.max_timeout_s', async () => {
    const r = await call('sleep', { ms: 30_000 }, { timeout: 3600 });
    expect(r.json.data.error).toContain('timed out after 2 s');
  });

  it('a tool that ignores its signal cannot add events after the answer', async () => {
    const r = await call('stubborn', { ms: 1300 }, { timeout: 1, streaming: true });
    expect(r.json.data.success).toBe(false);
    expect(r.json.data.events).toEqual([]);
  });
});
