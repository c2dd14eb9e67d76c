#!/usr/bin/env node
/**
 * The benchmark harness. `npm run bench` runs every scenario and regenerates
 * BENCHMARKS.md; `npm run bench -- --quick` is a short smoke pass (CI) whose
 * report goes to test-artifacts/bench/ and never touches BENCHMARKS.md.
 *   node bench/run.mjs [--quick] [--only 1,2,6] [--out FILE]
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { loadavg } from 'node:os';
import { machineInfo } from './lib/machine.mjs';
import { pinning, ROOT, stopAll } from './lib/proc.mjs';
import { renderReport } from './lib/report.mjs';
import { footprint } from './scenarios/footprint.mjs';
import { overhead } from './scenarios/overhead.mjs';
import { streaming } from './scenarios/streaming.mjs';
import { streams } from './scenarios/streams.mjs';
import { shell } from './scenarios/shell.mjs';
import { a2a } from './scenarios/a2a.mjs';
import { a2aServer } from './scenarios/a2a-server.mjs';
import { mcp } from './scenarios/mcp.mjs';
import { defaultConfig } from './scenarios/default-config.mjs';
import { tools } from './scenarios/tools.mjs';
import { startup } from './scenarios/startup.mjs';
import { responsive } from './scenarios/responsive.mjs';
import { store } from './scenarios/store.mjs';
import { callsRedis } from './scenarios/calls-redis.mjs';
import { tracing } from './scenarios/tracing.mjs';
import { workers } from './scenarios/workers.mjs';

/** Every scenario of issue 8, in report order (an entry with `pending` instead of `run` says why it is not measured yet). */
const SCENARIOS = [
  { id: 1, title: 'Call overhead', run: overhead },
  { id: 2, title: 'Event streaming', run: streaming },
  { id: 3, title: 'Concurrent streams', run: streams },
  { id: 4, title: 'A2A', run: a2a },
  { id: 5, title: 'Shell', run: shell },
  { id: 6, title: 'Footprint', run: footprint },
  { id: 7, title: 'The gateway as an A2A agent', run: a2aServer },
  { id: 8, title: 'MCP', run: mcp },
  { id: 9, title: 'Default configuration (logging on)', run: defaultConfig },
  { id: 10, title: 'Native tools, default configuration', run: tools },
  { id: 11, title: 'Start-up and the CLI client', run: startup },
  { id: 12, title: 'Responsive under load', run: responsive },
  { id: 13, title: 'Shared store: Redis vs memory', run: store },
  { id: 14, title: 'Call-resource event streaming through Redis', run: callsRedis },
  { id: 15, title: 'Tracing cost', run: tracing },
  { id: 16, title: 'Several workers', run: workers },
];

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    out: { type: 'string' },
  },
  strict: true,
});
const quick = values.quick;
const only = values.only ? new Set(values.only.split(',').map(Number)) : null;
// A partial or quick run never overwrites BENCHMARKS.md unless --out says so.
const out =
  values.out ?? (quick || only ? join(ROOT, 'test-artifacts/bench/BENCHMARKS.md') : join(ROOT, 'BENCHMARKS.md'));

const log = (msg) => process.stderr.write(`${msg}\n`);
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    stopAll();
    process.exit(130);
  });
}

const started = Date.now();
const loadAtStart = loadavg()[0];
log(
  `bench: ${quick ? 'quick smoke pass' : 'full run'}; ${pinning.enabled ? `server on CPU ${pinning.server}, load on CPU ${pinning.load}` : 'no CPU pinning'}`,
);
const results = [];
let failed = false;
try {
  for (const s of SCENARIOS) {
    if (only && !only.has(s.id)) continue;
    if (s.pending) {
      results.push({ id: s.id, title: s.title, pending: s.pending });
      continue;
    }
    log(`bench: scenario ${s.id} — ${s.title}`);
    try {
      results.push(await s.run({ quick, log }));
    } catch (err) {
      failed = true;
      log(`bench: scenario ${s.id} failed: ${err.stack ?? err}`);
      results.push({ id: s.id, title: s.title, failed: String(err.message ?? err) });
    }
  }
} finally {
  stopAll();
}

const report = renderReport({
  machine: { ...(await machineInfo()), loadAtStart },
  quick,
  pinning,
  seconds: (Date.now() - started) / 1000,
  command: `npm run bench${quick ? ' -- --quick' : ''}${values.only ? ` -- --only ${values.only}` : ''}`,
  results,
});
await mkdir(dirname(out), { recursive: true });
await writeFile(out, report);
await mkdir(join(ROOT, 'test-artifacts/bench'), { recursive: true });
await writeFile(
  join(ROOT, 'test-artifacts/bench', `${quick ? 'quick' : 'full'}-results.json`),
  `${JSON.stringify(results, null, 2)}\n`,
);
log(`bench: report written to ${relative(process.cwd(), out)} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
for (const r of results) {
  for (const t of r.targets ?? [])
    log(`  ${r.id}. ${t.text}: ${t.value} — ${t.met === null ? 'reported' : t.met ? 'met' : 'NOT met'}`);
  if (r.failed) log(`  ${r.id}. ${r.title}: FAILED — ${r.failed}`);
}
process.exit(failed ? 1 : 0);
