/**
 * A monitoring probe: GET `path` one request at a time, a short pause between
 * them, for `ms` milliseconds; prints every latency (ms) as one JSON line.
 * Every answer must be 200.
 *   node load/probe.mjs '{"url":…,"path":"/healthz","ms":5000,"pauseMs":5}'
 */
import { request } from 'undici';

const spec = JSON.parse(process.argv[2]);
const end = performance.now() + spec.ms;
const ms = [];
while (performance.now() < end) {
  const t = performance.now();
  const res = await request(`${spec.url}${spec.path}`);
  await res.body.dump();
  ms.push(performance.now() - t);
  if (res.statusCode !== 200) throw new Error(`${spec.path} answered ${res.statusCode}`);
  await new Promise((r) => setTimeout(r, spec.pauseMs ?? 5));
}
process.stdout.write(`${JSON.stringify({ ms })}\n`);
