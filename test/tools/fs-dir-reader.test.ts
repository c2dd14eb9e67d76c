/**
 * list_dir reads each directory whole (names, types, file sizes) in one trip
 * to a helper thread (src/tools/fs/confinement/dir-reader.ts). Checked against what the
 * file system says, in the gateway and in the privilege-separated worker (a
 * root gateway with a workspace owned by another user): every entry of a large
 * directory with the right type and size, symlinks reported and never followed
 * (not sized by their target, a symlinked directory not entered), a FIFO listed
 * without blocking, and nothing outside the workspace shown. Last, answers through
 * the worker (JSON messages) arrive exactly as the tools gave them.
 */
import { execFileSync } from 'node:child_process';
import {
  chownSync,
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDirectory } from '../../src/tools/fs/confinement/dir-reader.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';
import { childPids } from '../security/helpers.js';

const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;
const FILES = 2500;

interface Entry {
  path: string;
  type: string;
  size: number | null;
}

/** This process's children whose command line names the fs worker. */
const fsWorkers = () =>
  childPids().filter((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('worker-main.js'));

describe.each([
  { separation: true, what: 'in the privilege-separated worker (root gateway, workspace owned by nobody)' },
  { separation: false, what: 'in the gateway itself' },
])('list_dir through the directory reader, $what', ({ separation }) => {
  let tmp: string;
  let root: string;
  let gw: TestGateway;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'a2e-dir-reader-'));
    execFileSync('chmod', ['0755', tmp]);
    root = join(tmp, 'ws');
    mkdirSync(join(root, 'big'), { recursive: true });
    writeFileSync(join(tmp, 'outside.txt'), 'x'.repeat(4321));
    mkdirSync(join(tmp, 'outside-dir'));
    writeFileSync(join(tmp, 'outside-dir', 'secret.txt'), 'outside secret');
    for (let i = 0; i < FILES; i++)
      writeFileSync(join(root, 'big', `f${String(i).padStart(5, '0')}`), 'z'.repeat(i % 97));
    mkdirSync(join(root, 'big', 'sub'));
    writeFileSync(join(root, 'big', 'sub', 'inner.txt'), 'inner');
    symlinkSync('f00005', join(root, 'big', 'link-file'));
    symlinkSync('sub', join(root, 'big', 'link-dir'));
    symlinkSync(join(tmp, 'outside.txt'), join(root, 'big', 'link-out'));
    symlinkSync(join(tmp, 'outside-dir'), join(root, 'big', 'link-out-dir'));
    symlinkSync('missing', join(root, 'big', 'link-dangling'));
    execFileSync('mkfifo', [join(root, 'big', 'pipe')]);
    // A workspace owned by another user: a root gateway then runs the file tools as that user, in the worker.
    if (separation && isRoot) chownSync(root, NOBODY, NOBODY);
    gw = await startGateway({ config: { tools: { fs: { root, privilege_separation: separation } } } });
  });
  afterAll(async () => {
    await gw?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  const list = async (args: Record<string, unknown>) => {
    const r = await postJson(`${gw.url}/tool/call`, callBody('list_dir', args, { timeout: 60 }));
    expect(r.status).toBe(200);
    return r.json.data as { success: boolean; data: { entries: Entry[]; truncated: boolean }; error: string | null };
  };

  it('lists every entry of a large directory with its type and size, as lstat says, in name order', async () => {
    const r = await list({ path: 'big', limit: 10_000, sizes: true });
    expect(r.error).toBeNull();
    const names = readdirSync(join(root, 'big')).sort();
    expect(r.data.entries.map((e) => e.path)).toEqual(names.map((n) => `big/${n}`));
    expect(r.data.truncated).toBe(false);
    for (const e of r.data.entries) {
      const st = lstatSync(join(root, e.path));
      const type = st.isFile() ? 'file' : st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'symlink' : 'other';
      expect(e.type, e.path).toBe(type);
      expect(e.size, e.path).toBe(type === 'file' ? st.size : null);
    }
    const byName = new Map(r.data.entries.map((e) => [e.path, e]));
    for (const link of ['link-file', 'link-dir', 'link-out', 'link-out-dir', 'link-dangling']) {
      expect(byName.get(`big/${link}`), link).toEqual({ path: `big/${link}`, type: 'symlink', size: null });
    }
    expect(byName.get('big/pipe')).toEqual({ path: 'big/pipe', type: 'other', size: null });
    expect(JSON.stringify(r)).not.toContain('4321');
    // Without sizes: the same entries, types and order, and no size at all.
    const plain = await list({ path: 'big', limit: 10_000 });
    expect(plain.data.entries).toEqual(r.data.entries.map(({ path, type }) => ({ path, type })));
    if (separation && isRoot) {
      const workers = fsWorkers();
      expect(workers).toHaveLength(1);
      expect(readFileSync(`/proc/${workers[0]}/status`, 'utf8')).toMatch(/^Uid:\t65534\t65534\t65534\t65534$/m);
    } else {
      expect(fsWorkers()).toEqual([]);
    }
  });

  it('a recursive listing enters real subdirectories only, never a symlinked one (inside or out)', async () => {
    const r = await list({ path: 'big', recursive: true, limit: 10_000, sizes: true });
    expect(r.error).toBeNull();
    const paths = r.data.entries.map((e) => e.path);
    expect(paths).toContain('big/sub/inner.txt');
    expect(r.data.entries.find((e) => e.path === 'big/sub/inner.txt')).toEqual({
      path: 'big/sub/inner.txt',
      type: 'file',
      size: 5,
    });
    expect(paths.filter((p) => p.startsWith('big/link-dir/') || p.startsWith('big/link-out-dir/'))).toEqual([]);
    expect(JSON.stringify(r)).not.toContain('secret');
    expect(paths).toHaveLength(FILES + 7 + 1);
  });

  it('limit cuts the listing and says so; concurrent listings each get their own directory', async () => {
    const limited = await list({ path: 'big', limit: 3, sizes: true });
    expect(limited.data.entries).toEqual([
      { path: 'big/f00000', type: 'file', size: 0 },
      { path: 'big/f00001', type: 'file', size: 1 },
      { path: 'big/f00002', type: 'file', size: 2 },
    ]);
    expect(limited.data.truncated).toBe(true);
    const [a, b, c] = await Promise.all([
      list({ path: 'big', limit: 10_000 }),
      list({ path: 'big/sub', sizes: true }),
      list({ path: '.' }),
    ]);
    expect(a.data.entries).toHaveLength(FILES + 7);
    expect(b.data.entries).toEqual([{ path: 'big/sub/inner.txt', type: 'file', size: 5 }]);
    expect(c.data.entries).toEqual([{ path: 'big', type: 'dir' }]);
  });

  it('a call stopped at its timeout stops its work where it runs (the worker is told through ctx.onStop)', async () => {
    writeFileSync(join(root, 'redos.txt'), `${'a'.repeat(64)}!\n`);
    if (separation && isRoot) chownSync(join(root, 'redos.txt'), NOBODY, NOBODY);
    // Where the file tools run: the worker process (its threads; started by a first call), or this process (the gateway).
    await list({ path: 'big/sub' });
    const [worker] = separation && isRoot ? fsWorkers() : [];
    if (separation && isRoot) expect(worker).toBeDefined();
    const threads = () => readdirSync(`/proc/${worker ?? 'self'}/task`).length;
    const baseline = threads();
    const r = await postJson(
      `${gw.url}/tool/call`,
      callBody('grep', { pattern: '(a+)+$', path: 'redos.txt' }, { timeout: 2 }),
    );
    expect(r.json.data.success).toBe(false);
    expect(r.json.data.error).toContain('timed out after 2 s');
    // The regex thread that was backtracking is gone, not left spinning.
    for (const until = performance.now() + 10_000; threads() > baseline && performance.now() < until; )
      await new Promise((res) => setTimeout(res, 20));
    expect(threads()).toBeLessThanOrEqual(baseline);
    if (worker !== undefined) expect(fsWorkers()).toEqual([worker]);
    // And the next call is answered at once.
    expect((await list({ path: 'big/sub' })).data.entries).toEqual([{ path: 'big/sub/inner.txt', type: 'file' }]);
  });
});

