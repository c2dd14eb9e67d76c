/**
 * Scenario 16 — several workers: `a2e-gateway serve --workers 2` (Node's
 * cluster, both workers accepting on one port, store.kind redis as more than
 * one worker needs) against `serve` as one process with the same config, on
 * this machine with the load generator on it too. POST /tool/call to `echo`
 * (no session: no Redis traffic), autocannon with 50 connections, rounds
 * interleaved. With two CPUs and autocannon on the same machine, what two
 * workers can add is bounded by what autocannon leaves: every run records the
 * CPU time of the gateway processes and of autocannon itself, so the report
 * can say where the CPUs went.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pinning, ROOT } from '../lib/proc.mjs';
import { fmt, median, pairedRatio } from '../lib/stats.mjs';
import { startRedis } from './store.mjs';

const CLI = join(ROOT, 'dist/cli.js');
const PLUGIN = join(ROOT, 'bench/servers/echo-plugin.mjs');
const LOAD = 'bench/load/autocannon.mjs';
const BODY = JSON.stringify({ type: 'tool/call/req', tool_name: 'echo', arguments: { text: 'hi' } });
/** Both CPUs (the scheduler places the processes), or the pinned layout of the other scenarios. */
const BOTH = pinning.enabled ? `0-${pinning.cpus - 1}` : null;

const TARGETS = [
  { key: 'one', label: 'one process (gateway and autocannon on any CPU)', workers: 1, server: BOTH, load: BOTH },
  { key: 'two', label: '`--workers 2` (workers and autocannon on any CPU)', workers: 2, server: BOTH, load: BOTH },
  { key: 'onePinned', label: 'one process on CPU 0, autocannon on CPU 1 (the other scenarios’ layout)', workers: 1, server: pinning.server, load: pinning.load },
];

const children = new Set();
const argv = (cpus, nodeArgs) => (cpus !== null && pinning.enabled ? ['taskset', ['-c', cpus, 'node', ...nodeArgs]] : ['node', nodeArgs]);
const shown = (cpus, nodeArgs) => {
  const [cmd, args] = argv(cpus, nodeArgs);
  return [cmd, ...args].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a}'`)).join(' ');
};

/** CPU seconds (user + system) of a process and its children (a cluster primary's workers), from /proc. */
function cpuSeconds(pid) {
  const ticks = (p) => {
    const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(fields[11]) + Number(fields[12]);
  };
  let kids = [];
  try {
    kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  } catch {
    // no children file: count the process alone
  }
  return [pid, ...kids].reduce((sum, p) => sum + ticks(p), 0) / 100; // USER_HZ is 100 on Linux
}

/** `node dist/cli.js serve --config FILE --workers N` on `cpus`; resolves once it prints its listening line. */
function startGateway(configPath, workers, cpus) {
  const [cmd, args] = argv(cpus, [CLI, 'serve', '--config', configPath, '--workers', String(workers)]);
  const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'silent' }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let err = '';
  child.stderr.on('data', (d) => (err = (err + d).slice(-2000)));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`serve --workers ${workers} printed no listening line in 60 s: ${err}`)), 60_000);
    child.once('exit', (code) => reject(new Error(`serve --workers ${workers} exited with ${code}: ${err}`)));
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stdout.resume();
      resolve({
        url: m[1],
        cpu: () => cpuSeconds(child.pid),
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
            child.once('exit', () => {
              clearTimeout(kill);
              done();
            });
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

/** One autocannon run on `cpus`; its JSON line (rps, latencies, its own CPU seconds). */
function load(cpus, spec) {
  const [cmd, args] = argv(cpus, [LOAD, JSON.stringify(spec)]);
  const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err = (err + d).slice(-2000)));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      children.delete(child);
      if (code !== 0) return reject(new Error(`${LOAD} exited with ${code}: ${err}`));
      resolve(JSON.parse(out.trim().split('\n').pop()));
    });
  });
}

/** The pid answering `whoami` on a fresh connection (so the kernel hands it to any worker). */
function whoami(url) {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ type: 'tool/call/req', tool_name: 'whoami', arguments: {} });
    const req = request(`${url}/tool/call`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', connection: 'close' } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve(JSON.parse(text).data?.data?.pid));
    });
    req.once('error', reject);
    req.end(body);
  });
}

/** Every worker answers: at most 400 fresh connections, 20 at a time, until `workers` distinct pids have. */
async function checkWorkers(url, workers) {
  const pids = new Set();
  for (let i = 0; i < 20 && pids.size < workers; i++) {
    for (const pid of await Promise.all(Array.from({ length: 20 }, () => whoami(url)))) pids.add(pid);
  }
  if (pids.size !== workers) throw new Error(`${workers} worker(s) expected to answer, saw pid(s) ${[...pids].join(', ')}`);
  return [...pids];
}

