/**
 * The byte budgets one at a time, over real HTTP on an in-process gateway with small budgets: a call's events
 * (running and once finished), retained call resources, and the cap on problem lists in errors.
 * test/security/memory.test.ts replays the attacks against a real process under a 256 MB heap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MAX_PROBLEMS, toProblems } from '../../src/protocol/index.js';
import { definePlugin, deferred } from '../helpers/plugins.js';
import { openSse, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const KB = 1024;
let release = deferred();

const tools = definePlugin('budget', [
  [
    {
      name: 'flood',
      description: 'Emits n log events of about `size` characters each, then returns',
      input_parameters: [
        { name: 'n', type: 'integer', description: 'events', required: true },
        { name: 'size', type: 'integer', description: 'characters per event', required: true },
        { name: 'hold', type: 'boolean', description: 'keep running until the test releases it' },
      ],
    },
    async (args, ctx) => {
      const line = 'z'.repeat(Number(args.size));
      for (let i = 0; i < Number(args.n); i++) ctx.emit('log', { level: 'info', message: `${i} ${line}` });
      if (args.hold) await release.promise;
      return { emitted: args.n };
    },
  ],
  [
    {
      name: 'blob',
      description: 'Returns a string of `size` characters',
      input_parameters: [{ name: 'size', type: 'integer', description: 'characters', required: true }],
    },
    (args) => ({ blob: 'b'.repeat(Number(args.size)) }),
  ],
]);

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({
    plugins: [tools],
    config: {
      calls: { max_events: 100_000 },
      limits: { call_events_bytes: 64 * KB, call_retained_events_bytes: 16 * KB, retained_calls_bytes: 1024 * KB },
    },
  });
});
afterAll(() => gw.close());

/** Start a call resource and wait for its end (its events stream ends after the response). */
async function runCallResource(tool: string, args: Record<string, unknown>): Promise<string> {
  const started = await postJson(`${gw.url}/tool/calls`, { tool_name: tool, arguments: args });
  expect(started.status).toBe(202);
  const id = started.json.call_id as string;
  const stream = await openSse(`${gw.url}/tool/calls/${id}/events`);
  await stream.rest();
  return id;
}

describe('byte budgets', () => {
  it('a running call keeps at most limits.call_events_bytes of events; a watcher that lags gets a gap notice', async () => {
    release = deferred();
    // 400 events of ~1 KB (~660 KB) are emitted in one go, before the stream's reader can take any; the call then
    // keeps running, so what the reader gets is what a running call kept.
    const stream = await openSse(`${gw.url}/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ tool_name: 'flood', arguments: { n: 400, size: 1000, hold: true }, streaming: true }),
    });
    const events = [];
    for (let e = await stream.next(); e && e.json?.seq !== 399; e = await stream.next()) events.push(e);
    expect(events[0]!.json).toMatchObject({
      kind: 'status',
      data: { message: expect.stringMatching(/^events 0\.\.\d+ of this call are no longer kept/) },
    });
    // What was kept fits the 64 KB budget (each event counts its data plus ~640 bytes): more than a finished call
    // keeps (16 KB), fewer than 64 KB / 1.6 KB, and the newest are there (the loop stopped at seq 399).
    const kept = events.length; // the gap notice and the logs before seq 399, plus seq 399 itself
    expect(kept).toBeGreaterThan((16 * KB) / 1700);
    expect(kept).toBeLessThan((64 * KB) / 1600);
    release.resolve();
    const rest = await stream.rest();
    expect(rest.at(-1)!.event).toBe('tool/call/resp');
  });

  it('a finished call keeps at most limits.call_retained_events_bytes of its events', async () => {
    const id = await runCallResource('flood', { n: 40, size: 1000 });
    const replay = await (await openSse(`${gw.url}/tool/calls/${id}/events`)).rest();
    const logs = replay.filter((e) => e.json?.kind === 'log');
    expect(replay[0]!.json.data.message).toMatch(/^events 0\.\.\d+ of this call are no longer kept and were skipped/);
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.length).toBeLessThan(16); // 16 KB of ~1.7 KB events
    expect(logs.at(-1)!.json.seq).toBe(39);
  });

  it('finished call resources are dropped oldest first once they hold limits.retained_calls_bytes', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await runCallResource('blob', { size: 300 * KB }));
    // 6 × 300 KB > 1 MB: the oldest are gone, the newest are kept.
    const first = await fetch(`${gw.url}/tool/calls/${ids[0]}`);
    expect(first.status).toBe(404);
    expect(((await first.json()) as { message: string }).message).toMatch(/no call .*calls\.retain_s/);
    const last = (await (await fetch(`${gw.url}/tool/calls/${ids.at(-1)}`)).json()) as {
      state: string;
      result: { data: { data: { blob: string } } };
    };
    expect(last.state).toBe('completed');
    expect(last.result.data.data.blob).toHaveLength(300 * KB);
  });
});

describe('echoed input in errors is capped', () => {
  it(`a problem list names the first ${MAX_PROBLEMS} problems and counts the rest`, () => {
    const r = z.array(z.string()).safeParse(
      Array.from({ length: 500 }, () => 1),
      { reportInput: true },
    );
    const problems = toProblems(r.error!.issues, 'items');
    expect(problems).toHaveLength(MAX_PROBLEMS + 1);
    expect(problems[0]).toEqual({ path: 'items.0', message: 'expected string, got integer' });
    expect(problems.at(-1)).toEqual({
      path: '(more)',
      message: '480 more problems not listed; fix the ones above and send again',
    });
  });

  it('an over-long request id is refused and not echoed (the transport: memory.test.ts)', async () => {
    const long = 'i'.repeat(10_000);
    const rest = await postJson(`${gw.url}/tool/call`, { id: long, tool_name: 'blob', arguments: { size: 1 } });
    expect(rest.status).toBe(400);
    expect(rest.json.req_id).toBe('');
    expect(rest.json.message).toMatch(/^invalid request: id: Too big: expected string to have <=256 characters$/);
    expect(JSON.stringify(rest.json).length).toBeLessThan(1000);
  });
});
