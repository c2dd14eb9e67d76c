/**
 * A sandboxed stdio MCP server installed where the sandbox user (uid 65534)
 * cannot go — a checkout inside a 0700 directory, as `mktemp -d` makes — is
 * reported with what is wrong and how to fix it (in GET /mcp-servers and the
 * log), naming a host directory only when the config's own path contains it;
 * once the path is made traversable the server comes up. The same for a
 * data directory (data_dir) inside such a directory, and for a `rw: true`
 * mount that user cannot write. Only a root gateway
 * drops to that user: run as another user, the same servers simply start.
 */
import { chmodSync, chownSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/a2a-stub.js';
import { LogCapture } from '../helpers/log-capture.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/mcp-test-server.mjs', import.meta.url));
// Inside the repository, so the script finds the SDK in the repository's node_modules (as a real checkout would).
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts', import.meta.url));
const isRoot = process.getuid?.() === 0;

describe('a sandboxed MCP server the sandbox user cannot reach', () => {
  let base: string;
  let locked: string;
  let gateway: TestGateway | undefined;
  let url: string;
  const log = new LogCapture('info');

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    base = mkdtempSync(join(ARTIFACTS, 'mcp-reach-'));
    chmodSync(base, 0o755);
    // The checkout: a 0700 directory (what mkdtemp makes) holding the server script.
    locked = join(base, 'checkout');
    mkdirSync(locked, { mode: 0o700 });
    copyFileSync(FIXTURE, join(locked, 'server.mjs'));
    // A reachable directory whose script is a symlink into the locked one: the config never names the locked path.
    mkdirSync(join(base, 'public'), { mode: 0o755 });
    mkdirSync(join(base, 'shared'), { mode: 0o755 });
    symlinkSync(join(locked, 'server.mjs'), join(base, 'public', 'server.mjs'));

    const server = (script: string, extra: Record<string, unknown> = {}) => ({
      command: process.execPath,
      args: [script, 'normal'],
      tools: ['pid'],
      ...extra,
    });
    gateway = await startGateway({
      config: {
        mcp: {
          servers: {
            locked: server(join(locked, 'server.mjs')),
            linked: server(join(base, 'public', 'server.mjs')),
            unconfined: server(join(locked, 'server.mjs'), { sandbox: false }),
            // Reachable itself, but its data directory is in the locked one.
            data: server(FIXTURE, { data_dir: join(locked, 'data') }),
            // A writable mount of a directory only root may write.
            writer: server(FIXTURE, { mounts: [{ path: join(base, 'shared'), rw: true }] }),
          },
          start_wait_ms: 60_000,
          connect_timeout_ms: 30_000,
          restart_min_ms: 100,
          restart_max_ms: 500,
        },
      },
      logger: log.logger,
    });
    url = gateway.url;
  }, 90_000);
  afterAll(async () => {
    await gateway?.close();
    rmSync(base, { recursive: true, force: true });
  });

  const status = async () =>
    Object.fromEntries(((await (await fetch(`${url}/mcp-servers`)).json()).servers as any[]).map((s) => [s.id, s]));
  const pid = async (tool: string) => (await postJson(`${url}/tool/call`, callBody(tool, {}))).json.data;

  it(isRoot
    ? 'says what is wrong and how to fix it, then starts once the path is traversable'
    : 'starts them (no uid change without root)', async () => {
    expect(await pid('unconfined_pid')).toMatchObject({ success: true });
    if (!isRoot) {
      const s = await waitFor(
        'the sandboxed servers to be ready',
        async () => {
          const x = await status();
          return ['locked', 'linked', 'data', 'writer'].every((id) => x[id].state === 'ready') ? x : undefined;
        },
        30_000,
      );
      expect(s.locked.sandboxed).toBe(true);
      expect((await pid('locked_pid')).success).toBe(true);
      return;
    }
    const s = await status();
    expect(s.locked).toMatchObject({ state: 'failed', sandboxed: false, tools: [] });
    expect(s.locked.last_error).toBe(
      `the sandbox user (uid 65534) cannot reach args[0] "${join(locked, 'server.mjs')}": "${locked}" is not searchable by others. ` +
        `Make the path traversable (chmod o+x "${locked}"), or install the server where other users can read it ` +
        '(and list that in mcp.servers.locked.mounts if it is not found from the command), or set mcp.servers.locked.sandbox: false to run it unconfined',
    );
    // Reached through a symlink: the locked directory is not in the config, so it is not named.
    expect(s.linked.state).toBe('failed');
    expect(s.linked.last_error).toMatch(
      /^the sandbox user \(uid 65534\) cannot reach args\[0\] "[^"]+\/public\/server\.mjs": a directory above its install directory is not searchable by others\. Make the path traversable \(chmod o\+x on each directory above it\)/,
    );
    expect(s.linked.last_error).not.toContain(locked);
    expect(s.linked.last_error).toMatch(/sandbox: false/);
    // A data directory it cannot reach: the fix is to put it elsewhere, not to reinstall the server.
    expect(s.data).toMatchObject({ state: 'failed', tools: [] });
    expect(s.data.last_error).toBe(
      `the sandbox user (uid 65534) cannot reach its data directory: "${locked}" is not searchable by others. ` +
        `Make the path traversable (chmod o+x "${locked}"), or set mcp.servers.data.data_dir to a directory other users can enter, ` +
        'or set mcp.servers.data.sandbox: false to run it unconfined',
    );
    expect(s.writer).toMatchObject({ state: 'failed', tools: [] });
    expect(s.writer.last_error).toBe(
      `mounts[0] is rw: true, but the sandbox user (uid 65534) cannot write it: make it that user's ` +
        `(chown 65534:65534 "${join(base, 'shared')}"), or drop rw from mcp.servers.writer.mounts`,
    );
    // The log says the same, with the server id.
    const logged = log.records.find((l) => l.mcp_server === 'locked' && l.level === 40 && /cannot reach/.test(l.msg));
    expect(logged?.error).toBe(s.locked.last_error);

    // The fix the message gives works: make the checkout traversable, and both come up at their next retry.
    chmodSync(locked, 0o711);
    chownSync(join(base, 'shared'), 65534, 65534);
    const after = await waitFor(
      'the sandboxed servers to be ready',
      async () => {
        const x = await status();
        return ['locked', 'linked', 'data', 'writer'].every((id) => x[id].state === 'ready') ? x : undefined;
      },
      30_000,
    );
    expect(after.locked).toMatchObject({ sandboxed: true, last_error: null });
    expect(after.writer).toMatchObject({ sandboxed: true, last_error: null });
    const jailed = await pid('locked_pid');
    expect(jailed.success).toBe(true);
    // In its own PID namespace: not the host pid of the unconfined copy.
    expect(Number(jailed.data.text)).toBeLessThan(100);
  }, 60_000);
});

describe('a sandboxed MCP server started with npx, without network: true', () => {
  it('times out at start, and the error says why (no network for the download npx makes) and what to do', async () => {
    const gateway = await startGateway({
      config: {
        mcp: {
          servers: {
            everything: {
              command: 'npx',
              args: ['-y', '@modelcontextprotocol/server-everything', 'stdio'],
              sandbox: true,
            },
          },
          start_wait_ms: 30_000,
          connect_timeout_ms: 5000,
          restart_min_ms: 60_000,
        },
      },
    });
    try {
      const s = await waitFor(
        'the start to fail',
        async () => {
          const x = ((await (await fetch(`${gateway.url}/mcp-servers`)).json()).servers as any[])[0];
          return x.state === 'failed' ? x : undefined;
        },
        30_000,
      );
      expect(s.sandboxed).toBe(true);
      expect(s.last_error).toContain(
        '; its command is npx, which downloads the package first, and the sandbox has no network: set mcp.servers.everything.network: true, ' +
          'or install the package (npm install) and give the path of its bin as command',
      );
    } finally {
      await gateway.close();
    }
  }, 60_000);
});
