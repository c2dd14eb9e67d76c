/**
 * Scenario 12 — responsive under load: 200 read_file calls kept in flight
 * (autocannon, 200 connections) on the default-config gateway while a probe
 * GETs /healthz one request at a time; the gateway's event-loop delay is
 * measured in-process (perf_hooks.monitorEventLoopDelay) over the same time.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLoad, shownCommand, startServer } from '../lib/proc.mjs';
import { fmt, median } from '../lib/stats.mjs';

const percentile = (values, p) => {
  const v = [...values].sort((a, b) => a - b);
  return v.length ? v[Math.min(v.length - 1, Math.floor((p / 100) * v.length))] : NaN;
};

const share = (x) => `${(x * 100).toFixed(0)} %`;

export async function responsive({ quick, log }) {
  const rounds = quick ? 1 : 5;
  const seconds = quick ? 2 : 8;
  const connections = 200;
  const dir = mkdtempSync(join(tmpdir(), 'a2e-bench-responsive-'));
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  writeFileSync(join(workspace, 'small.txt'), 'hello world\n');
  const body = JSON.stringify({ type: 'tool/call/req', tool_name: 'read_file', arguments: { path: 'small.txt' } });
  let s;
  const probes = [];
  const delays = [];
  const loads = [];
  try {
    s = await startServer(['bench/servers/gateway.mjs'], {
      env: { BENCH_LOG_LEVEL: 'info', BENCH_WORKSPACE: workspace },
      stderrFile: join(dir, 'gateway.log'),
    });
    const spec = { url: `${s.url}/tool/call`, body, connections, duration: seconds };
    await runLoad('bench/load/autocannon.mjs', { ...spec, duration: 1 });
    for (let r = 0; r < rounds; r++) {
      await s.ask({ cmd: 'eld', action: 'start' });
      const [load, probe] = await Promise.all([
        runLoad('bench/load/autocannon.mjs', spec),
        runLoad('bench/load/probe.mjs', { url: s.url, path: '/healthz', ms: (seconds - 0.5) * 1000, pauseMs: 5 }),
      ]);
      const delay = await s.ask({ cmd: 'eld', action: 'stop' });
      if (load.errors || load.non2xx)
        throw new Error(`read_file under load: ${load.errors} errors, ${load.non2xx} non-2xx responses`);
      loads.push(load);
      probes.push(probe.ms);
      delays.push(delay);
      log(
        `  responsive round ${r + 1}/${rounds}: read_file ${fmt.int(load.rps)} req/s; /healthz p99 ${fmt.ms(percentile(probe.ms, 99))}; event-loop delay p99 ${fmt.ms(delay.p99)}`,
      );
    }
  } finally {
    await s?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const healthP99 = median(probes.map((ms) => percentile(ms, 99)));
  return {
    id: 12,
    title: 'Responsive under load',
    what:
      `${connections} \`read_file\` calls of a 12-byte file kept in flight (autocannon, ${connections} connections, ${seconds} s) on the gateway ` +
      `in its default configuration (info logs to a file), while a probe in another process GETs \`/healthz\` one request at a time ` +
      `(5 ms apart). Event-loop delay read inside the gateway with \`perf_hooks.monitorEventLoopDelay\` (1 ms resolution) over the ` +
      `same time, and how long its thread ran and waited for the CPU (Linux schedstat): with every server process and thread on ` +
      `one CPU, the file tools' helper threads (or, for a root gateway, the privilege-separated worker process, which makes the calls itself) ` +
      `take turns on it with the event loop. ${rounds} rounds; figures are medians over rounds of each round's percentile.`,
    columns: ['Measure', 'value (median over rounds)'],
    rows: [
      ['read_file calls/s under load', fmt.int(median(loads.map((l) => l.rps)))],
      ['read_file p99 latency', fmt.latency(median(loads.map((l) => l.p99)))],
      ['`GET /healthz` p50 / p99', `${fmt.ms(median(probes.map((ms) => percentile(ms, 50))))} / ${fmt.ms(healthP99)}`],
      ['probe requests per round', fmt.int(median(probes.map((ms) => ms.length)))],
      [
        'event-loop delay p50 / p99 / max',
        `${fmt.ms(median(delays.map((d) => d.p50)))} / ${fmt.ms(median(delays.map((d) => d.p99)))} / ${fmt.ms(median(delays.map((d) => d.max)))}`,
      ],
      ...(delays.every((d) => d.waitShare !== undefined)
        ? [
            [
              "the event loop's thread: on the CPU / ready but waiting for it (share of the time)",
              `${share(median(delays.map((d) => d.runShare)))} / ${share(median(delays.map((d) => d.waitShare)))}`,
            ],
          ]
        : []),
    ],
    targets: [
      {
        text: '`GET /healthz` p99 ≤ 20 ms with 200 read_file calls in flight',
        value: fmt.ms(healthP99),
        met: healthP99 <= 20,
      },
      {
        text: 'event-loop delay p99 under that load (reported)',
        value: fmt.ms(median(delays.map((d) => d.p99))),
        met: null,
      },
    ],
    commands: [
      `BENCH_LOG_LEVEL=info BENCH_WORKSPACE=<tmp dir> ${shownCommand('server', ['bench/servers/gateway.mjs'])} 2> gateway.log`,
      shownCommand('load', [
        'bench/load/autocannon.mjs',
        JSON.stringify({ url: '<server>/tool/call', body: '<read_file small.txt>', connections, duration: seconds }),
      ]),
      shownCommand('load', [
        'bench/load/probe.mjs',
        JSON.stringify({ url: '<server>', path: '/healthz', ms: (seconds - 0.5) * 1000, pauseMs: 5 }),
      ]),
    ],
    raw: { loads, probes, delays },
  };
}
