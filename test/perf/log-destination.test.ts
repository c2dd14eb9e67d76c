/**
 * stderr is written synchronously, to a regular file as to a pipe
 * (src/logger.ts): either way every line arrives, whole and in order (plain
 * lines and pino's own lines interleaved), redaction is kept, and the lines
 * still pending when the process exits are written.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const dist = (path: string) => fileURLToPath(new URL(`../../dist/${path}`, import.meta.url));
const LINES = 3000;

// Lines over many event-loop turns, odd characters included; the last ones written just before exit.
const script = `
const { createLogger } = await import(${JSON.stringify(dist('logger.js'))});
const { LazyChildLogger } = await import(${JSON.stringify(dist('engine/index.js'))});
const root = createLogger('info');
for (let i = 0; i < ${LINES}; i++) {
  const log = new LazyChildLogger(root, { request_id: 'r-' + i });
  if (i % 2) log.line('info', { seq: i, path: '/tool/"é"\\u2028✓' }, 'plain line');
  else root.info({ seq: i, peer: { token: 'sk-secret-' + i } }, 'pino line');
  if (i % 97 === 0) await new Promise((r) => setImmediate(r));
}
process.exit(0);
`;

const tmp = mkdtempSync(join(tmpdir(), 'a2e-log-dest-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Run the script with its stderr on a pipe (the text it wrote) or on the file `path` (then read back). */
function run(stderrFile?: string): Promise<string> {
  const fd = stderrFile === undefined ? undefined : openSync(stderrFile, 'w');
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', fd ?? 'pipe'] });
  if (fd !== undefined) closeSync(fd);
  let text = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (text += d));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      if (code !== 0) reject(new Error(`the log writer exited with ${code}: ${text.slice(-500)}`));
      else resolve(stderrFile === undefined ? text : readFileSync(stderrFile, 'utf8'));
    });
  });
}

function check(text: string): void {
  const lines = text.split('\n');
  expect(lines.pop()).toBe(''); // ends with a newline, nothing cut
  expect(lines).toHaveLength(LINES);
  lines.forEach((line, i) => {
    const entry = JSON.parse(line);
    expect(entry.seq).toBe(i);
    if (i % 2) expect(entry).toMatchObject({ msg: 'plain line', request_id: `r-${i}`, path: '/tool/"é"\u2028✓' });
    else expect(entry).toMatchObject({ msg: 'pino line', peer: { token: '[redacted]' } });
  });
  expect(text).not.toContain('sk-secret');
}

describe('log destination', () => {
  it('a pipe: every line, in order, including those pending at exit', async () => {
    check(await run());
  });

  it('a regular file: every line, in order, including those pending at exit', async () => {
    check(await run(join(tmp, 'stderr.log')));
  });

});
