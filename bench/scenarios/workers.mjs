/**
 * Scenario 16 — several workers: `a2e-gateway serve --workers 2` (Node's
 * cluster, both workers accepting on one port, store.kind redis as more than
 * one worker needs) against `serve` as one process with the same config, on
 * this machine with the load generator on it too. POST /tool/call to `echo`
 * (no session: no Redis traffic), 50 connections, rounds interleaved. With
 * two CPUs and the load generator on the same machine, what two workers can
 * add is bounded by what the load generator leaves, so the target is measured
 * with wrk (C, about half autocannon's CPU per request) and the autocannon
 * rows of the other scenarios are kept beside it. Every run records the CPU
 * time of the gateway processes and of the load generator itself, so the
 * report can say where the CPUs went.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wrkVersion } from '../lib/machine.mjs';
import { pinning, ROOT } from '../lib/proc.mjs';
import { fmt, median, pairedRatio } from '../lib/stats.mjs';
import { startRedis } from './store.mjs';

const CLI = join(ROOT, 'dist/cli.js');
const PLUGIN = join(ROOT, 'bench/servers/echo-plugin.mjs');
const AUTOCANNON = 'bench/load/autocannon.mjs';
const WRK_SCRIPT = 'bench/load/wrk-post.lua';
const BODY = JSON.stringify({ type: 'tool/call/req', tool_name: 'echo', arguments: { text: 'hi' } });
/** Both CPUs (the scheduler places the processes), or the pinned layout of the other scenarios. */
const BOTH = pinning.enabled ? `0-${pinning.cpus - 1}` : null;

const TARGETS = [
  {
    key: 'one',
    label: 'one process, wrk (gateway and wrk on any CPU)',
    gateway: 'one',
    workers: 1,
    server: BOTH,
    load: BOTH,
    generator: 'wrk',
  },
  {
    key: 'two',
    label: '`--workers 2`, wrk (workers and wrk on any CPU)',
    gateway: 'two',
    workers: 2,
    server: BOTH,
    load: BOTH,
    generator: 'wrk',
  },
  {
    key: 'oneAc',
    label: 'one process, autocannon (gateway and autocannon on any CPU)',
    gateway: 'one',
    load: BOTH,
    generator: 'autocannon',
  },
  {
    key: 'twoAc',
    label: '`--workers 2`, autocannon (workers and autocannon on any CPU)',
    gateway: 'two',
    load: BOTH,
    generator: 'autocannon',
  },
  {
    key: 'onePinned',
    label: 'one process on CPU 0, autocannon on CPU 1 (the other scenarios’ layout)',
    gateway: 'onePinned',
    workers: 1,
    server: pinning.server,
    load: pinning.load,
    generator: 'autocannon',
  },
];
/** The gateways the targets load: the first target naming each says how it runs. */
const GATEWAYS = TARGETS.filter((t) => t.workers);

const children = new Set();
const argv = (cpus, nodeArgs, bin = 'node') =>
  cpus !== null && pinning.enabled ? ['taskset', ['-c', cpus, bin, ...nodeArgs]] : [bin, nodeArgs];
const shown = (cpus, nodeArgs, bin) => {
  const [cmd, args] = argv(cpus, nodeArgs, bin);
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
  const child = spawn(cmd, args, {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let err = '';
  child.stderr.on('data', (d) => (err = (err + d).slice(-2000)));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(
      () => reject(new Error(`serve --workers ${workers} printed no listening line in 60 s: ${err}`)),
      60_000,
    );
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

const wrkArgs = (url, { connections, duration }) => [
  '-t1',
  `-c${connections}`,
  `-d${duration}s`,
  '-s',
  WRK_SCRIPT,
  url,
];

/** One load run on `cpus` (autocannon or wrk); its JSON line (rps, latencies in ms, its own CPU seconds). */
function load(cpus, generator, spec) {
  const [cmd, args] =
    generator === 'wrk' ? argv(cpus, wrkArgs(spec.url, spec), 'wrk') : argv(cpus, [AUTOCANNON, JSON.stringify(spec)]);
  const env = generator === 'wrk' ? { ...process.env, BENCH_BODY: spec.body } : process.env;
  const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err = (err + d).slice(-2000)));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      children.delete(child);
      if (code !== 0) return reject(new Error(`${generator} exited with ${code}: ${err}`));
      resolve(JSON.parse(out.trim().split('\n').pop()));
    });
  });
}

