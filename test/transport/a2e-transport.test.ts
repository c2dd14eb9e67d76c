/**
 * A2E's own HTTP message transport (POST /session, POST /send, GET /stream,
 * GET /health under /a2e/v1), driven by a client that follows the reference
 * SDK's rules: real HTTP, a real SSE parser, answers matched by req_id.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { GatewayConfigInput, ToolContext } from '../../src/index.js';
import { A2eTestClient, type A2eMessage } from '../helpers/a2e-client.js';
import { deferred, definePlugin, echoTool } from '../helpers/plugins.js';
import { gatedTool, type GatedTool } from '../helpers/gated.js';
import { startGateway, type TestGateway } from '../helpers/server.js';
import { startRedis } from '../helpers/redis.js';

/** Why each `hang` call was stopped, per key. */
const stopped = new Map<string, ReturnType<typeof deferred<string>>>();
const watchStop = (key: string) => {
  const d = deferred<string>();
  stopped.set(key, d);
  return d.promise;
};

/** The suite's tools, around `gated` (it emits event i, then waits for the test to open gate i: the tool provably runs while its events arrive). */
const transportTools = (gated: GatedTool) =>
  definePlugin('transport-test', [
    echoTool,
    [{ ...gated.tool[0], tags: ['test', 'stream'] }, gated.tool[1]],
    [
      {
        name: 'count',
        description: 'Emits `n` log events labelled with `label`, yielding between them',
        input_parameters: [
          { name: 'label', type: 'string', description: 'label', required: true },
          { name: 'n', type: 'integer', description: 'events', required: true },
        ],
        tags: ['test', 'stream'],
      },
      async (args, ctx: ToolContext) => {
        for (let i = 0; i < Number(args.n); i++) {
          ctx.emit('log', { level: 'info', message: `${String(args.label)} ${i}` });
          await new Promise((r) => setImmediate(r));
        }
        return { label: args.label };
      },
    ],
    [
      {
        name: 'hang',
        description: 'Emits once, then waits until stopped',
        input_parameters: [{ name: 'key', type: 'string', description: 'key', required: true }],
        tags: ['test'],
      },
      (args, ctx: ToolContext) => {
        ctx.emit('status', { message: 'waiting' });
        return new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => {
            stopped.get(String(args.key))?.resolve((ctx.signal.reason as Error).message);
            reject(ctx.signal.reason);
          });
        });
      },
    ],
    [
      {
        name: 'vault_lookup',
        description: 'A deferred tool: only search finds it',
        defer_loading: true,
        tags: ['secrets'],
      },
      () => ({ found: true }),
    ],
  ]);

const seqs = (events: A2eMessage[]) => events.map((e) => e.seq as number);

/** Where the transport's sessions live: the same suite runs against each store. */
const stores: { name: string; open(): Promise<{ config: GatewayConfigInput; dispose(): Promise<void> }> }[] = [
  { name: 'memory', open: async () => ({ config: {}, dispose: async () => {} }) },
  {
    name: 'redis',
    async open() {
      const redis = await startRedis();
      return {
        config: { store: { kind: 'redis', url: redis.url, prefix: 'a2e-transport-test:' } },
        dispose: () => redis.dispose(),
      };
    },
  },
];

