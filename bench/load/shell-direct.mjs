/**
 * Spawns `argv` N times in a row straight from Node, the way the shell tool
 * does (own process group, stdout/stderr piped), either inside the same
 * bubblewrap sandbox command line the gateway builds (`sandboxed: true`,
 * via the gateway's own sandboxCommand with its default config) or bare.
 * Prints per-run latencies (ms) as one JSON line.
 *   node load/shell-direct.mjs '{"workspace":…,"argv":["true"],"runs":100,"sandboxed":true}'
 */
import { spawn } from 'node:child_process';
import { ShellConfig } from '../../dist/tools/shell/config.js';
import { SANDBOX_PATH, SANDBOX_WORKSPACE, sandboxCommand } from '../../dist/tools/shell/sandbox.js';

const spec = JSON.parse(process.argv[2]);
const shell = ShellConfig.parse({});
const command = spec.sandboxed
  ? sandboxCommand({
      workspace: spec.workspace,
      cwd: SANDBOX_WORKSPACE,
      env: { PATH: SANDBOX_PATH, HOME: '/tmp', LANG: 'C.UTF-8' },
      network: shell.network,
      mounts: shell.mounts,
      limits: shell.limits,
      tmpMb: shell.tmp_mb,
      argv: spec.argv,
    })
  : { file: spec.argv[0], args: spec.argv.slice(1) };

function runOnce() {
  return new Promise((resolve, reject) => {
    const child = spawn(command.file, command.args, {
      cwd: spec.workspace,
      env: spec.sandboxed ? {} : { PATH: SANDBOX_PATH },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}: ${stderr}`))));
  });
}

const ms = [];
for (let i = 0; i < spec.runs; i++) {
  const t = performance.now();
  await runOnce();
  ms.push(performance.now() - t);
}
process.stdout.write(`${JSON.stringify({ ms })}\n`);
