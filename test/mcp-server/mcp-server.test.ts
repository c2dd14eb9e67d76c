/**
 * The gateway as an MCP server at /mcp, driven by the official MCP SDK client
 * (Client + StreamableHTTPClientTransport) over real HTTP: list and call
 * native and plugin tools, progress notifications while a tool runs, cancel,
 * the token's allow list, 401 without a token, audit and metrics (door "mcp").
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  JSONRPCResultResponseSchema,
  McpError,
  ProgressNotificationSchema,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpDoor } from '../../src/mcp-server/door.js';
import { serveMcpStdio } from '../../src/mcp-server/stdio.js';
import type { AuditRecord } from '../../src/index.js';
import { gatedPlugin, type GateControl } from '../helpers/gated.js';
import { rpcResult, startStub, waitFor } from '../helpers/a2a-stub.js';
import { scrape, sample } from '../helpers/metrics.js';
import { definePlugin, echoTool, failTool } from '../helpers/plugins.js';
import { startGateway, type TestGateway } from '../helpers/server.js';
import { sha256, startSecureGateway, type SecureGateway } from '../security/helpers.js';

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'mcp-door-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  return client;
}

const manyTools = definePlugin(
  'many',
  Array.from({ length: 7 }, (_, i) => [
    { name: `many_${i}`, description: `Tool number ${i}`, tags: i === 0 ? ['read-only'] : [], input_parameters: [] },
    () => ({ i }),
  ]),
);

const shapes = definePlugin('shapes', [
  [
    {
      name: 'shaped',
      description: 'Takes nested, enum and integer arguments',
      idempotent: true,
      input_parameters: [
        { name: 'mode', type: 'string', description: 'How', required: true, enum: ['fast', 'slow'] },
        { name: 'count', type: 'integer', description: 'How many' },
        {
          name: 'target',
          type: 'object',
          description: 'Where',
          properties: { host: { name: 'host', type: 'string', description: 'Host name', required: true } },
        },
      ],
    },
    (args) => ({ got: args }),
  ],
  [{ name: 'answer', description: 'Returns a bare number', input_parameters: [] }, () => 42],
]);

describe('MCP door (/mcp) with the SDK client', () => {
  let gw: TestGateway;
  let gated: GateControl;
  let root: string;
  let client: Client;
  const audit: AuditRecord[] = [];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'a2e-mcp-door-'));
    writeFileSync(join(root, 'hello.txt'), 'hello from the workspace\n');
    gated = gatedPlugin();
    gw = await startGateway({
      config: { tools: { fs: { root } }, mcp: { serve: { page_size: 5 } } },
      plugins: [gated.plugin, definePlugin('more', [failTool]), shapes, manyTools],
    });
    // Audit records as the engine makes them (the same sink feeds the audit file and metrics).
    const engine = gw.gateway.engine as unknown as { audit: (r: AuditRecord) => void };
    const original = engine.audit;
    engine.audit = (r) => {
      audit.push(r);
      original(r);
    };
    client = await connect(gw.url);
  });
  afterAll(async () => {
    await client?.close();
    await gw?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('initializes: server info, tools capability, a supported protocol version', () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'a2e-gateway' });
    expect(client.getServerCapabilities()?.tools).toBeDefined();
  });

  it('lists every tool over cursor pages, with inputSchema, annotations and title', async () => {
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      expect(page.tools.length).toBeLessThanOrEqual(5);
      names.push(...page.tools.map((t) => t.name));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 20);
    const all = gw.gateway.registry.all().map((t) => t.definition.name);
    expect(names).toEqual(all);
    expect(pages).toBe(Math.ceil(all.length / 5));
    expect(names).toEqual(expect.arrayContaining(['read_file', 'echo', 'gated', 'shaped', 'many_6']));

    const tools = new Map<string, any>();
    for (let c: string | undefined, i = 0; i === 0 || c; i++) {
      const page = await client.listTools(c ? { cursor: c } : {});
      for (const t of page.tools) tools.set(t.name, t);
      c = page.nextCursor;
    }
    expect(tools.get('shaped')).toMatchObject({
      title: 'Shaped',
      description: 'Takes nested, enum and integer arguments',
      annotations: { idempotentHint: true },
      inputSchema: {
        type: 'object',
        required: ['mode'],
        additionalProperties: false,
        properties: {
          mode: { type: 'string', enum: ['fast', 'slow'] },
          count: { type: 'integer' },
          target: { type: 'object', required: ['host'], properties: { host: { type: 'string' } } },
        },
      },
    });
    expect(tools.get('many_0').annotations).toEqual({ readOnlyHint: true });
    expect(tools.get('read_file').inputSchema.required).toEqual(['path']);
    expect(tools.get('read_file').title).toBe('Read file');
    // Native tools state every hint, truthfully (a missing destructiveHint reads as "may destroy").
    expect(tools.get('read_file').annotations).toEqual({
      readOnlyHint: true,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(tools.get('list_dir').annotations).toEqual({
      readOnlyHint: true,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(tools.get('write_file').annotations).toEqual({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    });
    expect(tools.get('edit_file').annotations).toEqual({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    });
  });

  it('refuses a cursor it did not make, saying what to send', async () => {
    await expect(client.listTools({ cursor: 'not-a-cursor' })).rejects.toThrow(/invalid cursor: pass the nextCursor/);
  });

  it('calls a native tool: structuredContent and a text rendering', async () => {
    const r = await client.callTool({ name: 'read_file', arguments: { path: 'hello.txt' } });
    expect(r.isError).toBeFalsy();
    expect(JSON.stringify(r.structuredContent)).toContain('hello from the workspace');
    const text = (r.content as { type: string; text: string }[])[0]!;
    expect(text.type).toBe('text');
    expect(JSON.parse(text.text)).toEqual(r.structuredContent);
  });

  it('calls a plugin tool; a bare value is wrapped as { result }', async () => {
    const r = await client.callTool({ name: 'echo', arguments: { text: 'hi there' } });
    expect(r.structuredContent).toEqual({ text: 'hi there' });
    const n = await client.callTool({ name: 'answer', arguments: {} });
    expect(n.structuredContent).toEqual({ result: 42 });
    expect(n.content).toEqual([{ type: 'text', text: '42' }]);
  });

  it("a tool failure is a result with isError and the tool's message", async () => {
    const r = await client.callTool({ name: 'fail', arguments: { message: 'disk on fire' } });
    expect(r.isError).toBe(true);
    expect(r.content).toEqual([{ type: 'text', text: 'disk on fire' }]);
    expect(r.structuredContent).toEqual({ partial: true });
  });

  it('an unknown tool is a protocol error; invalid arguments are a tool execution error under 2025-11-25 (SEP-1303)', async () => {
    const unknown = await client.callTool({ name: 'ecko', arguments: {} }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(McpError);
    expect((unknown as McpError).code).toBe(-32602);
    expect((unknown as McpError).message).toMatch(/no tool named "ecko"/);
    expect((unknown as McpError).data).toMatchObject({ error_code: 'unknown_tool' });

    // The SDK client negotiates 2025-11-25 and sends it as MCP-Protocol-Version: the model reads what to correct.
    const invalid = await client.callTool({ name: 'shaped', arguments: { mode: 'warp', target: { port: 1 } } });
    expect(invalid.isError).toBe(true);
    expect((invalid.content as { text: string }[])[0]!.text).toMatch(/invalid arguments for tool "shaped":.*mode/);
  });

  it('invalid arguments stay a -32602 protocol error for versions before 2025-11-25 (and without the header)', async () => {
    const call = {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'shaped', arguments: { mode: 'warp' } },
    };
    for (const version of ['2025-06-18', '2025-03-26', undefined]) {
      const res = await fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(version ? { 'mcp-protocol-version': version } : {}),
        },
        body: JSON.stringify(call),
      });
      const body = (await res.json()) as { error?: { code: number; message: string; data: unknown }; result?: unknown };
      expect(body.result, version).toBeUndefined();
      expect(body.error).toMatchObject({
        code: -32602,
        message: expect.stringMatching(/invalid arguments for tool "shaped":.*mode/),
        data: { error_code: 'invalid_arguments' },
      });
    }
    const latest = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify(call),
    });
    expect(await latest.json()).toMatchObject({
      id: 7,
      result: {
        isError: true,
        content: [{ type: 'text', text: expect.stringMatching(/invalid arguments for tool "shaped"/) }],
      },
    });
  });

  it('sends progress notifications while the tool runs, then the result', async () => {
    const seen: { progress: Progress; at: number }[] = [];
    let onProgress!: () => void;
    let arrived = new Promise<void>((r) => (onProgress = r));
    const running = client.callTool({ name: 'gated', arguments: { key: 'p1', steps: 3 } }, undefined, {
      onprogress: (progress) => {
        seen.push({ progress, at: performance.now() });
        onProgress();
      },
    });
    for (let i = 0; i < 3; i++) {
      await arrived;
      arrived = new Promise<void>((r) => (onProgress = r));
      // Gate i is still closed: the notification arrived while the tool was blocked on it.
      expect(seen).toHaveLength(i + 1);
      expect(seen[i]!.progress).toMatchObject({ message: `step ${i}`, total: 100 });
      gated.open('p1', i);
    }
    const r = await running;
    expect(r.structuredContent).toEqual({ key: 'p1', steps: 3 });
    expect(seen.map((s) => s.progress.progress)).toEqual([0, 33, 67]);
    const emitted = gated.emittedAt('p1');
    for (let i = 0; i < 3; i++) expect(seen[i]!.at).toBeGreaterThanOrEqual(emitted[i]!);
  });

  it("a client cancel (AbortSignal → notifications/cancelled) fires the tool's signal", async () => {
    const controller = new AbortController();
    let onProgress!: () => void;
    const started = new Promise<void>((r) => (onProgress = r));
    const running = client
      .callTool({ name: 'gated', arguments: { key: 'c1', steps: 2 } }, undefined, {
        signal: controller.signal,
        onprogress: () => onProgress(),
      })
      .catch((e: unknown) => e);
    await started;
    controller.abort('user pressed stop');
    expect(await gated.aborted('c1')).toMatch(/tool "gated" was canceled/);
    expect(await running).toBeInstanceOf(Error);
  });

  it('a cancel reaches only the call with that very id from the same session: not "5" for 5, not another session\'s', async () => {
    const post = (body: object, session: string) =>
      fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'Mcp-Session-Id': session,
        },
        body: JSON.stringify({ jsonrpc: '2.0', ...body }),
      });
    const cancel = async (requestId: string | number, session: string) =>
      expect(
        (await post({ method: 'notifications/cancelled', params: { requestId, reason: 'test' } }, session)).status,
      ).toBe(202);
    const answer = post(
      { id: 5, method: 'tools/call', params: { name: 'gated', arguments: { key: 'scoped', steps: 1 } } },
      'session-a',
    );
    await waitFor('the call to start', () => gated.emittedAt('scoped').length > 0);
    let abortedBy: string | undefined;
    void gated.aborted('scoped').then((reason) => (abortedBy = reason));
    await cancel('5', 'session-a'); // the string "5" is another JSON-RPC id than the number 5
    await cancel(5, 'session-b');
    await cancel(5, '');
    gated.open('scoped', 0);
    const res = await answer;
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: 5, result: { structuredContent: { key: 'scoped', steps: 1 } } });
    expect(abortedBy ?? '').not.toMatch(/cancel/); // (its signal fires "call finished" once it has settled)
    // The same id from the same session does cancel it.
    const again = post(
      { id: 5, method: 'tools/call', params: { name: 'gated', arguments: { key: 'scoped-2', steps: 1 } } },
      'session-a',
    );
    await waitFor('the second call to start', () => gated.emittedAt('scoped-2').length > 0);
    await cancel(5, 'session-a');
    expect(await gated.aborted('scoped-2')).toMatch(/canceled/);
    await again.then((r) => r.body?.cancel()).catch(() => undefined);
  });

  it('answers JSON to a client that accepts only JSON, SSE when a progressToken asks for it', async () => {
    const post = (body: unknown, accept: string) =>
      fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: accept },
        body: JSON.stringify(body),
      });
    const call = (id: number, meta?: object) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'x' }, ...(meta ? { _meta: meta } : {}) },
    });
    const json = await post(call(1), 'application/json');
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await json.json()).toMatchObject({ jsonrpc: '2.0', id: 1, result: { structuredContent: { text: 'x' } } });
    const plain = await post(call(2), 'application/json, text/event-stream');
    expect(plain.headers.get('content-type')).toMatch(/^application\/json/);
    await plain.text();
    const sse = await post(call(3, { progressToken: 'tok' }), 'application/json, text/event-stream');
    expect(sse.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(await sse.text()).toMatch(/event: message\ndata: \{"jsonrpc":"2.0","id":3,"result":/);

    const note = await post(
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      'application/json, text/event-stream',
    );
    expect(note.status).toBe(202);
    const bad = await post({ hello: 1 }, 'application/json');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: -32600, message: expect.stringMatching(/JSON-RPC 2.0/) } });
    const garbage = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: '{oops',
    });
    expect(garbage.status).toBe(400);
    expect(await garbage.json()).toMatchObject({ id: null, error: { code: -32700 } });
    const unknownMethod = await post({ jsonrpc: '2.0', id: 9, method: 'resources/list' }, 'application/json');
    expect(await unknownMethod.json()).toMatchObject({ id: 9, error: { code: -32601 } });
    // GET is the notification stream (test/mcp-server/mcp-list-changed.test.ts): it needs Accept: text/event-stream.
    const get = await fetch(`${gw.url}/mcp`, { headers: { Accept: 'application/json' } });
    expect(get.status).toBe(406);
    expect(await get.json()).toMatchObject({
      error: { code: -32600, message: expect.stringMatching(/Accept: text\/event-stream/) },
    });
    const del = await fetch(`${gw.url}/mcp`, { method: 'DELETE' });
    expect(del.status).toBe(405);
    expect(del.headers.get('allow')).toBe('GET, POST');
    await del.text();
  });

  it('answers a client that accepts only text/event-stream with an SSE stream, for every request', async () => {
    const post = (body: object) =>
      fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
        body: JSON.stringify(body),
      });
    const init = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } };
    for (const [id, method, params] of [
      [1, 'initialize', init],
      [2, 'tools/list', {}],
      [3, 'ping', {}],
      [4, 'tools/call', { name: 'echo', arguments: { text: 'hi' } }],
    ] as const) {
      const res = await post({ jsonrpc: '2.0', id, method, params });
      expect(res.status, method).toBe(200);
      expect(res.headers.get('content-type'), method).toMatch(/^text\/event-stream/);
      const data = /^data: (.*)$/m.exec(await res.text());
      expect(JSON.parse(data![1]!), method).toMatchObject({ jsonrpc: '2.0', id, result: expect.any(Object) });
      if (method === 'initialize') expect(res.headers.get('mcp-session-id')).toBeTruthy();
    }
  });

  it('takes JSON-RPC batches under 2025-03-26 (each message as if alone, capped in number) and refuses them from 2025-06-18', async () => {
    const post = (body: unknown, version?: string) =>
      fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          ...(version ? { 'MCP-Protocol-Version': version } : {}),
        },
        body: JSON.stringify(body),
      });
    const batch = [
      { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'echo', arguments: { text: 'one' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'shaped', arguments: { mode: 'warp' } } },
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'ecko', arguments: {} } },
      [{ jsonrpc: '2.0', id: 5, method: 'ping' }],
    ];
    for (const version of ['2025-03-26', undefined]) {
      const res = await post(batch, version);
      expect(res.status).toBe(200);
      const replies = (await res.json()) as any[];
      expect(replies.map((r) => r.id)).toEqual(['a', 2, 3, 4, null]);
      expect(replies[0].result.structuredContent).toMatchObject({ text: 'one' });
      expect(replies[1]).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
      expect(replies[2].error).toMatchObject({ code: -32602, data: { error_code: 'invalid_arguments' } }); // 2025-03-26 keeps -32602
      expect(replies[3].error).toMatchObject({ code: -32602, data: { error_code: 'unknown_tool' } });
      expect(replies[4].error).toMatchObject({
        code: -32600,
        message: expect.stringMatching(/may not contain a batch/),
      });
    }
    const notes = await post([{ jsonrpc: '2.0', method: 'notifications/initialized' }], '2025-03-26');
    expect(notes.status).toBe(202);
    const tooMany = await post(
      Array.from({ length: 51 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' })),
      '2025-03-26',
    );
    expect(tooMany.status).toBe(400);
    expect(await tooMany.json()).toMatchObject({
      error: { code: -32600, message: expect.stringMatching(/batch of 51 messages; at most 50/) },
    });
    const empty = await post([], '2025-03-26');
    expect(empty.status).toBe(400);
    await empty.arrayBuffer();
    for (const version of ['2025-06-18', '2025-11-25']) {
      const refused = await post([{ jsonrpc: '2.0', id: 1, method: 'ping' }], version);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({
        error: { code: -32600, message: expect.stringMatching(new RegExp(`not supported under MCP ${version}`)) },
      });
    }
  });

  it('over stdio: batches after an initialize that agreed on 2025-03-26, not after 2025-11-25 (where invalid arguments are tool errors)', async () => {
    const session = async (version: string, lines: unknown[]) => {
      const input = new PassThrough();
      const output = new PassThrough();
      let out = '';
      output.on('data', (c: Buffer) => (out += c));
      const door = new McpDoor({ engine: gw.gateway.engine, version: 't', pageSize: 10, callTimeoutS: 10 });
      const served = serveMcpStdio({
        door,
        input,
        output,
        logger: gw.gateway.logger,
        caller: { sessionId: '', principal: null },
        maxLineBytes: 1 << 20,
        maxJsonDepth: 64,
      });
      const init = { protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '1' } };
      input.end(
        [{ jsonrpc: '2.0', id: 0, method: 'initialize', params: init }, ...lines]
          .map((l) => JSON.stringify(l))
          .join('\n') + '\n',
      );
      await served;
      return out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
    };
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'two' } } },
    ];
    const old = await session('2025-03-26', [batch]);
    expect(old[0].result.protocolVersion).toBe('2025-03-26');
    expect(old[1].map((r: { id: number }) => r.id)).toEqual([1, 2]);
    expect(old[1][1].result.structuredContent).toMatchObject({ text: 'two' });
    const invalid = {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'shaped', arguments: { mode: 'warp' } },
    };
    const latest = await session('2025-11-25', [batch, invalid]);
    expect(latest[1].error).toMatchObject({
      code: -32600,
      message: expect.stringMatching(/not supported under MCP 2025-11-25/),
    });
    expect(latest[2]).toMatchObject({ id: 3, result: { isError: true } });
  });

  it('every method but POST and GET answers 405 with Allow: GET, POST, which is all /mcp serves', async () => {
    for (const method of ['DELETE', 'PUT', 'PATCH', 'OPTIONS']) {
      const res = await fetch(`${gw.url}/mcp`, { method });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow'), method).toBe('GET, POST');
      await res.arrayBuffer();
    }
  });

  it('writes a tools/call answer as the exact JSON of its reply, whichever way it is built', async () => {
    // The common answer (an object from a gateway tool) is written from one stringify of the data; the rest
    // (bare values, failures) from the reply's objects. Both must be the same bytes the objects would give.
    const post = async (id: string | number, name: string, args: object) => {
      const res = await fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
      });
      expect(res.status).toBe(200);
      return res.text();
    };
    const reply = (id: string | number, result: object) => `${JSON.stringify({ jsonrpc: '2.0', id, result })}\n`;
    const tricky = 'quote " backslash \\ newline \n tab \t unicode é ✓ \u2028 emoji 🎉 </script>';
    const echoed = await post('req-"1"', 'echo', { text: tricky });
    expect(echoed).toBe(
      reply('req-"1"', {
        content: [{ type: 'text', text: JSON.stringify({ text: tricky }) }],
        structuredContent: { text: tricky },
      }),
    );
    const parsed = JSONRPCResultResponseSchema.parse(JSON.parse(echoed));
    expect(CallToolResultSchema.parse(parsed.result).structuredContent).toEqual({ text: tricky });
    expect(await post(7, 'answer', {})).toBe(
      reply(7, { content: [{ type: 'text', text: '42' }], structuredContent: { result: 42 } }),
    );
    expect(await post(8, 'fail', { message: 'no "luck"' })).toBe(
      reply(8, { content: [{ type: 'text', text: 'no "luck"' }], isError: true, structuredContent: { partial: true } }),
    );
    // Native file tools hand the engine their data as JSON text (from the file tools' worker, or written directly
    // as list_dir does): the reply is written from that text, and must be the bytes the parsed objects would give.
    for (const [id, name, args] of [
      [9, 'read_file', { path: 'hello.txt' }],
      [10, 'list_dir', { path: '.' }],
    ] as const) {
      const text = await post(id, name, args);
      const structured = CallToolResultSchema.parse(JSONRPCResultResponseSchema.parse(JSON.parse(text)).result)
        .structuredContent!;
      expect(JSON.stringify(structured)).toContain('hello.txt');
      expect(text).toBe(
        reply(id, { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured }),
      );
    }
  });

  it('pings', async () => {
    await expect(client.ping()).resolves.toEqual({});
  });

  it('audits every MCP call with door "mcp" and counts it in the metrics', async () => {
    audit.length = 0;
    await client.callTool({ name: 'echo', arguments: { text: 'audited' } });
    await client.callTool({ name: 'nope_nope', arguments: {} }).catch(() => undefined);
    expect(audit.map((r) => [r.tool_name, r.door, r.success, r.error_code])).toEqual([
      ['echo', 'mcp', true, null],
      ['nope_nope', 'mcp', false, 'unknown_tool'],
    ]);
    const metrics = await scrape(gw.url);
    expect(
      sample(metrics, 'a2e_tool_calls_total', { tool: 'echo', door: 'mcp', outcome: 'success' }),
    ).toBeGreaterThanOrEqual(1);
  });
});

describe('MCP door with auth', () => {
  const READER = 'reader-token-0123456789abcdef';
  const ADMIN = 'admin-token-0123456789abcdef0';
  let gw: SecureGateway;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'a2e-mcp-audit-'));
    gw = await startSecureGateway({
      config: {
        auth: {
          tokens: [
            { name: 'admin', token_sha256: sha256(ADMIN) },
            { name: 'reader', token_sha256: sha256(READER), allow: ['echo'] },
          ],
        },
        audit: { path: join(dir, 'audit.jsonl') },
      },
      plugins: [definePlugin('t', [echoTool, failTool])],
    });
  });
  afterAll(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a client without a token with 401', async () => {
    await expect(connect(gw.url)).rejects.toMatchObject({
      code: 401,
      message: expect.stringMatching(/requires a token; send Authorization: Bearer/),
    });
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    await res.text();
  });

  it('shows and runs only what the token allows, and writes the audit line with door "mcp"', async () => {
    const reader = await connect(gw.url, { Authorization: `Bearer ${READER}` });
    const admin = await connect(gw.url, { Authorization: `Bearer ${ADMIN}` });
    try {
      expect((await reader.listTools()).tools.map((t) => t.name)).toEqual(['echo']);
      expect((await admin.listTools()).tools.map((t) => t.name)).toEqual(['echo', 'fail']);
      const denied = await reader.callTool({ name: 'fail', arguments: {} }).catch((e: unknown) => e);
      expect(denied).toBeInstanceOf(McpError);
      expect((denied as McpError).message).toMatch(/not in the allow list of token "reader"/);
      expect((denied as McpError).data).toMatchObject({ error_code: 'tool_denied' });
      expect((await reader.callTool({ name: 'echo', arguments: { text: 'ok' } })).structuredContent).toEqual({
        text: 'ok',
      });
    } finally {
      await reader.close();
      await admin.close();
    }
    await gw.gateway.security.auditFile!.flush();
    const lines = readFileSync(join(dir, 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.token, l.tool_name, l.door, l.error_code])).toEqual([
      ['reader', 'fail', 'mcp', 'tool_denied'],
      ['reader', 'echo', 'mcp', null],
    ]);
  });
});

describe('MCP door with an A2A-backed tool', () => {
  it("lists and calls a remote agent's skill like any other tool", async () => {
    let base = '';
    const peer = await startStub((r) => {
      if (r.path === '/.well-known/agent-card.json') {
        return {
          json: { name: 'planner', url: `${base}/rpc`, skills: [{ id: 'plan', description: 'Plans a release' }] },
        };
      }
      return r.rpc
        ? rpcResult(r, {
            id: 't1',
            status: { state: 'completed' },
            artifacts: [{ parts: [{ kind: 'text', text: 'three steps' }] }],
          })
        : undefined;
    });
    base = peer.url;
    const gw = await startGateway({ config: { agents: { planner: { card: peer.url } } } });
    const client = await connect(gw.url);
    try {
      const tool = (await client.listTools()).tools.find((t) => t.name === 'planner_plan')!;
      expect(tool).toMatchObject({
        description: 'Plans a release',
        annotations: { openWorldHint: true },
        inputSchema: { required: ['task'] },
      });
      const r = await client.callTool({ name: 'planner_plan', arguments: { task: 'ship it' } });
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ output: 'three steps', state: 'completed' });
    } finally {
      await client.close();
      await gw.close();
      await peer.close();
    }
  });
});

describe('protocol facts', () => {
  it('the door speaks exactly the protocol versions of the MCP SDK it was built with', async () => {
    const sdk = await import('@modelcontextprotocol/sdk/types.js');
    const { SUPPORTED_PROTOCOL_VERSIONS, LATEST_PROTOCOL_VERSION } = await import('../../src/mcp-server/protocol.js');
    expect(SUPPORTED_PROTOCOL_VERSIONS).toEqual(sdk.SUPPORTED_PROTOCOL_VERSIONS);
    expect(LATEST_PROTOCOL_VERSION).toBe(sdk.LATEST_PROTOCOL_VERSION);
  });
});

// Keep the SDK's notification schema import honest: the door's progress notifications must parse as MCP's own.
describe('progress notifications', () => {
  it('match the MCP schema', async () => {
    const { ProgressNotifier } = await import('../../src/mcp-server/door.js');
    const n = new ProgressNotifier('t');
    const ev = (kind: 'progress' | 'status', data: object) =>
      ({ type: 'tool/event', id: 'x', version: '1.0', ts: 0, req_id: '', seq: 0, kind, data }) as never;
    const a = n.notification(ev('progress', { pct: 50, message: 'half' }))!;
    const b = n.notification(ev('status', { message: 'still going' }))!;
    const c = n.notification(ev('progress', { pct: 40, message: 'odd' }))!;
    for (const x of [a, b, c]) expect(ProgressNotificationSchema.safeParse(x).success).toBe(true);
    const values = [a, b, c].map((x) => (x as unknown as { params: { progress: number } }).params.progress);
    expect(values[0]).toBe(50);
    expect(values[1]).toBeGreaterThan(values[0]!);
    expect(values[2]).toBeGreaterThan(values[1]!);
  });

  it('a status first (a call awaiting approval) starts at 0, not below', async () => {
    const { ProgressNotifier } = await import('../../src/mcp-server/door.js');
    const n = new ProgressNotifier('t');
    const ev = (kind: 'progress' | 'status', data: object) =>
      ({ type: 'tool/event', id: 'x', version: '1.0', ts: 0, req_id: '', seq: 0, kind, data }) as never;
    const first = n.notification(ev('status', { message: 'awaiting approval' })) as any;
    const then = n.notification(ev('progress', { pct: 0, message: 'started' })) as any;
    expect(first.params.progress).toBe(0);
    expect(then.params.progress).toBeGreaterThan(0);
  });
});
