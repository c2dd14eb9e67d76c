/**
 * MCP both ways together: `a2e-gateway mcp-stdio` driven by the SDK's
 * StdioClientTransport, and gateway → gateway (one gateway's /mcp as another's
 * MCP server over Streamable HTTP, with a bearer token), progress included.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatedPlugin } from '../helpers/gated.js';
import { definePlugin, echoTool, failTool } from '../helpers/plugins.js';
import { callBody, openSse, postJson, startGateway } from '../helpers/server.js';
import { sha256 } from '../security/helpers.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

describe('a2e-gateway mcp-stdio', () => {
  let dir: string;
  let client: Client;
  const errors: Error[] = [];
  let stderr = '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'a2e-mcp-stdio-'));
    writeFileSync(join(dir, 'note.txt'), 'a note for the desktop client\n');
    const config = join(dir, 'gateway.yaml');
    writeFileSync(
      config,
      `tools:\n  fs: { root: ${JSON.stringify(dir)} }\n  shell: { enabled: false }\n  http: { enabled: false }\n  eval: { enabled: false }\npolicy:\n  deny: [write_file]\n`,
    );
    // As docs/mcp.md's desktop-client snippet launches it: the bin by its own path (the build keeps it executable).
    const transport = new StdioClientTransport({
      command: CLI,
      args: ['mcp-stdio', '--config', config],
      stderr: 'pipe',
      env: { LOG_LEVEL: 'info', PATH: process.env.PATH ?? '' },
    });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    client = new Client({ name: 'desktop', version: '1.0.0' });
    client.onerror = (err) => errors.push(err);
    await client.connect(transport);
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the configured tools (the policy applies) and calls one', async () => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('read_file');
    expect(names).not.toContain('write_file');
    const r = await client.callTool({ name: 'read_file', arguments: { path: 'note.txt' } });
    expect(JSON.stringify(r.structuredContent)).toContain('a note for the desktop client');
    const refused = await client
      .callTool({ name: 'write_file', arguments: { path: 'x', content: 'y' } })
      .catch((e: unknown) => e);
    expect((refused as Error).message).toMatch(/denied by the gateway policy/);
  });

  it('keeps stdout for protocol only: logs go to stderr', async () => {
    await client.ping();
    expect(errors).toEqual([]);
    expect(stderr).toMatch(/MCP server on stdio started/);
  });
});

describe('gateway → gateway over MCP', () => {
  const TOKEN = 'upstream-token-0123456789abcdef';
  it("one gateway's /mcp is another's MCP server: tools listed, called, progress streamed, failures kept", async () => {
    const gated = gatedPlugin();
    const upstream = await startGateway({
      plugins: [gated.plugin, definePlugin('more', [failTool])],
      config: { auth: { tokens: [{ name: 'peer', token_sha256: sha256(TOKEN) }] }, sessions: { required: false } },
    });
    const downstream = await startGateway({
      plugins: [definePlugin('own', [[{ ...echoTool[0], name: 'local_echo' }, echoTool[1]]])],
      config: {
        mcp: {
          servers: { up: { url: `${upstream.url}/mcp`, headers: { Authorization: `Bearer ${TOKEN}` } } },
          start_wait_ms: 30_000,
        },
      },
    });
    try {
      const status = (await (await fetch(`${downstream.url}/mcp-servers`)).json()).servers;
      expect(status).toMatchObject([{ id: 'up', transport: 'http', state: 'ready', server_name: 'a2e-gateway' }]);
      const tools = (await postJson(`${downstream.url}/tool/list`, {})).json.tools as any[];
      const echo = tools.find((t) => t.name === 'up_echo');
      expect(echo).toMatchObject({
        kind: 'mcp',
        toolkit: 'up',
        idempotent: true,
        input_parameters: [{ name: 'text', type: 'string', required: true }],
      });

      const r = (await postJson(`${downstream.url}/tool/call`, callBody('up_echo', { text: 'across' }))).json;
      expect(r.data).toMatchObject({ success: true, data: { structuredContent: { text: 'across' } } });
      const failed = (await postJson(`${downstream.url}/tool/call`, callBody('up_fail', { message: 'upstream broke' })))
        .json;
      expect(failed.data).toMatchObject({ success: false, error_code: 'tool_error', error: 'upstream broke' });

      // Progress: the upstream tool emits, the downstream caller's SSE stream shows it while the tool still waits.
      const stream = await openSse(`${downstream.url}/tool/call`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(callBody('up_gated', { key: 'fed', steps: 2 }, { streaming: true })),
      });
      for (let i = 0; i < 2; i++) {
        let ev = await stream.next();
        while (ev && !(ev.event === 'tool/event' && ev.json.kind === 'progress')) ev = await stream.next();
        expect(ev!.json.data.message).toBe(`step ${i}`);
        gated.open('fed', i);
      }
      const rest = await stream.rest();
      expect(rest.find((e) => e.event === 'tool/call/resp')!.json.data).toMatchObject({
        success: true,
        data: { structuredContent: { key: 'fed', steps: 2 } },
      });
    } finally {
      await downstream.close();
      await upstream.close();
    }
  });
});
