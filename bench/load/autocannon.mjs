/**
 * Load generator process: one autocannon run, described by a JSON argument,
 * printed as one JSON line. Runs pinned to its own CPU, apart from the server.
 *   node load/autocannon.mjs '{"url":…,"body":…,"connections":50,"duration":10}'
 */
import autocannon from 'autocannon';

const spec = JSON.parse(process.argv[2]);
const cpuBefore = process.cpuUsage();
const result = await autocannon({
  url: spec.url,
  method: 'POST',
  headers: { 'content-type': 'application/json', ...spec.headers },
  body: spec.body,
  connections: spec.connections,
  ...(spec.amount ? { amount: spec.amount } : { duration: spec.duration }),
});
const seconds = result.duration; // autocannon's own elapsed seconds (float)
process.stdout.write(
  `${JSON.stringify({
    requests: result.requests.total,
    rps: result.requests.total / seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    seconds,
    // The load generator's own CPU time during the run, s (user + system): what it took from the machine.
    cpuS: (() => {
      const used = process.cpuUsage(cpuBefore);
      return (used.user + used.system) / 1e6;
    })(),
  })}\n`,
);
