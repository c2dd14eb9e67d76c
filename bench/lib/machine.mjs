/** What the benchmarks ran on: machine, Node, package versions, commit. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem, release, platform } from 'node:os';
import { ROOT } from './proc.mjs';

const PACKAGES = [
  'hono',
  '@hono/node-server',
  '@hono/zod-openapi',
  'zod',
  'autocannon',
  '@modelcontextprotocol/sdk',
  'eventsource-parser',
  'undici',
];

function packageVersion(name) {
  // Read node_modules/<name>/package.json directly: some packages' exports hide it or point at a nested one.
  try {
    return JSON.parse(readFileSync(`${ROOT}/node_modules/${name}/package.json`, 'utf8')).version ?? 'unknown';
  } catch {
    return 'not installed';
  }
}

/**
 * wrk's version as it reports it ("wrk debian/4.1.0-3+b2"), or null when no `wrk` is on PATH: scenario 16's load
 * generator, so the one check of whether it can run.
 */
export function wrkVersion() {
  try {
    execFileSync('wrk', ['-v'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    // wrk -v prints its version and exits 1; a missing wrk fails to spawn (ENOENT), with no output.
    const m = /^wrk \S+/.exec(`${err.stdout ?? ''}`);
    if (m) return m[0];
  }
  return null;
}

function git(args) {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

export async function machineInfo() {
  const cpuList = cpus();
  const own = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8'));
  return {
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    /** 1-minute load average: other work on the machine during the run makes every figure noisier. */
    load: loadavg()[0],
    cpu: `${cpuList.length} × ${cpuList[0]?.model ?? 'unknown'}`,
    memory: `${(totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    os: `${platform()} ${release()}`,
    node: process.version,
    gateway: `${own.name} ${own.version} (commit ${git(['rev-parse', '--short', 'HEAD'])}${git(['status', '--porcelain']) ? ', with uncommitted changes' : ''})`,
    wrk: wrkVersion(),
    packages: Object.fromEntries(PACKAGES.map((p) => [p, packageVersion(p)])),
  };
}
