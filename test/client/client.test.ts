import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import createClient from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolAPI, ToolAPIError, type ToolEvent } from '../../src/client/index.js';
import type { paths } from '../../src/client/schema.js';
import type { ToolContext } from '../../src/index.js';
import { deferred, definePlugin, echoTool, failTool } from '../helpers/plugins.js';
import { startGateway, type TestGateway } from '../helpers/server.js';

const root = new URL('../..', import.meta.url);
let stopped = deferred<string>();

const plugin = definePlugin('client-test', [
  echoTool,
  failTool,
  [
    {
      name: 'report',
      description: 'Emits one event of each kind, then returns',
      input_parameters: [{ name: 'count', type: 'integer', description: 'Artifact chunks', required: true }],
      tags: ['test', 'stream'],
    },
    (args, ctx: ToolContext) => {
      ctx.emit('status', { message: 'starting' });
      ctx.emit('progress', { pct: 50, message: 'half' });
      ctx.emit('log', { level: 'info', message: 'a log line' });
      for (let i = 0; i < Number(args.count); i++) {
        ctx.emit('artifact', {
          name: 'out.txt',
          mime: 'text/plain',
          chunk: `part${i};`,
          final: i === Number(args.count) - 1,
        });
      }
      return { count: args.count };
    },
  ],
  [
    {
      name: 'hidden_gem',
      description: 'A deferred tool about gemstones',
      tags: ['rare'],
      defer_loading: true,
      kind: 'special',
    },
    () => 'found',
  ],
  [
    { name: 'hang', description: 'Runs until stopped' },
    (_args, ctx: ToolContext) =>
      new Promise((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () => {
          stopped.resolve((ctx.signal.reason as Error).message);
          reject(ctx.signal.reason);
        });
        ctx.emit('status', { message: 'running' });
      }),
  ],
]);

let gw: TestGateway;
let api: ToolAPI;
beforeAll(async () => {
  gw = await startGateway({ plugins: [plugin] });
  api = new ToolAPI(gw.url);
});
afterAll(() => gw.close());

