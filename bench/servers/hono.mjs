/**
 * Baseline (b): bare Hono on @hono/node-server, the framework the gateway is
 * built on. POST /tool/call answers the echo JSON; POST /stream writes
 * `count` events with Hono's own streamSSE, then the final response.
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { randomUUID } from 'node:crypto';
import { echoResponse, progressEvent, ready } from './common.mjs';

const app = new Hono();
app.post('/tool/call', async (c) => {
  const startedAt = performance.now();
  return c.json(echoResponse(await c.req.json(), startedAt));
});
app.post('/stream', async (c) => {
  const startedAt = performance.now();
  const req = await c.req.json();
  const reqId = req.id ?? randomUUID();
  const count = Number(req.arguments?.count);
  return streamSSE(c, async (stream) => {
    for (let seq = 0; seq < count; seq++) {
      await stream.writeSSE({ event: 'tool/event', id: String(seq), data: JSON.stringify(progressEvent(reqId, seq)) });
    }
    const resp = echoResponse({ id: reqId, arguments: {} }, startedAt);
    resp.data.tool_name = 'stream';
    resp.data.data = { count };
    await stream.writeSSE({ event: 'tool/call/resp', data: JSON.stringify(resp) });
  });
});
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
  ready(`http://127.0.0.1:${info.port}`),
);
void server;
