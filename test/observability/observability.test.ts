import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway, ToolContext } from '../../src/index.js';
import { LogCapture } from '../helpers/log-capture.js';
import { scrape, sample } from '../helpers/metrics.js';
import { deferred, definePlugin, echoTool, failTool } from '../helpers/plugins.js';
import { callBody, openSse, postJson, startGateway } from '../helpers/server.js';

const log = new LogCapture('info');
let release = deferred();
let started = deferred();

const plugin = definePlugin('obs', [
  echoTool,
  failTool,
  [
    { name: 'wait', description: 'Waits until the test releases it', tags: ['test'] },
    async (_args, ctx: ToolContext) => {
      ctx.logger.info({ step: 'inside' }, 'tool is waiting');
      started.resolve();
      await release.promise;
      return { ok: true };
    },
  ],
]);

let gateway: Gateway;
let url: string;
beforeAll(async () => {
  ({ gateway, url } = await startGateway({ plugins: [plugin], logger: log.logger }));
});
afterAll(() => gateway.close());

describe('X-Request-Id', () => {
  it('echoes a valid id, on success, on errors, and on SSE streams', async () => {
    const ok = await postJson(`${url}/tool/list`, {}, { 'X-Request-Id': 'client-req.42_A' });
    expect(ok.headers.get('x-request-id')).toBe('client-req.42_A');
    const called = await postJson(`${url}/tool/call`, callBody('echo', { text: 'hi' }), { 'X-Request-Id': 'call-1' });
    expect(called.status).toBe(200);
    expect(called.json.data.data).toEqual({ text: 'hi' });
    expect(called.headers.get('x-request-id')).toBe('call-1');
    expect(called.headers.get('content-type')).toBe('application/json');
    const notFound = await postJson(`${url}/tool/call`, callBody('no_such', {}), { 'X-Request-Id': 'err-1' });
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get('x-request-id')).toBe('err-1');
    const noRoute = await fetch(`${url}/nowhere`, { headers: { 'X-Request-Id': 'err-2' } });
    expect(noRoute.headers.get('x-request-id')).toBe('err-2');
    const stream = await openSse(`${url}/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Request-Id': 'sse-1' },
      body: JSON.stringify(callBody('echo', { text: 'hi' }, { streaming: true })),
    });
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    expect(stream.headers.get('x-request-id')).toBe('sse-1');
    await stream.rest();
  });

  it('replaces a missing or invalid id with a generated one', async () => {
    const none = await postJson(`${url}/tool/list`, {});
    const generated = none.headers.get('x-request-id');
    expect(generated).toMatch(/^[0-9a-f-]{36}$/);
    for (const bad of ['has space', 'x'.repeat(129), 'quote"', 'semi;colon']) {
      const r = await postJson(`${url}/tool/list`, {}, { 'X-Request-Id': bad });
      const id = r.headers.get('x-request-id');
      expect(id).not.toBe(bad);
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(
      (await postJson(`${url}/tool/list`, {}, { 'X-Request-Id': 'x'.repeat(128) })).headers.get('x-request-id'),
    ).toBe('x'.repeat(128));
  });
});

describe('logs', () => {
  it('one line per call with the request id, tool and outcome; every line of the request carries the id; no secrets', async () => {
    const secret = 'sk-very-secret-token-123';
    await postJson(`${url}/tool/call`, callBody('echo', { text: 'hello' }), {
      'X-Request-Id': 'log-ok',
      Authorization: `Bearer ${secret}`,
    });
    await postJson(`${url}/tool/call`, callBody('fail', {}), { 'X-Request-Id': 'log-fail' });
    await postJson(`${url}/tool/call`, callBody('nope', {}), { 'X-Request-Id': 'log-refused' });
    const p = postJson(`${url}/tool/call`, callBody('wait', {}), { 'X-Request-Id': 'log-wait' });
    await started.promise;
    release.resolve();
    await p;
    // The request's line is written when the response is closed: wait for it rather than sleep.
    await expect
      .poll(() => log.records.filter((l) => l.msg === 'call succeeded' && l.request_id === 'log-wait').length)
      .toBe(1);
    await expect
      .poll(() => log.records.filter((l) => l.msg === 'request finished' && l.request_id === 'log-refused').length)
      .toBe(1);

    const lines = log.records;
    const of = (id: string) => lines.filter((l) => l.request_id === id);
    // A JSON answer to one call: the call's line is the request's access line too (method, path, status, both durations).
    const access = { method: 'POST', path: '/tool/call', request_duration_ms: expect.any(Number) };
    expect(of('log-ok')).toEqual([
      expect.objectContaining({
        msg: 'call succeeded',
        tool: 'echo',
        kind: 'native',
        outcome: 'success',
        level: 30,
        status: 200,
        ...access,
      }),
    ]);
    expect(of('log-fail')).toEqual([
      expect.objectContaining({ msg: 'call failed', tool: 'fail', outcome: 'tool_error', status: 200, ...access }),
    ]);
    // A refused call never ran: its refusal, then the request's own line with the error status.
    expect(of('log-refused').map((l) => l.msg)).toEqual(['call refused: unknown_tool', 'request finished']);
    expect(of('log-refused')[0]).toMatchObject({ tool: 'nope', outcome: 'unknown_tool' });
    expect(of('log-refused')[1]).toMatchObject({ method: 'POST', path: '/tool/call', status: 404 });
    // the tool's own ctx.logger line belongs to the request too
    expect(of('log-wait').map((l) => l.msg)).toEqual(['tool is waiting', 'call succeeded']);
    const all = JSON.stringify(lines);
    expect(all).not.toContain(secret);
    expect(all).not.toContain('hello'); // argument values are not logged
  });

  it("the merged line of a JSON call carries every field of the call's line and of the access line an SSE call still writes apart", async () => {
    await postJson(`${url}/tool/call`, callBody('echo', { text: 'a' }), { 'X-Request-Id': 'merge-json' });
    const stream = await openSse(`${url}/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Request-Id': 'merge-sse' },
      body: JSON.stringify(callBody('echo', { text: 'a' }, { streaming: true })),
    });
    await stream.rest();
    await expect
      .poll(() => log.records.filter((l) => l.request_id === 'merge-sse' && l.msg === 'request finished').length)
      .toBe(1);
    await expect.poll(() => log.records.filter((l) => l.request_id === 'merge-json').length).toBe(1);
    const [merged] = log.records.filter((l) => l.request_id === 'merge-json');
    const sse = log.records.filter((l) => l.request_id === 'merge-sse');
    // An SSE stream is not one JSON answer: the call's line when it settles, the request's when the stream closes.
    expect(sse.map((l) => l.msg)).toEqual(['call succeeded', 'request finished']);
    const [callLine, accessLine] = [sse[0]!, sse[1]!];
    // The access line's duration_ms (the request's) is request_duration_ms in the merged line; duration_ms stays the call's.
    const { duration_ms: requestDuration, ...accessRest } = accessLine;
    const want = new Set([...Object.keys(callLine), ...Object.keys(accessRest), 'request_duration_ms']);
    expect(new Set(Object.keys(merged!))).toEqual(want);
    expect(typeof requestDuration).toBe('number');
    expect(merged).toMatchObject({
      level: 30,
      msg: 'call succeeded',
      request_id: 'merge-json',
      tool: 'echo',
      kind: 'native',
      outcome: 'success',
      duration_ms: expect.any(Number),
      call_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      req_id: expect.any(String),
      method: 'POST',
      path: '/tool/call',
      status: 200,
      request_duration_ms: expect.any(Number),
    });
    expect(merged!.request_duration_ms).toBeGreaterThanOrEqual(merged!.duration_ms);
  });

  it('a client that goes away mid-call: the lines still say the call was stopped by the disconnect and the answer was aborted', async () => {
    release = deferred();
    started = deferred();
    const controller = new AbortController();
    const pending = fetch(`${url}/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Request-Id': 'log-gone' },
      body: JSON.stringify(callBody('wait', {})),
      signal: controller.signal,
    }).catch((err: Error) => err);
    await started.promise;
    controller.abort();
    await pending;
    const gone = () => log.records.filter((l) => l.request_id === 'log-gone' && l.msg !== 'tool is waiting');
    // Whichever comes first, the call stopping or the response closing, nothing is lost and the call is logged once.
    await expect
      .poll(() => gone().some((l) => l.aborted === true) && gone().some((l) => l.msg === 'call failed'))
      .toBe(true);
    release.resolve();
    const merged = Object.assign({}, ...gone());
    expect(merged).toMatchObject({
      tool: 'wait',
      outcome: 'tool_error',
      stopped_by: 'disconnect',
      method: 'POST',
      path: '/tool/call',
      aborted: true,
    });
    expect(gone().filter((l) => /^call (succeeded|failed)/.test(l.msg))).toHaveLength(1);
    expect(gone().length).toBeLessThanOrEqual(2);
  });
});

describe('GET /metrics', () => {
  it('counts calls by tool, kind and outcome, times them, and shows calls in flight, open streams, agents and process metrics', async () => {
    const before = await scrape(url);
    const count = (s: typeof before, labels: Record<string, string>) => sample(s, 'a2e_tool_calls_total', labels) ?? 0;
    const durationCount = (s: typeof before) =>
      sample(s, 'a2e_tool_call_duration_seconds_count', { tool: 'echo', kind: 'native' }) ?? 0;

    for (let i = 0; i < 3; i++)
      expect((await postJson(`${url}/tool/call`, callBody('echo', { text: `${i}` }))).status).toBe(200);
    await postJson(`${url}/tool/call`, callBody('fail', {}));
    await postJson(`${url}/tool/call`, callBody('echo', { wrong: 1 })); // invalid_arguments: refused
    await postJson(`${url}/tool/call`, callBody(`made-up-${Date.now()}`, {}));

    release = deferred();
    started = deferred();
    const running = postJson(`${url}/tool/call`, callBody('wait', {}));
    await started.promise;
    const stream = await openSse(`${url}/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(callBody('wait', {}, { streaming: true })),
    });
    const stopAgents = gateway.metrics.reportAgentStates(() => ({ ready: 2, unreachable: 1 }));

    const during = await scrape(url);
    expect(sample(during, 'a2e_tool_calls_in_flight')).toBe(2);
    expect(sample(during, 'a2e_sse_streams_open')).toBe(1);
    expect(sample(during, 'a2e_a2a_agents', { state: 'ready' })).toBe(2);
    expect(sample(during, 'a2e_a2a_agents', { state: 'unreachable' })).toBe(1);
    expect(sample(during, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(sample(during, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);

    release.resolve();
    await running;
    await stream.rest();
    stopAgents();

    await expect.poll(async () => sample(await scrape(url), 'a2e_sse_streams_open')).toBe(0);
    const after = await scrape(url);
    expect(
      count(after, { tool: 'echo', kind: 'native', outcome: 'success' }) -
        count(before, { tool: 'echo', kind: 'native', outcome: 'success' }),
    ).toBe(3);
    expect(
      count(after, { tool: 'fail', outcome: 'tool_error' }) - count(before, { tool: 'fail', outcome: 'tool_error' }),
    ).toBe(1);
    expect(
      count(after, { tool: 'echo', outcome: 'invalid_arguments' }) -
        count(before, { tool: 'echo', outcome: 'invalid_arguments' }),
    ).toBe(1);
    expect(
      count(after, { tool: 'wait', outcome: 'success' }) - count(before, { tool: 'wait', outcome: 'success' }),
    ).toBe(2);
    // A made-up name never becomes a label value: refusals of unknown tools share one series.
    expect(after.some((s) => s.labels.tool?.startsWith('made-up-'))).toBe(false);
    expect(count(after, { tool: '(unknown)', outcome: 'unknown_tool' })).toBeGreaterThanOrEqual(1);
    // Durations are recorded for calls that ran, not for refusals.
    expect(durationCount(after) - durationCount(before)).toBe(3);
    expect(sample(after, 'a2e_tool_calls_in_flight')).toBe(0);
    // No agents configured: the A2A plugin reports every state as 0; the extra source is gone.
    expect(after.filter((s) => s.name === 'a2e_a2a_agents' && s.value !== 0)).toEqual([]);
  });
});

