#!/usr/bin/env node
/**
 * Interleaved A/B of the server's CPU time per call: what to compare when the machine is shared and req/s is noise.
 * Every target is a bench server started once (pinned like the bench's); then `rounds` rounds load each in turn
 * (A B C A B C …) with autocannon, and each run reports the server process's CPU time (user + system, from
 * /proc/<pid>/stat) over the run divided by the calls it answered. Prints one line per run and a table of medians.
 *   node bench/cpu-ab.mjs '{"rounds":6,"duration":4,"targets":[{"key":"old","script":"/tmp/old/bench/servers/gateway.mjs"},
 *     {"key":"new","script":"bench/servers/gateway.mjs","env":{"BENCH_LOG_LEVEL":"info"}}]}'
 * A target may set `body`, `path` (default /tool/call), `env`, `nodeArgs` (before the script) and `stderrFile`.
 */
import { readFileSync } from 'node:fs';
import { runLoad, startServer, stopAll } from './lib/proc.mjs';
import { median } from './lib/stats.mjs';

const ECHO = JSON.stringify({ type: 'tool/call/req', tool_name: 'echo', arguments: { text: 'hi' } });
const spec = JSON.parse(process.argv[2]);
const { rounds = 6, duration = 4, connections = 50 } = spec;
const TICK = 100; // USER_HZ: /proc's clock ticks per second on Linux

/** The process's CPU time so far, in µs (utime + stime of /proc/<pid>/stat, which count in clock ticks). */
function cpuMicros(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICK;
}

const servers = {};
const out = Object.fromEntries(spec.targets.map((t) => [t.key, []]));
try {
  for (const t of spec.targets)
    servers[t.key] = await startServer([...(t.nodeArgs ?? []), t.script], {
      env: t.env ?? {},
      stderrFile: t.stderrFile,
    });
  const load = (t, seconds) =>
    runLoad('bench/load/autocannon.mjs', {
      url: servers[t.key].url + (t.path ?? '/tool/call'),
      body: t.body ?? ECHO,
      headers: t.headers,
      connections,
      duration: seconds,
    });
  for (const t of spec.targets) await load(t, 2); // warm-up: the JIT settles before anything is measured
  for (let r = 0; r < rounds; r++) {
    for (const t of spec.targets) {
      const before = cpuMicros(servers[t.key].pid);
      const res = await load(t, duration);
      const cpu = cpuMicros(servers[t.key].pid) - before;
      if (res.errors || res.non2xx) throw new Error(`${t.key}: ${res.errors} errors, ${res.non2xx} non-2xx`);
      const run = { rps: res.rps, p50: res.p50, cpuPerCall: cpu / res.requests };
      out[t.key].push(run);
      process.stderr.write(
        `round ${r + 1} ${t.key}: ${Math.round(res.rps)} req/s, ${run.cpuPerCall.toFixed(1)} µs CPU/call\n`,
      );
    }
  }
} finally {
  await Promise.all(Object.values(servers).map((s) => s.stop()));
  stopAll();
}
const base = spec.targets[0].key;
const ratios = (key, field) => out[key].map((x, i) => x[field] / out[base][i][field]);
for (const t of spec.targets) {
  const runs = out[t.key];
  console.log(
    `${t.key.padEnd(12)} CPU/call ${median(runs.map((x) => x.cpuPerCall)).toFixed(1)} µs ` +
      `(× ${base} ${median(ratios(t.key, 'cpuPerCall')).toFixed(3)}), req/s ${Math.round(median(runs.map((x) => x.rps)))} ` +
      `(× ${base} ${median(ratios(t.key, 'rps')).toFixed(3)}), p50 ${median(runs.map((x) => x.p50))} ms`,
  );
}
