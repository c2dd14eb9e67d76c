/**
 * The file tools' fast paths (a read buffer sized by the file, a short read
 * taken as the end, the opened file's location read synchronously from /proc,
 * a flat listing's sizes read together) must answer exactly what a plain read
 * of the file says, at every size around the buffer's edges, and refuse the
 * same escapes.
 */
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

let tmp: string;
let root: string;
let gw: TestGateway;
const MAX_READ = 256 * 1024;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'a2e-fs-fast-'));
  root = join(tmp, 'ws');
  await mkdir(root);
  await writeFile(join(tmp, 'outside.txt'), 'outside secret\n');
  gw = await startGateway({ config: { tools: { fs: { root, max_read_bytes: MAX_READ } } } });
});
afterAll(async () => {
  await gw?.close();
  await rm(tmp, { recursive: true, force: true });
});

async function call(tool: string, args: Record<string, unknown>) {
  const r = await postJson(`${gw.url}/tool/call`, callBody(tool, args, { timeout: 20 }));
  expect(r.status).toBe(200);
  return r.json.data as { success: boolean; data: any; error: string | null };
}

/** Lines of `n` bytes in all (short lines, so line counts matter too). */
function text(n: number): string {
  let s = '';
  for (let i = 0; s.length < n; i++) s += `line ${i} ${'x'.repeat(i % 50)}\n`;
  return s.slice(0, n);
}

describe('read_file', () => {
  it('reads files of every size around the buffer edges exactly (utf8 and base64)', async () => {
    for (const size of [0, 1, 12, 4095, 4096, 65_535, 65_536, 65_537, 200_000]) {
      const content = text(size);
      await writeFile(join(root, `f${size}.txt`), content);
      const r = await call('read_file', { path: `f${size}.txt` });
      expect(r.error, `size ${size}`).toBeNull();
      expect(r.data.content).toBe(content);
      expect(r.data.size).toBe(size);
      expect(r.data.truncated).toBe(false);
      expect(r.data.count).toBe(content.split('\n').length - (content.endsWith('\n') || content === '' ? 1 : 0));
      const b = await call('read_file', { path: `f${size}.txt`, encoding: 'base64' });
      expect(Buffer.from(b.data.content, 'base64').equals(await readFile(join(root, `f${size}.txt`)))).toBe(true);
    }
  });

  it('never shows bytes that were not read (uninitialised buffers)', async () => {
    await writeFile(join(root, 'tiny.txt'), 'ab');
    for (let i = 0; i < 20; i++) {
      const r = await call('read_file', { path: 'tiny.txt' });
      expect(r.data.content).toBe('ab');
      const b = await call('read_file', { path: 'tiny.txt', encoding: 'base64', offset: 1 });
      expect(Buffer.from(b.data.content, 'base64').toString()).toBe('b');
    }
  });

  it('offset, limit and the byte cap still cut at the same places', async () => {
    const content = text(300_000);
    await writeFile(join(root, 'big.txt'), content);
    const r = await call('read_file', { path: 'big.txt' });
    expect(r.data.truncated).toBe(true);
    expect(content.startsWith(r.data.content)).toBe(true);
    expect(r.data.content.endsWith('\n')).toBe(true);
    const lines = content.split('\n');
    const mid = await call('read_file', { path: 'big.txt', offset: 1000, limit: 3 });
    expect(mid.data.content).toBe(`${lines.slice(999, 1002).join('\n')}\n`);
    expect(mid.data.next_offset).toBe(1003);
  });

  it('a symlink inside is read; one out of the root, and a path escaping it, are refused without their content', async () => {
    await writeFile(join(root, 'target.txt'), 'inside\n');
    await symlink('target.txt', join(root, 'link-in.txt'));
    await symlink(join(tmp, 'outside.txt'), join(root, 'link-out.txt'));
    expect((await call('read_file', { path: 'link-in.txt' })).data.content).toBe('inside\n');
    for (const path of ['link-out.txt', '../outside.txt', join(tmp, 'outside.txt')]) {
      const r = await call('read_file', { path });
      expect(r.success, path).toBe(false);
      expect(r.error).toMatch(/escapes the workspace root/);
      expect(JSON.stringify(r)).not.toContain('outside secret');
    }
  });
});

describe('list_dir', () => {
  it('a flat listing with sizes gives every file its size, in name order', async () => {
    await mkdir(join(root, 'many'));
    const sizes = new Map<string, number>();
    for (let i = 0; i < 300; i++) {
      const name = `e${String(i).padStart(3, '0')}.txt`;
      await writeFile(join(root, 'many', name), 'y'.repeat(i));
      sizes.set(`many/${name}`, i);
    }
    await mkdir(join(root, 'many', 'sub'));
    await symlink('e001.txt', join(root, 'many', 'zz-link'));
    const r = await call('list_dir', { path: 'many', sizes: true });
    expect(r.error).toBeNull();
    const entries = r.data.entries as { path: string; type: string; size: number | null }[];
    expect(entries).toHaveLength(302);
    expect(entries.map((e) => e.path)).toEqual([...entries.map((e) => e.path)].sort());
    for (const e of entries) {
      if (e.type === 'file') expect(e.size, e.path).toBe(sizes.get(e.path));
      else expect(e.size).toBeNull();
    }
    expect(entries.find((e) => e.path === 'many/zz-link')?.type).toBe('symlink');
    const limited = await call('list_dir', { path: 'many', limit: 5, sizes: true });
    expect(limited.data.entries.map((e: { size: number }) => e.size)).toEqual([0, 1, 2, 3, 4]);
    expect(limited.data.truncated).toBe(true);
  });
});
