import http from 'node:http';
import { createGateway, createLogger, defineConfig } from '../dist/index.js';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
const plugin = { name: 'b', listTools: () => [{ name: 'echo', description: 'e', input_parameters: [{ name: 'text', type: 'string', description: 't', required: true }] }], executeTool: (n, a) => ({ text: a.text }) };
const gw = await createGateway({ config: defineConfig({ server: { port: 0 } }), plugins: [plugin], logger: createLogger('silent') });
const { url: G } = await gw.listen();
const app = new Hono(); app.post('/tool/call', async (c) => c.json({ x: await c.req.json() }));
const H = await new Promise((r) => { const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (i) => r(`http://127.0.0.1:${i.port}`)); });
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const body = JSON.stringify({ type: 'tool/call/req', tool_name: 'echo', arguments: { text: 'hi' } });
const one = (u) => new Promise((res, rej) => { const r = http.request(u + '/tool/call', { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (m) => { m.resume(); m.on('end', res); }); r.on('error', rej); r.end(body); });
for (let k = 0; k < 6; k++) for (const [n, u] of [['gateway', G], ['hono', H]]) { const N = 3000; const t = performance.now(); for (let i = 0; i < N; i++) await one(u); console.log(n, ((performance.now() - t) / N * 1000).toFixed(0), 'µs/req'); }
process.exit(0);
