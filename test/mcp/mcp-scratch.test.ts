/**
 * The data directory of a sandboxed stdio MCP server (its /workspace, a host
 * directory under server.state_dir, issue 53 item 9) has the workspace's
 * quota (issue 51, finding 7): no file in it grows past
 * tools.fs.max_workspace_bytes, and a server whose directory is found over it
 * is stopped, nothing in it removed, until it holds less. The temporary
 * folders of gateways that no longer run (the sandbox probe's, and older
 * gateways' per-server ones) are removed at the next start, never a live
 * gateway's. A real sandboxed server: test/fixtures/mcp-test-server.mjs
 * (tool "scratch") under bubblewrap.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/a2a-stub.js';
import { LogCapture } from '../helpers/log-capture.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/mcp-test-server.mjs', import.meta.url));
const QUOTA = 1024 * 1024;

const statusOf = async (url: string, id: string) =>
  ((await (await fetch(`${url}/mcp-servers`)).json()).servers as any[]).find((s) => s.id === id);
const scratch = async (url: string, name: string, bytes: number) =>
  (await postJson(`${url}/tool/call`, callBody('fill_scratch', { name, bytes }))).json.data;
/** This process's temporary folders (the gateway runs in-process). */
const folders = () => readdirSync(tmpdir()).filter((n) => n.startsWith(`a2e-mcp-pid${process.pid}-`));

describe('a sandboxed MCP server’s data directory', () => {
  let gw: TestGateway;
  let deadPid: number;
  let live: ReturnType<typeof spawn>;
  let staleDir: string;
  let liveDir: string;
  let stateDir: string;
  let dataDir: string;
  const log = new LogCapture('info');

  beforeAll(async () => {
    if (!existsSync('/usr/bin/bwrap')) throw new Error('this test needs bubblewrap: apt-get install bubblewrap');
    // What a SIGKILLed gateway leaves: a folder named after a process that is gone, with a file in it.
    const gone = spawn(process.execPath, ['-e', '0']);
    await once(gone, 'exit');
    deadPid = gone.pid!;
    staleDir = join(tmpdir(), `a2e-mcp-pid${deadPid}-old-AbC123`);
    mkdirSync(staleDir, { recursive: true });
    writeFileSync(join(staleDir, 'left-behind'), 'x'.repeat(10_000));
    // Another gateway that still runs (any live process): its folder stays.
    live = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    liveDir = join(tmpdir(), `a2e-mcp-pid${live.pid}-other-XyZ789`);
    mkdirSync(liveDir, { recursive: true });

    stateDir = mkdtempSync(join(tmpdir(), 'a2e-state-'));
    chmodSync(stateDir, 0o755); // a root gateway's sandbox user must reach the data directory in it
    dataDir = join(stateDir, 'mcp', 'fill');
    writeFileSync(join(stateDir, 'a-file'), '');
    gw = await startGateway({
      logger: log.logger,
      config: {
        server: { state_dir: stateDir },
        tools: { fs: { enabled: false, max_workspace_bytes: QUOTA } },
        mcp: {
          servers: {
            fill: { command: process.execPath, args: [FIXTURE, 'normal'], tools: ['scratch'], sandbox: true },
            // A data directory that cannot be made (below a file).
            nodir: {
              command: process.execPath,
              args: [FIXTURE, 'normal'],
              tools: ['pid'],
              sandbox: true,
              data_dir: join(stateDir, 'a-file', 'data'),
            },
          },
          start_wait_ms: 60_000,
          connect_timeout_ms: 30_000,
          restart_min_ms: 100,
        },
      },
    });
    expect((await statusOf(gw.url, 'fill')).state).toBe('ready');
  }, 90_000);

  afterAll(async () => {
    await gw?.close();
    live?.kill('SIGKILL');
    rmSync(staleDir, { recursive: true, force: true });
    rmSync(liveDir, { recursive: true, force: true });
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('removes the folders of gateways that no longer run at start, never a live one’s', () => {
    expect(existsSync(staleDir)).toBe(false);
    expect(log.records.find((r) => r.removed)?.removed).toContain(`a2e-mcp-pid${deadPid}-old-AbC123`);
    expect(existsSync(liveDir)).toBe(true);
    expect(folders()).toEqual([]); // the probe's is gone; the server's data directory is under server.state_dir
    expect(statSync(dataDir).isDirectory()).toBe(true);
  });

  it('a data directory that cannot be made fails its server, saying which key to change', async () => {
    const s = await statusOf(gw.url, 'nodir');
    expect(s.state).toBe('failed');
    expect(s.last_error).toBe(
      'its data directory could not be made (ENOTDIR); set mcp.servers.nodir.data_dir to a directory the gateway may create and write',
    );
    expect((await statusOf(gw.url, 'fill')).state).toBe('ready'); // the others are not held up
  });

  it('no file grows past the quota', async () => {
    const r = await scratch(gw.url, 'big', 2 * QUOTA);
    expect(r.success).toBe(true);
    expect(r.data.structuredContent.wrote).toBe('error: EFBIG');
    expect(statSync(join(dataDir, 'big')).size).toBeLessThanOrEqual(QUOTA);
    await scratch(gw.url, 'big', 0); // leave it empty for the next test
  }, 30_000);

  it('a server whose directory is over the quota is stopped, keeps its files, and starts again once it holds less', async () => {
    const third = Math.floor(QUOTA * 0.45);
    expect((await scratch(gw.url, 'a', third)).success).toBe(true);
    expect((await scratch(gw.url, 'b', third)).success).toBe(true);
    await scratch(gw.url, 'c', third); // now over: measured after this call, or by the timer
    const stopped = await waitFor(
      'the server stopped',
      async () => {
        const s = await statusOf(gw.url, 'fill');
        return /over its quota/.test(s.last_error ?? '') && s.state !== 'ready' ? s : undefined;
      },
      30_000,
      100,
    );
    expect(stopped.last_error).toMatch(
      /^its data directory \(\/workspace in its sandbox, mcp.servers.fill.data_dir\) holds \d+ bytes, over its quota of 1048576 bytes \(tools.fs.max_workspace_bytes\); .*: remove files from it or raise the quota$/,
    );
    expect(stopped.last_error).not.toContain(stateDir); // no host path
    // While over, every start is refused: still not ready after several backoff rounds, nothing removed.
    await new Promise((r) => setTimeout(r, 1500));
    const still = await statusOf(gw.url, 'fill');
    expect(still.state).not.toBe('ready');
    expect(still.last_error).toMatch(/the server is not started until it holds less/);
    expect(readdirSync(dataDir).sort()).toEqual(['a', 'b', 'big', 'c']);
    const refused = await scratch(gw.url, 'd', 1);
    expect(refused.success).toBe(false);
    // The operator frees space: the server comes back by itself, its files kept.
    rmSync(join(dataDir, 'c'));
    await waitFor('ready again', async () => (await statusOf(gw.url, 'fill')).state === 'ready', 30_000, 100);
    const after = await scratch(gw.url, 'd', 10);
    expect(after.data.structuredContent.files).toEqual(['a', 'b', 'big', 'd']);
  }, 60_000);
});
