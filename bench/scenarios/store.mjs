/**
 * Scenario 13 — shared store (store.kind redis) vs memory: POST /tool/call to
 * `echo` on one gateway process, (a) plain (no session, no token: must not
 * touch Redis at all) and (b) with a token whose rate limit is taken and a
 * session whose running calls are counted on every call (one Lua script, one
 * round trip). Each pair runs the same config with kind memory and kind
 * redis against a real redis-server on 127.0.0.1; autocannon, 50
 * connections, rounds interleaved.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { runLoad, shownCommand, startServer } from '../lib/proc.mjs';
import { fmt, median, pairedRatio } from '../lib/stats.mjs';

const TOKEN = 'bench-store-token-0123456789abcdef';
const SERVER = 'bench/servers/gateway-store.mjs';
const echoBody = (session) =>
  JSON.stringify({
    type: 'tool/call/req',
    tool_name: 'echo',
    arguments: { text: 'hi' },
    ...(session && { session_id: session }),
  });

const TARGETS = [
  { key: 'plainMemory', label: 'plain call, `kind: memory`', sessions: false, redis: false },
  // Control: the same as plainMemory in other processes. Its ratio is this run's noise floor between identical
  // gateways (measured up to 20% on a shared machine), against which the plain Redis row is read.
  {
    key: 'plainMemoryControl',
    label: 'plain call, `kind: memory` again (control: other processes)',
    sessions: false,
    redis: false,
  },
  { key: 'plainRedis', label: 'plain call, `kind: redis` (no Redis traffic)', sessions: false, redis: true },
  { key: 'sessionsMemory', label: 'session + rate limit, `kind: memory`', sessions: true, redis: false },
  {
    key: 'sessionsRedis',
    label: 'session + rate limit, `kind: redis` (one script per call)',
    sessions: true,
    redis: true,
  },
];

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** A throwaway redis-server (no persistence) on a free port. */
/** CPU time (user + system) a process has used so far, µs, from /proc (USER_HZ 100). */
function cpuMicros(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

export async function startRedis() {
  const bin = ['/usr/bin/redis-server', '/usr/local/bin/redis-server', '/usr/sbin/redis-server'].find((p) =>
    existsSync(p),
  );
  if (!bin)
    throw new Error(
      'redis-server is not installed; install the Debian package "redis-server" (listed in .ci/apt-packages)',
    );
  const port = await freePort();
  const child = spawn(
    bin,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out.slice(-500)}`)), 10_000);
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${code}): ${out.slice(-500)}`));
    });
  });
  return { url: `redis://127.0.0.1:${port}/0`, pid: child.pid, stop: () => child.kill('SIGTERM') };
}

