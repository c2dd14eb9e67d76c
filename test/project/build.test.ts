/**
 * The build and `npm start` as a newcomer meets them, on a copy of the package of its own (its sources, scripts and
 * package.json; node_modules linked), built there with `npm run build`, so nothing here touches the dist/ every other
 * test runs: a rebuild leaves the bin (dist/cli.js) executable, `npm start` after a build does not build again, a
 * changed source makes it build, and SIGTERM to `npm start` stops the server itself (nothing left on the port).
 */
import { cp, mkdir, mkdtemp, readFile, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildReason } from '../../scripts/build-if-changed.mjs';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const COPIED = ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts', 'src', 'ui'];

let pkg: string;
let version: string;

beforeAll(async () => {
  pkg = await mkdtemp(join(tmpdir(), 'a2e-build-'));
  for (const name of COPIED) await cp(join(REPO, name), join(pkg, name), { recursive: true });
  await symlink(join(REPO, 'node_modules'), join(pkg, 'node_modules'));
  // The bin as `npm install` leaves it (executable), which the build then replaces: a rebuild.
  await mkdir(join(pkg, 'dist'));
  await writeFile(join(pkg, 'dist', 'cli.js'), '#!/usr/bin/env node\n', { mode: 0o755 });
  const built = await execa('npm', ['run', 'build', '--silent'], { cwd: pkg, reject: false, timeout: 240_000 });
  if (built.exitCode !== 0) throw new Error(`npm run build failed in the copy: ${built.stderr}`);
  ({ version } = JSON.parse(await readFile(join(pkg, 'package.json'), 'utf8')) as { version: string });
}, 300_000);
afterAll(async () => {
  if (pkg) await rm(pkg, { recursive: true, force: true });
});

/** Whether something accepts connections on 127.0.0.1:port. */
const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

describe('the build', () => {
  it('a rebuild leaves dist/cli.js executable: the bin runs by its own path, as npx and MCP clients run it', async () => {
    expect((await stat(join(pkg, 'dist', 'cli.js'))).mode & 0o111).toBe(0o111);
    const r = await execa(join(pkg, 'dist', 'cli.js'), ['--version'], { cwd: pkg, reject: false });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(version);
  });
});

describe('npm start', () => {
  it('after a build, serves without building again; SIGTERM to npm start stops the server (nothing left on the port)', async () => {
    const npm = execa('npm', ['start', '--', '--host', '127.0.0.1', '--port', '0'], {
      cwd: pkg,
      env: { LOG_LEVEL: 'silent' },
      reject: false,
      all: true,
    });
    let all = '';
    const url = await new Promise<string>((resolve, reject) => {
      npm.all!.on('data', (chunk: Buffer) => {
        all += chunk.toString();
        const m = /a2e-gateway listening on (\S+)/.exec(all);
        if (m) resolve(m[1]!);
      });
      npm.once('exit', (code) => reject(new Error(`npm start exited with ${code} before listening: ${all}`)));
    });
    expect(all).not.toContain('building');
    const port = Number(new URL(url).port);
    expect(await accepts(port)).toBe(true);

    npm.kill('SIGTERM');
    await npm;
    // npm waits for its script: with the server exec'd, the server got the signal and has exited by now.
    expect(await accepts(port)).toBe(false);
  }, 60_000);

  it('builds when dist/ is missing a part or older than a source, and says why', async () => {
    expect(buildReason(pkg)).toBeNull();
    const later = new Date(Date.now() + 60_000);
    await utimes(join(pkg, 'src', 'version.ts'), later, later);
    expect(buildReason(pkg)).toBe('src/version.ts changed since the last build');
    await rm(join(pkg, 'dist', 'ui', 'index.html'));
    expect(buildReason(pkg)).toBe('dist/ui/index.html is missing');
  });
});
