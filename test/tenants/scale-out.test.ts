/**
 * Per-principal workspaces on several instances (issue 57, docs/tenants.md): two gateways sharing a real Redis
 * (store.kind redis) and one directory for the workspaces (the shared filesystem an operator provides) put the same
 * principal in the same workspace, whichever instance serves it, and keep principals apart on both. A workspace
 * deleted through one instance is found gone by the other, which starts the principal afresh.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workspaceDirName } from '../../src/tools/fs/principal-dir.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';
import { sha256 } from '../security/helpers.js';
import { waitFor } from '../tools/procs.js';

const A = 'scale-a-token-0123456789abcdef01234';
const B = 'scale-b-token-fedcba9876543210fedcb';
const ADMIN = 'scale-admin-token-0123456789abcdef';
const as = (token: string) => ({ Authorization: `Bearer ${token}` });

let redis: RedisServer;
let base: string;
let one: TestGateway;
let two: TestGateway;

beforeAll(async () => {
  redis = await startRedis();
  base = mkdtempSync(join(tmpdir(), 'a2e-tenant-scale-'));
  chmodSync(base, 0o755);
  const config = {
    auth: {
      tokens: [
        { name: 'a', token_sha256: sha256(A) },
        { name: 'b', token_sha256: sha256(B) },
        { name: 'ops', token_sha256: sha256(ADMIN), admin: true },
      ],
    },
    sessions: { required: false },
    store: { kind: 'redis' as const, url: redis.url, prefix: 'tenants:' },
    tools: { fs: { root: join(base, 'ws', '{principal}') } },
  };
  one = await startGateway({ config });
  two = await startGateway({ config });
}, 60_000);

afterAll(async () => {
  await one?.close();
  await two?.close();
  await redis?.dispose();
  rmSync(base, { recursive: true, force: true });
});

const tool = async (gw: TestGateway, token: string, name: string, args: Record<string, unknown>) =>
  (await postJson(`${gw.url}/tool/call`, callBody(name, args), as(token))).json.data;

describe('per-principal workspaces on two instances sharing Redis and a directory', () => {
  it('the same principal lands in the same workspace on every instance; the other principal in neither', async () => {
    expect(
      (await tool(one, A, 'write_file', { path: 'from-one.txt', content: 'written on instance one' })).success,
    ).toBe(true);
    const read = await tool(two, A, 'read_file', { path: 'from-one.txt' });
    expect(read.data?.content, JSON.stringify(read)).toBe('written on instance one');
    expect((await tool(two, A, 'write_file', { path: 'from-two.txt', content: 'two' })).success).toBe(true);
    const listed = JSON.stringify((await tool(one, A, 'list_dir', { path: '.' })).data);
    expect(listed).toContain('from-two.txt');
    for (const gw of [one, two]) {
      const other = await tool(gw, B, 'read_file', { path: 'from-one.txt' });
      expect(other.success).toBe(false);
      expect(JSON.stringify(other)).not.toContain('written on instance one');
    }
  });

  it('a workspace deleted through one instance is found gone by the other, which starts the principal afresh', async () => {
    const name = workspaceDirName('a');
    const del = await fetch(`${one.url}/admin/workspaces/${name}`, { method: 'DELETE', headers: as(ADMIN) });
    expect(del.status).toBe(200);
    expect(existsSync(join(base, 'ws', name))).toBe(false);
    // Instance two held it open: within its re-check interval it opens the principal's new one.
    await waitFor(
      'instance two to use the new workspace',
      async () => {
        const w = await tool(two, A, 'write_file', { path: 'after.txt', content: 'after' });
        return w.success && existsSync(join(base, 'ws', name, 'after.txt')) ? true : undefined;
      },
      30_000,
    );
    const listed = JSON.stringify((await tool(two, A, 'list_dir', { path: '.' })).data);
    expect(listed).not.toContain('from-one.txt');
  }, 60_000);
});
