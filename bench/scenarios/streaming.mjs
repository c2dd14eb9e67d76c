/**
 * Scenario 2 — event streaming: one streaming call whose tool emits N small
 * events as fast as it can, through POST /tool/call as SSE, received by a
 * real SSE parser in another process; vs a bare Hono streamSSE endpoint
 * writing the same events. Rounds interleaved.
 */
import { runLoad, shownCommand, startServer } from '../lib/proc.mjs';
import { fmt, median, pairedRatio } from '../lib/stats.mjs';

export async function streaming({ quick, log }) {
  const count = quick ? 10_000 : 100_000;
  const rounds = quick ? 2 : 5;
  const body = JSON.stringify({
    type: 'tool/call/req',
    tool_name: 'stream',
    arguments: { count },
    streaming: true,
    timeout: 600,
  });
  const targets = [
    {
      key: 'gateway',
      label: 'a2e-gateway `POST /tool/call` SSE (`stream` plugin tool)',
      script: 'bench/servers/gateway.mjs',
      path: '/tool/call',
    },
    { key: 'hono', label: 'bare Hono `streamSSE`', script: 'bench/servers/hono.mjs', path: '/stream' },
  ];
  const servers = {};
  try {
    for (const t of targets) servers[t.key] = await startServer([t.script]);
    const spec = (t, n = count) => ({
      url: servers[t.key].url + t.path,
      body: body.replace(`"count":${count}`, `"count":${n}`),
    });
    for (const t of targets) await runLoad('bench/load/sse.mjs', spec(t, Math.min(count, 20_000))); // warm-up
    const results = Object.fromEntries(targets.map((t) => [t.key, []]));
    for (let r = 0; r < rounds; r++) {
      for (const t of targets) {
        const res = await runLoad('bench/load/sse.mjs', spec(t));
        if (res.status !== 200 || res.events !== count || res.outOfOrder || !res.finalOk) {
          throw new Error(
            `${t.label}: status ${res.status}, ${res.events}/${count} events, ${res.outOfOrder} out of order, final ok ${res.finalOk}`,
          );
        }
        results[t.key].push(res);
        log(`  streaming round ${r + 1}/${rounds} ${t.key}: ${fmt.int(res.eventsPerS)} events/s`);
      }
    }
    const eps = (k) => results[k].map((x) => x.eventsPerS);
    const ratio = pairedRatio(eps('gateway'), eps('hono'));
    return {
      id: 2,
      title: 'Event streaming',
      what:
        `One streaming call emitting ${fmt.int(count)} progress events (\`{"pct":…,"message":"tick"}\`, full ToolEvent JSON each) in bursts of 1,000, awaiting \`ctx.eventsTaken()\` (back-pressure) between them, ` +
        'received over SSE by eventsource-parser in a separate process; every event counted and checked in order, and the final ' +
        `tool/call/resp checked. ${rounds} interleaved rounds after a warm-up. Time is from the request to the end of the stream.`,
      columns: ['Server', 'events/s (median)', 'time per stream (median)', 'bytes per stream', '× bare Hono'],
      rows: targets.map((t) => [
        t.label,
        fmt.int(median(eps(t.key))),
        fmt.ms(median(results[t.key].map((x) => x.seconds * 1000))),
        fmt.int(median(results[t.key].map((x) => x.bytes))),
        fmt.ratio(pairedRatio(eps(t.key), eps('hono'))),
      ]),
      targets: [{ text: 'gateway ≥ 0.7× bare Hono streamSSE events/s', value: fmt.ratio(ratio), met: ratio >= 0.7 }],
      commands: [
        ...targets.map((t) => shownCommand('server', [t.script])),
        shownCommand('load', ['bench/load/sse.mjs', JSON.stringify({ url: '<server>/tool/call', body })]),
      ],
      raw: results,
    };
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
  }
}
