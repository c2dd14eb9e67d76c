/**
 * stderr is written synchronously, to a regular file as to a pipe
 * (src/logger.ts): either way every line arrives, whole and in order (plain
 * lines and pino's own lines interleaved), redaction is kept, and the lines
 * still pending when the process exits are written. Also when stderr is a
 * non-blocking pipe and one turn writes more than it holds: the writes the
 * kernel takes only in part, or refuses (EAGAIN), lose nothing.
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

// Turns of ~1.5 MB each (multi-byte characters in every line), far more than a pipe's buffer: each turn's one write is
// taken only in part, the rest refused until the reader has caught up. The stderr stream made first, as any use of
// process.stderr does, puts the pipe in non-blocking mode (checked: the test is about that mode).
const BIG_TURNS = 3;
const BIG_LINES = 2000;
const bigScript = `
const { readFileSync } = await import('node:fs');
const { createLogger } = await import(${JSON.stringify(dist('logger.js'))});
const { LazyChildLogger } = await import(${JSON.stringify(dist('engine/index.js'))});
process.stderr;
const flags = parseInt(/flags:\\s+(\\d+)/.exec(readFileSync('/proc/self/fdinfo/2', 'utf8'))[1], 8);
if ((flags & 0o4000) === 0) { process.stderr.write('stderr is a blocking pipe here: this test needs it non-blocking'); process.exit(3); }
const root = createLogger('info');
const pad = 'é✓'.repeat(200);
for (let turn = 0, seq = 0; turn < ${BIG_TURNS}; turn++) {
  for (let i = 0; i < ${BIG_LINES}; i++, seq++) new LazyChildLogger(root, { request_id: 'r-' + seq }).line('info', { seq, pad }, 'big line');
  if (turn < ${BIG_TURNS} - 1) await new Promise((r) => setImmediate(r));
}
process.exit(0);
`;

/** Run the script with its stderr on a pipe (the text it wrote) or on the file `path` (then read back). */
function run(stderrFile?: string, code = script): Promise<string> {
  const fd = stderrFile === undefined ? undefined : openSync(stderrFile, 'w');
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
    stdio: ['ignore', 'ignore', fd ?? 'pipe'],
  });
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

  it('a non-blocking pipe given more in one turn than it holds: every line whole, in order, none lost', async () => {
    const text = await run(undefined, bigScript);
    const lines = text.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(BIG_TURNS * BIG_LINES);
    lines.forEach((line, i) =>
      expect(JSON.parse(line)).toMatchObject({ seq: i, request_id: `r-${i}`, pad: 'é✓'.repeat(200), msg: 'big line' }),
    );
  });
});
