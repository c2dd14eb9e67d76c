/**
 * mcp.max_message_bytes: a message from an MCP server over the limit fails
 * the call it answers (saying so), or is skipped when it answers none, and
 * never takes the gateway down; the server keeps serving. Against a real
 * SDK-built server (test/fixtures/mcp-big-message-server.mjs) over stdio and
 * over Streamable HTTP (SSE and JSON answers).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/a2a-stub.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/mcp-big-message-server.mjs', import.meta.url));
const MiB = 1024 * 1024;

const call = async (url: string, tool: string, args: Record<string, unknown>) =>
  (await postJson(`${url}/tool/call`, callBody(tool, args))).json;
const serverOf = async (url: string, id: string) =>
  ((await (await fetch(`${url}/mcp-servers`)).json()).servers as any[]).find((s) => s.id === id);

describe('an MCP server over stdio sending messages over mcp.max_message_bytes', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    // The default limit (10 MiB, the size that used to throw from the SDK's reader and end the process).
    gw = await startGateway({
      config: {
        mcp: {
          servers: { big: { command: process.execPath, args: [FIXTURE], sandbox: false } },
          start_wait_ms: 30_000,
        },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
  });

  it('fails the call whose answer is too large, saying so, and the same server process serves the next call', async () => {
    const before = await serverOf(gw.url, 'big');
    expect(before.state).toBe('ready');
    const r = await call(gw.url, 'big_big', { bytes: 11 * MiB });
    expect(r.data).toMatchObject({ success: false, error_code: 'tool_error' });
    expect(r.data.error).toMatch(
      /^MCP server "big" answered with a message of (more than )?\d+ bytes, over mcp\.max_message_bytes \(10485760\); the answer was dropped: ask the tool for less/,
    );
    expect(r.data.error.length).toBeLessThan(400);
    expect((await call(gw.url, 'big_small', {})).data).toMatchObject({ success: true, data: { text: 'small' } });
    const after = await serverOf(gw.url, 'big');
    expect(after).toMatchObject({ state: 'ready', restarts: 0, pid: before.pid });
  }, 60_000);

  it('an answer under the limit passes whole', async () => {
    const r = await call(gw.url, 'big_big', { bytes: 2 * MiB });
    expect(r.data.success).toBe(true);
    expect(r.data.data.text).toHaveLength(2 * MiB);
  }, 60_000);

  it('skips an oversized message that answers no call (a log notification); the call it came with still gets its answer', async () => {
    const r = await call(gw.url, 'big_noisy', { bytes: 11 * MiB });
    expect(r.data).toMatchObject({ success: true, data: { text: 'after the noise' } });
    expect((await serverOf(gw.url, 'big')).restarts).toBe(0);
  }, 60_000);

  it('a server writing one line without end is stopped past 16 times the limit and started again; the next call works', async () => {
    const before = await serverOf(gw.url, 'big');
    const r = await call(gw.url, 'big_endless', {});
    expect(r.data).toMatchObject({ success: false, error_code: 'tool_error' });
    expect(r.data.error).toBe(
      `MCP server "big" went away while the call ran (stopped by the gateway: it wrote more than ${16 * 10 * MiB} bytes without ending the line); it is being restarted, retry the call`,
    );
    const after = await waitFor(
      'the server to be ready again',
      async () => {
        const s = await serverOf(gw.url, 'big');
        return s.state === 'ready' && s.restarts === before.restarts + 1 ? s : undefined;
      },
      30_000,
    );
    expect(after.pid).not.toBe(before.pid);
    expect((await call(gw.url, 'big_small', {})).data).toMatchObject({ success: true, data: { text: 'small' } });
  }, 60_000);
});

/** Start the fixture's Streamable HTTP mode on an ephemeral port of 127.0.0.1. */
async function startHttpFixture(mode: 'http' | 'http-json'): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, [FIXTURE, mode, '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  const port = Number(/^listening (\d+)$/.exec(line)?.[1]);
  if (!port) throw new Error(`the fixture said ${JSON.stringify(line)}`);
  return { url: `http://127.0.0.1:${port}/mcp`, stop: () => child.kill('SIGKILL') };
}

