/**
 * Back-pressure on the file tools' progress events: `grep` over a tree large enough that its status events
 * (one per 200 files searched) come to more than `limits.call_events_bytes`, followed by a watcher that does not
 * read. The walk must pause (the call's event count stops growing while it is still running) instead of running
 * to its end with its oldest events dropped; the watcher then gets every event, in order, with no gap. Run twice:
 * in the gateway's process, and in the privilege-separated worker (a root gateway whose workspace belongs to the
 * sandbox user), where the pause is asked of the gateway over the worker's channel.
 *
 * The watcher is the engine's own (call.watch()): a paused SSE client would not do, as the socket's buffers alone
 * hold more than every status event such a walk can send.
 */
import { chmodSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS } from '../../src/index.js';
import { ToolCallRequest } from '../../src/protocol/index.js';
import { startGateway, type TestGateway } from '../helpers/server.js';
import { childPids } from '../security/helpers.js';
import { waitFor } from './procs.js';

const KB = 1024;
const DIRS = 20;
const PER_DIR = 1000; // 20,000 files: 101 status events of ~730 counted bytes each, 74 KB against a 64 KB budget
const FILES = DIRS * PER_DIR;

let base: string;
beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'a2e-fs-bp-'));
  chmodSync(base, 0o755); // the sandbox user must reach the workspace
  // Hard links to one file: writing 20,000 files takes this machine's file system 16 s, linking them 0.2 s.
  const one = join(base, 'one.txt');
  writeFileSync(one, 'some text\n');
  for (let d = 0; d < DIRS; d++) {
    const dir = join(base, 'ws', `d${d}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < PER_DIR; f++) linkSync(one, join(dir, `f${f}.txt`));
  }
}, 120_000);
afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

/**
 * The call's event count once it has stood still for 40 looks 25 ms apart (a second: a walk that is not held
 * emits one every 200 files, far more often) while the call ran; or 'settled'.
 */
function pausedOrSettled(call: { eventCount: number; settled: boolean }): Promise<number | 'settled'> {
  let last = -1;
  let looks = 0;
  return waitFor(
    'the walk to pause or finish',
    () => {
      if (call.settled) return 'settled' as const;
      looks = call.eventCount === last ? looks + 1 : 1;
      last = call.eventCount;
      return looks >= 40 && last > 0 ? last : undefined;
    },
    60_000,
  );
}

describe.each([
  ['in the gateway', false],
  ['in the privilege-separated worker', true],
] as const)('grep back-pressure (%s)', (_where, worker) => {
  let gw: TestGateway;
  beforeAll(async () => {
    if (worker && process.getuid?.() !== 0)
      throw new Error('this suite runs as root (like CI): only a root gateway runs the file tools in a worker');
    gw = await startGateway({
      config: {
        tools: {
          fs: { root: join(base, 'ws'), privilege_separation: worker },
          shell: { enabled: worker },
          eval: { enabled: false },
          http: { enabled: false },
        },
        calls: { max_events: 100_000 },
        limits: { call_events_bytes: 64 * KB },
      },
    });
  });
  afterAll(() => gw?.close());

  it('a walk whose watcher does not read pauses; the watcher then gets every status event, with no gap', async () => {
    const engine = gw.gateway.engine;
    const call = engine.start(
      ToolCallRequest.parse({
        tool_name: 'grep',
        arguments: { pattern: 'no such text', path: '.' },
        streaming: true,
        timeout: 120,
      }),
      ANONYMOUS,
    );
    const watcher = call.watch(-1);
    const paused = await pausedOrSettled(call);
    expect(paused, 'the walk ran to its end while its watcher read nothing').not.toBe('settled');
    // Held once the watcher is more than a quarter of the budget (16 KB, ~22 events) behind: well before the end.
    expect(paused as number).toBeGreaterThanOrEqual(20);
    expect(paused as number).toBeLessThan(40);
    const workers = childPids().filter((pid) =>
      readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('worker-main.js'),
    );
    expect(workers, 'where the walk ran').toHaveLength(worker ? 1 : 0);

    const seqs: number[] = [];
    const messages: string[] = [];
    let gaps = 0;
    for await (const batch of watcher) {
      if (batch.gap) gaps++;
      for (const e of batch.events) {
        seqs.push(e.seq);
        messages.push((e.data as { message: string }).message);
      }
    }
    const response = await call.result;
    expect(response.data).toMatchObject({ success: true, data: { files_searched: FILES, matches: [] } });
    expect(gaps).toBe(0);
    expect(seqs).toEqual(Array.from({ length: FILES / 200 + 1 }, (_, i) => i));
    expect(messages.at(0)).toBe('searched 200 files, 0 matches so far');
    expect(messages.at(-1)).toBe(`searched ${FILES} files, 0 matches`);
  }, 120_000);
});