describe('log format of the real CLI', () => {
  it('LOG_FORMAT=pretty (the default on a terminal) writes human-readable lines; LOG_LEVEL=warn hides info lines', async () => {
    const { startCli } = await import('../helpers/cli.js');
    // A directory of its own for ./workspace, reachable by the sandbox user wherever the checkout lives, so the
    // shell plugin has nothing to warn about and the quiet run below can expect an empty stderr.
    const cwd = mkdtempSync(join(tmpdir(), 'a2e-logformat-'));
    chmodSync(cwd, 0o755);
    const pretty = await startCli(['--port', '0'], { LOG_LEVEL: 'info', LOG_FORMAT: 'pretty' }, { cwd });
    await postJson(`${pretty.url}/tool/list`, {}, { 'X-Request-Id': 'pretty-1' });
    pretty.proc.kill('SIGTERM');
    const out = String((await pretty.proc).stderr);
    expect(out).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] \S*INFO\S*: \S*gateway started/m);
    expect(out).toMatch(/request finished.*request_id.*pretty-1/);
    expect(() => JSON.parse(out.split('\n')[0]!)).toThrow();

    const quiet = await startCli(['--port', '0'], { LOG_LEVEL: 'warn' }, { cwd });
    await postJson(`${quiet.url}/tool/list`, {});
    quiet.proc.kill('SIGTERM');
    expect(String((await quiet.proc).stderr)).toBe('');
  });
});

