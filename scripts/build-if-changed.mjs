/**
 * `npm start`'s build step: runs `npm run build` only when dist/ is missing or older than what it is built from, so
 * a start after a build starts at once (a full build takes seconds, tens of them on a loaded machine).
 *
 * Usage: node scripts/build-if-changed.mjs   (then package.json's start script `exec`s the server, so a signal
 * sent to `npm start` reaches the server itself and nothing is left running on the port)
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** What the build reads: a change to any of them (a newer mtime) makes dist/ stale. Directories are walked. */
const INPUTS = [
  'src',
  'ui',
  'scripts/build.mjs',
  'scripts/ui-size.mjs',
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  // npm rewrites this on every install that changes node_modules: bundled dependencies may have changed.
  'node_modules/.package-lock.json',
];

/** What the build writes last in each of its steps: the oldest of them is when dist/ was last built whole. */
const OUTPUTS = ['dist/cli.js', 'dist/package.json', 'dist/ui/index.html'];

function newestIn(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch (err) {
    if (err.code === 'ENOENT') return { mtimeMs: 0, path };
    throw err;
  }
  if (!stat.isDirectory()) return { mtimeMs: stat.mtimeMs, path };
  let newest = { mtimeMs: 0, path };
  for (const name of readdirSync(path)) {
    const found = newestIn(join(path, name));
    if (found.mtimeMs > newest.mtimeMs) newest = found;
  }
  return newest;
}

/**
 * Why `root` needs a build (a sentence), or null when dist/ is newer than every input.
 * @param {string} root the package's directory
 * @returns {string | null}
 */
export function buildReason(root) {
  let built = Infinity;
  for (const output of OUTPUTS) {
    try {
      built = Math.min(built, statSync(join(root, output)).mtimeMs);
    } catch (err) {
      if (err.code === 'ENOENT') return `${output} is missing`;
      throw err;
    }
  }
  for (const input of INPUTS) {
    const newest = newestIn(join(root, input));
    if (newest.mtimeMs > built) return `${relative(root, newest.path)} changed since the last build`;
  }
  return null;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const reason = buildReason(ROOT);
  if (reason) {
    console.error(`a2e-gateway: building (${reason})`);
    const r = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
    process.exit(r.status ?? 1);
  }
}
