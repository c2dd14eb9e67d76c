/**
 * The CLI's compile cache (src/compile-cache.ts), on a copy of the built package of its own (so the cache these
 * tests write, read and spoil is theirs, not the one every other test's gateway uses): a cold start writes it, a warm
 * start uses it without rewriting it and still runs what needs Node's loader (a package loaded at first use, an
 * operator's ES-module plugin with top-level await), a cache V8 rejects is rewritten, and it can be turned off.
 */
import { cp, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

let pkg: string;
let cacheDir: string;

beforeAll(async () => {
  pkg = await mkdtemp(join(tmpdir(), 'a2e-compile-cache-'));
  await cp(join(REPO, 'package.json'), join(pkg, 'package.json'));
  await cp(join(REPO, 'dist'), join(pkg, 'dist'), {
    recursive: true,
    filter: (src) => !src.includes('.compile-cache'),
  });
  await symlink(join(REPO, 'node_modules'), join(pkg, 'node_modules'));
  cacheDir = join(pkg, 'dist', '.compile-cache');
  // An operator's plugin as an ES module with top-level await: require() cannot load it, only import() can.
  await writeFile(
    join(pkg, 'tla-plugin.mjs'),
    `const greeting = await Promise.resolve('hello from a top-level await');
export default () => ({
  name: 'tla',
  listTools: () => [{ name: 'greet', description: 'Answers the greeting its module awaited', input_parameters: [] }],
  async executeTool() { return { greeting }; },
});
`,
  );
  await writeFile(
    join(pkg, 'gateway.yaml'),
    'server: {port: 0}\nplugins:\n  - module: ./tla-plugin.mjs\ntools:\n  shell: {enabled: false}\n',
  );
});
afterAll(async () => {
  if (pkg) await rm(pkg, { recursive: true, force: true });
});

/** `serve` from the copy, up to its `gateway started` line (the cache is written by then, if it is written). */
async function serve(env: Record<string, string> = {}): Promise<{ url: string; proc: ResultPromise }> {
  const proc = execa('node', [join(pkg, 'dist', 'cli.js'), 'serve', '--config', join(pkg, 'gateway.yaml')], {
    cwd: pkg,
    env: { LOG_LEVEL: 'info', LOG_FORMAT: 'json', ...env },
    reject: false,
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    let err = '';
    proc.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    proc.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      if (err.includes('"gateway started"'))
        resolve(/listening on (\S+)/.exec(out)?.[1] ?? `no listening line in: ${out}`);
    });
    proc.once('exit', (code) => reject(new Error(`gateway exited with ${code} before it started: ${err}`)));
  });
  return { url, proc };
}

async function stop(proc: ResultPromise): Promise<void> {
  proc.kill('SIGTERM');
  const r = await proc;
  expect(r.exitCode, String(r.stderr)).toBe(0);
}

/** What a started gateway must still do from cached code: a plugin's tool, and /metrics (prom-client, loaded at first use). */
async function checkGateway(url: string): Promise<void> {
  const call = await fetch(`${url}/tool/call`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tool_name: 'greet', arguments: {} }),
  });
  const body = (await call.json()) as { type: string; data: { status: string; data: unknown } };
  expect(body.type, JSON.stringify(body)).toBe('tool/call/resp');
  expect(body.data.data).toEqual({ greeting: 'hello from a top-level await' });
  const metrics = await fetch(`${url}/metrics`);
  expect(metrics.status).toBe(200);
  expect(await metrics.text()).toContain('a2e_tool_calls_total');
}

/** The cache's files: name → the file's inode and modification time (a rewrite changes them). */
async function cacheFiles(): Promise<Map<string, string>> {
  const names = (await readdir(cacheDir)).filter((n) => n.endsWith('.bin'));
  const stamp = async (n: string) => {
    const s = await stat(join(cacheDir, n));
    return `${s.ino}:${s.mtimeMs}`;
  };
  return new Map(await Promise.all(names.map(async (n) => [n, await stamp(n)] as const)));
}

describe('the compile cache', () => {
  it('a cold start writes it, for the files serve loaded and not for native-import.js', async () => {
    const { url, proc } = await serve();
    await checkGateway(url);
    await stop(proc);
    const names = [...(await cacheFiles()).keys()];
    expect(names).toContainEqual(expect.stringMatching(/^chunks_server\.js-[0-9a-f]{20}\.bin$/));
    expect(names).toContainEqual(expect.stringMatching(/^chunks_cli_serve\.js-[0-9a-f]{20}\.bin$/));
    expect(names.filter((n) => n.startsWith('chunks_native-import.js'))).toEqual([]);
    // Nothing left half-written.
    expect((await readdir(cacheDir)).filter((n) => !n.endsWith('.bin'))).toEqual([]);
  }, 60_000);

  it('a warm start uses it without rewriting it, and still loads the ES-module plugin and prom-client', async () => {
    const before = await cacheFiles();
    expect(before.size).toBeGreaterThan(3);
    const { url, proc } = await serve();
    await checkGateway(url);
    await stop(proc);
    expect(await cacheFiles()).toEqual(before);
  }, 60_000);

  it('a cache V8 rejects is compiled from source and rewritten', async () => {
    const before = await cacheFiles();
    const server = [...before.keys()].find((n) => n.startsWith('chunks_server.js-'))!;
    await writeFile(join(cacheDir, server), Buffer.alloc(4096, 7)); // not V8's code
    const { url, proc } = await serve();
    await checkGateway(url);
    await stop(proc);
    const rewritten = await readFile(join(cacheDir, server));
    expect(rewritten.equals(Buffer.alloc(4096, 7))).toBe(false);
    expect(rewritten.length).toBeGreaterThan(4096);
  }, 60_000);

  it('NODE_DISABLE_COMPILE_CACHE=1: neither read nor written', async () => {
    await rm(cacheDir, { recursive: true, force: true });
    const { url, proc } = await serve({ NODE_DISABLE_COMPILE_CACHE: '1' });
    await checkGateway(url);
    await stop(proc);
    await expect(stat(cacheDir)).rejects.toMatchObject({ code: 'ENOENT' });
  }, 60_000);
});