describe('ToolAPI against a running gateway', () => {
  it('list(): the active tools, cached in .tools; tags and kind filter', async () => {
    const tools = await api.list();
    expect(tools.map((t) => t.name)).toEqual(['echo', 'fail', 'report', 'hang']);
    expect(api.tools).toBe(tools);
    expect((await api.list({ tags: ['stream'] })).map((t) => t.name)).toEqual(['report']);
    expect(await api.list({ kind: 'special' })).toEqual([]); // deferred: only found by search
    expect(api.tools).toBe(tools); // filtered lists do not replace the cache
  });

  it('list({query, includeDeferred}): search, deferred tools only when asked', async () => {
    expect((await api.list({ query: 'gemstones' })).map((t) => t.name)).toEqual([]);
    const found = await api.list({ query: 'gemstones', includeDeferred: true });
    expect(found.map((t) => t.name)).toEqual(['hidden_gem']);
    expect(found[0]).toMatchObject({ kind: 'special', defer_loading: true, tags: ['rare'] });
    expect((await api.list({ query: 'echo text' }))[0]!.name).toBe('echo');
  });

  it('call(): a ToolResult', async () => {
    const r = await api.call('echo', { text: 'hi' }, { correlationId: 'turn-1', timeout: 5 });
    expect(r).toMatchObject({
      success: true,
      tool_name: 'echo',
      data: { text: 'hi' },
      error: null,
      error_code: null,
      events: [],
    });
    expect(r.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('call() streaming: every event to onEvent in order as it comes, also collected in result.events', async () => {
    const seen: ToolEvent[] = [];
    const r = await api.call('report', { count: 3 }, { streaming: true, onEvent: (e) => seen.push(e) });
    expect(r.success).toBe(true);
    expect(r.data).toEqual({ count: 3 });
    expect(seen.map((e) => e.kind)).toEqual(['status', 'progress', 'log', 'artifact', 'artifact', 'artifact']);
    expect(seen.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(seen[1]!.data).toEqual({ pct: 50, message: 'half' });
    expect(r.events).toEqual(seen);
  });

  it('errors from the gateway become results with error_code, not exceptions', async () => {
    const unknown = await api.call('no_such_tool', {});
    expect(unknown).toMatchObject({ success: false, tool_name: 'no_such_tool', error_code: 'unknown_tool' });
    expect(unknown.error).toContain('no tool named "no_such_tool"');

    const invalid = await api.call('echo', { text: 5 }, { streaming: true, onEvent: () => {} });
    expect(invalid).toMatchObject({ success: false, error_code: 'invalid_arguments' });
    expect((invalid.data as { problems: unknown[] }).problems).toEqual([
      { path: 'arguments.text', message: 'expected string, got integer' },
    ]);

    const failed = await api.call('fail', { message: 'nope' });
    expect(failed).toMatchObject({
      success: false,
      error_code: 'tool_error',
      error: 'nope',
      data: { partial: true },
      exit_code: 3,
    });
  });

  it('a timeout is a tool_error result', async () => {
    stopped = deferred<string>();
    const r = await api.call('hang', {}, { timeout: 1 });
    expect(r).toMatchObject({ success: false, error_code: 'tool_error' });
    expect(r.error).toMatch(/timed out after 1 s/);
  });

  it('signal aborts the call, and the gateway stops the tool', async () => {
    stopped = deferred<string>();
    const controller = new AbortController();
    const call = api.call(
      'hang',
      {},
      {
        streaming: true,
        signal: controller.signal,
        onEvent: (e) => {
          if (e.kind === 'status') controller.abort();
        },
      },
    );
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(await stopped.promise).toMatch(/client disconnected/);
  });

  it('an unreachable gateway throws a ToolAPIError (connection_failed)', async () => {
    const dead = new ToolAPI('http://127.0.0.1:9');
    await expect(dead.list()).rejects.toBeInstanceOf(ToolAPIError);
    await expect(dead.call('echo', { text: 'x' })).rejects.toMatchObject({ code: 'connection_failed' });
  });

  it('handshake() opens a session that later calls carry', async () => {
    const fresh = new ToolAPI(gw.url);
    const answer = await fresh.handshake({ agent_id: 'test-agent' });
    expect(answer).toMatchObject({
      type: 'handshake/resp',
      ok: true,
      accepted_caps: [{ capability: 'tools', enabled: true }],
    });
    expect(fresh.sessionId).toBe(answer.session_id);
    expect((await fresh.call('echo', { text: 'in a session' })).data).toEqual({ text: 'in a session' });
  });
});

describe('ToolAPI against a gateway with auth', () => {
  const sha256 = (t: string) => createHash('sha256').update(t).digest('hex');
  let secured: TestGateway;
  beforeAll(async () => {
    secured = await startGateway({
      plugins: [plugin],
      config: { auth: { tokens: [{ name: 'client-test', token_sha256: sha256('client-secret'), deny: ['fail'] }] } },
    });
  });
  afterAll(() => secured.close());

  it('with the right token: handshake, list and call work, and token rules apply', async () => {
    const api = new ToolAPI({ baseUrl: secured.url, token: 'client-secret' });
    const hs = await api.handshake({ agent_id: 'secured-agent' });
    expect(hs.ok).toBe(true);
    const names = (await api.list()).map((t) => t.name);
    expect(names).toContain('echo');
    expect(names).not.toContain('fail');
    expect((await api.call('echo', { text: 'authorised' })).data).toEqual({ text: 'authorised' });
    expect(await api.call('fail', {})).toMatchObject({ success: false, error_code: 'tool_denied' });
  });

  it('with a wrong token: refusals come back as results or ToolAPIErrors, never as silent success', async () => {
    const api = new ToolAPI({ baseUrl: secured.url, token: 'wrong' });
    expect(await api.call('echo', { text: 'x' })).toMatchObject({ success: false, error_code: 'unauthorized' });
    await expect(api.list()).rejects.toMatchObject({ code: 'unauthorized', status: 401 });
  });
});

describe('the generated client (openapi-typescript + openapi-fetch)', () => {
  it('drives list, search and call against a running gateway', async () => {
    const client = createClient<paths, 'application/json'>({ baseUrl: gw.url });
    const list = await client.POST('/tool/list', { body: {} });
    expect(list.response.status).toBe(200);
    expect(list.data!.tools!.map((t) => t.name)).toContain('echo');

    const search = await client.POST('/tool/list', { body: { query: 'gemstones', include_deferred: true } });
    expect(search.data!.tools!.map((t) => t.name)).toEqual(['hidden_gem']);

    const call = await client.POST('/tool/call', {
      body: { tool_name: 'echo', arguments: { text: 'generated' } },
      params: { header: { 'X-Request-Id': 'gen-1' } },
    });
    expect(call.response.headers.get('x-request-id')).toBe('gen-1');
    expect(call.data).toMatchObject({ type: 'tool/call/resp', data: { success: true, data: { text: 'generated' } } });

    const missing = await client.POST('/tool/call', { body: { tool_name: 'nope', arguments: {} } });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toMatchObject({ type: 'error', code: 'unknown_tool' });

    const health = await client.GET('/healthz');
    expect(health.data).toMatchObject({ status: 'ok', tools: 5 });
  });

  it('drives the call resources: start, follow the events, read the result, cancel', async () => {
    const client = createClient<paths, 'application/json'>({ baseUrl: gw.url });
    const started = await client.POST('/tool/calls', { body: { tool_name: 'report', arguments: { count: 2 } } });
    expect(started.response.status).toBe(202);
    const id = started.data!.call_id;

    const events = await client.GET('/tool/calls/{id}/events', {
      params: { path: { id }, query: { after: '-1' } },
      parseAs: 'text',
      headers: { Accept: 'text/event-stream' },
    });
    expect(events.response.headers.get('content-type')).toContain('text/event-stream');
    const names = [...(events.data as string).matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
    expect(names).toEqual(['tool/event', 'tool/event', 'tool/event', 'tool/event', 'tool/event', 'tool/call/resp']);

    const done = await client.GET('/tool/calls/{id}', { params: { path: { id } } });
    expect(done.data).toMatchObject({ call_id: id, tool_name: 'report', state: 'completed', events: 5 });
    expect(done.data!.result!.data).toMatchObject({ success: true, data: { count: 2 } });

    stopped = deferred<string>();
    const hang = await client.POST('/tool/calls', { body: { tool_name: 'hang', arguments: {} } });
    const canceled = await client.DELETE('/tool/calls/{id}', { params: { path: { id: hang.data!.call_id } } });
    expect(canceled.data).toMatchObject({ state: 'canceled' });
    expect(await stopped.promise).toMatch(/canceled/);

    const gone = await client.GET('/tool/calls/{id}', { params: { path: { id: 'no-such-call' } } });
    expect(gone.response.status).toBe(404);
    expect(gone.error).toMatchObject({ type: 'error', code: 'not_found' });
  });

  it('src/client/schema.ts is up to date with openapi/openapi.json (run `npm run client:gen`)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'a2e-client-gen-'));
    try {
      const pkg = JSON.parse(await readFile(new URL('package.json', root), 'utf8'));
      const command: string = pkg.scripts['client:gen'];
      expect(command).toContain('-o src/client/schema.ts');
      const [bin, ...args] = command.replace('-o src/client/schema.ts', `-o ${join(dir, 'schema.ts')}`).split(' ');
      await execa(bin!, args, { cwd: root, preferLocal: true });
      const fresh = await readFile(join(dir, 'schema.ts'), 'utf8');
      expect(await readFile(new URL('src/client/schema.ts', root), 'utf8')).toBe(fresh);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('is exported as the package subpath a2e-gateway/client', async () => {
    const mod = await import('a2e-gateway/client');
    expect(mod.ToolAPI).toBeTypeOf('function');
    expect(mod.ToolAPIError).toBeTypeOf('function');
  });

  it('src/client uses no Node-only APIs (it must run in browsers)', async () => {
    const dir = new URL('src/client/', root);
    for (const file of await readdir(dir)) {
      const text = await readFile(new URL(file, dir), 'utf8');
      const code = text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      expect(code, file).not.toMatch(/from ['"](node:|fs|path|http|crypto|os|stream|util|child_process)/);
      expect(code, file).not.toMatch(/\b(process|Buffer|require|__dirname)\b/);
      expect(code, file).not.toMatch(/from ['"]\.\.\//); // nothing from the server side
    }
  });
});
