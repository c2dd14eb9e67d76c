/**
 * The file tools over real HTTP: happy paths (JSON and SSE) and the escapes
 * that must fail — traversal, absolute paths, a sibling sharing the root's
 * name prefix, symlinks out of the root (read and write), non-regular files.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callBody, openSse, postJson, startGateway, type TestGateway } from '../helpers/server.js';

let tmp: string;
let root: string;
let sibling: string;
let secret: string;
let gw: TestGateway;
let socketServer: Server;
const SECRET = 'outside secret 42';

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'a2e-fs-'));
  root = join(tmp, 'ws'); // created by the gateway
  sibling = join(tmp, 'ws-sibling'); // name starts with the root's name
  secret = join(tmp, 'secret.txt');
  await mkdir(sibling);
  await writeFile(join(sibling, 'x.txt'), SECRET);
  await writeFile(secret, SECRET);
  gw = await startGateway({
    config: { tools: { fs: { root, max_read_bytes: 64 * 1024, max_write_bytes: 128 * 1024 } } },
  });
});
afterAll(async () => {
  await gw?.close();
  socketServer?.close();
  await rm(tmp, { recursive: true, force: true });
});

const call = async (tool: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
  const r = await postJson(`${gw.url}/tool/call`, callBody(tool, args, { timeout: 10, ...extra }));
  expect(r.status).toBe(200);
  return r.json.data as { success: boolean; data: any; error: string | null; truncated: boolean; events: any[] };
};
const ok = async (tool: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
  const d = await call(tool, args, extra);
  expect(d.error).toBeNull();
  expect(d.success).toBe(true);
  return d;
};
const fails = async (tool: string, args: Record<string, unknown>) => {
  const d = await call(tool, args);
  expect(d.success).toBe(false);
  expect(d.error).toBeTypeOf('string');
  expect(d.error).not.toContain(tmp); // never a host path
  return d.error!;
};

describe('file tools: manifest and start-up', () => {
  it('creates the workspace at start', async () => {
    expect((await stat(root)).isDirectory()).toBe(true);
  });

  it('lists the six tools as native, with tags and idempotent read-only tools', async () => {
    const r = await postJson(`${gw.url}/tool/list`, { filter_kind: 'native', filter_tags: ['files'] });
    const tools = Object.fromEntries(r.json.tools.map((t: any) => [t.name, t]));
    expect(Object.keys(tools).sort()).toEqual(['edit_file', 'glob', 'grep', 'list_dir', 'read_file', 'write_file']);
    for (const name of ['read_file', 'list_dir', 'glob', 'grep']) expect(tools[name].idempotent).toBe(true);
    for (const name of ['write_file', 'edit_file']) expect(tools[name].idempotent).toBe(false);
    expect(tools.grep.streaming).toBe(true);
    expect(tools.read_file.streaming).toBe(false);
    expect(tools.read_file.input_parameters.find((p: any) => p.name === 'encoding').enum).toEqual(['utf8', 'base64']);
    expect(tools.read_file.output_parameters.map((p: any) => p.name)).toContain('next_offset');
  });

  it('refuses to start when the root is not a directory', async () => {
    await expect(startGateway({ config: { tools: { fs: { root: secret } } } })).rejects.toThrow(
      /plugin "fs" failed to start: the workspace tools\.fs\.root \(.*\) exists and is not a directory; set tools\.fs\.root to a directory/,
    );
  });

  it('read_only offers only the reading tools', async () => {
    const ro = await startGateway({ config: { tools: { fs: { root: join(tmp, 'ro'), read_only: true } } } });
    try {
      const r = await postJson(`${ro.url}/tool/list`, { filter_tags: ['files'] });
      expect(r.json.tools.map((t: any) => t.name).sort()).toEqual(['glob', 'grep', 'list_dir', 'read_file']);
      const w = await postJson(`${ro.url}/tool/call`, callBody('write_file', { path: 'a', content: 'b' }));
      expect(w.status).toBe(404);
    } finally {
      await ro.close();
    }
  });
});

describe('write_file / read_file / edit_file', () => {
  it('writes, then reads back by lines', async () => {
    const w = await ok('write_file', { path: 'notes/todo.txt', content: 'one\ntwo\nthree\nfour', create_dirs: true });
    expect(w.data).toEqual({ path: 'notes/todo.txt', bytes: 18, created: true });
    expect(await readFile(join(root, 'notes/todo.txt'), 'utf8')).toBe('one\ntwo\nthree\nfour');

    const all = await ok('read_file', { path: 'notes/todo.txt' });
    expect(all.data).toMatchObject({
      path: 'notes/todo.txt',
      encoding: 'utf8',
      content: 'one\ntwo\nthree\nfour',
      size: 18,
      offset: 1,
      count: 4,
      next_offset: null,
      truncated: false,
    });

    const part = await ok('read_file', { path: 'notes/todo.txt', offset: 2, limit: 2 });
    expect(part.data).toMatchObject({ content: 'two\nthree\n', offset: 2, count: 2, next_offset: 4 });
    const rest = await ok('read_file', { path: './notes/../notes/todo.txt', offset: 4 });
    expect(rest.data).toMatchObject({ path: 'notes/todo.txt', content: 'four', count: 1, next_offset: null });

    expect(await fails('read_file', { path: 'notes/todo.txt', offset: 9 })).toContain(
      'past the end of notes/todo.txt, which has 4 lines',
    );
  });

  it('accepts an absolute path inside the root and answers with the relative one', async () => {
    const r = await ok('read_file', { path: join(root, 'notes', 'todo.txt'), limit: 1 });
    expect(r.data).toMatchObject({ path: 'notes/todo.txt', content: 'one\n' });
  });

  it('writes and reads bytes as base64, never mangling them', async () => {
    const bytes = Buffer.from([0, 1, 2, 0xff, 0xfe, 0x80, 10, 13]);
    await ok('write_file', {
      path: 'bin/blob.bin',
      content: bytes.toString('base64'),
      encoding: 'base64',
      create_dirs: true,
    });
    expect(Buffer.compare(await readFile(join(root, 'bin/blob.bin')), bytes)).toBe(0);
    const r = await ok('read_file', { path: 'bin/blob.bin', encoding: 'base64' });
    expect(r.data).toMatchObject({
      encoding: 'base64',
      content: bytes.toString('base64'),
      size: 8,
      count: 8,
      next_offset: null,
    });
    const slice = await ok('read_file', { path: 'bin/blob.bin', encoding: 'base64', offset: 3, limit: 2 });
    expect(Buffer.from(slice.data.content, 'base64')).toEqual(bytes.subarray(3, 5));
    expect(slice.data.next_offset).toBe(5);
  });

  it('refuses invalid UTF-8 in utf8 mode and suggests base64', async () => {
    const e = await fails('read_file', { path: 'bin/blob.bin' });
    expect(e).toBe('bin/blob.bin is not valid UTF-8 text (a binary file?); read it with encoding: "base64" instead');
  });

  it('bounds reads by max_read_bytes, cutting at a line, with next_offset to continue', async () => {
    const line = `${'é'.repeat(499)}\n`; // 999 bytes
    await writeFile(join(root, 'big.txt'), line.repeat(100)); // 99,900 bytes > 64 KiB
    const r = await call('read_file', { path: 'big.txt' });
    expect(r.success).toBe(true);
    expect(r.truncated).toBe(true);
    expect(r.data.truncated).toBe(true);
    expect(r.data.count).toBe(65); // 65 whole lines fit in 65,536 bytes
    expect(r.data.content).toBe(line.repeat(65));
    expect(r.data.next_offset).toBe(66);
    const rest = await ok('read_file', { path: 'big.txt', offset: 66 });
    expect(rest.data).toMatchObject({ count: 35, truncated: false, next_offset: null });
    const bytes = await call('read_file', { path: 'big.txt', encoding: 'base64' });
    expect(bytes.truncated).toBe(true);
    expect(Buffer.from(bytes.data.content, 'base64').length).toBe(64 * 1024);
  });

  it('refuses writes over max_write_bytes, creating nothing', async () => {
    expect(await fails('write_file', { path: 'huge.txt', content: 'x'.repeat(128 * 1024 + 1) })).toContain(
      'over the 131072-byte limit (tools.fs.max_write_bytes)',
    );
    expect(existsSync(join(root, 'huge.txt'))).toBe(false);
  });

  it('create_dirs and overwrite are honoured', async () => {
    expect(await fails('write_file', { path: 'new/dir/f.txt', content: 'x' })).toBe(
      'directory new/dir does not exist; create it first or pass create_dirs: true',
    );
    const first = await ok('write_file', { path: 'once.txt', content: 'first' });
    expect(first.data.created).toBe(true);
    expect(await fails('write_file', { path: 'once.txt', content: 'second', overwrite: false })).toContain(
      'once.txt already exists; pass overwrite: true',
    );
    const again = await ok('write_file', { path: 'once.txt', content: 'third' });
    expect(again.data.created).toBe(false);
    expect(await readFile(join(root, 'once.txt'), 'utf8')).toBe('third');
    // the atomic write leaves no temp file behind
    expect((await readdir(root)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('edit_file replaces a unique string literally', async () => {
    await ok('write_file', { path: 'edit.txt', content: 'alpha beta\ngamma beta\ndelta\n' });
    const r = await ok('edit_file', { path: 'edit.txt', old_string: 'delta', new_string: 'price: $& $1' });
    expect(r.data).toEqual({ path: 'edit.txt', replacements: 1, bytes: 35 });
    expect(await readFile(join(root, 'edit.txt'), 'utf8')).toBe('alpha beta\ngamma beta\nprice: $& $1\n');
  });

  it('edit_file fails clearly when old_string is ambiguous or missing, and changes nothing', async () => {
    const before = await readFile(join(root, 'edit.txt'), 'utf8');
    expect(await fails('edit_file', { path: 'edit.txt', old_string: 'beta', new_string: 'B' })).toBe(
      'old_string occurs 2 times in edit.txt; include more surrounding text to make it unique, or pass replace_all: true to replace every one',
    );
    expect(await fails('edit_file', { path: 'edit.txt', old_string: 'omega', new_string: 'B' })).toContain(
      'old_string was not found in edit.txt',
    );
    expect(await readFile(join(root, 'edit.txt'), 'utf8')).toBe(before);
    const all = await ok('edit_file', { path: 'edit.txt', old_string: 'beta', new_string: 'B', replace_all: true });
    expect(all.data.replacements).toBe(2);
    expect(await readFile(join(root, 'edit.txt'), 'utf8')).toBe('alpha B\ngamma B\nprice: $& $1\n');
  });
});

describe('list_dir / glob / grep', () => {
  beforeAll(async () => {
    await mkdir(join(root, 'tree/src/deep'), { recursive: true });
    for (let i = 0; i < 30; i++)
      await writeFile(
        join(root, 'tree', `f${String(i).padStart(2, '0')}.md`),
        `file ${i}\n${i % 3 === 0 ? 'TODO: fix\n' : ''}`,
      );
    await writeFile(join(root, 'tree/src/main.ts'), 'const a = 1;\n// todo later\n');
    await writeFile(join(root, 'tree/src/deep/util.ts'), 'export {};\n');
    await writeFile(join(root, 'tree/src/.hidden.ts'), 'TODO hidden\n');
    await writeFile(join(root, 'tree/src/image.bin'), Buffer.from([0, 1, 2, 84, 79, 68, 79]));
  });

  it('list_dir lists one level, or recursively, with types, and sizes when asked', async () => {
    const r = await ok('list_dir', { path: 'tree/src' });
    expect(r.data.entries).toEqual([
      { path: 'tree/src/.hidden.ts', type: 'file' },
      { path: 'tree/src/deep', type: 'dir' },
      { path: 'tree/src/image.bin', type: 'file' },
      { path: 'tree/src/main.ts', type: 'file' },
    ]);
    const sized = await ok('list_dir', { path: 'tree/src', sizes: true });
    expect(sized.data.entries).toEqual([
      { path: 'tree/src/.hidden.ts', type: 'file', size: 12 },
      { path: 'tree/src/deep', type: 'dir', size: null },
      { path: 'tree/src/image.bin', type: 'file', size: 7 },
      { path: 'tree/src/main.ts', type: 'file', size: 27 },
    ]);
    const rec = await ok('list_dir', { path: 'tree/src', recursive: true });
    expect(rec.data.entries).toContainEqual({ path: 'tree/src/deep/util.ts', type: 'file' });
    const recSized = await ok('list_dir', { path: 'tree/src', recursive: true, sizes: true });
    expect(recSized.data.entries).toContainEqual({ path: 'tree/src/deep/util.ts', type: 'file', size: 11 });
    expect(recSized.data.entries).toContainEqual({ path: 'tree/src/deep', type: 'dir', size: null });
    const wrong = await postJson(`${gw.url}/tool/call`, callBody('list_dir', { path: 'tree/src', sizes: 'yes' }));
    expect(wrong.status).toBe(422);
    expect(wrong.json.message).toContain('sizes');
    expect(await fails('list_dir', { path: 'tree/src/main.ts' })).toBe('tree/src/main.ts is not a directory');
  });

  it('list_dir caps its listing and says so', async () => {
    const r = await call('list_dir', { path: 'tree', limit: 10 });
    expect(r.data.entries).toHaveLength(10);
    expect(r.data.truncated).toBe(true);
    expect(r.truncated).toBe(true);
    const all = await ok('list_dir', { path: 'tree', limit: 100 });
    expect(all.data.truncated).toBe(false);
    expect(all.data.entries).toHaveLength(31);
  });

  it('glob matches paths, skips dotfiles unless named, caps with a flag', async () => {
    const r = await ok('glob', { pattern: '**/*.ts', path: 'tree' });
    expect(r.data.matches).toEqual(['tree/src/main.ts', 'tree/src/deep/util.ts']);
    const dot = await ok('glob', { pattern: 'tree/src/.*.ts' });
    expect(dot.data.matches).toEqual(['tree/src/.hidden.ts']);
    const capped = await call('glob', { pattern: 'tree/*.md', limit: 5 });
    expect(capped.data.matches).toHaveLength(5);
    expect(capped.data.truncated).toBe(true);
    expect((await ok('glob', { pattern: 'nowhere/**' })).data.matches).toEqual([]);
    expect(await fails('glob', { pattern: '../**' })).toContain('must not contain ".." segments');
    expect(await fails('glob', { pattern: '/etc/*' })).toContain('must be relative');
  });

  it('grep finds lines, filters by include, ignores case on request, skips binaries, caps with a flag', async () => {
    const r = await ok('grep', { pattern: 'todo', path: 'tree/src' });
    expect(r.data).toMatchObject({
      matches: [{ path: 'tree/src/main.ts', line: 2, text: '// todo later' }],
      truncated: false,
      files_skipped: 1,
    });
    const ci = await ok('grep', { pattern: 'todo', path: 'tree', ignore_case: true, include: '*.ts' });
    expect(ci.data.matches.map((m: any) => m.path).sort()).toEqual(['tree/src/.hidden.ts', 'tree/src/main.ts']);
    const capped = await call('grep', { pattern: '^TODO', path: 'tree', include: '*.md', limit: 4 });
    expect(capped.data.matches).toHaveLength(4);
    expect(capped.data.truncated).toBe(true);
    expect(capped.truncated).toBe(true);
    expect(await fails('grep', { pattern: '(unclosed' })).toContain('pattern is not a valid regular expression');
  });

  it('grep streams status events over SSE, and collects them in JSON', async () => {
    const s = await openSse(`${gw.url}/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(callBody('grep', { pattern: 'file', path: 'tree' }, { streaming: true })),
    });
    const events = await s.rest();
    expect(events.at(-1)!.event).toBe('tool/call/resp');
    const status = events.filter((e) => e.event === 'tool/event');
    expect(status.length).toBeGreaterThanOrEqual(1);
    expect(status.at(-1)!.json).toMatchObject({ kind: 'status', data: { message: 'searched 33 files, 30 matches' } });
    expect(events.at(-1)!.json.data).toMatchObject({ success: true, data: { files_searched: 33 } });

    const json = await ok('grep', { pattern: 'file', path: 'tree' }, { streaming: true });
    expect(json.events.at(-1)).toMatchObject({ kind: 'status', data: { message: 'searched 33 files, 30 matches' } });
  });

  it('grep over skipped (binary) files streams one status line, not one per skipped file', async () => {
    await mkdir(join(root, 'binaries'));
    for (let i = 0; i < 12; i++)
      await writeFile(join(root, 'binaries', `b${i}.bin`), Buffer.from([0x66, 0, 0x69, 0x6c, 0x65]));
    const json = await ok('grep', { pattern: 'file', path: 'binaries' }, { streaming: true });
    expect(json.data).toMatchObject({ files_searched: 0, files_skipped: 12, matches: [] });
    expect(json.events).toEqual([
      expect.objectContaining({ kind: 'status', data: { message: 'searched 0 files, 0 matches' } }),
    ]);
  });

  it('a catastrophic regex is stopped at the call timeout while the gateway keeps serving', async () => {
    await writeFile(join(root, 'redos.txt'), `${'a'.repeat(64)}!\n`);
    const threads = () => readdirSync('/proc/self/task').length; // the gateway runs in this process
    const baseline = threads();
    const started = performance.now();
    const grep = call('grep', { pattern: '(a+)+$', path: 'redos.txt' }, { timeout: 2 });
    // the event loop is free: another call completes while the regex backtracks
    const other = await ok('read_file', { path: 'redos.txt' });
    expect(other.data.count).toBe(1);
    const d = await grep;
    expect(d.success).toBe(false);
    expect(d.error).toContain('timed out after 2 s');
    expect(performance.now() - started).toBeLessThan(10_000);
    // and the regex worker thread is gone, not left spinning
    for (const until = performance.now() + 5000; threads() > baseline && performance.now() < until; )
      await new Promise((r) => setTimeout(r, 20));
    expect(threads()).toBeLessThanOrEqual(baseline);
  });

  it('read_file works over SSE too (a final response, no events)', async () => {
    const s = await openSse(`${gw.url}/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(callBody('read_file', { path: 'tree/src/main.ts' }, { streaming: true })),
    });
    const events = await s.rest();
    expect(events.map((e) => e.event)).toEqual(['tool/call/resp']);
    expect(events[0]!.json.data.data.content).toBe('const a = 1;\n// todo later\n');
  });
});

