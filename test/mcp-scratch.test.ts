/**
 * The scratch folder of a sandboxed stdio MCP server (its /workspace, a host
 * directory in the temp dir) has the workspace's quota and does not outlive a
 * killed gateway (issue 51, finding 7): no file in it grows past
 * tools.fs.max_workspace_bytes, a folder found over it is emptied and its
 * server started again, and the folders of gateways that no longer run are
 * removed at the next start, never a live gateway's. A real sandboxed server:
 * test/fixtures/mcp-test-server.mjs (tool "scratch") under bubblewrap.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from './helpers/a2a-stub.js';
import { LogCapture } from './helpers/log-capture.js';
import { callBody, postJson, startGateway, type TestGateway } from './helpers/server.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/mcp-test-server.mjs', import.meta.url));
const QUOTA = 1024 * 1024;

const statusOf = async (url: string, id: string) => ((await (await fetch(`${url}/mcp-servers`)).json()).servers as any[]).find((s) => s.id === id);
const scratch = async (url: string, name: string, bytes: number) => (await postJson(`${url}/tool/call`, callBody('fill_scratch', { name, bytes }))).json.data;
/** This process's scratch folders for the server "fill" (the gateway runs in-process). */
const folders = () => readdirSync(tmpdir()).filter((n) => n.startsWith(`a2e-mcp-pid${process.pid}-fill-`));

describe('a sandboxed MCP server’s scratch folder', () => {
  let gw: TestGateway;
  let deadPid: number;
  let live: ReturnType<typeof spawn>;
  let staleDir: string;
  let liveDir: string;
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

    gw = await startGateway({
      logger: log.logger,
      config: {
        tools: { fs: { enabled: false, max_workspace_bytes: QUOTA } },
        mcp: {
          servers: { fill: { command: process.execPath, args: [FIXTURE, 'normal'], tools: ['scratch'], sandbox: true } },
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
  });

  it('removes the folders of gateways that no longer run at start, never a live one’s', () => {
    expect(existsSync(staleDir)).toBe(false);
    expect(log.records.find((r) => r.removed)?.removed).toContain(`a2e-mcp-pid${deadPid}-old-AbC123`);
    expect(existsSync(liveDir)).toBe(true);
    expect(folders()).toHaveLength(1); // the running server's own
  });

  it('no file grows past the quota', async () => {
    const r = await scratch(gw.url, 'big', 2 * QUOTA);
    expect(r.success).toBe(true);
    expect(r.data.structuredContent.wrote).toBe('error: EFBIG');
    const [dir] = folders();
    expect(statSync(join(tmpdir(), dir!, 'big')).size).toBeLessThanOrEqual(QUOTA);
    await scratch(gw.url, 'big', 0); // leave it empty for the next test
  }, 30_000);

  it('a folder over the quota is emptied and its server started again, saying why', async () => {
    const before = (await statusOf(gw.url, 'fill')).restarts;
    const third = Math.floor(QUOTA * 0.45);
    expect((await scratch(gw.url, 'a', third)).success).toBe(true);
    expect((await scratch(gw.url, 'b', third)).success).toBe(true);
    await scratch(gw.url, 'c', third); // now over: measured after this call, or by the timer
    const restarted = await waitFor('the server restarted', async () => {
      const s = await statusOf(gw.url, 'fill');
      return s.restarts > before ? s : undefined;
    }, 30_000, 100);
    expect(restarted.restarts).toBe(before + 1);
    const why = log.records.find((r) => /scratch folder .* over its quota of 1048576 bytes \(tools.fs.max_workspace_bytes\)/.test(r.error ?? ''));
    expect(why?.error).toMatch(/emptied/);
    await waitFor('ready again', async () => (await statusOf(gw.url, 'fill')).state === 'ready', 30_000, 100);
    // Same folder, emptied: the server sees only what it writes next.
    const after = await scratch(gw.url, 'd', 10);
    expect(after.data.structuredContent.files).toEqual(['d']);
    expect(folders()).toHaveLength(1);
  }, 60_000);
});
