/**
 * read_file's and list_dir's one-trip fast path (src/tools/fs/threads/sync-threads.ts,
 * Workspace.openAndRead / listDirect): it answers only for a path with no
 * symlink on it, opened by descriptors from the root; anything else (a
 * symlink anywhere on the path, something missing, a directory, a FIFO) is
 * left to the long way, which gives the same answers and errors as before.
 * The opened file's real location is still checked: a root descriptor that
 * leads outside the real root is refused. A FIFO is never read (and never
 * blocks); a descriptor left open for a large file is closed after the read.
 */
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataOf } from '../helpers/tool-data.js';
import { listDirTool } from '../../src/tools/fs/tools/list.js';
import { readFileTool } from '../../src/tools/fs/tools/read.js';
import { Workspace } from '../../src/tools/fs/confinement/workspace.js';

let tmp: string;
let root: string;
let ws: Workspace;
const signal = new AbortController().signal;
const READ = { position: 0, max: 64 * 1024, slack: 1, keepOpen: false };
const BIG = 200 * 1024 + 17;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'a2e-fs-sync-threads-'));
  root = join(tmp, 'ws');
  mkdirSync(join(root, 'a', 'b'), { recursive: true });
  writeFileSync(join(root, 'small.txt'), 'hello world\n');
  writeFileSync(join(root, 'a', 'b', 'deep.txt'), 'deep\n');
  writeFileSync(join(root, 'big.txt'), 'x'.repeat(BIG - 1) + '\n');
  symlinkSync('small.txt', join(root, 'link.txt'));
  symlinkSync('a', join(root, 'link-dir'));
  symlinkSync(join(tmp, 'outside.txt'), join(root, 'link-out.txt'));
  writeFileSync(join(tmp, 'outside.txt'), 'outside secret\n');
  mkdirSync(join(tmp, 'elsewhere'));
  writeFileSync(join(tmp, 'elsewhere', 'small.txt'), 'elsewhere secret\n');
  execFileSync('mkfifo', [join(root, 'pipe')]);
  ws = new Workspace(root);
  await ws.init();
});
afterAll(async () => {
  await ws?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('Workspace.openAndRead (the fast path)', () => {
  it('opens and reads a path with no symlink on it, from the root or nested, relative or absolute', async () => {
    for (const [input, shown, text] of [
      ['small.txt', 'small.txt', 'hello world\n'],
      ['./a/../small.txt', 'small.txt', 'hello world\n'],
      [join(root, 'small.txt'), 'small.txt', 'hello world\n'],
      ['a/b/deep.txt', 'a/b/deep.txt', 'deep\n'],
    ] as const) {
      const got = await ws.openAndRead(input, READ);
      expect(got, input).not.toBeNull();
      expect(got!.p.shown).toBe(shown);
      expect(got!.file.data.toString()).toBe(text);
      expect(got!.file.size).toBe(text.length);
      expect(got!.file.fd).toBeNull();
    }
  });

  it('leaves every path with a symlink on it, and everything but an existing regular file, to the long way', async () => {
    for (const input of [
      'link.txt',
      'link-dir/b/deep.txt',
      'link-out.txt',
      'missing.txt',
      'a',
      'a/b',
      'pipe',
      '.',
      'small.txt/x',
    ]) {
      expect(await ws.openAndRead(input, READ), input).toBeNull();
    }
  });

  it('still refuses lexical escapes before any file system call', async () => {
    await expect(ws.openAndRead('../outside.txt', READ)).rejects.toThrow(/escapes the workspace root/);
    await expect(ws.openAndRead(join(tmp, 'outside.txt'), READ)).rejects.toThrow(/escapes the workspace root/);
  });

  it("checks the opened file's real location: a root descriptor leading outside the real root is refused", async () => {
    // The descriptor is another directory than the real root it claims: what it opens is outside that root.
    const skewed = new Workspace(root);
    await skewed.adopt(join(tmp, 'elsewhere'), root);
    try {
      await expect(skewed.openAndRead('small.txt', READ)).rejects.toThrow(/escapes the workspace root/);
      await expect(readFileTool(skewed, { path: 'small.txt' }, 1 << 20, signal)).rejects.toThrow(
        /escapes the workspace root/,
      );
    } finally {
      await skewed.dir.handle.close();
    }
  });
});

describe('read_file and list_dir answer the same either way', () => {
  it('read_file through a symlink (the long way) equals the direct read (the fast path)', async () => {
    const direct = await readFileTool(ws, { path: 'small.txt' }, 1 << 20, signal);
    const viaLink = await readFileTool(ws, { path: 'link.txt' }, 1 << 20, signal);
    expect(dataOf(viaLink)).toEqual(dataOf(direct));
    const bytesDirect = await readFileTool(
      ws,
      { path: 'small.txt', encoding: 'base64', offset: 2, limit: 5 },
      1 << 20,
      signal,
    );
    const bytesLink = await readFileTool(
      ws,
      { path: 'link.txt', encoding: 'base64', offset: 2, limit: 5 },
      1 << 20,
      signal,
    );
    expect(bytesLink.data).toEqual(bytesDirect.data);
    expect(Buffer.from((bytesDirect.data as { content: string }).content, 'base64').toString()).toBe('llo w');
  });

  it('a file larger than one chunk is read whole, and the descriptor the thread left open is closed', async () => {
    // Descriptors of this process open on big.txt.
    const openOnBig = () =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`) === join(root, 'big.txt');
        } catch {
          return false; // closed since it was listed
        }
      }).length;
    for (let i = 0; i < 20; i++) {
      const out = await readFileTool(ws, { path: 'big.txt' }, 1 << 20, signal);
      expect((out.data as { content: string }).content).toHaveLength(BIG);
    }
    expect(openOnBig()).toBe(0);
    const kept = await ws.openAndRead('big.txt', { ...READ, keepOpen: true });
    expect(kept!.file.fd).not.toBeNull();
    expect(kept!.file.data).toHaveLength(64 * 1024);
    expect(openOnBig()).toBe(1);
    closeSync(kept!.file.fd!);
    expect(openOnBig()).toBe(0);
  });

  it('list_dir of a symlinked directory (the long way) equals the direct listing (the fast path), with and without sizes', async () => {
    const direct = await listDirTool(ws, { path: 'a', sizes: true }, signal);
    const viaLink = await listDirTool(ws, { path: 'link-dir', sizes: true }, signal);
    expect(dataOf(viaLink)).toEqual(dataOf(direct));
    expect(dataOf(direct)).toEqual({
      path: 'a',
      entries: [{ path: 'a/b', type: 'dir', size: null }],
      truncated: false,
    });
    const plainDirect = await listDirTool(ws, { path: 'a' }, signal);
    expect(dataOf(plainDirect)).toEqual({ path: 'a', entries: [{ path: 'a/b', type: 'dir' }], truncated: false });
    expect(dataOf(await listDirTool(ws, { path: 'link-dir' }, signal))).toEqual(dataOf(plainDirect));
    const top = await listDirTool(ws, { path: '.', limit: 3, sizes: true }, signal);
    expect(dataOf(top)).toEqual({
      path: '.',
      entries: [
        { path: 'a', type: 'dir', size: null },
        { path: 'big.txt', type: 'file', size: BIG },
        { path: 'link-dir', type: 'symlink', size: null },
      ],
      truncated: true,
    });
    expect(await ws.listDirect('link-dir', true)).toBeNull();
    expect(await ws.listDirect('small.txt', true)).toBeNull();
  });
});
