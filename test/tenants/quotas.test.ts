/**
 * Quotas per principal workspace (issue 57): tools.fs.max_workspace_bytes applies to each workspace on its own, a
 * static token's quota_bytes and a JWT rule's quota_bytes override it; GET /admin/workspaces lists the workspaces with
 * their usage (admins only), DELETE removes one; tools.fs.expire_idle_days removes those no call used. Real gateway,
 * real tokens, a real identity provider on 127.0.0.1.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workspaceDirName } from '../../src/tools/fs/principal-dir.js';
import { Workspaces } from '../../src/tools/fs/workspaces.js';
import { TestIdp } from '../helpers/idp.js';
import { postJson, startGateway, type TestGateway } from '../helpers/server.js';
import { sha256 } from '../security/helpers.js';

const KiB = 1024;
const SMALL = 'small-quota-token-0123456789abcdef';
const BIG = 'big-quota-token-0123456789abcdef';
const ADMIN = 'admin-token-0123456789abcdef01234';
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

const idp = new TestIdp();
let base: string;
let gw: TestGateway;

beforeAll(async () => {
  await idp.start();
  base = mkdtempSync(join(tmpdir(), 'a2e-quotas-'));
  chmodSync(base, 0o755);
  gw = await startGateway({
    config: {
      auth: {
        tokens: [
          { name: 'small', token_sha256: sha256(SMALL) },
          { name: 'big', token_sha256: sha256(BIG), quota_bytes: 512 * KiB },
          { name: 'root', token_sha256: sha256(ADMIN), admin: true },
        ],
        jwt: {
          issuer: idp.issuer,
          audience: idp.audience,
          rules: [
            { when: { scope: 'tools' }, allow: ['*'] },
            { when: { plan: 'pro' }, quota_bytes: 256 * KiB },
            { when: { plan: 'pro', team: 'data' }, quota_bytes: 1024 * KiB },
          ],
        },
      },
      sessions: { required: false },
      tools: { fs: { root: join(base, '{principal}'), max_workspace_bytes: 64 * KiB } },
    },
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await idp.close();
  rmSync(base, { recursive: true, force: true });
});

async function write(token: string, path: string, bytes: number): Promise<any> {
  const r = await postJson(
    `${gw.url}/tool/call`,
    { type: 'tool/call/req', tool_name: 'write_file', arguments: { path, content: 'x'.repeat(bytes) } },
    bearer(token),
  );
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return r.json.data;
}

describe('quotas per principal', () => {
  it("tools.fs.max_workspace_bytes applies to each workspace on its own; a token's quota_bytes overrides it", async () => {
    const refused = await write(SMALL, 'big.bin', 100 * KiB);
    expect(refused.success).toBe(false);
    expect(refused.error).toMatch(/over its quota of 65536 bytes/);
    expect((await write(BIG, 'big.bin', 100 * KiB)).success).toBe(true);
    expect((await write(BIG, 'more.bin', 300 * KiB)).success).toBe(true);
    // The big workspace's 400 KiB count nothing against the small one.
    expect((await write(SMALL, 'fits.bin', 40 * KiB)).success).toBe(true);
    const over = await write(BIG, 'over.bin', 200 * KiB);
    expect(over.error).toMatch(/over its quota of 524288 bytes/);
  });

  it('a JWT principal gets the largest quota_bytes of the rules its token matches', async () => {
    const pro = await idp.sign({ sub: 'pro-user', scope: 'tools', plan: 'pro' });
    const data = await idp.sign({ sub: 'data-user', scope: 'tools', plan: 'pro', team: 'data' });
    const free = await idp.sign({ sub: 'free-user', scope: 'tools' });
    expect((await write(free, 'a.bin', 100 * KiB)).error).toMatch(/quota of 65536 bytes/);
    expect((await write(pro, 'a.bin', 200 * KiB)).success).toBe(true);
    expect((await write(pro, 'b.bin', 100 * KiB)).error).toMatch(/quota of 262144 bytes/);
    expect((await write(data, 'a.bin', 600 * KiB)).success).toBe(true);
  });

  it('JWT subjects full of path tricks get their own safe directories', async () => {
    for (const sub of ['../../etc', '/', 'a\u0000b']) {
      const token = await idp.sign({ sub, scope: 'tools' });
      const w = await write(token, 'mine.txt', 10);
      expect(w.success, JSON.stringify(w)).toBe(true);
      expect(existsSync(join(base, workspaceDirName(sub), 'mine.txt'))).toBe(true);
    }
    expect(existsSync(join(base, '..', 'etc', 'mine.txt'))).toBe(false);
  });
});

describe('GET and DELETE /admin/workspaces', () => {
  it('only an admin token may list or delete', async () => {
    const list = await fetch(`${gw.url}/admin/workspaces`, { headers: bearer(SMALL) });
    expect(list.status).toBe(403);
    const del = await fetch(`${gw.url}/admin/workspaces/${workspaceDirName('big')}`, {
      method: 'DELETE',
      headers: bearer(SMALL),
    });
    expect(del.status).toBe(403);
    expect(existsSync(join(base, workspaceDirName('big')))).toBe(true);
  });

  it('lists each workspace with its usage and quota', async () => {
    const r = await fetch(`${gw.url}/admin/workspaces`, { headers: bearer(ADMIN) });
    expect(r.status).toBe(200);
    const body = (await r.json()) as {
      per_principal: boolean;
      workspaces: {
        name: string;
        principal: string | null;
        bytes: number;
        quota_bytes: number | null;
        last_used: string;
      }[];
    };
    expect(body.per_principal).toBe(true);
    const big = body.workspaces.find((w) => w.name === workspaceDirName('big'));
    expect(big).toMatchObject({ principal: 'big', quota_bytes: 512 * KiB });
    expect(big!.bytes).toBeGreaterThanOrEqual(400 * KiB);
    expect(Date.now() - Date.parse(big!.last_used)).toBeLessThan(5 * 60_000);
    const small = body.workspaces.find((w) => w.name === workspaceDirName('small'));
    expect(small).toMatchObject({ principal: 'small', quota_bytes: 64 * KiB });
    expect(small!.bytes).toBeGreaterThanOrEqual(40 * KiB);
    expect(small!.bytes).toBeLessThan(64 * KiB);
  });

  it('deletes one workspace, whose principal then starts with an empty one', async () => {
    const name = workspaceDirName('big');
    const r = await fetch(`${gw.url}/admin/workspaces/${name}`, { method: 'DELETE', headers: bearer(ADMIN) });
    expect(r.status, await r.clone().text()).toBe(200);
    expect(await r.json()).toEqual({ deleted: name });
    expect(existsSync(join(base, name))).toBe(false);
    const listed = await postJson(
      `${gw.url}/tool/call`,
      { type: 'tool/call/req', tool_name: 'list_dir', arguments: { path: '.' } },
      bearer(BIG),
    );
    expect(listed.json.data.success, JSON.stringify(listed.json)).toBe(true);
    expect(JSON.stringify(listed.json.data.data)).not.toContain('big.bin');
    expect((await write(BIG, 'again.bin', 10)).success).toBe(true);
    expect(existsSync(join(base, name, 'again.bin'))).toBe(true);
    // The other workspaces are untouched.
    expect(existsSync(join(base, workspaceDirName('small'), 'fits.bin'))).toBe(true);
  });

  it('refuses names that are not a workspace: 404, nothing removed', async () => {
    for (const name of ['..', 'nope-0123456789abcdef', '%2E%2E', encodeURIComponent('../quotas')]) {
      const r = await fetch(`${gw.url}/admin/workspaces/${name}`, { method: 'DELETE', headers: bearer(ADMIN) });
      expect([404], `${name}: ${r.status}`).toContain(r.status);
    }
    expect(existsSync(base)).toBe(true);
    expect(existsSync(join(base, workspaceDirName('small')))).toBe(true);
  });
});

describe('tools.fs.expire_idle_days', () => {
  it('deletes the workspaces no call used for that long, and keeps the others', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'a2e-expiry-'));
    const ws = new Workspaces(join(dir, '{principal}'), () => null, 7);
    await ws.init();
    try {
      const idle = await ws.of('idle');
      const busy = await ws.of('busy');
      const old = new Date(Date.now() - 8 * 24 * 3600 * 1000);
      utimesSync(idle.files.root, old, old);
      const sixDays = new Date(Date.now() - 6 * 24 * 3600 * 1000);
      utimesSync(busy.files.root, sixDays, sixDays);
      expect(await ws.expireIdle()).toEqual([workspaceDirName('idle')]);
      expect(existsSync(idle.files.root)).toBe(false);
      expect(existsSync(busy.files.root)).toBe(true);
      // The expired principal's next call gets a new, empty workspace.
      const again = await ws.of('idle');
      expect(existsSync(again.files.root)).toBe(true);
    } finally {
      await ws.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is off by default', () => {
    const ws = new Workspaces('/nonexistent/{principal}', () => null);
    return expect(ws.expireIdle()).resolves.toEqual([]);
  });
});

describe("a principal's quota in the privilege-separated worker", () => {
  let worker: TestGateway;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'a2e-quota-worker-'));
    chmodSync(dir, 0o755);
    worker = await startGateway({
      config: {
        auth: {
          jwt: {
            issuer: idp.issuer,
            audience: idp.audience,
            rules: [
              { when: { scope: 'tools' }, allow: ['*'] },
              { when: { plan: 'pro' }, quota_bytes: 256 * KiB },
            ],
          },
        },
        sessions: { required: false },
        // The shell hands each workspace to the sandbox user, so a root gateway runs the file tools in a worker as that user.
        tools: { fs: { root: join(dir, '{principal}'), max_workspace_bytes: 64 * KiB }, shell: { enabled: true } },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await worker?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("follows the principal's latest token: a JWT with other claims changes it for the next write", async () => {
    const writeAs = async (token: string, path: string, bytes: number) =>
      (
        await postJson(
          `${worker.url}/tool/call`,
          { type: 'tool/call/req', tool_name: 'write_file', arguments: { path, content: 'x'.repeat(bytes) } },
          bearer(token),
        )
      ).json.data;
    const pro = await idp.sign({ sub: 'changing', scope: 'tools', plan: 'pro' });
    expect((await writeAs(pro, 'a.bin', 100 * KiB)).success).toBe(true);
    if (process.getuid?.() === 0) expect(statSync(join(dir, workspaceDirName('changing'))).uid).not.toBe(0); // the worker's case
    const free = await idp.sign({ sub: 'changing', scope: 'tools' });
    expect((await writeAs(free, 'b.bin', 10 * KiB)).error).toMatch(/over its quota of 65536 bytes/);
    expect((await writeAs(pro, 'b.bin', 10 * KiB)).success).toBe(true);
  });
});
