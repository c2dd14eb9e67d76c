/**
 * An MCP server's tools re-served at /mcp as the server gave them: the conformance fixtures
 * (test/fixtures/conformance-server.mjs) behind a real gateway, driven with raw JSON-RPC over HTTP.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/server.js';
import { waitFor } from '../helpers/a2a-stub.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/conformance-server.mjs', import.meta.url));

/** The JSON-RPC messages of one /mcp answer, SSE or JSON. */
async function rpc(url: string, body: unknown): Promise<any[]> {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) return [JSON.parse(text)];
  return [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!));
}

describe('MCP-sourced tools re-served at /mcp', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startGateway({
      config: {
        mcp: {
          servers: {
            test: { command: process.execPath, args: [FIXTURE, 'test'], sandbox: false },
            json: { command: process.execPath, args: [FIXTURE, 'json'], sandbox: false },
          },
        },
      },
    });
    const names = () => gw.gateway.registry.all().map((t) => t.definition.name);
    await waitFor(
      'the fixture servers',
      () => names().includes('test_tool_with_progress') && names().includes('json_schema_2020_12_tool'),
      20_000,
    );
  }, 30_000);
  afterAll(async () => {
    await gw?.close();
  });

  it("a call's last progress notification, sent just before its answer, is not lost (5 calls in a row)", async () => {
    for (let i = 0; i < 5; i++) {
      const messages = await rpc(gw.url, {
        jsonrpc: '2.0',
        id: i,
        method: 'tools/call',
        params: { name: 'test_tool_with_progress', arguments: {}, _meta: { progressToken: `p${i}` } },
      });
      const progress = messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params.progress);
      expect(progress, `call ${i}`).toEqual([0, 50, 100]);
      expect(messages.at(-1)).toMatchObject({
        id: i,
        result: { content: [{ type: 'text', text: 'Progress test completed' }] },
      });
    }
  });

  it("a tool's log messages reach the caller, the last one too", async () => {
    const messages = await rpc(gw.url, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'test_tool_with_logging', arguments: {}, _meta: { progressToken: 'logs' } },
    });
    const logs = messages.filter((m) => m.method === 'notifications/message').map((m) => m.params.data);
    expect(logs).toEqual(['Tool execution started', 'Tool processing data', 'Tool execution completed']);
  });

  it('without a progressToken, log messages still reach a client that accepts SSE; a call that logs nothing is answered with JSON', async () => {
    const call = (id: number, name: string) =>
      fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } }),
      });
    const logged = await call(4, 'test_tool_with_logging');
    expect(logged.headers.get('content-type')).toMatch(/text\/event-stream/);
    const messages = [...(await logged.text()).matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!));
    expect(messages.filter((m) => m.method === 'notifications/message').map((m) => m.params.data)).toEqual([
      'Tool execution started',
      'Tool processing data',
      'Tool execution completed',
    ]);
    expect(messages.at(-1)).toMatchObject({
      id: 4,
      result: { content: [{ type: 'text', text: 'Logging test completed' }] },
    });
    const plain = await call(5, 'test_simple_text');
    expect(plain.headers.get('content-type')).toMatch(/application\/json/);
    expect(await plain.json()).toMatchObject({
      id: 5,
      result: { content: [{ type: 'text', text: 'This is a simple text response for testing.' }] },
    });
  });

  it("re-serves the server's title, annotations, outputSchema, icons and _meta exactly, and structuredContent", async () => {
    // What the server itself lists, straight from it (the SDK's McpServer adds the JSON Schema details).
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const direct = new Client({ name: 't', version: '1' });
    await direct.connect(new StdioClientTransport({ command: process.execPath, args: [FIXTURE, 'test'] }));
    const upstream = (await direct.listTools()).tools.find((t) => t.name === 'described')!;
    await direct.close();
    expect(upstream.outputSchema).toBeDefined();
    // `execution` (task support) is not re-served: the gateway runs no MCP tasks, whatever the server does.
    const { execution: _tasks, ...described } = upstream;

    const [listed] = await rpc(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const tool = listed.result.tools.find((t: { name: string }) => t.name === 'test_described');
    expect(tool).toEqual({ ...described, name: 'test_described' });
    expect(tool.annotations).toEqual({
      title: 'Described (annotation)',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(tool._meta).toEqual({ 'example.com/origin': 'fixture' });

    // A tool with icons and a JSON Schema 2020-12 inputSchema: the whole tool as the server listed it.
    expect(listed.result.tools.find((t: { name: string }) => t.name === 'json_schema_2020_12_tool')).toEqual({
      name: 'json_schema_2020_12_tool',
      description: 'Tool with JSON Schema 2020-12 features',
      inputSchema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
        properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
        additionalProperties: false,
      },
      icons: [{ src: 'https://example.com/schema.png', mimeType: 'image/png', sizes: ['48x48'] }],
      annotations: { readOnlyHint: true, openWorldHint: false },
    });

    const [called] = await rpc(gw.url, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'test_described', arguments: {} },
    });
    expect(called.result).toEqual({
      content: [{ type: 'text', text: '{"answer":42}' }],
      structuredContent: { answer: 42 },
    });
  });

  it('typed content (image, audio, resource) and isError come back as the server sent them', async () => {
    const [mixed] = await rpc(gw.url, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'test_multiple_content_types', arguments: {} },
    });
    expect(mixed.result.content.map((c: { type: string }) => c.type)).toEqual(['text', 'image', 'resource']);
    expect(mixed.result.content[2].resource).toEqual({
      uri: 'test://mixed-content-resource',
      mimeType: 'application/json',
      text: '{"test":"data","value":123}',
    });
    const [failed] = await rpc(gw.url, {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'test_error_handling', arguments: {} },
    });
    expect(failed.result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
    });
  });
});
