/**
 * Back-pressure on an MCP tool's progress over Streamable HTTP: a real MCP server (@modelcontextprotocol/sdk) sends
 * far more progress notifications than `limits.call_events_bytes` holds, as fast as it can, on the SSE answer of a
 * tools/call, to a gateway whose SSE client does not read for a while. The gateway must stop reading that answer
 * while its reader is behind (seen at the server: its answer stops getting out and is not finished) instead of
 * taking it all and dropping the notifications; the client then gets every one, in order, with no gap notice.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gapNotices, heldOrFinished, pausedCall } from '../helpers/paused-sse.js';
import { startGateway, type TestGateway } from '../helpers/server.js';
import { waitFor } from '../tools/procs.js';

const KB = 1024;
/** 10,000 notifications with 1 KB messages: ~11 MB of SSE from the server, ~16 MB of progress events. */
const NOTIFICATIONS = 10_000;
const PAD = 'p'.repeat(1024);

let http: Server;
/** The HTTP responses to tools/call requests, and how many notifications the flood tool has sent. */
const answers: ServerResponse[] = [];
let sent = 0;
let gw: TestGateway;

/** A stateless Streamable HTTP MCP server: a fresh McpServer per request, as the SDK's examples do. */
function mcpServer(): McpServer {
  const server = new McpServer({ name: 'flood-server', version: '1.0.0' });
  server.registerTool('flood', { description: 'Sends many progress notifications, then answers' }, async (extra) => {
    const progressToken = extra._meta?.progressToken;
    if (progressToken === undefined) throw new Error('no progress token: the caller asked for no progress');
    for (let i = 1; i <= NOTIFICATIONS; i++) {
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken, progress: i, total: NOTIFICATIONS, message: `${i} ${PAD}` },
      });
      sent++;
    }
    return { content: [{ type: 'text', text: 'flooded' }] };
  });
  return server;
}

beforeAll(async () => {
  http = createServer((req, res) => {
    const server = mcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body: unknown = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
      if ((body as { method?: string } | undefined)?.method === 'tools/call') answers.push(res);
      void server.connect(transport).then(() => transport.handleRequest(req, res, body));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  gw = await startGateway({
    config: {
      mcp: { servers: { web: { url, timeout_ms: 120_000 } }, start_wait_ms: 30_000 },
      calls: { max_events: 1_000 },
      limits: { call_events_bytes: 64 * KB, stream_unsent_bytes: 16 * KB },
    },
  });
});
afterAll(async () => {
  await gw?.close();
  http?.closeAllConnections();
  await new Promise((resolve) => http?.close(resolve));
});

/** Waits until the server has sent every notification, then whether its answer was held or got out. */
async function answerHeldOrFinished(first: number): Promise<'held' | 'finished'> {
  await waitFor('the server to send every notification', () => sent === NOTIFICATIONS, 30_000);
  const answer = await waitFor('the tools/call answer', () => answers[first], 5_000);
  return heldOrFinished(answer, "the server's answer");
}

describe('MCP back-pressure over Streamable HTTP', () => {
  it('stops reading a server whose progress outruns the SSE reader; the reader gets every notification, with no gap', async () => {
    const first = answers.length;
    sent = 0;
    const call = await pausedCall(gw.url, 'web_flood', {});
    expect(await answerHeldOrFinished(first), 'the gateway took the whole answer while its reader read nothing').toBe(
      'held',
    );

    const frames = await call.read();
    expect(gapNotices(frames)).toEqual([]);
    const progress = frames
      .filter((f) => f.event === 'tool/event' && f.json.kind === 'progress')
      .map((f) => f.json.data);
    expect(progress).toHaveLength(NOTIFICATIONS);
    expect(
      progress.every((p, i) => p.progress === i + 1 && p.total === NOTIFICATIONS && p.message === `${i + 1} ${PAD}`),
    ).toBe(true);
    const last = frames.at(-1)!;
    expect(last.event).toBe('tool/call/resp');
    expect(last.json.data).toMatchObject({ success: true, data: { text: 'flooded' } });
  }, 120_000);
});