export async function store({ quick, log }) {
  const rounds = quick ? 2 : 9;
  const duration = quick ? 2 : 5;
  // Several processes per row, taken in turn by the rounds: one process per row let one process's luck (its heap
  // sizing, where its memory landed) bias a whole row.
  const processes = quick ? 1 : 3;
  const connections = 50;
  const redis = await startRedis();
  const servers = {};
  const specs = {};
  try {
    for (const t of TARGETS) {
      servers[t.key] = [];
      specs[t.key] = [];
      for (let i = 0; i < processes; i++) {
        const server = await startServer([SERVER], {
          env: {
            ...(t.redis && { BENCH_STORE_URL: redis.url, BENCH_STORE_PREFIX: `${t.key}${i}:` }),
            ...(t.sessions && {
              BENCH_SESSIONS: '1',
              BENCH_TOKEN_SHA256: createHash('sha256').update(TOKEN).digest('hex'),
            }),
          },
        });
        servers[t.key].push(server);
        const headers = t.sessions ? { authorization: `Bearer ${TOKEN}` } : {};
        let session;
        if (t.sessions) {
          const hs = await fetch(`${server.url}/handshake`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...headers },
            body: JSON.stringify({ type: 'handshake/req', agent_caps: ['tools'] }),
          });
          session = (await hs.json()).session_id;
          if (!session) throw new Error(`${t.label}: the handshake answered ${hs.status}`);
        }
        const spec = { url: `${server.url}/tool/call`, body: echoBody(session), headers, connections, duration };
        specs[t.key].push(spec);
        const check = await fetch(spec.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: spec.body,
        });
        const json = await check.json();
        if (check.status !== 200 || json.data?.data?.text !== 'hi')
          throw new Error(`${t.label} answered ${check.status} ${JSON.stringify(json)}`);
      }
    }
    for (const t of TARGETS)
      for (const spec of specs[t.key]) await runLoad('bench/load/autocannon.mjs', { ...spec, duration: quick ? 1 : 5 });
    const results = Object.fromEntries(TARGETS.map((t) => [t.key, []]));
    for (let r = 0; r < rounds; r++) {
      for (const t of TARGETS) {
        const server = servers[t.key][r % processes];
        const cpuBefore = [cpuMicros(server.pid), cpuMicros(redis.pid)];
        const res = await runLoad('bench/load/autocannon.mjs', specs[t.key][r % processes]);
        if (res.errors || res.non2xx)
          throw new Error(`${t.label}: ${res.errors} errors, ${res.non2xx} non-2xx responses`);
        // CPU per call: robust to other work on the machine, where req/s is not.
        res.gatewayUs = (cpuMicros(server.pid) - cpuBefore[0]) / res.requests;
        res.redisUs = (cpuMicros(redis.pid) - cpuBefore[1]) / res.requests;
        results[t.key].push(res);
        log(
          `  store round ${r + 1}/${rounds} ${t.key}: ${fmt.int(res.rps)} req/s, p99 ${res.p99} ms, CPU per call: gateway ${res.gatewayUs.toFixed(0)} µs, redis ${res.redisUs.toFixed(0)} µs`,
        );
      }
    }
    const rps = (k) => results[k].map((x) => x.rps);
    const plain = pairedRatio(rps('plainRedis'), rps('plainMemory'));
    const sessions = pairedRatio(rps('sessionsRedis'), rps('sessionsMemory'));
    const base = { plainMemoryControl: 'plainMemory', plainRedis: 'plainMemory', sessionsRedis: 'sessionsMemory' };
    return {
      id: 13,
      title: 'Shared store: Redis vs memory',
      what:
        `POST /tool/call to \`echo\` with ${connections} connections, ${duration} s per run, ${rounds} interleaved rounds after a ` +
        `warm-up run each, ${processes} gateway process${processes === 1 ? '' : 'es'} per row taken in turn by the rounds. The control row is the ` +
        'plain memory row again in other processes: its ratio is how far two identical gateways differ in this run. Plain: no token, no session (with `kind: redis` the call must not touch ' +
        'Redis). Session + rate limit: a bearer token whose rate limit (set high enough never to refuse) is taken on every call, and ' +
        'one session (max_parallel 64) whose running calls are counted; with `kind: redis` that is one Lua script per call, and the ' +
        'slots of the calls that ended in one turn of the event loop given back in one ZREM. redis-server runs unpinned on the same ' +
        'machine, persistence off, so its CPU comes out of what the gateway and autocannon would otherwise get. CPU per call: the ' +
        "process's user + system time over the run (from /proc) divided by the calls it served, median over rounds (redis-server's " +
        "includes its own background work and the idle gateways' blocking reads, a few µs per call at full load).",
      columns: [
        'Gateway',
        'req/s (median)',
        'p50 (median)',
        'p99 (median)',
        'CPU per call: gateway',
        'CPU per call: redis-server',
        '× memory',
      ],
      rows: TARGETS.map((t) => [
        t.label,
        fmt.int(median(rps(t.key))),
        fmt.latency(median(results[t.key].map((x) => x.p50))),
        fmt.latency(median(results[t.key].map((x) => x.p99))),
        `${median(results[t.key].map((x) => x.gatewayUs)).toFixed(0)} µs`,
        `${median(results[t.key].map((x) => x.redisUs)).toFixed(0)} µs`,
        base[t.key] ? fmt.ratio(pairedRatio(rps(t.key), rps(base[t.key]))) : '1.00×',
      ]),
      targets: [
        { text: 'plain POST /tool/call, redis ≥ 0.95× memory', value: fmt.ratio(plain), met: plain >= 0.95 },
        {
          text: 'with a session and a rate limit, redis ≥ 0.7× memory',
          value: fmt.ratio(sessions),
          met: sessions >= 0.7,
        },
      ],
      notes: [
        'Reading the plain row (measured 4 Dec 2026): with `kind: redis` a plain call sends Redis nothing. In a `node --cpu-prof` of ' +
          "the two gateways under this load, the Redis client and the store have no samples beyond their start-up (loading the client's command table), and the CPU per call was " +
          'the same (28 µs each). What the row measures is how far two gateway processes differ: over the last nine full runs the ' +
          'control row (the same memory config, other processes) ranged 0.84–1.10× and the plain Redis row 0.89–1.06×, so a 0.95× ' +
          "target sits inside this VM's noise between identical processes.",
        '',
        "Where the session row's time goes (4 Dec 2026, `perf record` of the gateway, this load): the admissions of one turn of " +
          'the event loop share one script, ~14 calls a round trip here, so Redis work is a few µs a call on each side. Most of the ' +
          'difference to memory is the garbage collector: a call waiting for Redis keeps its request, context and promises alive ' +
          'across young-generation collections, and some are promoted, so the Redis row spends ~3 µs a call more in the scavenger ' +
          'and ~0.7 µs in old-generation marking and sweeping, which the memory row, answering in the same turn, hardly needs. ' +
          'Since 4 Dec a waiting call holds one promise for its admission, not a chain of an async wrapper and its verdict.',
      ],
      commands: [
        shownCommand('server', [SERVER]),
        shownCommand('load', [
          'bench/load/autocannon.mjs',
          JSON.stringify({ url: '<server>/tool/call', body: '<body>', connections, duration }),
        ]),
      ],
      raw: results,
    };
  } finally {
    await Promise.all(
      Object.values(servers)
        .flat()
        .map((s) => s.stop()),
    );
    redis.stop();
  }
}
