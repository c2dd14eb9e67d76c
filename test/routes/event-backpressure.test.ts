/**
 * A one-shot `POST /tool/call` SSE stream whose tool emits far more than `limits.call_events_bytes`, read by
 * a real client over real HTTP: the client that keeps reading gets every event, in order, with no gap notice,
 * because the tool awaits `ctx.eventsTaken()` and is paused while the stream is behind (here: while the client
 * does not read at all, so the tool is certain to outrun it). The regression: the scenario-2 benchmark lost
 * 22 % of 100,000 events to the per-call byte budget. test/engine/event-backpressure.test.ts pins the rules.
 */
import http from 'node:http';
import { createParser } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolContext } from '../../src/index.js';
import { definePlugin, deferred } from '../helpers/plugins.js';
import { startGateway, type TestGateway } from '../helpers/server.js';

const KB = 1024;
const LINE = 'y'.repeat(400);
/** Emitting stops here if the tool never had to wait (then the test fails saying so). */
const MAX_EVENTS = 200_000;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
let paused = deferred();
let finished = deferred();
let waits = 0;

/** Emits bursts of 50 log events until it has had to wait for its reader, then 40 bursts more. */
async function firehose(_args: Record<string, unknown>, ctx: ToolContext) {
  try {
    return await emitUntilPaused(ctx);
  } finally {
    finished.resolve();
  }
}

async function emitUntilPaused(ctx: ToolContext) {
  let emitted = 0;
  let after = -1; // bursts left once it has waited
  while (after !== 0 && emitted < MAX_EVENTS && !ctx.signal.aborted) {
    for (let i = 0; i < 50; i++) ctx.emit('log', { level: 'info', message: `${emitted++} ${LINE}` });
    if (after > 0) after--;
    await turn();
    const taken = ctx.eventsTaken();
    let done = false;
    void taken.then(() => (done = true));
    await turn();
    if (!done) {
      waits++;
      if (after < 0) after = 40;
      paused.resolve();
      await taken;
    }
  }
  return { emitted };
}

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({
    plugins: [
      definePlugin('bp', [[{ name: 'firehose', description: 'Emits until its reader makes it wait' }, firehose]]),
    ],
    config: { calls: { max_events: 100_000 }, limits: { call_events_bytes: 64 * KB, stream_unsent_bytes: 16 * KB } },
  });
});
afterAll(() => gw.close());

interface Frame {
  event: string | undefined;
  id: string | undefined;
  json: any;
}

describe('back-pressure on a one-shot SSE call', () => {
  it('a client that keeps reading gets every event of a tool that emits far more than limits.call_events_bytes', async () => {
    paused = deferred();
    finished = deferred();
    waits = 0;
    const body = JSON.stringify({
      type: 'tool/call/req',
      tool_name: 'firehose',
      arguments: {},
      streaming: true,
      timeout: 120,
    });
    const frames: Frame[] = [];
    const parser = createParser({
      onEvent: (e) => frames.push({ event: e.event, id: e.id, json: JSON.parse(e.data) }),
    });
    const ended = deferred();
    const req = http.request(`${gw.url}/tool/call`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        'content-length': Buffer.byteLength(body),
      },
    });
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      req.on('response', resolve).on('error', reject);
      req.end(body);
    });
    expect(res.statusCode).toBe(200);
    // Read nothing until the tool has had to wait: the socket's buffers and the stream's 16 KB fill up, the
    // stream stops taking events, and the tool would otherwise run far past the call's 64 KB budget.
    res.pause();
    await Promise.race([paused.promise, finished.promise]);
    expect(waits, 'the tool ended without ever waiting for the client').toBe(1);

    res.setEncoding('utf8');
    res.on('data', (chunk: string) => parser.feed(chunk));
    res.on('end', () => ended.resolve());
    res.resume();
    await ended.promise;

    const events = frames.filter((f) => f.event === 'tool/event');
    const last = frames.at(-1)!;
    expect(last.event).toBe('tool/call/resp');
    expect(last.json.data.success).toBe(true);
    const emitted = last.json.data.data.emitted as number;
    expect(emitted, 'the tool never had to wait for the client').toBeLessThan(MAX_EVENTS);
    // No gap notice, nothing missing, nothing out of order.
    expect(events.filter((f) => f.json.kind === 'status')).toEqual([]);
    expect(events).toHaveLength(emitted);
    expect(events.every((f, i) => f.json.seq === i && f.id === String(i))).toBe(true);
    expect(emitted * (640 + LINE.length)).toBeGreaterThan(20 * 64 * KB); // it did emit many times the budget
    expect(waits).toBeGreaterThanOrEqual(1);
  });
});
