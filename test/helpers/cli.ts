/** Run the built CLI (dist/cli.js; `npm test` builds it first). */
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';

export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

/** Start `a2e-gateway serve …` and wait for its listening line. */
export async function startCli(
  args: string[],
  env: Record<string, string> = {},
  options: { cwd?: string } = {},
): Promise<{ url: string; proc: ResultPromise; firstLine: string }> {
  const proc = execa('node', [CLI, 'serve', ...args], { env: { LOG_LEVEL: 'silent', ...env }, reject: false, buffer: true, ...options });
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
