/**
 * Scenario 6 — footprint: start-up time to the `listening` line and idle RSS
 * of the real CLI (`node dist/cli.js serve`), and memory growth of the bench
 * gateway over many echo calls (after a full GC, against a warmed-up start).
 */
import { ROOT, runLoad, shownCommand, startServer } from '../lib/proc.mjs';
import { fmt, median } from '../lib/stats.mjs';
import { join } from 'node:path';

const ECHO_BODY = JSON.stringify({ type: 'tool/call/req', tool_name: 'echo', arguments: { text: 'hi' } });

export async function footprint({ quick, log }) {
  const starts = quick ? 2 : 7;
  const calls = quick ? 5_000 : 100_000;
  // Warm-up: rounds of as many calls as are measured, until RSS (after GC) moves less than 2 % between two rounds
  // (at most 5): V8 and the allocator grow to their working size first, so what is left is growth per call. A fixed
  // single round was not enough for every build: the bundled dist/ reached its (lower) working size later.
  const maxWarmRounds = quick ? 1 : 5;
  const cli = join(ROOT, 'dist/cli.js');
  const cliArgs = [cli, 'serve', '--port', '0'];

  // Start-up and idle RSS: the CLI as users run it, and bare Hono for reference; interleaved.
  const startup = { cli: [], hono: [] };
  const idle = { cli: [], hono: [] };
  for (let i = 0; i < starts; i++) {
    for (const [key, args, pattern] of [
      ['cli', cliArgs, /a2e-gateway listening on (http:\/\/\S+)/],
      ['hono', ['bench/servers/hono.mjs'], undefined],
    ]) {
      const s = await startServer(args, { ipc: false, ...(pattern && { readyPattern: pattern }) });
      startup[key].push(s.startMs);
      await new Promise((r) => setTimeout(r, 500)); // let start-up garbage settle before reading RSS
      idle[key].push(s.rssFromProc());
      await s.stop();
    }
  }
  log(
    `  footprint: start-up ${fmt.ms(median(startup.cli))} (Hono ${fmt.ms(median(startup.hono))}), idle RSS ${fmt.mb(median(idle.cli))}`,
  );

  // Growth over many calls, measured inside the process after a full GC.
  const s = await startServer(['--expose-gc', 'bench/servers/gateway.mjs']);
  let before, after, cold, load;
  let warmCalls = 0;
  try {
    cold = await s.mem(true);
    const spec = { url: `${s.url}/tool/call`, body: ECHO_BODY, connections: 50 };
    before = cold;
    for (let round = 1; round <= maxWarmRounds; round++) {
      await runLoad('bench/load/autocannon.mjs', { ...spec, amount: calls });
      const previous = before;
      before = await s.mem(true);
      warmCalls += calls;
      if (Math.abs(before.rss / previous.rss - 1) < 0.02) break;
    }
    load = await runLoad('bench/load/autocannon.mjs', { ...spec, amount: calls });
    if (load.errors || load.non2xx || load.requests < calls) throw new Error(`footprint load: ${JSON.stringify(load)}`);
    after = await s.mem(true);
  } finally {
    await s.stop();
  }
  const growth = after.rss / before.rss - 1;
  const heapGrowth = after.heapUsed / before.heapUsed - 1;
  log(
    `  footprint: RSS ${fmt.mb(before.rss)} → ${fmt.mb(after.rss)} (${fmt.pct(growth)}) over ${fmt.int(calls)} calls`,
  );
  return {
    id: 6,
    title: 'Footprint',
    what:
      `Start-up: time from spawning \`node dist/cli.js serve --port 0\` (default config, native tools) to its \`listening\` line, ` +
      `median of ${starts} starts interleaved with a bare Hono server; idle RSS read from /proc 0.5 s after listening. Growth: the bench ` +
      `gateway (echo plugin) started with --expose-gc, warmed up with rounds of ${fmt.int(calls)} echo calls until its RSS after GC moved less than 2 % ` +
      `in a round (${fmt.int(warmCalls)} calls here), then ${fmt.int(calls)} echo calls ` +
      '(50 connections); memory read in-process after two full GCs before and after.',
    columns: ['Measure', 'a2e-gateway', 'bare Hono (reference)'],
    rows: [
      ['Start-up to listening line (median)', fmt.ms(median(startup.cli)), fmt.ms(median(startup.hono))],
      ['Idle RSS (median)', fmt.mb(median(idle.cli)), fmt.mb(median(idle.hono))],
      ['RSS cold, after GC (bench gateway)', fmt.mb(cold.rss), ''],
      [`RSS after ${fmt.int(warmCalls)} warm-up calls, after GC`, fmt.mb(before.rss), ''],
      [`RSS after ${fmt.int(calls)} more calls, after GC`, `${fmt.mb(after.rss)} (${fmt.pct(growth)})`, ''],
      [
        'V8 heap used, before → after',
        `${fmt.mb(before.heapUsed)} → ${fmt.mb(after.heapUsed)} (${fmt.pct(heapGrowth)})`,
        '',
      ],
    ],
    targets: [
      {
        text: `RSS growth after ${fmt.int(calls)} echo calls (after GC) ≤ 5 %`,
        value: fmt.pct(growth),
        met: growth <= 0.05,
      },
    ],
    commands: [
      shownCommand(
        'server',
        cliArgs.map((a) => a.replace(ROOT, '')),
      ),
      shownCommand('server', ['--expose-gc', 'bench/servers/gateway.mjs']),
      shownCommand('load', [
        'bench/load/autocannon.mjs',
        JSON.stringify({ url: '<server>/tool/call', body: '<echo>', connections: 50, amount: calls }),
      ]),
    ],
    raw: { startup, idle, cold, before, after, load },
  };
}
