/**
 * `auth` on an MCP server over Streamable HTTP (issue 56): the gateway adds
 * the credential to every request, so the server's token is never a caller's.
 * Real peer: an SDK-built server requiring a bearer token
 * (test/fixtures/mcp-http-session-server.mjs with REQUIRE_BEARER).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/a2a-stub.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const SERVER = fileURLToPath(new URL('../fixtures/mcp-http-session-server.mjs', import.meta.url));
const TOKEN = 'mcp-bearer-7e6d5c4b3a29';

describe('mcp.servers.<id>.auth', { timeout: 60_000 }, () => {
  let child: ChildProcess;
  let url: string;
  const gateways: TestGateway[] = [];
  beforeAll(async () => {
    child = spawn(process.execPath, [SERVER], {
      env: { ...process.env, PORT: '0', REQUIRE_BEARER: TOKEN },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /listening (\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child.once('exit', (code) => reject(new Error(`the MCP server exited (${code})`)));
    });
    url = `http://127.0.0.1:${port}/mcp`;
  });
  afterAll(async () => {
    for (const gw of gateways) await gw.close();
    child?.kill();
  });

  it('a server requiring a bearer token is reached with the configured one; without it the server offers nothing; an unset variable is the last error of its server', async () => {
    const gw = await startGateway({
      config: {
        mcp: {
          servers: {
            guarded: { url, auth: { type: 'bearer', token_env: 'MCP_TOKEN' } },
            open: { url },
            unset: { url, auth: { type: 'bearer', token_env: 'NO_MCP_TOKEN_VAR' } },
          },
          start_wait_ms: 10_000,
        },
      },
      env: { MCP_TOKEN: TOKEN },
    });
    gateways.push(gw);
    const r = await postJson(`${gw.url}/tool/call`, callBody('guarded_echo', { text: 'hi' }));
    expect(r.json.data).toMatchObject({ success: true });
    expect(JSON.stringify(r.json.data.data)).toContain('hi');
    const status = await waitFor('the open server failing', async () =>
      ((await (await fetch(`${gw.url}/mcp-servers`)).json()).servers as any[]).find(
        (s) => s.id === 'open' && s.last_error,
      ),
    );
    expect(status.tools).toEqual([]);
    const unset = await waitFor('the server without its variable failing', async () =>
      ((await (await fetch(`${gw.url}/mcp-servers`)).json()).servers as any[]).find(
        (s) => s.id === 'unset' && s.last_error,
      ),
    );
    expect(unset.last_error).toContain('environment variable NO_MCP_TOKEN_VAR is not set');
    const sources = (await (await fetch(`${gw.url}/sources`)).json()).sources as any[];
    expect(sources.find((s) => s.id === 'guarded')).toMatchObject({ kind: 'mcp', health: 'ok', tool_count: 3 });
    expect(JSON.stringify(sources) + JSON.stringify(status)).not.toContain(TOKEN);
  });

  it('auth on a stdio server is refused by the config, saying what to do instead', async () => {
    await expect(
      startGateway({
        config: { mcp: { servers: { s: { command: 'true', auth: { type: 'bearer', token_env: 'X' } } } } },
      }),
    ).rejects.toThrow(/"auth" is for a server at a "url"/);
  });
});
