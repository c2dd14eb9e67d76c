/**
 * MCP servers as a tool source (plugin "mcp"), against real servers over
 * stdio: the reference @modelcontextprotocol/server-everything and a small
 * SDK-built fixture (test/fixtures/mcp-test-server.mjs) that crashes, waits
 * to be cancelled, prints garbage, or never answers.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/a2a-stub.js';
import { definePlugin, echoTool } from '../helpers/plugins.js';
import { callBody, openSse, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const EVERYTHING = fileURLToPath(new URL('../../node_modules/.bin/mcp-server-everything', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../fixtures/mcp-test-server.mjs', import.meta.url));
const node = process.execPath;

const servers = async (url: string) => (await (await fetch(`${url}/mcp-servers`)).json()).servers as any[];
const call = async (url: string, tool: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  (await postJson(`${url}/tool/call`, callBody(tool, args, extra))).json;

describe('MCP servers as tools (stdio)', () => {
  let gw: TestGateway;
  let dir: string;
  let marker: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'a2e-mcp-client-'));
    marker = join(dir, 'cancelled.txt');
    // A static tool named like one of the fixture's: the native/static one must win.
    const clash = definePlugin('clash', [[{ ...echoTool[0], name: 'fixture_echo' }, echoTool[1]]]);
    gw = await startGateway({
      plugins: [definePlugin('local', [echoTool]), clash],
      config: {
        mcp: {
          servers: {
            everything: { command: EVERYTHING, args: ['stdio'] },
            // Unconfined: it writes the marker file the test reads, and its pid must be the host's.
            fixture: { command: node, args: [FIXTURE, 'normal'], env: { MARKER_FILE: marker }, sandbox: false },
            // Sandboxed by default (bubblewrap works here): reads outside its mounts and the network must fail.
            jail: { command: node, args: [FIXTURE, 'normal'], tools: ['reach'] },
            garbage: { command: node, args: [FIXTURE, 'garbage'], tools: ['pid'] },
          },
          start_wait_ms: 60_000,
          connect_timeout_ms: 30_000,
          restart_min_ms: 100,
        },
      },
    });
  }, 90_000);
  afterAll(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists every server tool as <id>_<tool> with parameters mapped from its JSON Schema', async () => {
    const tools = (await postJson(`${gw.url}/tool/list`, {})).json.tools as any[];
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('everything_echo')).toMatchObject({
      kind: 'mcp',
      toolkit: 'everything',
      tags: expect.arrayContaining(['mcp']),
      input_parameters: [{ name: 'message', type: 'string', required: true, description: 'Message to echo' }],
      input_schema: { type: 'object', required: ['message'] },
    });
    expect(byName.get('everything_get-sum').input_parameters.map((p: any) => [p.name, p.type, p.required])).toEqual([
      ['a', 'number', true],
      ['b', 'number', true],
    ]);
    expect(byName.get('fixture_bounded')).toMatchObject({
      idempotent: true,
      tags: expect.arrayContaining(['read-only', 'idempotent', 'mcp']),
    });
    expect(byName.get('fixture_bounded').input_parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'mode', type: 'string', enum: ['a', 'b'], required: false }),
      ]),
    );
    // allow list: only "pid" of the garbage server
    expect(tools.filter((t) => t.toolkit === 'garbage').map((t) => t.name)).toEqual(['garbage_pid']);

    const status = await servers(gw.url);
    expect(status.map((s) => [s.id, s.transport, s.state, s.sandboxed])).toEqual([
      ['everything', 'stdio', 'ready', true],
      ['fixture', 'stdio', 'ready', false],
      ['jail', 'stdio', 'ready', true],
      ['garbage', 'stdio', 'ready', true],
    ]);
    expect(status[0].tools).toEqual(expect.arrayContaining(['everything_echo', 'everything_get-sum']));
    expect(status[0].server_name).toBe('mcp-servers/everything');
    expect(status[0].pid).toBeGreaterThan(0);
  });

  it('a name clash with a static tool is skipped and reported: the static tool wins', async () => {
    const fixture = (await servers(gw.url)).find((s) => s.id === 'fixture');
    expect(fixture.tools).not.toContain('fixture_echo');
    expect(fixture.skipped).toContainEqual({ tool: 'fixture_echo', reason: 'plugin "clash" offers that name' });
    expect((await call(gw.url, 'fixture_echo', { text: 'local' })).data).toMatchObject({
      success: true,
      data: { text: 'local' },
    });
  });

  it('calls echo and get-sum', async () => {
    const echo = await call(gw.url, 'everything_echo', { message: 'hello mcp' });
    expect(echo.data).toMatchObject({
      success: true,
      data: { text: 'Echo: hello mcp', content: [{ type: 'text', text: 'Echo: hello mcp' }] },
    });
    const sum = await call(gw.url, 'everything_get-sum', { a: 2, b: 40 });
    expect(sum.data.data.text).toMatch(/42/);
  });

  it('keeps an image as a typed item and structured content as it is', async () => {
    const image = await call(gw.url, 'everything_get-tiny-image', {});
    const item = image.data.data.content.find((c: any) => c.type === 'image');
    expect(item).toMatchObject({ type: 'image', mimeType: 'image/png' });
    expect(Buffer.from(item.data, 'base64').subarray(1, 4).toString()).toBe('PNG');
    const structured = await call(gw.url, 'everything_get-structured-content', { location: 'Chicago' });
    expect(structured.data.data.structuredContent).toEqual(
      expect.objectContaining({ temperature: expect.any(Number) }),
    );
  });

  it('validates what input_parameters cannot say with the JSON Schema, naming the path, and fills in defaults', async () => {
    const low = await postJson(
      `${gw.url}/tool/call`,
      callBody('fixture_bounded', { count: 9, code: 'abc', target: true }),
    );
    expect(low.status).toBe(422);
    expect(low.json.code).toBe('invalid_arguments');
    expect(low.json.message).toMatch(/arguments\.count: must be <= 5/);
    expect(low.json.message).toMatch(/arguments\.code: must match pattern/);
    expect(low.json.message).toMatch(/arguments\.target/);
    const nested = await postJson(
      `${gw.url}/tool/call`,
      callBody('fixture_bounded', { count: 2, code: 'ABC', target: 1, nested: { level: -1 } }),
    );
    expect(nested.status).toBe(422);
    expect(nested.json.message).toMatch(/arguments\.nested\.level: must be >= 0/);
    const ok = await call(gw.url, 'fixture_bounded', { count: 2, code: 'ABC', target: 'x' });
    expect(ok.data.data.structuredContent).toEqual({ args: { count: 2, code: 'ABC', target: 'x', mode: 'a' } });
  });

  it('streams the progress of a long-running operation as it happens', async () => {
    const started = performance.now();
    const stream = await openSse(`${gw.url}/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(
        callBody('everything_trigger-long-running-operation', { duration: 2, steps: 4 }, { streaming: true }),
      ),
    });
    const events = await stream.rest();
    const progress = events.filter((e) => e.event === 'tool/event' && e.json.kind === 'progress');
    const done = events.find((e) => e.event === 'tool/call/resp')!;
    // The last step's notification comes right before the result; the MCP SDK client runs notification handlers a
    // microtask late and drops one that loses that race, so only the first three are certain.
    expect(progress.map((e) => e.json.data.pct).slice(0, 3)).toEqual([25, 50, 75]);
    expect(progress[0]!.json.data).toMatchObject({ progress: 1, total: 4 });
    expect(done.json.data.success).toBe(true);
    // Arrival times: the first step arrived well before the end (2 s of work), the steps spread over it.
    expect(done.at - progress[0]!.at).toBeGreaterThan(800);
    expect(progress[2]!.at - progress[0]!.at).toBeGreaterThan(600);
    expect(progress[0]!.at - started).toBeLessThan(done.at - started);
  });

  it('a timeout stops the call and sends notifications/cancelled to the server', async () => {
    const t0 = Date.now();
    const r = await call(gw.url, 'fixture_wait', { id: 'timeout-1' }, { timeout: 1 });
    expect(r.data).toMatchObject({
      success: false,
      error_code: 'tool_error',
      error: expect.stringMatching(/timed out after 1 s/),
    });
    expect(Date.now() - t0).toBeLessThan(10_000);
    await waitFor('the server to see notifications/cancelled', () => {
      try {
        return readFileSync(marker, 'utf8').includes('cancelled timeout-1');
      } catch {
        return false;
      }
    });
    const long = await call(
      gw.url,
      'everything_trigger-long-running-operation',
      { duration: 30, steps: 3 },
      { timeout: 1 },
    );
    expect(long.data.error).toMatch(/timed out/);
  });

  it('sends notifications/cancelled only for a call that is stopped, never for one that finished', async () => {
    for (let i = 0; i < 3; i++) expect((await call(gw.url, 'fixture_pid', {})).data.success).toBe(true);
    expect((await call(gw.url, 'fixture_wait', { id: 'stopped-1' }, { timeout: 1 })).data.success).toBe(false);
    await waitFor('the stopped call to be cancelled', () =>
      readFileSync(marker, 'utf8').includes('cancelled stopped-1'),
    );
    const lines = readFileSync(marker, 'utf8').split('\n');
    const tools = new Map(lines.filter((l) => l.startsWith('call ')).map((l) => [l.split(' ')[1], l.split(' ')[2]]));
    const cancelled = lines.filter((l) => l.startsWith('cancel ')).map((l) => tools.get(l.split(' ')[1]));
    expect(cancelled.length).toBeGreaterThan(0);
    expect(cancelled.every((tool) => tool === 'wait')).toBe(true);
    expect([...tools.values()].filter((t) => t === 'pid').length).toBeGreaterThanOrEqual(3);
  });

  it('a server that crashes mid-call: a clear tool_error, then it is restarted and the next call works', async () => {
    const before = Number((await call(gw.url, 'fixture_pid', {})).data.data.text);
    const crashed = await call(gw.url, 'fixture_crash', {});
    expect(crashed.data).toMatchObject({ success: false, error_code: 'tool_error' });
    expect(crashed.data.error).toBe(
      'MCP server "fixture" went away while the call ran (exit code 3); it is being restarted, retry the call',
    );
    const status = await waitFor(
      'the fixture to be ready again',
      async () => {
        const s = (await servers(gw.url)).find((x) => x.id === 'fixture');
        return s.state === 'ready' && s.restarts >= 1 ? s : undefined;
      },
      30_000,
    );
    expect(status.last_error).toBeNull();
    const after = Number((await call(gw.url, 'fixture_pid', {})).data.data.text);
    expect(after).toBeGreaterThan(0);
    expect(after).not.toBe(before);
  });

  it('a sandboxed server cannot read outside its mounts or reach the network (an unconfined one can)', async () => {
    const secret = join(dir, 'secret.txt');
    writeFileSync(secret, 'top secret');
    const peer = createServer((_req, res) => res.end('hello')).listen(0, '127.0.0.1');
    await once(peer, 'listening');
    const url = `http://127.0.0.1:${(peer.address() as AddressInfo).port}/`;
    try {
      const free = await call(gw.url, 'fixture_reach', { path: secret, url });
      expect(free.data.data.structuredContent).toEqual({ read: 'read: top secret', net: 'status 200' });
      const jailed = await call(gw.url, 'jail_reach', { path: secret, url });
      expect(jailed.data.data.structuredContent.read).toBe('error: ENOENT');
      expect(jailed.data.data.structuredContent.net).toMatch(/^error: /);
    } finally {
      peer.close();
    }
  });

  it('a server that prints garbage on stdout still serves its tools', async () => {
    const r = await call(gw.url, 'garbage_pid', {});
    expect(r.data.success).toBe(true);
    expect(Number(r.data.data.text)).toBeGreaterThan(0);
  });
});

describe('an MCP server that never answers initialize', () => {
  it('is reported failed and retried, and the gateway serves its other tools', async () => {
    const gw = await startGateway({
      plugins: [definePlugin('local', [echoTool])],
      config: {
        mcp: {
          servers: { silent: { command: node, args: [FIXTURE, 'silent'] } },
          start_wait_ms: 10_000,
          connect_timeout_ms: 500,
          restart_min_ms: 100,
        },
      },
    });
    try {
      expect((await call(gw.url, 'echo', { text: 'still here' })).data.success).toBe(true);
      const s = await waitFor('a retry', async () => {
        const x = (await servers(gw.url))[0];
        return x.restarts >= 1 && x.state === 'failed' ? x : undefined;
      });
      expect(s.last_error).toMatch(/did not answer initialize\/tools\/list within 500 ms \(mcp.connect_timeout_ms\)/);
      expect(s.tools).toEqual([]);
    } finally {
      await gw.close();
    }
  });
});

describe('an MCP server that does not come up says why', () => {
  it("its stderr's last lines are in the error and GET /mcp-servers (its env values masked)", async () => {
    const gw = await startGateway({
      config: {
        mcp: {
          servers: {
            weather: { command: node, args: [FIXTURE, 'complains'], env: { API_KEY: 'k-123456' }, sandbox: false },
          },
          start_wait_ms: 10_000,
          connect_timeout_ms: 3000,
          restart_min_ms: 60_000,
        },
      },
    });
    try {
      const s = await waitFor('the start to fail', async () => {
        const x = (await servers(gw.url))[0];
        return x.state === 'failed' ? x : undefined;
      });
      expect(s.last_error).toBe(
        'the server did not answer initialize/tools/list within 3000 ms (mcp.connect_timeout_ms); its stderr ended with: ' +
          '"starting the weather server | error: the forecast service refused key ***; waiting for a config reload"',
      );
    } finally {
      await gw.close();
    }
  });

  it('a server that exits at start: its stderr is in the error', async () => {
    const gw = await startGateway({
      config: {
        mcp: {
          servers: {
            broken: {
              command: node,
              args: ['-e', 'console.error("Error: Cannot find module \'left-pad\'"); process.exit(3)'],
              sandbox: false,
            },
          },
          start_wait_ms: 10_000,
          restart_min_ms: 60_000,
        },
      },
    });
    try {
      const s = await waitFor('the start to fail', async () => {
        const x = (await servers(gw.url))[0];
        return x.state === 'failed' ? x : undefined;
      });
      expect(s.last_error).toMatch(/its stderr ended with: "Error: Cannot find module 'left-pad'"$/);
    } finally {
      await gw.close();
    }
  });
});

describe('an MCP server over Streamable HTTP (server-everything)', () => {
  it('lists, calls and streams progress like over stdio', async () => {
    const probe = createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const server = spawn(EVERYTHING, ['streamableHttp'], {
      env: { PATH: process.env.PATH ?? '', PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    server.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    let gw: TestGateway | undefined;
    try {
      await waitFor('server-everything to listen', () => stderr.includes(`listening on port ${port}`), 30_000);
      gw = await startGateway({
        config: { mcp: { servers: { web: { url: `http://127.0.0.1:${port}/mcp` } }, start_wait_ms: 30_000 } },
      });
      const status = (await servers(gw.url))[0];
      expect(status).toMatchObject({
        id: 'web',
        transport: 'http',
        state: 'ready',
        sandboxed: false,
        target: `http://127.0.0.1:${port}/mcp`,
      });
      expect(status.tools).toEqual(expect.arrayContaining(['web_echo', 'web_get-sum']));
      expect((await call(gw.url, 'web_echo', { message: 'over http' })).data.data.text).toBe('Echo: over http');
      expect((await call(gw.url, 'web_get-sum', { a: 1, b: 2 })).data.data.text).toMatch(/3/);
      const stream = await openSse(`${gw.url}/tool/call`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(
          callBody('web_trigger-long-running-operation', { duration: 1, steps: 2 }, { streaming: true }),
        ),
      });
      const events = await stream.rest();
      const progress = events.filter((e) => e.event === 'tool/event' && e.json.kind === 'progress');
      expect(progress[0]!.json.data).toMatchObject({ pct: 50, progress: 1, total: 2 });
      expect(events.at(-1)!.json.data.success).toBe(true);
    } finally {
      await gw?.close();
      if (server.exitCode === null && server.signalCode === null) {
        const exited = once(server, 'exit');
        server.kill();
        await exited;
      }
    }
  });
});
