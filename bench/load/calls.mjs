/**
 * Calls one tool through the gateway N times in a row (one at a time) and
 * prints per-call latencies (ms) as one JSON line; every call must succeed.
 *   node load/calls.mjs '{"url":…,"tool":"eval_js","arguments":{"code":"1+1"},"runs":200}'
 */
import { request } from 'undici';

const spec = JSON.parse(process.argv[2]);
const body = JSON.stringify({ type: 'tool/call/req', tool_name: spec.tool, arguments: spec.arguments });
const ms = [];
for (let i = 0; i < spec.runs; i++) {
  const t = performance.now();
  const res = await request(`${spec.url}/tool/call`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  const json = await res.body.json();
  ms.push(performance.now() - t);
  if (res.statusCode !== 200 || json.data?.success !== true)
    throw new Error(`${spec.tool} failed: ${res.statusCode} ${JSON.stringify(json)}`);
}
process.stdout.write(`${JSON.stringify({ ms })}\n`);
