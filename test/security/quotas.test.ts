/**
 * Disk and memory bounds around run_command and the file tools, over real
 * HTTP with the real sandbox: the sandbox's /tmp is a tmpfs of
 * tools.shell.tmp_mb, the workspace holds at most tools.fs.max_workspace_bytes
 * (write_file refuses to cross it; a command that overshoots is reported and
 * the workspace is then read-and-delete only until space is freed), and
 * commands cannot make nested user namespaces.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const MiB = 1024 * 1024;
const QUOTA = 2 * MiB;
/** A file of 720 KiB: its base64 fits the default body and string limits. */
const PART = 720 * 1024;
let base: string;
let ws: string;
let gw: TestGateway;

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'a2e-quotas-'));
  chmodSync(base, 0o755); // the sandbox user must reach the workspace
  ws = join(base, 'ws');
  gw = await startGateway({
    config: {
      tools: {
        fs: { root: ws, max_workspace_bytes: QUOTA },
        shell: { enabled: true, tmp_mb: 8 },
        eval: { enabled: false },
        http: { enabled: false },
      },
    },
  });
});

afterAll(async () => {
  await gw?.close();
  rmSync(base, { recursive: true, force: true });
});

async function call(tool: string, args: Record<string, unknown>) {
  const r = await postJson(`${gw.url}/tool/call`, callBody(tool, args, { timeout: 60 }));
  expect(r.status).toBe(200);
  return r.json.data as { success: boolean; error: string | null; data: any };
}

const sh = (script: string) => call('run_command', { argv: ['sh', '-c', script] });

describe('the sandbox', () => {
  it('has a /tmp of tools.shell.tmp_mb: writing past it fails with ENOSPC', async () => {
    const df = await sh('df -k /tmp | tail -1');
    expect(df.success).toBe(true);
    expect(df.data.stdout).toMatch(/^tmpfs\s+8192\s/);
    // 1 MiB files (each within the file size cap), 16 MiB in all: the tmpfs fills at 8 MiB.
    const fill = await sh(
      'for i in $(seq 1 16); do head -c 1048576 /dev/zero > /tmp/f$i || break; done; df -k /tmp | tail -1',
    );
    expect(fill.success).toBe(true);
    expect(fill.data.stderr).toMatch(/No space left on device/);
    expect(fill.data.stdout).toMatch(/^tmpfs\s+8192\s+8192\s+0\s/);
  });

  it('refuses nested user namespaces (unshare -Ur)', async () => {
    const r = await call('run_command', { argv: ['unshare', '-Ur', 'id'] });
    expect(r.success).toBe(false);
    expect(r.data.stderr).toMatch(/unshare: unshare failed: No space left on device/); // --disable-userns: no namespace left to make
    expect(r.data.stdout).not.toMatch(/uid=0/);
  });
});

describe('the workspace quota (tools.fs.max_workspace_bytes)', () => {
  it('write_file refuses to cross it, naming the limit and the key; nothing is written', async () => {
    const part = (bytes = PART) => Buffer.alloc(bytes).toString('base64');
    for (const name of ['one.bin', 'two.bin']) {
      expect((await call('write_file', { path: name, content: part(), encoding: 'base64' })).success).toBe(true);
    }
    const over = await call('write_file', { path: 'three.bin', content: part(), encoding: 'base64' });
    expect(over.success).toBe(false);
    expect(over.error).toMatch(
      /would take the workspace to \d+ bytes, over its quota of 2097152 bytes \(tools\.fs\.max_workspace_bytes; \d+ bytes in use\)/,
    );
    expect(existsSync(join(ws, 'three.bin'))).toBe(false);
    // Replacing a file counts only the difference.
    expect(
      (await call('write_file', { path: 'one.bin', content: part(PART + 1000), encoding: 'base64' })).success,
    ).toBe(true);
    expect((await sh('rm one.bin two.bin')).success).toBe(true);
  });

  it('a single command cannot write one file past what is left (RLIMIT_FSIZE)', async () => {
    const r = await sh('head -c 8388608 /dev/zero > big.bin');
    expect(r.success).toBe(false);
    expect(statSync(join(ws, 'big.bin')).size).toBeLessThanOrEqual(QUOTA);
    expect((await sh('rm big.bin')).success).toBe(true);
  });

  it('a command that overshoots is reported; then writes are refused until space is freed', async () => {
    const over = await sh('for i in 1 2 3 4 5 6; do head -c 1000000 /dev/zero > f$i.bin; done');
    expect(over.success).toBe(false);
    expect(over.error).toMatch(
      /command "sh" ran \(exit code 0\), but the workspace now holds \d+ bytes, over its quota of 2097152 bytes \(tools\.fs\.max_workspace_bytes\)/,
    );
    const write = await call('write_file', { path: 'after.txt', content: 'x' });
    expect(write.success).toBe(false);
    expect(write.error).toMatch(/over its quota of 2097152 bytes \(tools\.fs\.max_workspace_bytes/);
    expect(existsSync(join(ws, 'after.txt'))).toBe(false);
    // Commands may read and delete, not write.
    const grow = await sh('echo more > g.txt');
    expect(grow.success).toBe(false);
    expect(grow.error).toMatch(/tools\.fs\.max_workspace_bytes/);
    expect(statSync(join(ws, 'g.txt')).size).toBe(0);
    expect((await sh('cat f1.bin | wc -c')).error).toMatch(/over its quota/); // still over: said on every call
    const freed = await sh('rm f1.bin f2.bin f3.bin f4.bin f5.bin f6.bin g.txt');
    expect(freed.success).toBe(true);
    expect((await call('write_file', { path: 'after.txt', content: 'x' })).success).toBe(true);
  });
});
