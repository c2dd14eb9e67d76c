/**
 * runProcess's back-pressure on its own, with a real child process and a reader that takes its time: every line
 * arrives once, in order, and the result waits for the last ones, even though the child exits (and Node resumes its
 * pipes by itself) long before the reader has taken them all.
 */
import { describe, expect, it } from 'vitest';
import { runProcess } from '../../src/tools/shell/run.js';

describe('runProcess back-pressure', () => {
  it('passes every line on in order to a slow reader after the command has exited', async () => {
    const lines: string[] = [];
    let waits = 0;
    const result = await runProcess({
      file: 'seq',
      args: ['1', '20000'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      cwd: process.cwd(),
      maxOutputBytes: 1024 * 1024,
      timeoutMs: 60_000,
      signal: new AbortController().signal,
      onLine: (_stream, line) => lines.push(line),
      // A reader that needs a timer tick for every burst: seq (108,894 bytes) is done long before it is.
      linesTaken: () => {
        waits++;
        return new Promise((resolve) => setTimeout(resolve, 1));
      },
    });
    expect(result).toMatchObject({ exitCode: 0, killed: null, truncated: false });
    expect(result.stdout.length).toBe(108_894);
    expect(lines).toHaveLength(20_000);
    const wrong = lines.findIndex((l, i) => l !== String(i + 1));
    expect(wrong === -1 ? null : { at: wrong, around: lines.slice(Math.max(0, wrong - 2), wrong + 3) }).toBeNull();
    expect(waits).toBeGreaterThan(100);
  }, 60_000);
});