describe.each(stores)('A2E transport with the $name store', (store) => {
  // Gates of its own per store: the suites use the same call keys.
  const gated = gatedTool();
  const tools = transportTools(gated);
  let gw: TestGateway;
  let base: string;
  let disposeStore: () => Promise<void>;
  beforeAll(async () => {
    const opened = await store.open();
    disposeStore = opened.dispose;
    gw = await startGateway({ plugins: [tools], config: { ...opened.config, server: { heartbeat_s: 0.2 } } });
    base = `${gw.url}/a2e/v1`;
  });
  afterAll(async () => {
    await gw.close();
    await disposeStore();
  });

  const clients: A2eTestClient[] = [];
  async function connect(handshake: Record<string, unknown> = {}) {
    const r = await A2eTestClient.connect(base, handshake);
    clients.push(r.client);
    return r;
  }
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dropStream()));
  });

  describe('A2E transport: sessions and streams', () => {
    it('GET /health and POST /session', async () => {
      const health = await fetch(`${base}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });

      const a = await A2eTestClient.open(base);
      const b = await A2eTestClient.open(base);
      expect(a.sessionId).toMatch(/^[0-9a-f]{32}$/);
      expect(b.sessionId).toMatch(/^[0-9a-f]{32}$/);
      expect(a.sessionId).not.toBe(b.sessionId);
    });

    it('handshake sent while the stream opens: only asked-for A2E capabilities the gateway has', async () => {
      const { client, handshake } = await connect({
        agent_caps: ['streaming', 'artifacts', 'tools', 'memory', 'made_up'],
      });
      const res = client.streamResponse!;
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(res.headers.get('transfer-encoding')).toBe('chunked');
      const r = handshake.response;
      expect(r).toMatchObject({ type: 'handshake/resp', ok: true, reason: '' });
      expect(r.session_id).toMatch(/^[0-9a-f]{32}$/);
      expect(r.accepted_caps).toEqual([{ capability: 'tools', enabled: true, metadata: {} }]);
      expect(Number.isInteger(r.max_parallel)).toBe(true);
    });

    it('answers to messages sent before any stream are queued, in order, until it attaches', async () => {
      const client = await A2eTestClient.open(base);
      clients.push(client);
      for (const id of ['q1', 'q2', 'q3']) expect((await client.send({ type: 'ping', id })).status).toBe(202);
      await client.openStream();
      await client.waitFor((m) => m.req_id === 'q3');
      expect(client.received.map((m) => [m.type, m.req_id])).toEqual([
        ['pong', 'q1'],
        ['pong', 'q2'],
        ['pong', 'q3'],
      ]);
    });

    it('a second stream replaces the first, which ends; messages go to the new one', async () => {
      const { client } = await connect();
      const first = client.streamEnded();
      const second = A2eTestClient.forSession(base, client.sessionId);
      clients.push(second);
      await second.openStream();
      await first; // the gateway ended the first stream
      await second.send({ type: 'ping', id: 'to-second' });
      expect((await second.waitFor((m) => m.req_id === 'to-second')).type).toBe('pong');
      expect(client.received.some((m) => m.req_id === 'to-second')).toBe(false);
    });

    it('ping → pong with req_id and uptime_seconds', async () => {
      const { client } = await connect();
      const { response } = await client.request({ type: 'ping' });
      expect(response.type).toBe('pong');
      expect(typeof response.uptime_seconds).toBe('number');
      expect(response.uptime_seconds).toBeGreaterThanOrEqual(0);
    });

    it('missing X-Session-Id → 400, unknown session → 404, each {"detail": …}', async () => {
      const cases: [string, RequestInit, number][] = [
        ['/send', { method: 'POST', body: '{"type":"ping"}' }, 400],
        ['/stream', {}, 400],
        ['/send', { method: 'POST', body: '{"type":"ping"}', headers: { 'X-Session-Id': 'f'.repeat(32) } }, 404],
        ['/stream', { headers: { 'X-Session-Id': 'f'.repeat(32) } }, 404],
      ];
      for (const [path, init, status] of cases) {
        const res = await fetch(`${base}${path}`, init);
        expect(res.status, `${path} → ${status}`).toBe(status);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        const body = (await res.json()) as { detail: unknown };
        expect(Object.keys(body)).toEqual(['detail']);
        expect(body.detail).toMatch(/X-Session-Id|session/);
      }
    });

    it('accepts application/json bodies as well as text/plain', async () => {
      const { client } = await connect();
      const answered = client.waitFor((m) => m.req_id === 'json-1');
      const res = await client.send(
        { type: 'ping', id: 'json-1' },
        { 'X-Session-Id': client.sessionId, 'Content-Type': 'application/json' },
      );
      expect(res.status).toBe(202);
      expect((await answered).type).toBe('pong');
    });

    it('bad messages get an error on the stream, and the session goes on', async () => {
      const { client } = await connect();
      await client.send('{not json');
      const bad = await client.waitFor((m) => m.type === 'error' && m.message.includes('not valid JSON'));
      expect(bad).toMatchObject({
        code: 'invalid_request',
        req_id: '',
        retryable: false,
        detail: {},
        capability_name: '',
      });

      const unknown = await client.request({ type: 'skill/invoke/req' });
      expect(unknown.response).toMatchObject({ type: 'error', code: 'invalid_request' });
      expect(unknown.response.message).toContain('unknown message type "skill/invoke/req"');

      const noName = await client.request({ type: 'tool/call/req', arguments: {} });
      expect(noName.response).toMatchObject({ type: 'error', code: 'invalid_request', capability_name: 'tools' });
      expect(noName.response.detail.problems).toEqual([{ path: 'tool_name', message: 'required string is missing' }]);

      expect((await client.request({ type: 'ping' })).response.type).toBe('pong');
    });
  });

  describe('A2E transport: tools', () => {
    it('tool/list without a query: the active tools; with a query: ranked, deferred ones on request', async () => {
      const { client } = await connect();
      const all = await client.request({ type: 'tool/list/req' });
      expect(all.response.type).toBe('tool/list/resp');
      expect(all.response.tools.map((t: { name: string }) => t.name).sort()).toEqual([
        'count',
        'echo',
        'gated',
        'hang',
      ]);

      const found = await client.request({ type: 'tool/list/req', query: 'secrets vault', include_deferred: true });
      expect(found.response.tools.map((t: { name: string }) => t.name)).toEqual(['vault_lookup']);

      const tagged = await client.request({ type: 'tool/list/req', filter_tags: ['stream'] });
      expect(tagged.response.tools.map((t: { name: string }) => t.name).sort()).toEqual(['count', 'gated']);
    });

    it('a streaming call: events while the tool runs (seq from 0), then the response, nothing after it', async () => {
      const { client } = await connect();
      const id = 'call-stream-1';
      const pending = client.request({
        type: 'tool/call/req',
        id,
        tool_name: 'gated',
        arguments: { key: 's1', steps: 3 },
        streaming: true,
      });
      for (let i = 0; i < 3; i++) {
        const ev = await client.waitFor((m) => m.req_id === id && m.type === 'tool/event' && m.seq === i);
        expect(ev).toMatchObject({ kind: 'progress', data: { message: `step ${i}` } });
        expect(client.received.some((m) => m.req_id === id && m.type === 'tool/call/resp')).toBe(false);
        gated.open('s1', i);
      }
      const { events, response, late } = await pending;
      expect(seqs(events)).toEqual([0, 1, 2]);
      expect(response).toMatchObject({
        type: 'tool/call/resp',
        req_id: id,
        data: { success: true, tool_name: 'gated', data: { steps: 3 } },
      });
      expect(Number.isInteger(response.data.duration_ms)).toBe(true);
      for (const ev of events) expect(Number.isInteger(ev.seq)).toBe(true);
      expect(late()).toEqual([]);
    });

    it('an unknown tool: an A2E error with the REST code, req_id and capability_name', async () => {
      const { client } = await connect();
      const { response } = await client.request({
        type: 'tool/call/req',
        id: 'nope-1',
        tool_name: 'ehco',
        arguments: {},
      });
      expect(response).toMatchObject({
        type: 'error',
        req_id: 'nope-1',
        code: 'unknown_tool',
        retryable: false,
        capability_name: 'tools',
        detail: { tool_name: 'ehco' },
      });
      expect(response.message).toMatch(/^no tool named "ehco"/);
      expect(Object.keys(response).sort()).toEqual(
        ['capability_name', 'code', 'detail', 'id', 'message', 'req_id', 'retryable', 'ts', 'type', 'version'].sort(),
      );
    });

    it('invalid arguments: invalid_arguments, as on the REST routes', async () => {
      const { client } = await connect();
      const { response } = await client.request({ type: 'tool/call/req', tool_name: 'echo', arguments: { text: 5 } });
      expect(response).toMatchObject({ type: 'error', code: 'invalid_arguments' });
      expect(response.detail.problems).toEqual([{ path: 'arguments.text', message: 'expected string, got integer' }]);
    });

    it('non-ASCII text survives the round trip, streaming or not', async () => {
      const { client } = await connect();
      const text = 'Grüße, 世界 — 🚀 ∑ "quoted" \\ back\\slash\nnew line \u2028 end';
      for (const streaming of [false, true]) {
        const { response } = await client.request({
          type: 'tool/call/req',
          tool_name: 'echo',
          arguments: { text },
          streaming,
        });
        expect(response.data).toMatchObject({ success: true, data: { text } });
      }
      // Every frame's data is one line of JSON, whatever the text held.
      for (const raw of client.rawData) expect(raw).not.toMatch(/[\n\r]/);
    });

    it('two concurrent calls on one session: each gets its own events, in order, then its response', async () => {
      const { client } = await connect();
      const n = 60;
      const [a, b] = await Promise.all(
        ['alpha', 'beta'].map((label) =>
          client.request({
            type: 'tool/call/req',
            id: `cc-${label}`,
            tool_name: 'count',
            arguments: { label, n },
            streaming: true,
          }),
        ),
      );
      for (const [label, x] of [
        ['alpha', a!],
        ['beta', b!],
      ] as const) {
        expect(seqs(x.events)).toEqual(Array.from({ length: n }, (_, i) => i));
        expect(x.events.map((e) => e.data.message)).toEqual(Array.from({ length: n }, (_, i) => `${label} ${i}`));
        expect(x.response.data).toMatchObject({ success: true, data: { label } });
        expect(x.late()).toEqual([]);
      }
      // They really run at the same time, proven with gates, not timing: each emits its first event, then waits
      // for its gate; both first events arrive while neither call can have finished.
      const calls = ['cc-a', 'cc-b'].map((key) =>
        client.request({
          type: 'tool/call/req',
          id: key,
          tool_name: 'gated',
          arguments: { key, steps: 2 },
          streaming: true,
        }),
      );
      for (const key of ['cc-a', 'cc-b'])
        await client.waitFor((m) => m.req_id === key && m.type === 'tool/event' && m.seq === 0);
      expect(
        client.received.some((m) => m.type === 'tool/call/resp' && (m.req_id === 'cc-a' || m.req_id === 'cc-b')),
      ).toBe(false);
      // Released in the other order: cc-b finishes first although cc-a started first.
      gated.open('cc-b', 0);
      gated.open('cc-b', 1);
      const gb = await calls[1]!;
      expect(gb.response.data).toMatchObject({ success: true, data: { key: 'cc-b', steps: 2 } });
      expect(client.received.some((m) => m.type === 'tool/call/resp' && m.req_id === 'cc-a')).toBe(false);
      gated.open('cc-a', 0);
      gated.open('cc-a', 1);
      const ga = await calls[0]!;
      for (const x of [ga, gb]) {
        expect(seqs(x.events)).toEqual([0, 1]);
        expect(x.late()).toEqual([]);
      }
      expect(ga.response.data).toMatchObject({ success: true, data: { key: 'cc-a', steps: 2 } });
    });

    it('a stream that reconnects mid-call (no Last-Event-ID, as the reference client): nothing lost, nothing twice', async () => {
      const { client } = await connect();
      const id = 'reconnect-1';
      const pending = client.request({
        type: 'tool/call/req',
        id,
        tool_name: 'gated',
        arguments: { key: 'r1', steps: 4 },
        streaming: true,
      });
      await client.waitFor((m) => m.req_id === id && m.seq === 0);
      gated.open('r1', 0);
      await client.waitFor((m) => m.req_id === id && m.seq === 1);

      await client.dropStream();
      // Once the gateway has seen the stream go, what the tool emits waits for the next one.
      await vi.waitFor(async () => expect(await gw.gateway.transport!.streamAttached(client.sessionId)).toBe(false), {
        timeout: 10_000,
      });
      gated.open('r1', 1); // → event seq 2, while no stream is attached
      await client.send({ type: 'ping', id: 'while-away' });

      await client.openStream();
      await client.waitFor((m) => m.req_id === id && m.seq === 2);
      gated.open('r1', 2);
      gated.open('r1', 3);
      const { events, response, late } = await pending;
      expect(seqs(events)).toEqual([0, 1, 2, 3]);
      expect(response.data).toMatchObject({ success: true, data: { steps: 4 } });
      expect(late()).toEqual([]);
      expect(client.received.filter((m) => m.req_id === 'while-away').map((m) => m.type)).toEqual(['pong']);
    });

    it('a stream that drops and reconnects with Last-Event-ID at once: frames written meanwhile are sent again, once', async () => {
      const { client } = await connect();
      const id = 'reconnect-2';
      const pending = client.request({
        type: 'tool/call/req',
        id,
        tool_name: 'gated',
        arguments: { key: 'r2', steps: 6 },
        streaming: true,
      });
      await client.waitFor((m) => m.req_id === id && m.seq === 0);
      await client.dropStream();
      // No waiting for the gateway to notice: these events may be written to the dead connection.
      for (let i = 0; i < 3; i++) gated.open('r2', i);
      await client.openStream({ lastEventId: client.lastEventId });
      for (let i = 3; i < 6; i++) gated.open('r2', i);
      const { events, response, late } = await pending;
      expect(seqs(events)).toEqual([0, 1, 2, 3, 4, 5]);
      expect(response.data.success).toBe(true);
      expect(late()).toEqual([]);
      const ids = client.received.length;
      expect(new Set(client.received.map((m) => m.id)).size).toBe(ids);
    });

    it("shutdown stops the session's calls, sends their responses, ends the stream and closes the session", async () => {
      const { client } = await connect();
      const why = watchStop('sd1');
      const pending = client.request({
        type: 'tool/call/req',
        id: 'sd-call',
        tool_name: 'hang',
        arguments: { key: 'sd1' },
        streaming: true,
      });
      await client.waitFor((m) => m.req_id === 'sd-call' && m.type === 'tool/event');
      await client.send({ type: 'shutdown', timeout: 0 });
      expect(await why).toContain('was canceled');
      const { response } = await pending;
      expect(response.data).toMatchObject({
        success: false,
        error_code: 'tool_error',
        error: 'tool "hang" was canceled',
      });
      await client.streamEnded();
      const res = await client.send({ type: 'ping' });
      expect(res.status).toBe(404);
    });

    it('a session whose handshake did not negotiate "tools" gets tool_denied', async () => {
      const { client, handshake } = await connect({ agent_caps: ['streaming'] });
      expect(handshake.response).toMatchObject({ ok: true, accepted_caps: [] });
      for (const type of ['tool/list/req', 'tool/call/req']) {
        const { response } = await client.request({ type, tool_name: 'echo', arguments: { text: 'x' } });
        expect(response).toMatchObject({ type: 'error', code: 'tool_denied', capability_name: 'tools' });
        expect(response.message).toContain('"tools" in agent_caps');
      }
    });

    it('a call naming another session_id is refused; the handshake one is accepted', async () => {
      const { client, handshake } = await connect();
      const other = await client.request({
        type: 'tool/call/req',
        session_id: 'a'.repeat(32),
        tool_name: 'echo',
        arguments: { text: 'x' },
      });
      expect(other.response).toMatchObject({ type: 'error', code: 'invalid_request' });
      const own = await client.request({
        type: 'tool/call/req',
        session_id: handshake.response.session_id,
        tool_name: 'echo',
        arguments: { text: 'x' },
      });
      expect(own.response.data.success).toBe(true);
    });
  });
});
