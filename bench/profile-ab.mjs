#!/usr/bin/env node
/**
 * Where two builds spend their CPU on one call: every target runs under `node --cpu-prof` and answers the same
 * number of calls (autocannon `amount`, rounds interleaved), so each function's profiled time ÷ that number is µs
 * per call in both. Prints the busy (non-idle) µs per call of each and the functions whose self time differs most.
 * What it does not remove: CPU time per call still grows when other processes share the cores (on a load of ~13 on
 * the 2-core VM the same /mcp echo read 88 µs busy one run and 161 µs the next), so compare targets of one run with
 * each other, repeat it, and trust only differences larger than what repeats move; the profiler itself inflates
 * small functions (~1.4x busy time on the /mcp echo against bench/cpu-ab.mjs).
 *   node bench/profile-ab.mjs '{"calls":25000,"rounds":6,"out":"/tmp/prof","targets":[
 *     {"key":"old","script":"/tmp/old/bench/servers/gateway.mjs"},{"key":"new","script":"bench/servers/gateway.mjs"}]}'
 * A target may set `body`, `path` (default /tool/call), `headers` and `env`, as in bench/cpu-ab.mjs. Build both
 * with A2E_BUILD_MINIFY=0 (scripts/build.mjs) so the profiles name the gateway's functions.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runLoad, startServer, stopAll } from './lib/proc.mjs';

const ECHO = JSON.stringify({ type: 'tool/call/req', tool_name: 'echo', arguments: { text: 'hi' } });
const spec = JSON.parse(process.argv[2]);
const { calls = 25_000, rounds = 6, connections = 50, top = 40, out = '/tmp/profile-ab' } = spec;

const answered = Object.fromEntries(spec.targets.map((t) => [t.key, 0]));
const servers = {};
try {
  for (const t of spec.targets) {
    const dir = join(out, t.key);
    servers[t.key] = await startServer(['--cpu-prof', '--cpu-prof-interval=200', `--cpu-prof-dir=${dir}`, t.script], {
      env: t.env ?? {},
    });
  }
  for (let r = 0; r < rounds; r++) {
    for (const t of spec.targets) {
      const res = await runLoad('bench/load/autocannon.mjs', {
        url: servers[t.key].url + (t.path ?? '/tool/call'),
        body: t.body ?? ECHO,
        headers: t.headers,
        connections,
        amount: calls,
      });
      if (res.errors || res.non2xx) throw new Error(`${t.key}: ${res.errors} errors, ${res.non2xx} non-2xx`);
      answered[t.key] += res.requests;
      process.stderr.write(`round ${r + 1} ${t.key}: ${res.requests} calls, ${Math.round(res.rps)} req/s\n`);
    }
  }
} finally {
  // Stopping writes the profiles (the bench servers exit on SIGTERM).
  await Promise.all(Object.values(servers).map((s) => s.stop()));
  stopAll();
}

/** Self time per function (name and file) of the profile in `dir`, µs per answered call. */
function selfPerCall(dir, n) {
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  const nodes = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const self = new Map();
  profile.samples.forEach((id, i) => {
    const frame = nodes.get(id);
    const key = `${frame.functionName || '(anonymous)'} ${frame.url.split('/').pop()}`;
    self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[i + 1] ?? 0) / n);
  });
  return self;
}

const profiles = spec.targets.map((t) => selfPerCall(join(out, t.key), answered[t.key]));
const busy = (p) => [...p].reduce((sum, [key, us]) => (key.startsWith('(idle)') ? sum : sum + us), 0);
const base = spec.targets[0].key;
spec.targets.forEach((t, i) =>
  console.log(`${t.key.padEnd(12)} busy ${busy(profiles[i]).toFixed(2)} µs/call over ${answered[t.key]} calls`),
);
const keys = new Set(profiles.flatMap((p) => [...p.keys()]).filter((k) => !k.startsWith('(idle)')));
const spread = (k) => {
  const v = profiles.map((p) => p.get(k) ?? 0);
  return Math.max(...v) - Math.min(...v);
};
console.log(`\nself µs/call: ${spec.targets.map((t) => t.key).join(' | ')} (the ${top} that differ most from ${base})`);
for (const k of [...keys].sort((a, b) => spread(b) - spread(a)).slice(0, top)) {
  console.log(`${profiles.map((p) => (p.get(k) ?? 0).toFixed(2).padStart(7)).join(' ')}  ${k}`);
}