export async function workers({ quick, log }) {
  const rounds = quick ? 2 : 7;
  const duration = quick ? 2 : 5;
  const connections = 50;
  const redis = await startRedis();
  const dir = await mkdtemp(join(tmpdir(), 'a2e-bench-workers-'));
  const configPath = join(dir, 'gateway.yaml');
  await writeFile(
    configPath,
    [
      'server:\n  host: 127.0.0.1\n  port: 0',
      `store:\n  kind: redis\n  url: ${redis.url}\n  prefix: "bench-workers:"`,
      `plugins:\n  - module: ${JSON.stringify(PLUGIN)}`,
    ].join('\n') + '\n',
  );
  const gateways = {};
  const answering = {};
  try {
    for (const t of TARGETS) {
      gateways[t.key] = await startGateway(configPath, t.workers, t.server);
      answering[t.key] = await checkWorkers(gateways[t.key].url, t.workers);
      await load(t.load, { url: `${gateways[t.key].url}/tool/call`, body: BODY, connections, duration: quick ? 1 : 3 });
    }
    const results = Object.fromEntries(TARGETS.map((t) => [t.key, []]));
    for (let r = 0; r < rounds; r++) {
      for (const t of TARGETS) {
        const g = gateways[t.key];
        const before = g.cpu();
        const res = await load(t.load, { url: `${g.url}/tool/call`, body: BODY, connections, duration });
        if (res.errors || res.non2xx) throw new Error(`${t.label}: ${res.errors} errors, ${res.non2xx} non-2xx responses`);
        res.gatewayCpuS = g.cpu() - before;
        results[t.key].push(res);
        log(
          `  workers round ${r + 1}/${rounds} ${t.key}: ${fmt.int(res.rps)} req/s; CPU s per s: gateway ${(res.gatewayCpuS / res.seconds).toFixed(2)}, ` +
            `autocannon ${(res.cpuS / res.seconds).toFixed(2)}`,
        );
      }
    }
    const rps = (k) => results[k].map((x) => x.rps);
    const perCpu = (k) => results[k].map((x) => x.requests / x.gatewayCpuS);
    const share = (k, f) => median(results[k].map((x) => f(x) / x.seconds));
    const ratio = pairedRatio(rps('two'), rps('one'));
    const efficiency = pairedRatio(perCpu('two'), perCpu('one'));
    const loadShare = share('two', (x) => x.cpuS);
    const gatewayShare = share('two', (x) => x.gatewayCpuS);
    const oneShare = share('one', (x) => x.gatewayCpuS);
    return {
      id: 16,
      title: 'Several workers',
      what:
        `POST /tool/call to \`echo\` (no session, so no Redis traffic) with ${connections} connections, ${duration} s per run, ${rounds} ` +
        'interleaved rounds after a warm-up run each. The real CLI, `a2e-gateway serve --config gateway.yaml` with `store.kind: redis` ' +
        '(a local redis-server, persistence off) and the echo tool as a plugin module, with `--workers 2` or as one process; before ' +
        `measuring, fresh connections checked that every worker answers (pids ${answering.two?.join(', ')}). Pinning: the first two ` +
        'rows leave every process (gateway, workers, autocannon, redis-server) to the scheduler on both CPUs, so the load generator ' +
        'competes with the workers as it would on any one machine; the third row is the one-process layout of the other scenarios ' +
        '(gateway on CPU 0, autocannon on CPU 1), for reference. CPU columns: CPU seconds used per second of the run by the gateway ' +
        '(primary and workers, from /proc) and by autocannon (its own process.cpuUsage).',
      columns: ['Gateway', 'req/s (median)', 'p50 (median)', 'p99 (median)', 'CPU/s gateway', 'CPU/s autocannon', 'req per gateway CPU-s', '× one process'],
      rows: TARGETS.map((t) => [
        t.label,
        fmt.int(median(rps(t.key))),
        fmt.latency(median(results[t.key].map((x) => x.p50))),
        fmt.latency(median(results[t.key].map((x) => x.p99))),
        share(t.key, (x) => x.gatewayCpuS).toFixed(2),
        share(t.key, (x) => x.cpuS).toFixed(2),
        fmt.int(median(perCpu(t.key))),
        t.key === 'one' ? '1.00×' : fmt.ratio(pairedRatio(rps(t.key), rps('one'))),
      ]),
      targets: [
        { text: '`--workers 2` vs one process on this 2-CPU machine, load generator on it too, ≥ 1.5×', value: fmt.ratio(ratio), met: ratio >= 1.5 },
        { text: 'requests per gateway CPU-second, 2 workers vs one process (what a second CPU free of the load generator would add)', value: fmt.ratio(efficiency), met: null },
      ],
      notes: [
        `Where the two CPUs went (medians): with two workers the gateway processes used ${gatewayShare.toFixed(2)} CPU and autocannon ` +
          `${loadShare.toFixed(2)} CPU; one process used ${oneShare.toFixed(2)} CPU (autocannon ${share('one', (x) => x.cpuS).toFixed(2)}). ` +
          `The throughput ratio is about (CPU the workers got ÷ CPU one process got) × (requests per gateway CPU-second, two ÷ one) = ` +
          `${(gatewayShare / oneShare).toFixed(2)} × ${efficiency.toFixed(2)}: two workers can only use what the load generator leaves ` +
          'of the two CPUs, and autocannon needs more CPU the more requests it makes.',
      ],
      commands: [
        'redis-server --port <port> --save \'\' --appendonly no',
        shown(BOTH, ['dist/cli.js', 'serve', '--config', 'gateway.yaml', '--workers', '2']),
        shown(BOTH, ['dist/cli.js', 'serve', '--config', 'gateway.yaml', '--workers', '1']),
        shown(BOTH, [LOAD, JSON.stringify({ url: '<server>/tool/call', body: '<echo>', connections, duration })]),
        shown(pinning.server, ['dist/cli.js', 'serve', '--config', 'gateway.yaml', '--workers', '1']),
        shown(pinning.load, [LOAD, JSON.stringify({ url: '<server>/tool/call', body: '<echo>', connections, duration })]),
      ],
      raw: { ...results, answering },
    };
  } finally {
    await Promise.all(Object.values(gateways).map((g) => g.stop()));
    for (const child of children) child.kill('SIGKILL');
    redis.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
