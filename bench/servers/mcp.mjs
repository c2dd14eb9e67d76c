/**
 * Baseline (c): the MCP TypeScript SDK's Streamable HTTP server in stateless
 * JSON mode, with the same echo tool. Stateless mode means a fresh McpServer
 * and transport per request (the SDK's documented pattern); GET and DELETE
 * answer 405, as in the SDK's stateless example.
 */
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { addressOf, ready } from './common.mjs';

function mcpServer() {
  const server = new McpServer({ name: 'bench-echo', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echo the given text back', inputSchema: { text: z.string().describe('Text to echo') } },
    async ({ text }) => ({ content: [{ type: 'text', text }], structuredContent: { text } }),
  );
  return server;
}

const http = createServer((req, res) => {
  // As the SDK's stateless example does: no server-initiated stream (GET) and no session to end (DELETE).
  // (A client that connects, like the gateway in scenario 8(b), tries GET once and takes the 405 as "none".)
  if (req.method !== 'POST') {
    res.writeHead(405, { 'content-type': 'application/json', allow: 'POST' });
    res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null }));
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const server = mcpServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    }
  });
});
http.listen(0, '127.0.0.1', () => ready(addressOf(http)));
