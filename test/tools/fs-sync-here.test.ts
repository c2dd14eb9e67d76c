/**
 * The file tools' system calls made on the calling thread (sync-threads.ts,
 * answerOnThisThread), as the privilege-separated worker makes them: the same
 * answers as through a helper thread, no helper thread started, and after a
 * request slower than the stall limit (a slow file system) the requests go
 * to helper threads for a while, then are answered here again. Its own file:
 * the mode is per process (module).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataOf } from '../helpers/tool-data.js';
import { listDirTool } from '../../src/tools/fs/tools/list.js';
import { readFileTool } from '../../src/tools/fs/tools/read.js';
import { answerOnThisThread, answersOnThisThread, helperThreads } from '../../src/tools/fs/threads/sync-threads.js';
import { Workspace } from '../../src/tools/fs/confinement/workspace.js';

let tmp: string;
let ws: Workspace;
const signal = new AbortController().signal;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'a2e-fs-sync-here-'));
  mkdirSync(join(tmp, 'ws', 'dir'), { recursive: true });
  writeFileSync(join(tmp, 'ws', 'small.txt'), 'hello world\n');
  for (let i = 0; i < 30; i++) writeFileSync(join(tmp, 'ws', 'dir', `f${i}.txt`), 'x'.repeat(i));
  ws = new Workspace(join(tmp, 'ws'));
  await ws.init();
});
afterAll(async () => {
  await ws?.close();
  rmSync(tmp, { recursive: true, force: true });
});

const calls = async () => ({
  read: (await readFileTool(ws, { path: 'small.txt' }, 1 << 20, signal)).data,
  list: dataOf(await listDirTool(ws, { path: 'dir', sizes: true }, signal)),
  missing: await readFileTool(ws, { path: 'dir/nope.txt' }, 1 << 20, signal).catch((err: Error) => err.message),
});

describe('answerOnThisThread', () => {
  it('answers read_file and list_dir on this thread, as a helper thread does, without starting one', async () => {
    answerOnThisThread();
    expect(answersOnThisThread()).toBe(true);
    const here = await calls();
    expect(helperThreads()).toBe(0);
    expect(answersOnThisThread()).toBe(true);
    expect(here.read).toMatchObject({ content: 'hello world\n' });
    expect((here.list as { entries: unknown[] }).entries).toHaveLength(30);
    expect(
      (here.list as { entries: { path: string; size: number }[] }).entries.find((e) => e.path === 'dir/f7.txt')?.size,
    ).toBe(7);
    expect(here.missing).toMatch(/not found|no such|does not exist/i);

    // The same calls through a helper thread give the same answers (a request slower than 0 ms sends them there).
    answerOnThisThread(0, 60_000);
    await readFileTool(ws, { path: 'small.txt' }, 1 << 20, signal);
    expect(answersOnThisThread()).toBe(false);
    const threaded = await calls();
    expect(helperThreads()).toBeGreaterThan(0);
    expect(threaded).toEqual(here);
  });

  it('after a slow request, answers on helper threads for a while, then on this thread again', async () => {
    answerOnThisThread(0, 30);
    expect(answersOnThisThread()).toBe(true);
    await readFileTool(ws, { path: 'small.txt' }, 1 << 20, signal);
    // Slower than 0 ms: the next requests go to a helper thread...
    expect(answersOnThisThread()).toBe(false);
    expect((await readFileTool(ws, { path: 'small.txt' }, 1 << 20, signal)).data).toMatchObject({
      content: 'hello world\n',
    });
    expect(helperThreads()).toBeGreaterThan(0);
    // ...until the 30 ms are over: then the next one is answered here again (and, slow again, sends them away again).
    const offSince = performance.now();
    while (performance.now() - offSince < 40) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(answersOnThisThread()).toBe(true);
    expect(dataOf(await listDirTool(ws, { path: 'dir' }, signal))).toMatchObject({ path: 'dir', truncated: false });
    expect(answersOnThisThread()).toBe(false);
  });
});
