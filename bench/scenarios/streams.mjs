/**
 * Scenario 3 — concurrent streams: many call-resource event streams
 * (POST /tool/calls, then GET events_url as SSE) held open at once, with
 * heartbeats, from a client process. Zero dropped; server RSS per open stream
 * measured in-process after a full GC, against the same server before.
 */
import { runLoad, shownCommand, startServer } from '../lib/proc.mjs';
import { fmt } from '../lib/stats.mjs';

export async function streams({ quick, log }) {
  const count = quick ? 500 : 10_000;
  const holdMs = quick ? 2_000 : 60_000;
  const heartbeatS = quick ? 1 : 5;
  const s = await startServer(['--expose-gc', 'bench/servers/gateway.mjs'], {
    env: { BENCH_HEARTBEAT_S: String(heartbeatS) },
  });
  try {
    const spec = { url: s.url, streams: count, holdMs, concurrency: 200 };
    // Warm-up: the same path with a few short streams, so code and pools exist before the baseline.
    await runLoad('bench/load/streams.mjs', { ...spec, streams: quick ? 100 : 400, holdMs: 200 });
    const before = await s.mem(true);
    let atOpen;
    const measured = new Promise((resolve, reject) => {
      const result = runLoad('bench/load/streams.mjs', spec, {
        onLine: (line) => {
          if (line.startsWith('OPEN ')) atOpen = s.mem(true);
        },
      });
      result.then(resolve, reject);
    });
    const res = await measured;
    if (!atOpen) throw new Error(`the client never had all streams open: ${JSON.stringify(res)}`);
    const open = await atOpen;
    const perStream = (open.rss - before.rss) / count;
    const dropped = count - res.completed;
    log(
      `  streams: ${res.opened} open, ${res.completed} completed, ${res.errors} errors; ${fmt.kb(perStream)} RSS per stream`,
    );
    return {
      id: 3,
      title: 'Concurrent streams',
      what:
        `${fmt.int(count)} calls of a \`hold\` tool (one status event, then ${holdMs / 1000} s of waiting) started with ` +
        "`POST /tool/calls`, each one's `events_url` opened as an SSE stream by one client process (eventsource-parser, " +
        `200 at a time), all held open together, with heartbeats every ${heartbeatS} s. Memory of the gateway read in-process ` +
        'after two full GCs: before (after a warm-up of short streams) and once every stream is open. Per-stream cost ' +
        'includes the running call behind the stream.',
      columns: ['Measure', 'Value'],
      rows: [
        ['Streams opened / completed with their final response', `${fmt.int(res.opened)} / ${fmt.int(res.completed)}`],
        [
          'POSTs sent again: their kept-alive connection was closed as idle as they went out (the client-side keep-alive race)',
          fmt.int(res.postRetries ?? 0),
        ],
        ['Dropped or failed streams', `${fmt.int(dropped)}${res.firstError ? ` (first: ${res.firstError})` : ''}`],
        ['Time to open every stream', fmt.ms(res.openSeconds * 1000)],
        ['Heartbeats received per stream (fewest)', String(res.minHeartbeats ?? '—')],
        ['Server RSS before → with every stream open (after GC)', `${fmt.mb(before.rss)} → ${fmt.mb(open.rss)}`],
        ['V8 heap used before → with every stream open', `${fmt.mb(before.heapUsed)} → ${fmt.mb(open.heapUsed)}`],
        ['RSS per open stream', fmt.kb(perStream)],
        ['Heap per open stream', fmt.kb((open.heapUsed - before.heapUsed) / count)],
      ],
      targets: [
        {
          text: `${fmt.int(count)} streams held open, none dropped`,
          value: `${fmt.int(dropped)} dropped`,
          met: dropped === 0,
        },
        { text: 'RSS per open stream ≤ 30 KB', value: fmt.kb(perStream), met: perStream <= 30 * 1024 },
      ],
      commands: [
        `BENCH_HEARTBEAT_S=${heartbeatS} ${shownCommand('server', ['--expose-gc', 'bench/servers/gateway.mjs'])}`,
        shownCommand('load', [
          'bench/load/streams.mjs',
          JSON.stringify({ url: '<server>', streams: count, holdMs, concurrency: 200 }),
        ]),
      ],
      raw: { before, open, client: res },
    };
  } finally {
    await s.stop();
  }
}