/** The pid answering `whoami` on a fresh connection (so the kernel hands it to any worker). */
function whoami(url) {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ type: 'tool/call/req', tool_name: 'whoami', arguments: {} });
    const req = request(
      `${url}/tool/call`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', connection: 'close' } },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve(JSON.parse(text).data?.data?.pid));
      },
    );
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
  if (pids.size !== workers)
    throw new Error(`${workers} worker(s) expected to answer, saw pid(s) ${[...pids].join(', ')}`);
  return [...pids];
}

export async function workers({ quick, log }) {
  const rounds = quick ? 2 : 7;
  const duration = quick ? 2 : 5;
  const connections = 50;
  if (!wrkVersion())
    throw new Error('wrk is not installed; install the Debian package "wrk" (listed in .ci/apt-packages)');
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
    for (const t of GATEWAYS) {
      gateways[t.key] = await startGateway(configPath, t.workers, t.server);
      answering[t.key] = await checkWorkers(gateways[t.key].url, t.workers);
    }
    for (const t of TARGETS)
      await load(t.load, t.generator, {
        url: `${gateways[t.gateway].url}/tool/call`,
        body: BODY,
        connections,
        duration: quick ? 1 : 3,
      });
    const results = Object.fromEntries(TARGETS.map((t) => [t.key, []]));
    for (let r = 0; r < rounds; r++) {
      for (const t of TARGETS) {
        const g = gateways[t.gateway];
        const before = g.cpu();
        const res = await load(t.load, t.generator, { url: `${g.url}/tool/call`, body: BODY, connections, duration });
        if (res.errors || res.non2xx)
          throw new Error(`${t.label}: ${res.errors} errors, ${res.non2xx} non-2xx responses`);
        res.gatewayCpuS = g.cpu() - before;
        results[t.key].push(res);
        log(
          `  workers round ${r + 1}/${rounds} ${t.key}: ${fmt.int(res.rps)} req/s; CPU s per s: gateway ${(res.gatewayCpuS / res.seconds).toFixed(2)}, ` +
            `${t.generator} ${(res.cpuS / res.seconds).toFixed(2)}`,
        );
      }
    }
    const rps = (k) => results[k].map((x) => x.rps);
    const perCpu = (k) => results[k].map((x) => x.requests / x.gatewayCpuS);
    const share = (k, f) => median(results[k].map((x) => f(x) / x.seconds));
    /** The one-process row a row compares with: the same load generator, on any CPU. */
    const base = (t) => (t.generator === 'wrk' ? 'one' : 'oneAc');
    /** Row `k` against row `b` of the same run: req/s, and requests per gateway CPU-second. */
    const speedup = (k, b) => pairedRatio(rps(k), rps(b));
    const efficiencyOf = (k, b) => pairedRatio(perCpu(k), perCpu(b));
    const ratio = speedup('two', 'one');
    const ratioAc = speedup('twoAc', 'oneAc');
    const efficiency = efficiencyOf('two', 'one');
    const efficiencyAc = efficiencyOf('twoAc', 'oneAc');
    const cpus = (two, one, generator) => {
      const [twoCpu, oneCpu] = [share(two, (x) => x.gatewayCpuS), share(one, (x) => x.gatewayCpuS)];
      // The efficiency as its target row shows it (fmt.ratio truncates), without the × sign.
      return (
        `with ${generator}, two workers used ${twoCpu.toFixed(2)} CPU and ${generator} ${share(two, (x) => x.cpuS).toFixed(2)}; ` +
        `one process used ${oneCpu.toFixed(2)} (${generator} ${share(one, (x) => x.cpuS).toFixed(2)}), so ` +
        `${(twoCpu / oneCpu).toFixed(2)} × ${fmt.ratio(efficiencyOf(two, one)).slice(0, -1)}`
      );
    };
    const wrkCommand = (cpus) =>
      `BENCH_BODY='<echo>' ${shown(cpus, wrkArgs('<server>/tool/call', { connections, duration }), 'wrk')}`;
    const acCommand = (cpus) =>
      shown(cpus, [AUTOCANNON, JSON.stringify({ url: '<server>/tool/call', body: '<echo>', connections, duration })]);
    return {
      id: 16,
      title: 'Several workers',
      what:
        `POST /tool/call to \`echo\` (no session, so no Redis traffic) with ${connections} connections, ${duration} s per run, ${rounds} ` +
        'interleaved rounds after a warm-up run each. The real CLI, `a2e-gateway serve --config gateway.yaml` with `store.kind: redis` ' +
        '(a local redis-server, persistence off) and the echo tool as a plugin module, with `--workers 2` or as one process; before ' +
        `measuring, fresh connections checked that every worker answers (pids ${answering.two?.join(', ')}). Here the load generator ` +
        'shares the two CPUs with the workers, so what it spends on each request is taken from them: the target is measured with ' +
        'wrk (C, one thread), which spends about half of what autocannon (JavaScript, the generator of every other scenario) ' +
        'spends a request; the autocannon rows are kept beside it. Pinning: the first four rows leave every process (gateway, ' +
        'workers, load generator, redis-server) to the scheduler on both CPUs, as on any one machine; the last row is the ' +
        'one-process layout of the other scenarios (gateway on CPU 0, autocannon on CPU 1), for reference. CPU columns: CPU seconds ' +
        'used per second of the run by the gateway (primary and workers, from /proc) and by the load generator (its own, from ' +
        '/proc for wrk, process.cpuUsage for autocannon).',
      columns: [
        'Gateway, load generator',
        'req/s (median)',
        'p50 (median)',
        'p99 (median)',
        'CPU/s gateway',
        'CPU/s load generator',
        'req per gateway CPU-s',
        '× one process',
      ],
      rows: TARGETS.map((t) => [
        t.label,
        fmt.int(median(rps(t.key))),
        fmt.latency(median(results[t.key].map((x) => x.p50))),
        fmt.latency(median(results[t.key].map((x) => x.p99))),
        share(t.key, (x) => x.gatewayCpuS).toFixed(2),
        share(t.key, (x) => x.cpuS).toFixed(2),
        fmt.int(median(perCpu(t.key))),
        t.key === base(t) ? '1.00×' : fmt.ratio(speedup(t.key, base(t))),
      ]),
      targets: [
        {
          text: '`--workers 2` vs one process on this 2-CPU machine, load generator (wrk) on it too, ≥ 1.5×',
          value: fmt.ratio(ratio),
          met: ratio >= 1.5,
        },
        { text: 'the same with autocannon as the load generator (reported)', value: fmt.ratio(ratioAc), met: null },
        {
          text: 'requests per gateway CPU-second, 2 workers vs one process, wrk / autocannon (what a second CPU free of the load generator would add)',
          value: `${fmt.ratio(efficiency)} / ${fmt.ratio(efficiencyAc)}`,
          met: null,
        },
      ],
      notes: [
        'Where the two CPUs went (medians; the throughput ratio is about the CPU the workers got ÷ the CPU one process got, × ' +
          `requests per gateway CPU-second, two ÷ one): ${cpus('two', 'one', 'wrk')}; ${cpus('twoAc', 'oneAc', 'autocannon')}. ` +
          'Two workers can only use what the load generator leaves of the two CPUs, and a generator needs more CPU the more ' +
          'requests it makes.',
      ],
      commands: [
        "redis-server --port <port> --save '' --appendonly no",
        shown(BOTH, ['dist/cli.js', 'serve', '--config', 'gateway.yaml', '--workers', '2']),
        shown(BOTH, ['dist/cli.js', 'serve', '--config', 'gateway.yaml', '--workers', '1']),
        wrkCommand(BOTH),
        acCommand(BOTH),
        shown(pinning.server, ['dist/cli.js', 'serve', '--config', 'gateway.yaml', '--workers', '1']),
        acCommand(pinning.load),
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