describe('an MCP server over Streamable HTTP sending messages over mcp.max_message_bytes', () => {
  let gw: TestGateway;
  let sse: { url: string; stop(): void };
  let json: { url: string; stop(): void };

  beforeAll(async () => {
    [sse, json] = await Promise.all([startHttpFixture('http'), startHttpFixture('http-json')]);
    gw = await startGateway({
      config: {
        mcp: {
          servers: { sse: { url: sse.url }, json: { url: json.url } },
          max_message_bytes: MiB,
          start_wait_ms: 30_000,
        },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    sse?.stop();
    json?.stop();
  });

  const tooLarge =
    /^MCP server "(sse|json)" answered with a message of more than 1048576 bytes, over mcp\.max_message_bytes \(1048576\); the answer was dropped/;

  it.each(['sse', 'json'])(
    '%s: fails the call whose answer is too large, saying so; smaller answers and the next call pass',
    async (id) => {
      expect((await serverOf(gw.url, id)).state).toBe('ready');
      const r = await call(gw.url, `${id}_big`, { bytes: 3 * MiB });
      expect(r.data).toMatchObject({
        success: false,
        error_code: 'tool_error',
        error: expect.stringMatching(tooLarge),
      });
      expect(r.data.error).toContain(`"${id}"`);
      const fits = await call(gw.url, `${id}_big`, { bytes: MiB - 4096 });
      expect(fits.data.success).toBe(true);
      expect(fits.data.data.text).toHaveLength(MiB - 4096);
      expect((await call(gw.url, `${id}_small`, {})).data).toMatchObject({ success: true, data: { text: 'small' } });
      expect(await serverOf(gw.url, id)).toMatchObject({ state: 'ready', last_error: null });
    },
    60_000,
  );

  it("sse: an oversized notification on a call's stream fails that call (the rest of its stream is not read), not the next", async () => {
    const r = await call(gw.url, 'sse_noisy', { bytes: 3 * MiB });
    expect(r.data).toMatchObject({ success: false, error: expect.stringMatching(tooLarge) });
    expect((await call(gw.url, 'sse_noisy', { bytes: 1000 })).data).toMatchObject({
      success: true,
      data: { text: 'after the noise' },
    });
  }, 60_000);
});

/**
 * A hand-written Streamable HTTP server answering JSON in chunks (no content-length, so its size is known only
 * by counting): initialize, tools/list, and tools/call of "big" with `bytes` characters.
 */
async function startChunkedServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(async (req, res) => {
    // No stream of server messages (GET) and no sessions (DELETE): 405, as the spec has it.
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (msg.id === undefined) return void res.writeHead(202).end();
    const result =
      msg.method === 'initialize'
        ? {
            protocolVersion: msg.params.protocolVersion,
            capabilities: { tools: {} },
            serverInfo: { name: 'chunked', version: '1' },
          }
        : msg.method === 'tools/list'
          ? { tools: [{ name: 'big', inputSchema: { type: 'object', properties: { bytes: { type: 'integer' } } } }] }
          : { content: [{ type: 'text', text: 'x'.repeat(msg.params.arguments.bytes) }] };
    const text = JSON.stringify({ jsonrpc: '2.0', id: msg.id, result });
    res.writeHead(200, { 'content-type': 'application/json' });
    for (let at = 0; at < text.length; at += 64 * 1024) res.write(text.slice(at, at + 64 * 1024));
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

describe('an MCP server answering JSON without content-length over mcp.max_message_bytes', () => {
  let gw: TestGateway;
  let chunked: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    chunked = await startChunkedServer();
    gw = await startGateway({
      config: { mcp: { servers: { chunked: { url: chunked.url } }, max_message_bytes: MiB, start_wait_ms: 30_000 } },
    });
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    await chunked?.close();
  });

  it('counts the answer as it arrives: over the limit fails the call, saying so; under it passes whole', async () => {
    const r = await call(gw.url, 'chunked_big', { bytes: 3 * MiB });
    expect(r.data).toMatchObject({ success: false, error_code: 'tool_error' });
    expect(r.data.error).toMatch(
      /^MCP server "chunked" answered with a message of more than 1048576 bytes, over mcp\.max_message_bytes \(1048576\)/,
    );
    const fits = await call(gw.url, 'chunked_big', { bytes: MiB - 4096 });
    expect(fits.data.success).toBe(true);
    expect(fits.data.data.text).toHaveLength(MiB - 4096);
  }, 60_000);
});
