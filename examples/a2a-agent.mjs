#!/usr/bin/env node
// A minimal A2A 1.0 agent (JSON-RPC over HTTP, no dependencies) to try the
// gateway's A2A tools with: skill "shout" upper-cases the task after a short
// while. Usage: node examples/a2a-agent.mjs [port]   (default 9000)
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { setTimeout } from 'node:timers';

const port = Number(process.argv[2] ?? 9000);
const base = `http://127.0.0.1:${port}`;
const card = {
  name: 'shouter',
  description: 'Shouts whatever it is given',
  version: '1.0.0',
  supportedInterfaces: [{ url: `${base}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
  capabilities: { streaming: false },
  skills: [{ id: 'shout', name: 'Shout', description: 'Upper-case the task text', tags: ['text'] }],
};
const tasks = new Map();

const server = createServer(async (req, res) => {
  let body = '';
  for await (const chunk of req) body += chunk;
  const send = (status, value) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  if (req.method === 'GET' && req.url === '/.well-known/agent-card.json') return send(200, card);
  if (req.method !== 'POST' || req.url !== '/a2a') return send(404, { error: 'not found' });
  const rpc = JSON.parse(body);
  const reply = (result) => send(200, { jsonrpc: '2.0', id: rpc.id, result });
  if (rpc.method === 'SendMessage') {
    const text = rpc.params.message.parts.map((p) => p.text ?? '').join('');
    const task = { id: randomUUID(), status: { state: 'TASK_STATE_WORKING' }, artifacts: [] };
    tasks.set(task.id, task);
    setTimeout(() => {
      task.status = { state: 'TASK_STATE_COMPLETED' };
      task.artifacts = [{ artifactId: 'out', name: 'shout', parts: [{ text: text.toUpperCase() }] }];
    }, 300);
    return reply({ task });
  }
  const task = tasks.get(rpc.params?.id);
  if (rpc.method === 'GetTask' && task) return reply(task);
  if (rpc.method === 'CancelTask' && task)
    return reply(Object.assign(task, { status: { state: 'TASK_STATE_CANCELED' } }));
  return send(200, { jsonrpc: '2.0', id: rpc.id, error: { code: -32601, message: `unknown method ${rpc.method}` } });
});
server.listen(port, '127.0.0.1', () => console.log(`A2A agent "shouter" on ${base}`));
