/**
 * The SDK-built Streamable HTTP MCP server of test/fixtures/mcp-http-session-server.mjs
 * as a child process on an ephemeral 127.0.0.1 port.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SERVER = fileURLToPath(new URL('../fixtures/mcp-http-session-server.mjs', import.meta.url));

/** Start it; `requireBearer`: the bearer token it demands on /mcp (401 otherwise). */
export async function startMcpHttpServer(requireBearer?: string): Promise<{ url: string; close(): Promise<void> }> {
  const child = spawn(process.execPath, [SERVER], {
    env: { ...process.env, PORT: '0', ...(requireBearer ? { REQUIRE_BEARER: requireBearer } : {}) },
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
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}
