// Added latency of an approval decided by API, on one instance: from sending POST /admin/approvals/{id} to the
// tool starting (p50/p90 over N calls). Run after `npm run build`: node bench/approval-latency.mjs [N]
import { createGateway, createLogger, defineConfig } from '../dist/index.js';

const N = Number(process.argv[2] ?? 300);
let onStart = () => {};
const plugin = {
  name: 'bench',
  listTools: () => [{ name: 'gated', description: 'records when it starts', kind: 'native' }],
  executeTool: () => (onStart(performance.now()), { ok: true }),
};
const off = { enabled: false };
const gateway = await createGateway({
  config: defineConfig({
    server: { port: 0 },
    tools: { fs: off, shell: off, http: off, eval: off },
    approvals: { require: ['gated'] },
  }),
  plugins: [plugin],
  logger: createLogger('silent'),
});
const { url } = await gateway.listen(0, '127.0.0.1');
const body = JSON.stringify({ type: 'tool/call/req', tool_name: 'gated', arguments: {} });
const samples = [];
for (let i = 0; i < N; i++) {
  const call = fetch(`${url}/tool/call`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body,
  }).then((r) => r.json());
  let approval;
  while (!(approval = gateway.engine.approvals.list()[0])) await new Promise((r) => setImmediate(r));
  const started = new Promise((resolve) => (onStart = resolve));
  const t0 = performance.now();
  await fetch(`${url}${approval.url}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: '{"decision":"approve"}',
  }).then((r) => r.text());
  samples.push((await started) - t0);
  await call;
}
await gateway.close();
samples.sort((a, b) => a - b);
const at = (q) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))].toFixed(2);
console.log(JSON.stringify({ calls: N, decision_to_tool_start_ms: { p50: at(0.5), p90: at(0.9), p99: at(0.99) } }));
