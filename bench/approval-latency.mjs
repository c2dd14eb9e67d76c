// Added latency of an approval decided by API: from sending POST /admin/approvals/{id} to the tool starting
// (p50/p90/p99 over N calls), on one instance (store.kind memory) and across two instances sharing a throwaway
// redis-server (the call held on A, decided on B: claimed in Redis, published to A, applied there).
// Both gateways run in this process (one clock for both ends). Run after `npm run build`:
//   node bench/approval-latency.mjs [N]
import { createGateway, createLogger, defineConfig } from '../dist/index.js';
import { startRedis } from './scenarios/store.mjs';

const N = Number(process.argv[2] ?? 300);
let onStart = () => {};
const plugin = {
  name: 'bench',
  listTools: () => [{ name: 'gated', description: 'records when it starts', kind: 'native' }],
  executeTool: () => (onStart(performance.now()), { ok: true }),
};
const off = { enabled: false };

async function gateway(store) {
  const gw = await createGateway({
    config: defineConfig({
      server: { port: 0 },
      tools: { fs: off, shell: off, http: off, eval: off },
      approvals: { require: ['gated'] },
      ...(store ? { store } : {}),
    }),
    plugins: [plugin],
    logger: createLogger('silent'),
  });
  const { url } = await gw.listen(0, '127.0.0.1');
  return { gw, url };
}

/** Hold N calls on `holder` one after another; approve each on `decider` and time decision → tool start. */
async function measure(holder, decider) {
  const body = JSON.stringify({ type: 'tool/call/req', tool_name: 'gated', arguments: {} });
  const samples = [];
  for (let i = 0; i < N; i++) {
    const call = fetch(`${holder.url}/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body,
    }).then((r) => r.json());
    let approval;
    // Listed on the decider (from the shared store when it is another instance).
    while (!approval) {
      const list = await fetch(`${decider.url}/admin/approvals`).then((r) => r.json());
      approval = list.approvals[0];
      if (!approval) await new Promise((r) => setTimeout(r, 1));
    }
    const started = new Promise((resolve) => (onStart = resolve));
    const t0 = performance.now();
    const decided = await fetch(`${decider.url}${approval.url}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"decision":"approve"}',
    });
    if (decided.status !== 200) throw new Error(`decision answered ${decided.status}: ${await decided.text()}`);
    samples.push((await started) - t0);
    await call;
  }
  samples.sort((a, b) => a - b);
  const at = (q) => Number(samples[Math.min(samples.length - 1, Math.floor(q * samples.length))].toFixed(2));
  return { calls: N, decision_to_tool_start_ms: { p50: at(0.5), p90: at(0.9), p99: at(0.99) } };
}

const one = await gateway();
const local = await measure(one, one);
await one.gw.close();

const redis = await startRedis();
let across;
try {
  const store = { kind: 'redis', url: redis.url, prefix: 'bench-approvals:' };
  const a = await gateway(store);
  const b = await gateway(store);
  try {
    across = await measure(a, b);
  } finally {
    await Promise.allSettled([a.gw.close(), b.gw.close()]);
  }
} finally {
  redis.stop();
}
console.log(JSON.stringify({ one_instance: local, across_instances_redis: across }));
