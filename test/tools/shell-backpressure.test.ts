/**
 * Back-pressure on run_command's streamed output, over real HTTP with a real bubblewrap sandbox: a command that
 * prints far more lines than `limits.call_events_bytes` holds, read by an SSE client that does not read for a
 * while. The command must block on its full stdout (seen in /proc: the process sleeps in a write to its pipe —
 * a socket pair, as Node makes them — and writes nothing more) instead of running to its end with its lines
 * dropped; the client then gets every line, in order, with no gap notice. A blocked command is still killed when the client goes away or its timeout passes.
 */
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gapNotices, pausedCall as pausedSseCall } from '../helpers/paused-sse.js';
import { startGateway, type TestGateway } from '../helpers/server.js';
import { processTree, waitFor } from './procs.js';

const KB = 1024;
// `seq 1 200000`: 1,288,895 bytes of output, ~140 MB of log events (over 2,000 times the call's budget); the pipe and
// the sockets on the way hold a few hundred KB, so a command that is held back blocks long before its end.
const LINES = 200_000;
const OUTPUT_BYTES = 1_288_895;
let base: string;
let gw: TestGateway;

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'a2e-shell-bp-'));
  chmodSync(base, 0o755); // the sandbox user must be able to reach the workspace inside it
  gw = await startGateway({
    config: {
      tools: {
        fs: { root: join(base, 'ws') },
        shell: { enabled: true, max_output_bytes: 2048 * KB },
        eval: { enabled: false },
      },
      calls: { max_events: 1_000 },
      limits: { call_events_bytes: 64 * KB, stream_unsent_bytes: 16 * KB },
    },
  });
});

afterAll(async () => {
  await gw?.close();
  rmSync(base, { recursive: true, force: true });
});

/** A streaming run_command call whose answer is not read until `read()`. */
const pausedCall = (args: Record<string, unknown>) => pausedSseCall(gw.url, 'run_command', args);

/** Where the kernel shows a process asleep in a write to a full pipe or socket pair. */
const WRITE_WAIT = /pipe_write|sock_alloc_send|unix_stream_sendmsg|wait_for_unix_gc/;

/** Bytes a process has written so far, when it is asleep writing to a full pipe; null otherwise. */
function blockedOnPipe(pid: number): number | null {
  try {
    if (!WRITE_WAIT.test(readFileSync(`/proc/${pid}/wchan`, 'utf8'))) return null;
    return Number(/^wchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1]);
  } catch {
    return null; // exited meanwhile
  }
}

/**
 * Waits until the command `marker` names has either finished, or sat blocked on its full pipe, having written
 * nothing more, over 4 looks 25 ms apart (a gateway that reads its pipes drains them far sooner).
 */
async function blockedOrFinished(marker: string): Promise<'blocked' | 'finished'> {
  await waitFor('the command to start', () => processTree(marker).size > 0, 20_000);
  const last = new Map<number, { wrote: number; looks: number }>();
  return waitFor(
    'the command to block on its pipe or finish',
    () => {
      const tree = processTree(marker);
      if (tree.size === 0) return 'finished' as const;
      for (const pid of tree) {
        const wrote = blockedOnPipe(pid);
        if (wrote === null) {
          last.delete(pid);
          continue;
        }
        const seen = last.get(pid);
        const looks = seen?.wrote === wrote ? seen.looks + 1 : 1;
        last.set(pid, { wrote, looks });
        if (looks >= 4) return 'blocked' as const;
      }
      return undefined;
    },
    30_000,
  );
}

describe('run_command back-pressure', () => {
  it('blocks a command that outruns a slow SSE reader; the reader gets every line, with no gap', async () => {
    const marker = `a2e-bp-${randomUUID()}`;
    const call = await pausedCall({ argv: ['sh', '-c', `seq 1 ${LINES}`, marker] });
    // The reader takes nothing: the socket, the stream's 16 KB and a quarter of the call's 64 KB fill up.
    expect(await blockedOrFinished(marker), 'the command ran to its end while its reader read nothing').toBe('blocked');

    const frames = await call.read();
    const events = frames.filter((f) => f.event === 'tool/event');
    expect(gapNotices(frames)).toEqual([]);
    expect(events.filter((f) => f.json.kind !== 'log')).toEqual([]);
    expect(events).toHaveLength(LINES);
    const wrong = events.findIndex(
      (f, i) => f.json.seq !== i || f.id !== String(i) || f.json.data.message !== String(i + 1),
    );
    expect(
      wrong === -1
        ? null
        : {
            at: wrong,
            around: events.slice(Math.max(0, wrong - 2), wrong + 3).map((f) => [f.id, f.json.seq, f.json.data.message]),
          },
    ).toBeNull();
    const last = frames.at(-1)!;
    expect(last.event).toBe('tool/call/resp');
    expect(last.json.data).toMatchObject({ success: true, exit_code: 0, truncated: false });
    expect(last.json.data.data.stdout.length).toBe(OUTPUT_BYTES);
  }, 120_000);

  it('kills a command blocked on its pipe when the client goes away', async () => {
    const marker = `a2e-bp-${randomUUID()}`;
    const call = await pausedCall({ argv: ['sh', '-c', 'yes y', marker] });
    expect(await blockedOrFinished(marker)).toBe('blocked');
    call.req.destroy();
    await waitFor('the blocked command to be killed', () => processTree(marker).size === 0, 15_000);
  }, 60_000);

  it('kills a command blocked on its pipe at its timeout, and the reader still gets every line up to there', async () => {
    const marker = `a2e-bp-${randomUUID()}`;
    const call = await pausedCall({ argv: ['sh', '-c', 'yes y', marker], timeout: 2 });
    expect(await blockedOrFinished(marker)).toBe('blocked');
    await waitFor('the blocked command to be killed at its timeout', () => processTree(marker).size === 0, 15_000);

    const frames = await call.read();
    const events = frames.filter((f) => f.event === 'tool/event');
    expect(gapNotices(frames)).toEqual([]);
    expect(events.filter((f) => f.json.kind !== 'log')).toEqual([]);
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((f, i) => f.json.seq === i && f.json.data.message === 'y')).toBe(true);
    const last = frames.at(-1)!;
    expect(last.json.data).toMatchObject({ success: false, error_code: 'tool_error' });
    expect(last.json.data.error).toContain('timed out after 2 s');
  }, 60_000);
});
