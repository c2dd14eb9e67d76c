/**
 * Both MCP doors advertise `tools.listChanged` and keep their promise (issue
 * 51, finding 6): the official SDK client hears notifications/tools/list_changed
 * when the tools change — over POST /mcp's GET stream and over
 * `a2e-gateway mcp-stdio` — and nothing while they do not. The tool set is
 * changed by a real MCP server (test/fixtures/mcp-test-server.mjs "listfile",
 * re-listed every second with refresh_s), by a reload, and by a plugin's
 * check ending after the client's first tools/list (the shell sandbox's).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createGateway,
  createLogger,
  defineConfig,
  type Gateway,
  type GatewayConfigInput,
  type PluginHost,
  type ToolDefinitionInput,
  type ToolPlugin,
} from '../../src/index.js';
import { waitFor } from '../helpers/a2a-stub.js';
import { sample, scrape } from '../helpers/metrics.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/mcp-test-server.mjs', import.meta.url));
const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const CHECKED: ToolDefinitionInput = {
  name: 'checked_tool',
  description: 'Listed once its check ends',
  input_parameters: [],
  kind: 'native',
};
const NATIVE_OFF = {
  fs: { enabled: false },
  shell: { enabled: false },
  http: { enabled: false },
  eval: { enabled: false },
};

/** An SDK client that counts the list_changed notifications it hears. */
function listeningClient(): { client: Client; heard: () => number } {
  const client = new Client({ name: 'list-changed-test', version: '1.0.0' });
  let heard = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void heard++);
  return { client, heard: () => heard };
}

const names = async (client: Client) => (await client.listTools()).tools.map((t) => t.name).sort();
const settle = () => new Promise((r) => setTimeout(r, 2500)); // more than two refresh_s rounds of an unchanged list

describe('notifications/tools/list_changed', () => {
  let dir: string;
  let toolsFile: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'a2e-list-changed-'));
    toolsFile = join(dir, 'tools.json');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const upstream = () => ({
    command: process.execPath,
    args: [FIXTURE, 'listfile'],
    env: { TOOLS_FILE: toolsFile },
    sandbox: false,
    refresh_s: 1,
  });

  it('POST /mcp: the SDK client hears it on its GET stream when an MCP server adds a tool and on a reload, and not while nothing changes', async () => {
    writeFileSync(toolsFile, JSON.stringify(['alpha']));
    const config = (deny: string[]): GatewayConfigInput => ({
      server: { port: 0 },
      tools: NATIVE_OFF,
      mcp: { servers: { up: upstream() }, start_wait_ms: 30_000 },
      policy: { deny },
    });
    let next = config([]);
    const gateway: Gateway = await createGateway({
      config: defineConfig(config([])),
      logger: createLogger('silent'),
      loadConfig: async () => defineConfig(next),
    });
    const { url } = await gateway.listen(0, '127.0.0.1');
    const { client, heard } = listeningClient();
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
      expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
      expect(await names(client)).toEqual(['up_alpha']);
      // The SDK opens the GET stream by itself after initialize.
      await waitFor('the GET stream', async () => sample(await scrape(url), 'a2e_sse_streams_open') === 1);

      await settle();
      expect(heard()).toBe(0); // re-listed twice, the same tools: nothing to say

      writeFileSync(toolsFile, JSON.stringify(['alpha', 'beta']));
      await waitFor('list_changed after a tool appeared', () => heard() === 1, 15_000);
      expect(await names(client)).toEqual(['up_alpha', 'up_beta']);

      next = config(['up_alpha']);
      expect(await gateway.reload('test')).toMatchObject({ status: 'reloaded', changed: ['policy.deny'] });
      await waitFor('list_changed after a reload', () => heard() === 2, 15_000);
      expect(await names(client)).toEqual(['up_beta']);
    } finally {
      await client.close();
      await gateway.close();
    }
  }, 90_000);

  it('mcp-stdio: the SDK client hears it when an MCP server adds a tool', async () => {
    writeFileSync(toolsFile, JSON.stringify(['alpha']));
    const configFile = join(dir, 'stdio.yaml');
    writeFileSync(
      configFile,
      `tools: ${JSON.stringify(NATIVE_OFF)}\nmcp: ${JSON.stringify({ servers: { up: upstream() }, start_wait_ms: 30_000 })}\n`,
    );
    const { client, heard } = listeningClient();
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp-stdio', '--config', configFile],
        stderr: 'pipe',
        env: { PATH: process.env.PATH ?? '' },
      }),
    );
    try {
      expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
      expect(await names(client)).toEqual(['up_alpha']);
      await settle();
      expect(heard()).toBe(0);
      writeFileSync(toolsFile, JSON.stringify(['alpha', 'gamma']));
      await waitFor('list_changed after a tool appeared', () => heard() === 1, 15_000);
      expect(await names(client)).toEqual(['up_alpha', 'up_gamma']);
    } finally {
      await client.close();
    }
  }, 90_000);

  it('POST /mcp: a tool checked after start (as run_command is while the shell sandbox is checked) is announced when its check ends', async () => {
    let host: PluginHost | undefined;
    let pending: ToolDefinitionInput[] = [CHECKED];
    let listed: ToolDefinitionInput[] = [];
    const plugin: ToolPlugin = {
      name: 'checked',
      start: (h) => void (host = h),
      listTools: () => listed,
      pendingTools: () => pending,
      executeTool: () => ({ ok: true }),
    };
    const gateway = await createGateway({
      config: defineConfig({ server: { port: 0 }, tools: NATIVE_OFF }),
      plugins: [plugin],
      logger: createLogger('silent'),
    });
    const { url } = await gateway.listen(0, '127.0.0.1');
    const { client, heard } = listeningClient();
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
      expect(await names(client)).toEqual([]);
      await waitFor('the GET stream', async () => sample(await scrape(url), 'a2e_sse_streams_open') === 1);
      // The check ends: what the shell plugin does when its sandbox probe succeeds.
      pending = [];
      listed = [CHECKED];
      host!.toolsChanged();
      await waitFor('list_changed when the check ended', () => heard() === 1, 15_000);
      expect(await names(client)).toEqual(['checked_tool']);
    } finally {
      await client.close();
      await gateway.close();
    }
  }, 60_000);
});
