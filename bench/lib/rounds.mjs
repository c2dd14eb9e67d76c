/**
 * The request-rate scenarios' load loop: each target warmed up once, then
 * `rounds` interleaved autocannon runs of every target (a burst of other work
 * on the machine then hits one round of each target, not one target), every
 * run checked for errors; and the table row each scenario reports per target.
 * `spec(t)` is the autocannon spec of target `t` ({key, label}).
 */
import { runLoad } from './proc.mjs';
import { fmt, median, pairedRatio } from './stats.mjs';

/** One run of `seconds` against each target, not measured: lets every server JIT its hot path first. */
export async function warmUp(targets, spec, seconds) {
  for (const t of targets) await runLoad('bench/load/autocannon.mjs', { ...spec(t), duration: seconds });
}

/** The measured runs: every run's result by target key, in round order (what pairedRatio pairs). */
export async function interleavedRounds(targets, spec, { rounds, name, log }) {
  const results = Object.fromEntries(targets.map((t) => [t.key, []]));
  for (let r = 0; r < rounds; r++) {
    for (const t of targets) {
      const res = await runLoad('bench/load/autocannon.mjs', spec(t));
      if (res.errors || res.non2xx)
        throw new Error(`${t.label}: ${res.errors} errors, ${res.non2xx} non-2xx responses`);
      results[t.key].push(res);
      log(`  ${name} round ${r + 1}/${rounds} ${t.key}: ${fmt.int(res.rps)} req/s, p99 ${res.p99} ms`);
    }
  }
  return results;
}

/** req/s of every run of target `key`. */
export const rpsOf = (results, key) => results[key].map((x) => x.rps);

/** Median req/s, p50 and p99 of a target's runs, formatted for the table. */
export function rateCells(runs) {
  return [
    fmt.int(median(runs.map((x) => x.rps))),
    fmt.latency(median(runs.map((x) => x.p50))),
    fmt.latency(median(runs.map((x) => x.p99))),
  ];
}

/** A table row: the target's label, its rate cells, and its req/s paired with `baseline`'s (× baseline). */
export function rateRow(t, results, baseline) {
  return [
    t.label,
    ...rateCells(results[t.key]),
    fmt.ratio(pairedRatio(rpsOf(results, t.key), rpsOf(results, baseline))),
  ];
}

/** POST `body` as JSON (with `headers`) and read the JSON answer: what a scenario checks before loading a target. */
export async function postJson(url, body, headers = {}) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: res.status, json: await res.json() };
}
