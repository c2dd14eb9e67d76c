/**
 * A stateless MCP server over HTTP (no Mcp-Session-Id, POST only: GET answers 404, as the conformance runner's
 * test servers do) as a tool source: its 404 to the GET stream is no lost session, so the gateway does not
 * initialize again, and calls work.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { waitFor } from '../helpers/a2a-stub.js';
import { startGateway, type TestGateway } from '../helpers/server.js';

describe('a stateless MCP server over HTTP that answers 404 to GET', () => {
  let upstream: Server;
  let gw: TestGateway;
  let initialized = 0;
  let gets = 0;

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      if (req.method !== 'POST') {
        gets++;
        res.writeHead(404).end();
        return;
      }
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        const message = JSON.parse(body) as { method?: string };
        if (message.method === 'initialize') initialized++;
        // A new server and transport per request, no session: the SDK's stateless mode.
        const server = new McpServer({ name: 'stateless', version: '1.0.0' });
        server.registerTool(
          'add_numbers',
          { description: 'Adds', inputSchema: { a: z.number(), b: z.number() } },
          async ({ a, b }) => ({
            content: [{ type: 'text', text: String(a + b) }],
          }),
        );
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        void server.connect(transport).then(() => transport.handleRequest(req, res, JSON.parse(body)));
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`;
    gw = await startGateway({ config: { mcp: { servers: { up: { url } } } } });
    await waitFor(
      'the stateless server',
      () => gw.gateway.registry.all().some((t) => t.definition.name === 'up_add_numbers'),
      20_000,
    );
  }, 30_000);
  afterAll(async () => {
    await gw?.close();
    await new Promise((r) => upstream?.close(r));
  });

  it('calls work and the gateway initializes once, whatever the GET stream answered', async () => {
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'up_add_numbers', arguments: { a: 5, b: 3 } },
      }),
    });
    expect(await res.json()).toMatchObject({ id: 1, result: { content: [{ type: 'text', text: '8' }] } });
    await new Promise((r) => setTimeout(r, 300)); // time for a wrongly restarted connection to show
    expect(gets).toBeGreaterThan(0); // the SDK client did try the GET stream
    expect(initialized).toBe(1);
  });
});
