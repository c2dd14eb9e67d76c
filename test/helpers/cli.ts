/** Run the built CLI (dist/cli.js; `npm test` builds it first). */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';

export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

/** Start `a2e-gateway serve …` and wait for its listening line. */
export async function startCli(
  args: string[],
  env: Record<string, string> = {},
  options: { cwd?: string } = {},
): Promise<{ url: string; proc: ResultPromise; firstLine: string }> {
  const proc = execa('node', [CLI, 'serve', ...args], {
    env: { LOG_LEVEL: 'silent', ...env },
    reject: false,
    buffer: true,
    ...options,
  });
  const firstLine = await new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(out.slice(0, nl));
    });
    proc.once('exit', (code) => reject(new Error(`gateway exited with ${code} before listening`)));
  });
  const url = firstLine.replace('a2e-gateway listening on ', '');
  return { url, proc, firstLine };
}

/**
 * `a2e-gateway serve` with run_command on (http and eval off), started in a
 * fresh directory of its own that the shell sandbox's user can reach (0755),
 * for tests that drive the CLI against it. `stop()` ends it and removes the directory.
 */
export async function startShellCli(
  prefix: string,
): Promise<Awaited<ReturnType<typeof startCli>> & { dir: string; stop(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await chmod(dir, 0o755);
  await writeFile(
    join(dir, 'gateway.yaml'),
    'server:\n  port: 0\ntools:\n  shell:\n    enabled: true\n  http: {enabled: false}\n  eval: {enabled: false}\n',
  );
  const gateway = await startCli(['--config', 'gateway.yaml'], {}, { cwd: dir });
  return {
    ...gateway,
    dir,
    async stop() {
      gateway.proc.kill('SIGTERM');
      await gateway.proc;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