describe('readDirectory', () => {
  it('rejects with the errno code when the descriptor is not an open directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'a2e-dir-reader-fd-'));
    try {
      writeFileSync(join(dir, 'a'), 'abc');
      const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
      try {
        const listing = await readDirectory(fd, true);
        expect(listing.names).toEqual(['a']);
        expect(listing.types).toEqual(['file']);
        expect(Array.from(listing.sizes!)).toEqual([3]);
        const noSizes = await readDirectory(fd, false);
        expect(noSizes.sizes).toBeNull();
      } finally {
        closeSync(fd);
      }
      const file = openSync(join(dir, 'a'), 'r');
      try {
        await expect(readDirectory(file, true)).rejects.toMatchObject({ code: 'ENOTDIR' });
      } finally {
        closeSync(file);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the privilege-separated worker carries every answer exactly (messages as JSON)', () => {
  let tmp: string;
  let gw: TestGateway;
  const text = 'héllo wörld — ✓ 𝄞 "quoted" \\ back\\slash\ttab\r\nline2\n';
  const bytes = Buffer.from([0, 1, 2, 0xff, 0xfe, 10, 13, 0x80]);

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'a2e-fs-worker-json-'));
    execFileSync('chmod', ['0755', tmp]);
    const root = join(tmp, 'ws');
    mkdirSync(root);
    writeFileSync(join(root, 'text.txt'), text);
    writeFileSync(join(root, 'bin.dat'), bytes);
    if (isRoot) chownSync(root, NOBODY, NOBODY);
    gw = await startGateway({ config: { tools: { fs: { root } } } });
  });
  afterAll(async () => {
    await gw?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  const call = async (tool: string, args: Record<string, unknown>) =>
    (await postJson(`${gw.url}/tool/call`, callBody(tool, args))).json.data as {
      success: boolean;
      data: any;
      error: string | null;
    };

  it('text, bytes, a written file, and errors come back as the tools answered them', async () => {
    const t = await call('read_file', { path: 'text.txt' });
    expect(t.error).toBeNull();
    expect(t.data).toEqual({
      path: 'text.txt',
      encoding: 'utf8',
      content: text,
      size: Buffer.byteLength(text),
      offset: 1,
      count: 2,
      next_offset: null,
      truncated: false,
    });
    const b = await call('read_file', { path: 'bin.dat', encoding: 'base64' });
    expect(Buffer.from(b.data.content, 'base64').equals(bytes)).toBe(true);
    const w = await call('write_file', { path: 'new.txt', content: text });
    expect(w.error).toBeNull();
    expect((await call('read_file', { path: 'new.txt' })).data.content).toBe(text);
    const missing = await call('read_file', { path: 'nope.txt' });
    expect(missing.success).toBe(false);
    expect(missing.error).toBe(
      '"nope.txt" does not exist in the workspace; use list_dir or glob to find the right path',
    );
    if (isRoot) expect(fsWorkers()).toHaveLength(1);
  });
});