describe('a2e_a2a_agents', () => {
  it('counts the configured A2A agents by state: a real SDK peer, an unreachable one, a disabled one', async () => {
    const { startSdkPeer } = await import('../helpers/a2a-sdk-peer.js');
    const { startGateway } = await import('../helpers/server.js');
    const peer = await startSdkPeer('strict');
    const dead = await import('node:net').then(({ createServer }) => {
      const probe = createServer().listen(0, '127.0.0.1');
      return new Promise<string>((resolve) =>
        probe.once('listening', () => {
          const port = (probe.address() as { port: number }).port;
          probe.close(() => resolve(`http://127.0.0.1:${port}`));
        }),
      );
    });
    const gw = await startGateway({
      config: {
        agents: {
          good: { card: peer.cardUrl },
          down: { card: dead },
          off: { card: dead, enabled: false },
        },
        a2a: { start_wait_ms: 10_000, card_timeout_ms: 5_000 },
      },
    });
    try {
      const states = async () => {
        const s = await scrape(gw.url);
        return Object.fromEntries(
          ['ok', 'failed', 'loading', 'disabled'].map((state) => [state, sample(s, 'a2e_a2a_agents', { state })]),
        );
      };
      await expect.poll(states, { timeout: 15_000 }).toEqual({ ok: 1, failed: 1, loading: 0, disabled: 1 });
    } finally {
      await gw.close();
      await peer.close();
    }
  });
});
