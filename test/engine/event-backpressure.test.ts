/**
 * Back-pressure on a call's events at the engine's own level (no HTTP): a tool that awaits
 * `ctx.eventsTaken()` between bursts never outruns a watcher that keeps reading, so the watcher loses
 * nothing however many times the call's byte budget the tool emits, and the call never holds more than
 * that budget; a tool that does not wait still has its oldest events dropped at the budget (a gap).
 * test/routes/event-backpressure.test.ts checks the same through a real SSE client.
 */
import { describe, expect, it } from 'vitest';
import { ANONYMOUS, Engine, ToolRegistry, type Logger, type ToolContext } from '../../src/index.js';
import type { Call } from '../../src/engine/call.js';
import { ToolCallRequest } from '../../src/protocol/index.js';
import { definePlugin, deferred } from '../helpers/plugins.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
const KB = 1024;
const BUDGET = 64 * KB; // limits.call_events_bytes; each event below counts ~1.1 KB (its data plus 640 bytes)
const LINE = 'x'.repeat(400);

/** One turn of the event loop: what a reader gets between two of the tool's bursts when nothing waits. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Whether `p` is still pending after a full turn of the event loop. */
async function stillPending(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await turn();
  return !done;
}

function setup() {
  // The tool the test drives: `slices` bursts of `per` events, optionally awaiting eventsTaken() after each.
  const state = { emitted: 0, waits: 0, waiting: deferred(), ctx: undefined as ToolContext | undefined };
  const plugin = definePlugin('bp', [
    [
      {
        name: 'firehose',
        description: 'Emits slices × per log events, waiting for its readers when told',
        input_parameters: [
          { name: 'slices', type: 'integer', description: 'bursts', required: true },
          { name: 'per', type: 'integer', description: 'events per burst', required: true },
          { name: 'wait', type: 'boolean', description: 'await ctx.eventsTaken() after each burst', required: true },
        ],
      },
      async (args, ctx) => {
        state.ctx = ctx;
        const { slices, per, wait } = args as { slices: number; per: number; wait: boolean };
        for (let s = 0; s < slices && !ctx.signal.aborted; s++) {
          for (let i = 0; i < per; i++) ctx.emit('log', { level: 'info', message: `${state.emitted++} ${LINE}` });
          await turn();
          if (!wait) continue;
          const taken = ctx.eventsTaken();
          if (await stillPending(taken)) {
            state.waits++;
            state.waiting.resolve();
            await taken;
          }
        }
        return { emitted: state.emitted };
      },
    ],
  ]);
  const engine = new Engine({
    registry: new ToolRegistry([plugin], quiet),
    logger: quiet,
    limits: {
      maxTimeoutS: 60,
      maxOutputBytes: 1 << 20,
      maxEvents: 100_000,
      maxBufferedEvents: 1_000_000,
      maxEventBytes: BUDGET,
      retainedEventBytes: 16 * KB,
    },
    audit: () => {},
  });
  engine.registry.rebuild();
  const start = (args: Record<string, unknown>): Call =>
    engine.start(ToolCallRequest.parse({ tool_name: 'firehose', arguments: args, streaming: true }), ANONYMOUS);
  return { start, state };
}

