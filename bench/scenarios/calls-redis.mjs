/**
 * Scenario 14 — call-resource event streaming through Redis: a call resource
 * started on gateway A (store.kind: redis) emits N events as fast as it can,
 * and a watcher follows GET /tool/calls/{id}/events on gateway B (they share
 * one redis-server): events/s, and emit-to-arrival latency across instances.
 * Against memory mode on one instance (started and watched on the same
 * gateway). Latency is measured twice: under full-speed emission (it includes
 * the backlog) and with events paced one per millisecond (the per-event cost).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLoad, shownCommand, startServer } from '../lib/proc.mjs';
import { fmt, median, pairedRatio } from '../lib/stats.mjs';

const REDIS_BINARIES = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'];

export async function callsRedis({ quick, log }) {
  const count = quick ? 10_000 : 100_000;
  const paced = quick ? 300 : 3000;
  const rounds = quick ? 1 : 3;
  const redis = await startRedis();
  const servers = {};
  try {
    const env = { BENCH_STORE_URL: redis.url, BENCH_STORE_PREFIX: 'bench-calls:' };
    servers.memory = await startServer(['bench/servers/gateway-calls.mjs']);
    servers.a = await startServer(['bench/servers/gateway-calls.mjs'], { env });
    servers.b = await startServer(['bench/servers/gateway-calls.mjs'], { env });
    const modes = [
      {
        key: 'memory',
        label: 'memory, one instance (started and watched on it)',
        start: servers.memory.url,
        watch: servers.memory.url,
      },
      { key: 'redis', label: 'Redis, started on A, watched on B', start: servers.a.url, watch: servers.b.url },
    ];
    const run = async (m, n, everyMs) => {
      const res = await runLoad('bench/load/call-events.mjs', { start: m.start, watch: m.watch, count: n, everyMs });
      if (res.status !== 200 || res.events !== n || res.outOfOrder || !res.finalOk) {
        throw new Error(
          `${m.label}: status ${res.status}, ${res.events}/${n} events, ${res.outOfOrder} out of order, final ok ${res.finalOk}`,
        );
      }
      return res;
    };
    for (const m of modes) await run(m, Math.min(count, 10_000), 0); // warm-up
    const fast = { memory: [], redis: [] };
    const slow = { memory: [], redis: [] };
    for (let r = 0; r < rounds; r++) {
      for (const m of modes) {
        fast[m.key].push(await run(m, count, 0));
        slow[m.key].push(await run(m, paced, 1));
        log(
          `  calls-redis round ${r + 1}/${rounds} ${m.key}: ${fmt.int(fast[m.key].at(-1).eventsPerS)} events/s, paced p50 ${fmt.ms(slow[m.key].at(-1).p50)}`,
        );
      }
    }
    const eps = (k) => fast[k].map((x) => x.eventsPerS);
    const p50 = median(slow.redis.map((x) => x.p50));
    return {
      id: 14,
      title: 'Call-resource event streaming through Redis',
      what:
        `A call resource (\`POST /tool/calls\`) whose tool emits ${fmt.int(count)} progress events as fast as it can, followed with ` +
        '`GET /tool/calls/{id}/events` by eventsource-parser in a separate process; every event counted and checked in order, the final ' +
        'response checked. Redis: started on gateway A, watched on gateway B, one local redis-server (persistence off, not pinned). ' +
        `Memory: one gateway. Latency is emit (in the tool) to parse (in the watcher) of the events emitted after the stream opened: under the full-speed run (backlog included) and in a run of ${fmt.int(paced)} events paced 1 ms apart. ${rounds} interleaved round(s) after a warm-up.`,
      columns: ['Store', 'events/s (median)', '× memory', 'p50 / p99 latency, full speed', 'p50 / p99 latency, paced'],
      rows: modes.map((m) => [
        m.label,
        fmt.int(median(eps(m.key))),
        fmt.ratio(pairedRatio(eps(m.key), eps('memory'))),
        `${fmt.ms(median(fast[m.key].map((x) => x.p50)))} / ${fmt.ms(median(fast[m.key].map((x) => x.p99)))}`,
        `${fmt.ms(median(slow[m.key].map((x) => x.p50)))} / ${fmt.ms(median(slow[m.key].map((x) => x.p99)))}`,
      ]),
      targets: [{ text: 'p50 emit-to-arrival across instances (paced) ≤ 5 ms', value: fmt.ms(p50), met: p50 <= 5 }],
      commands: [
        `redis-server --port <port> --save '' --appendonly no`,
        shownCommand('server', ['bench/servers/gateway-calls.mjs']) +
          '   # A and B with BENCH_STORE_URL=redis://127.0.0.1:<port>/0',
        shownCommand('load', [
          'bench/load/call-events.mjs',
          JSON.stringify({ start: '<A>', watch: '<B>', count, everyMs: 0 }),
        ]),
      ],
      raw: { fast, slow },
    };
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
    await redis.stop();
  }
}

/** A throwaway redis-server on a free port of 127.0.0.1, persistence off. */
async function startRedis() {
  const bin = REDIS_BINARIES.find((p) => existsSync(p));
  if (!bin)
    throw new Error('redis-server is not installed: apt-get install -y redis-server (it is in .ci/apt-packages)');
  const port = await new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port: p } = s.address();
      s.close(() => resolve(p));
    });
  });
  const dir = mkdtempSync(join(tmpdir(), 'bench-redis-'));
  const child = spawn(
    bin,
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 10_000);
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        child.stdout.resume();
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${out}`)));
  });
  return {
    url: `redis://127.0.0.1:${port}/0`,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
