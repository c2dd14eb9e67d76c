/**
 * `a2e-gateway mcp-stdio` (dist/cli.js; `npm run build` first) reading a line
 * longer than server.body_limit_bytes: it answers JSON-RPC -32700 while the
 * line is still coming (nothing of it is kept), skips to its newline and
 * serves the next request; the process lives on. Once a 700 MiB line without
 * a newline ended the process (`Invalid string length`).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const LIMIT = 64 * 1024;

describe('a2e-gateway mcp-stdio reading a line over server.body_limit_bytes', () => {
  let dir: string;
  let child: ChildProcessWithoutNullStreams;
  const answers: any[] = [];
  let waiters: (() => void)[] = [];

  /** The next answer matching `match`, waiting for it. */
  const answer = async (match: (m: any) => boolean, timeoutMs = 30_000): Promise<any> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = answers.find(match);
      if (found) return found;
      if (Date.now() > deadline)
        throw new Error(`no such answer within ${timeoutMs} ms; got ${JSON.stringify(answers).slice(0, 500)}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 200).unref();
      });
    }
  };
  const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'a2e-mcp-stdio-limits-'));
    const config = join(dir, 'gateway.yaml');
    writeFileSync(
      config,
      `server:\n  body_limit_bytes: ${LIMIT}\ntools:\n  fs: { enabled: false }\n  shell: { enabled: false }\n  http: { enabled: false }\n  eval: { enabled: false }\n`,
    );
    child = spawn(process.execPath, [CLI, 'mcp-stdio', '--config', config], {
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn' },
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      answers.push(JSON.parse(line));
      const w = waiters;
      waiters = [];
      for (const resolve of w) resolve();
    });
    send({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    await answer((m) => m.id === 'init');
  }, 60_000);
  afterAll(() => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers -32700 while the line is still coming, skips it to its newline, then serves the next request', async () => {
    // A valid request, 40 times the limit, sent in pieces without its newline yet.
    const pad = 'x'.repeat(64 * 1024);
    child.stdin.write('{"jsonrpc":"2.0","id":"huge","method":"tools/list","params":{"pad":"');
    for (let i = 0; i < 40; i++) child.stdin.write(pad);
    const refused = await answer((m) => m.error?.code === -32700);
    expect(refused).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32700,
        message: `the line is longer than ${LIMIT} bytes (server.body_limit_bytes); it is skipped up to its newline: send smaller messages or raise the limit`,
      },
    });
    // The rest of the line, its newline, and the next request on the same stream.
    child.stdin.write(`${pad}"}}\n`);
    send({ jsonrpc: '2.0', id: 'next', method: 'tools/list', params: {} });
    const next = await answer((m) => m.id === 'next');
    expect(next.result.tools).toBeInstanceOf(Array);
    // The oversized request itself was never answered (it was not read), and only one error was sent for it.
    expect(answers.filter((m) => m.id === 'huge')).toEqual([]);
    expect(answers.filter((m) => m.error?.code === -32700)).toHaveLength(1);
    expect(child.exitCode).toBeNull();
  }, 60_000);

  it('a line under the limit is read as before; one nesting deeper than limits.max_json_depth is refused as POST /mcp refuses it (-32600)', async () => {
    send({ jsonrpc: '2.0', id: 'fits', method: 'tools/list', params: { pad: 'y'.repeat(LIMIT - 200) } });
    expect((await answer((m) => m.id === 'fits')).result.tools).toBeInstanceOf(Array);
    child.stdin.write(`${'['.repeat(100)}${']'.repeat(100)}\n`);
    const deep = await answer((m) => m.error?.code === -32600 && /deeper than 64 levels/.test(m.error.message));
    expect(deep.error.message).toBe(
      'the message nests arrays/objects deeper than 64 levels (limits.max_json_depth); flatten the data',
    );
  }, 60_000);
});