describe('event back-pressure (ctx.eventsTaken)', () => {
  it('a tool that awaits eventsTaken() is paused while its watcher is behind, and the watcher gets every event in order', async () => {
    const { start, state } = setup();
    // 100 slices of 20 events of ~1.1 KB: ~2.2 MB, about 35 times the call's budget.
    const call = start({ slices: 100, per: 20, wait: true });
    const watcher = call.watch();
    // The watcher does not read yet: the tool runs ahead until it is over a quarter of the budget, then waits.
    await Promise.race([state.waiting.promise, call.result]);
    expect(state.waits, 'the tool never had to wait for its reader').toBe(1);
    const emittedWhenPaused = state.emitted;
    expect(emittedWhenPaused).toBeLessThan(100 * 20);
    for (let i = 0; i < 20; i++) await turn();
    expect(state.emitted).toBe(emittedWhenPaused); // still paused: nothing runs ahead of the reader
    expect(call.retainedBytes).toBeLessThanOrEqual(BUDGET);

    // Now read, one batch every three turns of the event loop (slower than the tool's burst per turn),
    // watching what the call holds.
    const seqs: number[] = [];
    let gaps = 0;
    let mostHeld = 0;
    for await (const batch of watcher) {
      if (batch.gap) gaps++;
      for (const e of batch.events) seqs.push(e.seq);
      mostHeld = Math.max(mostHeld, call.retainedBytes);
      for (let i = 0; i < 3; i++) await turn();
    }
    const response = await call.result;
    expect(response.data.success).toBe(true);
    expect(gaps).toBe(0);
    expect(seqs).toEqual(Array.from({ length: 2000 }, (_, i) => i));
    expect(state.waits).toBeGreaterThan(1);
    expect(mostHeld).toBeLessThanOrEqual(BUDGET);
  });

  it('a watcher that reads every burst as it comes loses nothing, even when each burst is most of the budget', async () => {
    const { start, state } = setup();
    // Bursts of 50 events (~55 KB of a 64 KB budget), one per turn; the watcher takes each burst before the next
    // one starts, so only events it has read (kept for replay) may be dropped to make room.
    const call = start({ slices: 40, per: 50, wait: false });
    const seqs: number[] = [];
    let gaps = 0;
    for await (const batch of call.watch()) {
      if (batch.gap) gaps++;
      for (const e of batch.events) seqs.push(e.seq);
    }
    expect((await call.result).data.success).toBe(true);
    expect(gaps).toBe(0);
    expect(seqs).toEqual(Array.from({ length: 2000 }, (_, i) => i));
    expect(state.emitted).toBe(2000);
  });

  it('a call that settles while its watcher is behind keeps what the watcher has not taken, then only the retained budget', async () => {
    const { start, state } = setup();
    // One burst of 30 events (~33 KB): within the running budget (64 KB), twice the retained one (16 KB).
    const call = start({ slices: 1, per: 30, wait: false });
    const watcher = call.watch();
    await call.result; // settled; the watcher has read nothing yet
    expect(state.emitted).toBe(30);
    expect(call.retainedBytes).toBeGreaterThan(16 * KB); // held for the watcher, not cut to the retained budget
    const seqs: number[] = [];
    let gaps = 0;
    for await (const batch of watcher) {
      if (batch.gap) gaps++;
      for (const e of batch.events) seqs.push(e.seq);
    }
    expect(gaps).toBe(0);
    expect(seqs).toEqual(Array.from({ length: 30 }, (_, i) => i));
    // Taken: now only what a finished call keeps.
    expect(call.retainedBytes).toBeLessThanOrEqual(16 * KB);
    expect(call.retainedBytes).toBeGreaterThan(0);
  });

  it('a tool that does not wait has its oldest events dropped at the budget: the lagging watcher gets a gap', async () => {
    const { start, state } = setup();
    const call = start({ slices: 10, per: 20, wait: false });
    const watcher = call.watch();
    await call.result; // the watcher read nothing while ~220 KB were emitted
    const gaps: Array<{ from: number; to: number }> = [];
    const seqs: number[] = [];
    for await (const batch of watcher) {
      if (batch.gap) gaps.push(batch.gap);
      for (const e of batch.events) seqs.push(e.seq);
    }
    expect(state.emitted).toBe(200);
    expect(gaps).toHaveLength(1);
    expect(gaps[0]!.from).toBe(0);
    expect(seqs[0]).toBe(gaps[0]!.to + 1);
    expect(seqs.at(-1)).toBe(199);
  });

  it('a paused tool goes on when its lagging watcher goes away, and when the call is stopped', async () => {
    const { start, state } = setup();
    const call = start({ slices: 1000, per: 20, wait: true });
    const watcher = call.watch();
    await Promise.race([state.waiting.promise, call.result]);
    expect(state.waits, 'the tool never had to wait for its reader').toBe(1);
    const waitsBefore = state.waits;
    // The only watcher leaves: nobody is behind any more, so the tool runs on (its events now trimmed at the budget).
    watcher.close();
    while (state.waits === waitsBefore && !call.settled && state.emitted < 5000) await turn();
    expect(state.emitted).toBeGreaterThanOrEqual(5000);
    expect(call.retainedBytes).toBeLessThanOrEqual(BUDGET);

    // A new watcher that does not read pauses it again; stopping the call lets it go.
    const second = call.watch(call.eventCount - 1);
    state.waiting = deferred();
    await Promise.race([state.waiting.promise, call.result]);
    expect(state.waits).toBe(waitsBefore + 1);
    const paused = state.ctx!.eventsTaken();
    expect(await stillPending(paused)).toBe(true);
    call.stop('cancel');
    await paused;
    expect((await call.result).data.error).toMatch(/was canceled/);
    second.close();
  });
});
