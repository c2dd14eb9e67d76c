/**
 * The file tools ask whether their call was stopped only where it matters: before and after each further
 * read of a large file, and at each directory of a recursive walk. A small read_file or a one-directory
 * list_dir finishes without asking, so the call's signal (made by the engine on first use of ctx.signal,
 * and aborted when the call settles) is never made for them. A stopped large read still stops before its
 * next read, with its descriptor closed; a stopped recursive list_dir stops at its next directory.
 */
import { mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataOf } from '../helpers/tool-data.js';
import { ToolError, type ToolOutput } from '../../src/engine/index.js';
import { runFsTool, type FsContext } from '../../src/tools/fs/dispatch.js';
import { WorkspaceQuota } from '../../src/tools/fs/confinement/quota.js';
import { Workspace } from '../../src/tools/fs/confinement/workspace.js';

let tmp: string;
let root: string;
let ws: Workspace;
let quota: WorkspaceQuota;
const LIMITS = { max_read_bytes: 1 << 20, max_write_bytes: 1 << 20 };
const BIG_TEXT = 'line\n'.repeat(60_000) + 'tail!';
const BIG = BIG_TEXT.length;

/** A call context whose signal is backed by `controller` and counts how often it is asked for. */
/** A file tool's answer (runFsTool answers a ToolOutput). */
const run = async (...a: Parameters<typeof runFsTool>) => (await runFsTool(...a)) as ToolOutput;

function context(controller = new AbortController()): FsContext & { reads: number } {
  return {
    reads: 0,
    get signal() {
      this.reads++;
      return controller.signal;
    },
    emit: () => {},
    eventsTaken: () => Promise.resolve(),
  };
}

const openOn = (file: string) =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === file;
    } catch {
      return false;
    }
  }).length;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'a2e-fs-stop-'));
  root = join(tmp, 'ws');
  mkdirSync(join(root, 'tree', 'a', 'b'), { recursive: true });
  writeFileSync(join(root, 'small.txt'), 'hello world\n');
  writeFileSync(join(root, 'big.txt'), BIG_TEXT);
  for (let i = 0; i < 100; i++) writeFileSync(join(root, 'tree', `f${i}.txt`), `${i}\n`);
  writeFileSync(join(root, 'tree', 'a', 'b', 'deep.txt'), 'deep\n');
  ws = new Workspace(root);
  await ws.init();
  quota = new WorkspaceQuota(ws, 0);
});
afterAll(async () => {
  await ws?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('file tools: stop checks', () => {
  it('a small read_file and a one-directory list_dir never ask for the call’s signal', async () => {
    const read = context();
    const out = await run(ws, quota, LIMITS, 'read_file', { path: 'small.txt' }, read);
    expect((out.data as { content: string }).content).toBe('hello world\n');
    expect(read.reads).toBe(0);
    const list = context();
    const listed = await run(ws, quota, LIMITS, 'list_dir', { path: 'tree' }, list);
    expect((dataOf(listed) as { entries: unknown[] }).entries).toHaveLength(101);
    expect(list.reads).toBe(0);
  });

  it('a large read_file asks around each further read, and a stopped one stops there with its descriptor closed', async () => {
    const running = context();
    const whole = await run(ws, quota, LIMITS, 'read_file', { path: 'big.txt' }, running);
    expect((whole.data as { content: string }).content).toBe(BIG_TEXT);
    expect(running.reads).toBeGreaterThanOrEqual(2 * Math.floor(BIG / (64 * 1024)));

    const controller = new AbortController();
    controller.abort();
    const stopped = context(controller);
    const err = await run(ws, quota, LIMITS, 'read_file', { path: 'big.txt' }, stopped).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ToolError);
    expect((err as Error).message).toBe('read canceled');
    expect(stopped.reads).toBe(1); // the check before the second read
    expect(openOn(join(root, 'big.txt'))).toBe(0);
  });

  it('a stopped recursive list_dir stops at its next directory', async () => {
    const controller = new AbortController();
    controller.abort();
    const stopped = context(controller);
    await expect(runFsTool(ws, quota, LIMITS, 'list_dir', { path: 'tree', recursive: true }, stopped)).rejects.toThrow(
      /canceled/,
    );
    expect(stopped.reads).toBeGreaterThan(0);
    const running = context();
    const out = await run(ws, quota, LIMITS, 'list_dir', { path: 'tree', recursive: true }, running);
    expect((dataOf(out) as { entries: { path: string }[] }).entries.map((e) => e.path)).toContain('tree/a/b/deep.txt');
  });
});
