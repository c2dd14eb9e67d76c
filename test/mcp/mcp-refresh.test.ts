/**
 * `mcp.servers.<id>.refresh_s`: the tools of a server that changes its list
 * without sending notifications/tools/list_changed are re-listed on a timer.
 * A real SDK server (test/fixtures/mcp-test-server.mjs, mode "listfile")
 * offers the tools named in a file; a second one without refresh_s is the control.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/a2a-stub.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/mcp-test-server.mjs', import.meta.url));

const toolNames = async (url: string) =>
  ((await postJson(`${url}/tool/list`, {})).json.tools as { name: string }[]).map((t) => t.name).sort();
const serverTools = async (url: string, id: string) =>
  ((await (await fetch(`${url}/mcp-servers`)).json()).servers as { id: string; tools: string[] }[]).find(
    (s) => s.id === id,
  )!.tools;

describe('refresh_s: periodic re-list of an MCP server’s tools', () => {
  let gw: TestGateway;
  let dir: string;
  let toolsFile: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'a2e-mcp-refresh-'));
    toolsFile = join(dir, 'tools.json');
    writeFileSync(toolsFile, JSON.stringify(['alpha']));
    const server = {
      command: process.execPath,
      args: [FIXTURE, 'listfile'],
      env: { TOOLS_FILE: toolsFile },
      sandbox: false,
    };
    gw = await startGateway({
      config: {
        mcp: {
          servers: { polled: { ...server, refresh_s: 1 }, unpolled: server },
          start_wait_ms: 60_000,
          connect_timeout_ms: 30_000,
        },
      },
    });
  }, 90_000);
  afterAll(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('picks up added and removed tools; a server without refresh_s keeps its first list', async () => {
    expect(await toolNames(gw.url)).toEqual(['polled_alpha', 'unpolled_alpha']);

    writeFileSync(toolsFile, JSON.stringify(['alpha', 'beta']));
    await waitFor('polled_beta to be listed', async () => (await toolNames(gw.url)).includes('polled_beta'), 20_000);
    expect(await serverTools(gw.url, 'polled')).toEqual(['polled_alpha', 'polled_beta']);
    const beta = (await postJson(`${gw.url}/tool/call`, callBody('polled_beta', {}))).json;
    expect(beta.data).toMatchObject({ success: true, data: { text: 'beta' } });

    writeFileSync(toolsFile, JSON.stringify(['beta']));
    await waitFor('polled_alpha to be gone', async () => !(await toolNames(gw.url)).includes('polled_alpha'), 20_000);
    expect(await serverTools(gw.url, 'polled')).toEqual(['polled_beta']);
    const gone = await postJson(`${gw.url}/tool/call`, callBody('polled_alpha', {}));
    expect(gone.status).toBe(404);

    // The control never re-listed: it still has its first tool and no other.
    expect(await serverTools(gw.url, 'unpolled')).toEqual(['unpolled_alpha']);
    expect((await toolNames(gw.url)).filter((n) => n.startsWith('unpolled_'))).toEqual(['unpolled_alpha']);
  }, 60_000);
});