describe('escapes that must fail', () => {
  beforeAll(async () => {
    await symlink(secret, join(root, 'link-to-secret'));
    await symlink(tmp, join(root, 'link-to-outside-dir'));
    await symlink('/dev/null', join(root, 'devnull'));
    await symlink(join(root, 'once.txt'), join(root, 'link-inside')); // a symlink that stays inside is fine
    execFileSync('mkfifo', [join(root, 'fifo')]);
    socketServer = createServer();
    await new Promise<void>((resolve) => socketServer.listen(join(root, 'sock'), resolve));
  });

  it('../ traversal', async () => {
    expect(await fails('read_file', { path: '../secret.txt' })).toBe(
      'path "../secret.txt" escapes the workspace root; use a path relative to the workspace (e.g. "notes/todo.txt")',
    );
    expect(await fails('read_file', { path: 'notes/../../secret.txt' })).toContain('escapes the workspace root');
    expect(await fails('write_file', { path: '../planted.txt', content: 'x' })).toContain('escapes the workspace root');
    expect(await fails('list_dir', { path: '..' })).toContain('escapes the workspace root');
    expect(await fails('grep', { pattern: 'secret', path: '..' })).toContain('escapes the workspace root');
    expect(existsSync(join(tmp, 'planted.txt'))).toBe(false);
  });

  it('an absolute path outside the root', async () => {
    expect(await fails('read_file', { path: secret })).toContain('escapes the workspace root');
    expect(await fails('read_file', { path: '/etc/passwd' })).toContain('escapes the workspace root');
    expect(await fails('write_file', { path: join(tmp, 'planted.txt'), content: 'x' })).toContain(
      'escapes the workspace root',
    );
    expect(existsSync(join(tmp, 'planted.txt'))).toBe(false);
  });

  it('a sibling directory whose name starts with the root name', async () => {
    expect(await fails('read_file', { path: join(sibling, 'x.txt') })).toContain('escapes the workspace root');
    expect(await fails('read_file', { path: '../ws-sibling/x.txt' })).toContain('escapes the workspace root');
    expect(await fails('write_file', { path: join(sibling, 'x.txt'), content: 'pwned' })).toContain(
      'escapes the workspace root',
    );
    expect(await readFile(join(sibling, 'x.txt'), 'utf8')).toBe(SECRET);
  });

  it('a symlink inside the root pointing outside: read, write, edit, list all refused', async () => {
    expect(await fails('read_file', { path: 'link-to-secret' })).toContain('escapes the workspace root');
    expect(await fails('write_file', { path: 'link-to-secret', content: 'pwned' })).toContain(
      'escapes the workspace root',
    );
    expect(await fails('edit_file', { path: 'link-to-secret', old_string: 'outside', new_string: 'pwned' })).toContain(
      'escapes the workspace root',
    );
    expect(await fails('read_file', { path: 'link-to-outside-dir/secret.txt' })).toContain(
      'escapes the workspace root',
    );
    expect(await fails('write_file', { path: 'link-to-outside-dir/planted.txt', content: 'x' })).toContain(
      'escapes the workspace root',
    );
    expect(
      await fails('write_file', { path: 'link-to-outside-dir/sub/planted.txt', content: 'x', create_dirs: true }),
    ).toContain('escapes the workspace root');
    expect(await fails('list_dir', { path: 'link-to-outside-dir' })).toContain('escapes the workspace root');
    expect(await readFile(secret, 'utf8')).toBe(SECRET);
    expect(existsSync(join(tmp, 'planted.txt'))).toBe(false);
    expect(existsSync(join(tmp, 'sub'))).toBe(false);
    // the link itself is untouched
    expect((await lstat(join(root, 'link-to-secret'))).isSymbolicLink()).toBe(true);
  });

  it('a dangling symlink pointing outside is not written through', async () => {
    await symlink(join(tmp, 'would-be-created.txt'), join(root, 'dangling'));
    expect(await fails('write_file', { path: 'dangling', content: 'x' })).toBe(
      'dangling is a symlink to a missing or inaccessible target; remove it or write elsewhere',
    );
    expect(await fails('read_file', { path: 'dangling' })).toContain('does not exist');
    expect(existsSync(join(tmp, 'would-be-created.txt'))).toBe(false);
  });

  it('walks do not follow symlinks out of the root', async () => {
    const g = await ok('grep', { pattern: 'outside secret' });
    expect(g.data.matches).toEqual([]);
    const gl = await ok('glob', { pattern: '**/secret.txt' });
    expect(gl.data.matches).toEqual([]);
    const l = await ok('list_dir', { path: '.', recursive: true, limit: 10000 });
    expect(l.data.entries.find((e: any) => e.path === 'link-to-outside-dir')).toEqual({
      path: 'link-to-outside-dir',
      type: 'symlink',
    });
    expect(l.data.entries.some((e: any) => e.path.startsWith('link-to-outside-dir/'))).toBe(false);
  });

  it('a symlink that stays inside the root is followed', async () => {
    const r = await ok('read_file', { path: 'link-inside' });
    expect(r.data).toMatchObject({ path: 'once.txt', content: 'third' });
    await ok('write_file', { path: 'link-inside', content: 'via link' });
    expect(await readFile(join(root, 'once.txt'), 'utf8')).toBe('via link');
    expect((await lstat(join(root, 'link-inside'))).isSymbolicLink()).toBe(true);
  });

  it('a FIFO is refused at once, for reading and writing (no hang)', async () => {
    const started = performance.now();
    expect(await fails('read_file', { path: 'fifo' })).toBe(
      'fifo is not a regular file (FIFO, socket or device); only regular files can be read or written',
    );
    expect(await fails('write_file', { path: 'fifo', content: 'x' })).toContain(
      'fifo exists and is not a regular file',
    );
    expect(await fails('edit_file', { path: 'fifo', old_string: 'a', new_string: 'b' })).toContain(
      'not a regular file',
    );
    expect(performance.now() - started).toBeLessThan(5000);
    expect((await lstat(join(root, 'fifo'))).isFIFO()).toBe(true);
    // grep walks past it
    expect((await ok('grep', { pattern: 'nothing-matches-this' })).data.matches).toEqual([]);
  });

  it('a socket and a symlink to /dev/null are refused', async () => {
    expect(await fails('read_file', { path: 'sock' })).toContain('is not a regular file');
    expect(await fails('read_file', { path: 'devnull' })).toContain('escapes the workspace root');
    expect(await fails('write_file', { path: 'devnull', content: 'x' })).toContain('escapes the workspace root');
  });

  it('a directory is not a file', async () => {
    expect(await fails('read_file', { path: 'tree' })).toBe('tree is a directory; use list_dir to see what it holds');
    expect(await fails('write_file', { path: 'tree', content: 'x' })).toBe(
      'tree is a directory; name a file inside it',
    );
    expect(await fails('write_file', { path: '.', content: 'x' })).toContain('workspace root itself');
  });

  it('a missing file names only the caller path', async () => {
    expect(await fails('read_file', { path: 'nope/missing.txt' })).toBe(
      '"nope/missing.txt" does not exist in the workspace; use list_dir or glob to find the right path',
    );
  });
});
