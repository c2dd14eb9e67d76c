/**
 * Answers that come from the privilege-separated file tools worker, over real HTTP: the worker's JSON text
 * reaches the socket as its UTF-8 bytes, never decoded (utils/json-text.ts), so what must hold is checked on the
 * bytes the client gets: exactly the JSON of the response and a newline, Content-Length their size, names and
 * contents that are not ASCII intact. The gateway runs as root here (as in CI), with the workspace handed to
 * the sandbox user, so the file tools run in the worker.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callBody, startGateway, type TestGateway } from '../helpers/server.js';
import { childPids } from '../security/helpers.js';

const NAMES = ['a plain.txt', 'é "quoted" ☃ 😀.txt', 'back\\slash\ttab.txt', 'ünïcödé ✓'];
const CONTENT = 'héllo wörld — ✓ 𝄞 "quoted" \\ back\\slash\ttab\r\nline2\n';

let base: string;
let gw: TestGateway;

beforeAll(async () => {
  if (process.getuid?.() !== 0)
    throw new Error('this suite runs as root (like CI): only a root gateway runs the file tools in a worker');
  base = mkdtempSync(join(tmpdir(), 'a2e-worker-answers-'));
  chmodSync(base, 0o755); // the sandbox user must reach the workspace
  const ws = join(base, 'ws');
  mkdirSync(join(ws, 'dir'), { recursive: true });
  for (const name of NAMES) writeFileSync(join(ws, 'dir', name), CONTENT);
  gw = await startGateway({
    config: {
      tools: { fs: { root: ws }, shell: { enabled: true }, eval: { enabled: false }, http: { enabled: false } },
    },
  });
});

afterAll(async () => {
  await gw?.close();
  if (base) rmSync(base, { recursive: true, force: true });
});

/** POST /tool/call, the answer's raw bytes. */
async function callRaw(tool: string, args: Record<string, unknown>): Promise<{ res: Response; bytes: Buffer }> {
  const res = await fetch(`${gw.url}/tool/call`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(callBody(tool, args)),
  });
  return { res, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** The bytes are one JSON response, exactly as JSON.stringify writes it, and a newline; its parsed value. */
function expectExactJson(res: Response, bytes: Buffer): any {
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/json');
  expect(Number(res.headers.get('content-length'))).toBe(bytes.length);
  const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes); // well-formed UTF-8, or this throws
  const value = JSON.parse(text);
  expect(text).toBe(`${JSON.stringify(value)}\n`);
  return value;
}

describe('file tools answers from the worker, as bytes', () => {
  it('the file tools run in the worker, as the workspace owner', async () => {
    const { res, bytes } = await callRaw('list_dir', { path: 'dir' });
    expect(expectExactJson(res, bytes).data.success).toBe(true);
    const workers = childPids().filter((pid) =>
      readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('worker-main.js'),
    );
    expect(workers).toHaveLength(1);
    expect(readFileSync(`/proc/${workers[0]}/status`, 'utf8')).toMatch(/^Uid:\t65534\t/m);
  });

  it('list_dir: every name intact, sorted, in exactly the JSON of the response', async () => {
    const { res, bytes } = await callRaw('list_dir', { path: 'dir' });
    const answer = expectExactJson(res, bytes);
    expect(answer).toMatchObject({
      type: 'tool/call/resp',
      data: { success: true, tool_name: 'list_dir', events: [] },
    });
    const sorted = [...NAMES].sort();
    expect(answer.data.data).toEqual({
      path: 'dir',
      entries: sorted.map((name) => ({ path: `dir/${name}`, type: 'file' })),
      truncated: false,
    });
  });

  it('read_file: the content intact, in exactly the JSON of the response', async () => {
    const { res, bytes } = await callRaw('read_file', { path: `dir/${NAMES[1]}` });
    const answer = expectExactJson(res, bytes);
    expect(answer.data.success).toBe(true);
    expect(answer.data.data.content).toBe(CONTENT);
  });

  it('a failure from the worker is answered the same way', async () => {
    const { res, bytes } = await callRaw('read_file', { path: 'dir/missing ✓.txt' });
    const answer = expectExactJson(res, bytes);
    expect(answer.data).toMatchObject({ success: false, error_code: expect.any(String) });
    expect(answer.data.error).toContain('missing ✓.txt');
  });
});
