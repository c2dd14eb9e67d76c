/**
 * A2A client process for scenario 4. Modes:
 *   gateway    — `runs` calls of `tool` through POST /tool/call, one at a time
 *   direct     — `runs` blocking sendMessage calls to the peer with the SDK's own client, one at a time
 *   concurrent — `runs` calls of `tool` through the gateway all at once
 * Prints per-call latencies (ms), errors and elapsed time as one JSON line.
 *   node load/a2a.mjs '{"mode":"gateway","url":…,"tool":"Bench_Peer_instant","runs":200}'
 */
import { randomUUID } from 'node:crypto';
import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { Agent, request } from 'undici';

const spec = JSON.parse(process.argv[2]);
const dispatcher = new Agent({ connections: spec.mode === 'concurrent' ? spec.runs : 8 });

async function viaGateway(i) {
  const body = JSON.stringify({ type: 'tool/call/req', tool_name: spec.tool, arguments: { task: `task ${i}` } });
  const res = await request(`${spec.url}/tool/call`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    dispatcher,
  });
  const json = await res.body.json();
  if (res.statusCode !== 200 || json.data?.success !== true)
    throw new Error(`${res.statusCode} ${JSON.stringify(json).slice(0, 300)}`);
}

let client;
async function direct(i) {
  client ??= await new ClientFactory().createFromUrl(spec.url);
  const result = await client.sendMessage({
    message: {
      messageId: randomUUID(),
      contextId: '',
      taskId: '',
      role: Role.ROLE_USER,
      parts: [
        { content: { $case: 'text', value: `task ${i}` }, metadata: undefined, filename: '', mediaType: 'text/plain' },
      ],
      metadata: { skillId: spec.skill },
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
    tenant: '',
  });
  const task = result?.id !== undefined && result.status ? result : result?.task;
  if (task?.status?.state !== TaskState.TASK_STATE_COMPLETED)
    throw new Error(`not completed: ${JSON.stringify(result).slice(0, 300)}`);
}

const one = spec.mode === 'direct' ? direct : viaGateway;
const ms = [];
let errors = 0;
let firstError = null;
const timed = async (i) => {
  const t = performance.now();
  try {
    await one(i);
    ms.push(performance.now() - t);
  } catch (err) {
    errors++;
    firstError ??= String(err.message ?? err);
  }
};
const started = performance.now();
if (spec.mode === 'concurrent') await Promise.all(Array.from({ length: spec.runs }, (_, i) => timed(i)));
else for (let i = 0; i < spec.runs; i++) await timed(i);
process.stdout.write(`${JSON.stringify({ ms, errors, firstError, seconds: (performance.now() - started) / 1000 })}\n`);
await dispatcher.close();
