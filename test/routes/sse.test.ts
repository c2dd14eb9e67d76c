import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolContext } from '../../src/index.js';
import { deferred, definePlugin, echoTool } from '../helpers/plugins.js';
import { callBody, openSse, postJson, startGateway, type TestGateway } from '../helpers/server.js';

// Gates the test opens one by one, so the tool is provably still running while events arrive.
let gates: ReturnType<typeof deferred<void>>[] = [];
let aborted = deferred<string>();
let hangStarted = deferred<void>();

const streaming = definePlugin('streaming', [
  echoTool,
  [
    {
      name: 'gated',
      description: 'Emits an event, then waits for the test before each next step',
      input_parameters: [{ name: 'steps', type: 'integer', description: 'steps', required: true }],
    },
    async (args, ctx: ToolContext) => {
      const steps = Number(args.steps);
      for (let i = 0; i < steps; i++) {
        ctx.emit('progress', { pct: Math.round((i / steps) * 100), message: `step ${i}` });
        await gates[i]!.promise;
      }
      ctx.emit('artifact', { name: 'out.txt', mime: 'text/plain', chunk: 'done', final: true });
      return { steps };
    },
  ],
  [
    { name: 'destructured', description: 'Uses the context as plugins often do: taken apart' },
    (_args, ctx: ToolContext) => {
      const { emit, signal, streaming } = ctx;
      emit('progress', { pct: 50, message: 'half' });
      emit('log', { level: 'info', message: `aborted: ${signal.aborted}` });
      return { streaming };
    },
  ],
  [
    { name: 'hang', description: 'Emits once, then waits until aborted' },
    (_args, ctx: ToolContext) => {
      ctx.emit('status', { message: 'waiting' });
      hangStarted.resolve();
      return new Promise((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () => {
          aborted.resolve((ctx.signal.reason as Error).message);
          reject(ctx.signal.reason);
        });
      });
    },
  ],
]);

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ plugins: [streaming], config: { server: { heartbeat_s: 0.05 } } });
});
afterAll(() => gw.close());

const stream = (tool: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  openSse(`${gw.url}/tool/call`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(callBody(tool, args, { streaming: true, ...extra })),
  });

describe('POST /tool/call as Server-Sent Events', () => {
  it('sends the SSE headers', async () => {
    const s = await stream('echo', { text: 'hi' });
    expect(s.status).toBe(200);
    expect(s.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(s.headers.get('cache-control')).toBe('no-cache, no-transform');
    expect(s.headers.get('x-accel-buffering')).toBe('no');
    const events = await s.rest();
    expect(events.map((e) => e.event)).toEqual(['tool/call/resp']);
    expect(events[0]!.json).toMatchObject({ type: 'tool/call/resp', data: { success: true, data: { text: 'hi' } } });
  });

  it('events arrive while the tool is still running; seq from 0; the response comes last', async () => {
    gates = [deferred(), deferred(), deferred()];
    const s = await stream('gated', { steps: 3 }, { id: 'sse-1' });
    const received = [];
    for (let i = 0; i < 3; i++) {
      const e = await s.next(); // the tool is blocked on gate i until this arrives
      expect(e).not.toBeNull();
      expect(e!.event).toBe('tool/event');
      expect(e!.id).toBe(String(i));
      expect(e!.json).toMatchObject({
        type: 'tool/event',
        kind: 'progress',
        seq: i,
        req_id: 'sse-1',
        data: { message: `step ${i}` },
      });
      received.push(e!);
      gates[i]!.resolve();
    }
    const rest = await s.rest();
    expect(rest.map((e) => e.event)).toEqual(['tool/event', 'tool/call/resp']);
    expect(rest[0]!.json).toMatchObject({ kind: 'artifact', seq: 3, data: { chunk: 'done', final: true } });
    expect(rest[1]!.json).toMatchObject({
      type: 'tool/call/resp',
      req_id: 'sse-1',
      data: { success: true, data: { steps: 3 }, events: [] },
    });
  });

  it('sends comment heartbeats while idle', async () => {
    gates = [deferred()];
    const s = await stream('gated', { steps: 1 });
    await s.next();
    while (s.comments.filter((c) => c.includes('heartbeat')).length < 2) await new Promise((r) => setTimeout(r, 20));
    gates[0]!.resolve();
    const rest = await s.rest();
    expect(rest.at(-1)!.event).toBe('tool/call/resp');
  });

  it('a client that disconnects mid-stream aborts the tool', async () => {
    aborted = deferred<string>();
    const s = await stream('hang', {});
    const first = await s.next();
    expect(first!.json).toMatchObject({ kind: 'status', data: { message: 'waiting' } });
    s.abort();
    expect(await aborted.promise).toContain('client disconnected');
    // and the gateway has no call left running
    await expect.poll(() => gw.gateway.engine.running).toBe(0);
  });

  it('a tool may take the context apart: emit and signal work unbound', async () => {
    const s = await stream('destructured', {});
    const all = await s.rest();
    expect(all.map((e) => e.event)).toEqual(['tool/event', 'tool/event', 'tool/call/resp']);
    expect(all[0]!.json).toMatchObject({ kind: 'progress', data: { pct: 50 }, seq: 0 });
    expect(all[1]!.json).toMatchObject({ kind: 'log', data: { message: 'aborted: false' }, seq: 1 });
    expect(all[2]!.json).toMatchObject({ data: { success: true, data: { streaming: true } } });
    // Without streaming the same tool runs, its events go nowhere.
    const plain = await postJson(`${gw.url}/tool/call`, callBody('destructured', {}));
    expect(plain.json.data).toMatchObject({ success: true, data: { streaming: false } });
  });

  it('a JSON (non-streaming) client that disconnects aborts the tool, also on a reused keep-alive connection', async () => {
    // One connection: the second call runs on the socket the first one used.
    const agent = new Agent({ connections: 1 });
    try {
      const post = (body: unknown, signal?: AbortSignal) =>
        undiciFetch(`${gw.url}/tool/call`, {
          method: 'POST',
          dispatcher: agent,
          signal,
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
      const first = await post(callBody('echo', { text: 'one' }));
      expect(first.status).toBe(200);
      await first.text();
      aborted = deferred<string>();
      hangStarted = deferred<void>();
      const ac = new AbortController();
      const pending = post(callBody('hang', {}), ac.signal).catch((err: Error) => err);
      await hangStarted.promise;
      ac.abort();
      expect(await pending).toBeInstanceOf(Error);
      expect(await aborted.promise).toContain('client disconnected');
      await expect.poll(() => gw.gateway.engine.running).toBe(0);
    } finally {
      await agent.close();
    }
  });

  it('errors found before the stream starts are plain HTTP errors', async () => {
    const s = await stream('nope', {});
    expect(s.status).toBe(404);
    expect(s.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('a streaming call without Accept: text/event-stream is answered as JSON', async () => {
    const res = await fetch(`${gw.url}/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(callBody('echo', { text: 'x' }, { streaming: true })),
    });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });
});
