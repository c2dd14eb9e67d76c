/**
 * Isolation and health of A2A agents: a peer that is down at start and
 * comes up later, peers answering garbage or too slowly, name clashes,
 * timeouts, dialect switching, the polling schedule, configured headers.
 */
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAgentsConfig } from '../../src/index.js';
import { rpcError, rpcResult, startStub, waitFor, type StubRequest } from '../helpers/a2a-stub.js';
import { deferred, definePlugin } from '../helpers/plugins.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const CARD = '/.well-known/agent-card.json';
const open: { close(): Promise<void> }[] = [];
const track = <T extends { close(): Promise<void> }>(x: T): T => (open.push(x), x);
afterEach(async () => {
  await Promise.all(
    open
      .splice(0)
      .reverse()
      .map((x) => x.close()),
  );
});

const cardOnly =
  (name: string, skills: string[], extra: Record<string, unknown> = {}) =>
  (r: StubRequest) =>
    r.path === CARD
      ? { json: { name, skills: skills.map((id) => ({ id, description: `${id} skill` })), ...extra } }
      : undefined;

const agentsOf = async (gw: TestGateway) => (await (await fetch(`${gw.url}/agents`)).json()).agents as any[];
const toolNames = async (gw: TestGateway) =>
  (await postJson(`${gw.url}/tool/list`, {})).json.tools.map((t: any) => t.name) as string[];

/** A port nothing listens on (bound, then released). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('A2A agent isolation', () => {
  it('an agent that is down at start contributes nothing, then gains its tools when it comes up', async () => {
    const port = await freePort();
    const gw = track(
      await startGateway({
        config: { agents: { late: { card: `http://127.0.0.1:${port}` } }, a2a: { refresh_s: 0.2 } },
      }),
    );
    const [before] = await agentsOf(gw);
    expect(before).toMatchObject({ name: 'late', state: 'failed', tools: [], last_fetched: null });
    expect(before.last_error).toContain('connection refused');
    expect(await toolNames(gw)).toEqual([]);

    track(await startStub(cardOnly('late', ['wake']), port));
    await waitFor('late_wake in /tool/list', async () => (await toolNames(gw)).includes('late_wake'));
    const [after] = await agentsOf(gw);
    expect(after).toMatchObject({ state: 'ok', tools: ['late_wake'], last_error: null });
    expect(Date.parse(after.last_fetched)).not.toBeNaN();
  });

  it('a peer whose skills change is updated on the next refresh', async () => {
    let skills = ['one'];
    const peer = track(await startStub((r) => cardOnly('shifty', skills)(r)));
    const gw = track(
      await startGateway({ config: { agents: { shifty: { card: peer.url } }, a2a: { refresh_s: 0.2 } } }),
    );
    expect(await toolNames(gw)).toEqual(['shifty_one']);
    skills = ['two', 'three'];
    await waitFor('the new skills', async () => (await toolNames(gw)).join() === 'shifty_two,shifty_three');
  });

  it('garbage cards, HTTP errors and silence are reported per agent and never stop the others', async () => {
    const good = track(await startStub(cardOnly('good', ['work'])));
    const html = track(await startStub(() => ({ text: '<html>oops</html>' })));
    const wrong = track(
      await startStub((r) => (r.path === CARD ? { json: { title: 'not a card', skills: 'none' } } : undefined)),
    );
    const broken = track(await startStub(() => ({ status: 500, json: { error: 'boom' } })));
    const silent = track(await startStub(() => new Promise<never>(() => {})));
    const started = performance.now();
    const gw = track(
      await startGateway({
        config: {
          agents: {
            html: { card: `${html.url}${CARD}` },
            wrong: { card: wrong.url },
            broken: { card: `${broken.url}/agent` },
            silent: { card: `${silent.url}${CARD}` },
            good: { card: good.url },
          },
          a2a: { start_wait_ms: 500, card_timeout_ms: 300 },
        },
      }),
    );
    // The silent peer cannot hold the gateway up past start_wait_ms (generous bound for a busy machine).
    expect(performance.now() - started).toBeLessThan(3000);
    expect(await toolNames(gw)).toEqual(['good_work']);
    const byName = Object.fromEntries(
      (
        await waitFor('the silent agent to fail', async () => {
          const a = await agentsOf(gw);
          return a.find((x) => x.name === 'silent').state === 'failed' ? a : undefined;
        })
      ).map((a: any) => [a.name, a]),
    );
    expect(byName.good).toMatchObject({ state: 'ok', tools: ['good_work'] });
    expect(byName.html.state).toBe('failed');
    expect(byName.html.last_error).toContain('not JSON');
    expect(byName.wrong.state).toBe('failed');
    expect(byName.wrong.last_error).toMatch(/is not an agent card: name: .*skills/);
    expect(byName.broken.state).toBe('failed');
    // Every discovery location was tried, each failure named.
    expect(byName.broken.last_error).toContain(`${broken.url}/agent/.well-known/agent-card.json answered HTTP 500`);
    expect(byName.broken.last_error).toContain(`${broken.url}/.well-known/agent.json answered HTTP 500`);
    expect(byName.silent.last_error).toContain('did not arrive within 300 ms');
  });

  it("configured headers never go to an RPC endpoint on another origin than the card's, unless allowed", async () => {
    // The endpoint answers any call with a completed task; it records every request (and its headers).
    const elsewhere = track(
      await startStub((r) =>
        r.rpc
          ? rpcResult(r, {
              id: 't1',
              status: { state: 'completed' },
              artifacts: [{ parts: [{ kind: 'text', text: 'done' }] }],
            })
          : undefined,
      ),
    );
    const peer = track(await startStub(cardOnly('far', ['work'], { url: `${elsewhere.url}/rpc` })));
    const headers = { Authorization: 'Bearer agent-secret' };
    const gw = track(
      await startGateway({
        config: {
          agents: {
            refused: { card: peer.url, headers },
            allowed: { card: `${peer.url}${CARD}`, headers, cross_origin_headers: true },
          },
        },
      }),
    );
    const agents = Object.fromEntries((await agentsOf(gw)).map((a: any) => [a.name, a]));
    expect(agents.refused.state).toBe('failed');
    expect(agents.refused.last_error).toContain(`names its JSON-RPC endpoint on ${elsewhere.url}`);
    expect(agents.refused.last_error).toContain('agents.refused.cross_origin_headers: true');
    expect(agents.refused.last_error).not.toContain('agent-secret');
    expect(agents.allowed).toMatchObject({ state: 'ok', tools: ['far_work'] });
    // The refused agent never called the other origin; the allowed one did, with its headers.
    expect(elsewhere.requests).toHaveLength(0);
    const r = await postJson(`${gw.url}/tool/call`, callBody('far_work', { task: 'go' }));
    expect(r.json.data).toMatchObject({ success: true, data: { output: 'done' } });
    expect(elsewhere.requests.length).toBeGreaterThan(0);
    expect(elsewhere.requests.every((q) => q.headers.authorization === 'Bearer agent-secret')).toBe(true);
  });

  it('an agent answering garbage to a call gives a clear tool_error', async () => {
    const peer = track(await startStub((r) => cardOnly('junk', ['eat'])(r) ?? { text: 'this is not json' }));
    const gw = track(await startGateway({ config: { agents: { junk: { card: peer.url } } } }));
    const res = await postJson(`${gw.url}/tool/call`, callBody('junk_eat', { task: 'x' }));
    expect(res.json.data).toMatchObject({ success: false, error_code: 'tool_error' });
    expect(res.json.data.error).toContain('not JSON');
    expect(res.json.data.data.metadata).toMatchObject({ agent: 'junk', taskId: null, polls: 0 });
  });

  it('name clashes: a native tool, a local plugin and an earlier agent win; the skipped tools are reported', async () => {
    const first = track(await startStub(cardOnly('reviewer', ['review', 'lint'])));
    const second = track(await startStub(cardOnly('reviewer', ['review', 'style'])));
    const native = track(await startStub(cardOnly('http', ['request', 'probe'])));
    const local = definePlugin('local', [
      [{ name: 'reviewer_lint', description: 'a local tool' }, () => ({ local: true })],
    ]);
    const gw = track(
      await startGateway({
        plugins: [local],
        config: {
          tools: { http: { enabled: true } },
          agents: { first: { card: first.url }, second: { card: second.url }, native: { card: native.url } },
        },
      }),
    );
    expect((await toolNames(gw)).sort()).toEqual([
      'http_probe',
      'http_request',
      'reviewer_lint',
      'reviewer_review',
      'reviewer_style',
    ]);
    // The native http_request and the local plugin's reviewer_lint are the ones registered, not the agents'.
    const list = (await postJson(`${gw.url}/tool/list`, {})).json.tools;
    expect(list.find((t: any) => t.name === 'http_request').kind).toBe('native');
    const res = await postJson(`${gw.url}/tool/call`, callBody('reviewer_lint', {}));
    expect(res.json.data.data).toEqual({ local: true });
    const [a, b, c] = await agentsOf(gw);
    expect(a).toMatchObject({
      name: 'first',
      tools: ['reviewer_review'],
      skipped: [{ tool: 'reviewer_lint', kept_by: 'plugin local' }],
    });
    expect(b).toMatchObject({
      name: 'second',
      tools: ['reviewer_style'],
      skipped: [{ tool: 'reviewer_review', kept_by: 'agent first' }],
    });
    expect(c).toMatchObject({
      name: 'native',
      tools: ['http_probe'],
      skipped: [{ tool: 'http_request', kept_by: 'plugin http' }],
    });
  });

  it('timeout_ms cancels a remote task that runs too long, with a message saying so', async () => {
    const peer = track(
      await startStub((r) => {
        if (r.path === CARD) return { json: { name: 'slow', url: '/rpc', skills: [{ id: 'crawl' }] } };
        if (r.rpc?.method === 'message/send')
          return rpcResult(r, { kind: 'task', id: 't9', status: { state: 'working' } });
        if (r.rpc?.method === 'tasks/get')
          return rpcResult(r, { kind: 'task', id: 't9', status: { state: 'working' } });
        if (r.rpc?.method === 'tasks/cancel')
          return rpcResult(r, { kind: 'task', id: 't9', status: { state: 'canceled' } });
        return undefined;
      }),
    );
    const gw = track(
      await startGateway({ config: { agents: { slow: { card: peer.url, timeout_ms: 300, poll_ms: 50 } } } }),
    );
    const res = await postJson(`${gw.url}/tool/call`, callBody('slow_crawl', { task: 'x' }));
    expect(res.json.data.success).toBe(false);
    expect(res.json.data.error).toContain(
      'timed out after 300 ms (agents.slow.timeout_ms; a cancel was sent for its task t9)',
    );
    expect(res.json.data.data).toMatchObject({ state: 'timeout', metadata: { taskId: 't9' } });
    expect(res.json.data.data.metadata.polls).toBeGreaterThan(0);
    await waitFor('tasks/cancel at the peer', () => peer.requests.find((q) => q.rpc?.method === 'tasks/cancel'));
    // A 0.3 card (top-level url) means 0.3 methods at that URL, resolved against the card's URL.
    expect(new Set(peer.requests.filter((q) => q.rpc).map((q) => q.path))).toEqual(new Set(['/rpc']));
  });

  it('switches dialect once on "method not found" and remembers it', async () => {
    let sends = 0;
    const peer = track(
      await startStub((r) => {
        if (r.path === CARD) return { json: { name: 'old', skills: [{ name: 'Say Hi' }], headers_seen: true } };
        const m = r.rpc?.method;
        if (m === 'message/send')
          return rpcResult(r, { kind: 'message', role: 'agent', parts: [{ kind: 'text', text: `hi #${++sends}` }] });
        return rpcError(r, -32601, `Method not found: ${m}`);
      }),
    );
    const gw = track(
      await startGateway({ config: { agents: { old: { card: peer.url, headers: { 'X-Api-Key': 'k1' } } } } }),
    );
    const one = await postJson(`${gw.url}/tool/call`, callBody('old_Say_Hi', { task: 'a' }));
    const two = await postJson(`${gw.url}/tool/call`, callBody('old_Say_Hi', { task: 'b' }));
    expect(one.json.data.data.output).toBe('hi #1');
    expect(two.json.data.data.output).toBe('hi #2');
    expect(peer.methods()).toEqual(['SendMessage', 'message/send', 'message/send']);
    // Configured headers go on the card fetch and on every call.
    expect(peer.requests.every((q) => q.headers['x-api-key'] === 'k1')).toBe(true);
    expect((await agentsOf(gw))[0].dialect).toBe('0.3');
  });

  it('a streaming call to a peer without streaming polls and emits a status event per state change', async () => {
    let polls = 0;
    const peer = track(
      await startStub((r) => {
        if (r.path === CARD) return cardOnly('plain', ['go'])(r);
        if (r.rpc?.method === 'SendMessage') return rpcResult(r, { id: 't1', status: { state: 'submitted' } });
        const state = ++polls < 3 ? 'working' : 'completed';
        return rpcResult(r, {
          id: 't1',
          status: { state },
          artifacts: state === 'completed' ? [{ parts: [{ kind: 'text', text: 'went' }] }] : [],
        });
      }),
    );
    const gw = track(await startGateway({ config: { agents: { plain: { card: peer.url, poll_ms: 20 } } } }));
    const res = await postJson(`${gw.url}/tool/call`, callBody('plain_go', { task: 'x' }, { streaming: true }));
    expect(res.json.data).toMatchObject({ success: true, data: { output: 'went' } });
    const states = res.json.data.events.filter((e: any) => e.kind === 'status').map((e: any) => e.data.state);
    expect(states).toEqual(['submitted', 'working', 'completed']);
    expect(peer.methods()).not.toContain('SendStreamingMessage');
  });

  it('switches from 0.3 to 1.0 when the peer answers -32009 (version not supported)', async () => {
    const peer = track(
      await startStub((r) => {
        if (r.path === '/.well-known/agent.json')
          return { json: { name: 'modern', url: '/rpc', skills: [{ id: 'go' }] } };
        if (r.path !== '/rpc') return undefined;
        if (r.headers['a2a-version'] !== '1.0') return rpcError(r, -32009, 'A2A version 0.3 is not supported');
        return rpcResult(r, { message: { role: 'ROLE_AGENT', parts: [{ text: 'went' }] } });
      }),
    );
    // A base URL: found at the older /.well-known/agent.json after agent-card.json 404s.
    const gw = track(await startGateway({ config: { agents: { modern: { card: `${peer.url}/` } } } }));
    const res = await postJson(`${gw.url}/tool/call`, callBody('modern_go', { task: 'x' }));
    expect(res.json.data).toMatchObject({ success: true, data: { output: 'went', state: 'completed' } });
    expect(peer.methods()).toEqual(['message/send', 'SendMessage']);
    expect(peer.requests.filter((q) => q.method === 'GET').map((q) => q.path)).toEqual([
      '/.well-known/agent-card.json',
      '/.well-known/agent.json',
    ]);
  });

  it('input-required ends the call as a tool_error with the question', async () => {
    const peer = track(
      await startStub(
        (r) =>
          cardOnly('asker', ['ask'])(r) ??
          rpcResult(r, {
            task: {
              id: 'q1',
              status: {
                state: 'TASK_STATE_INPUT_REQUIRED',
                message: { role: 'ROLE_AGENT', parts: [{ text: 'which branch?' }] },
              },
            },
          }),
      ),
    );
    const gw = track(await startGateway({ config: { agents: { asker: { card: peer.url } } } }));
    const res = await postJson(`${gw.url}/tool/call`, callBody('asker_ask', { task: 'merge' }));
    expect(res.json.data).toMatchObject({
      success: false,
      data: { state: 'input-required', metadata: { polls: 0, taskId: 'q1' } },
    });
    expect(res.json.data.error).toContain('which branch?');
  });

  it('polls fast at first: a 300 ms remote task finishes through the gateway well under poll_ms', async () => {
    const done = new Map<string, number>();
    let n = 0;
    const peer = track(
      await startStub((r) => {
        if (r.path === CARD) return cardOnly('timer', ['wait'])(r);
        if (r.rpc?.method === 'SendMessage') {
          const id = `t${++n}`;
          done.set(id, performance.now() + 300);
          return rpcResult(r, { task: { id, status: { state: 'TASK_STATE_WORKING' } } });
        }
        const id = r.rpc?.params?.id as string;
        const finished = performance.now() >= done.get(id)!;
        return rpcResult(r, {
          task: {
            id,
            status: { state: finished ? 'TASK_STATE_COMPLETED' : 'TASK_STATE_WORKING' },
            artifacts: finished ? [{ parts: [{ text: 'ok' }] }] : [],
          },
        });
      }),
    );
    const gw = track(await startGateway({ config: { agents: { timer: { card: peer.url, poll_ms: 1000 } } } }));
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      const res = await postJson(`${gw.url}/tool/call`, callBody('timer_wait', { task: 'x' }));
      times.push(performance.now() - t0);
      expect(res.json.data.data.output).toBe('ok');
    }
    // Typically ~340 ms; the bound is generous for a busy 2-core machine, and far below poll_ms + 300.
    expect(Math.min(...times)).toBeLessThan(500);
    expect(peer.methods().filter((m) => m === 'SendMessage')).toHaveLength(3);
    // Dozens of sequential requests, one keep-alive connection.
    expect(peer.requests.length).toBeGreaterThan(10);
    expect(new Set(peer.requests.map((q) => q.clientPort)).size).toBe(1);
    if (process.env.A2A_TIMING) console.log('300 ms remote task through the gateway, ms:', times.map(Math.round));
  });
});

describe('A2A agents offering streaming (mode auto)', () => {
  const streamingCard = (name: string) => cardOnly(name, ['go'], { capabilities: { streaming: true } });
  const event = (r: StubRequest, result: unknown) => ({ jsonrpc: '2.0', id: r.rpc?.id ?? null, result });

  it('a stream that ends before the task does is followed by polling', async () => {
    const peer = track(
      await startStub((r) => {
        if (r.path === CARD) return streamingCard('brief')(r);
        if (r.rpc?.method === 'SendStreamingMessage')
          return { sse: [event(r, { task: { id: 'e1', status: { state: 'TASK_STATE_WORKING' } } })] };
        if (r.rpc?.method === 'GetTask')
          return rpcResult(r, {
            task: { id: 'e1', status: { state: 'TASK_STATE_COMPLETED' }, artifacts: [{ parts: [{ text: 'polled' }] }] },
          });
        return rpcError(r, -32601, 'method not found');
      }),
    );
    const gw = track(await startGateway({ config: { agents: { brief: { card: peer.url, poll_ms: 20 } } } }));
    const res = await postJson(`${gw.url}/tool/call`, callBody('brief_go', { task: 'x' }));
    expect(res.json.data).toMatchObject({
      success: true,
      data: { output: 'polled', state: 'completed', metadata: { taskId: 'e1', polls: 1 } },
    });
    expect(peer.methods()).toEqual(['SendStreamingMessage', 'GetTask']);
  });

  it('a peer whose card offers streaming but that does not serve it is polled, from then on without trying the stream', async () => {
    const peer = track(
      await startStub((r) => {
        if (r.path === CARD) return streamingCard('claims')(r);
        if (r.rpc?.method === 'SendMessage')
          return rpcResult(r, {
            task: { id: 'c1', status: { state: 'TASK_STATE_COMPLETED' }, artifacts: [{ parts: [{ text: 'sent' }] }] },
          });
        return rpcError(r, -32601, 'method not found');
      }),
    );
    const gw = track(await startGateway({ config: { agents: { claims: { card: peer.url } } } }));
    for (let i = 0; i < 2; i++) {
      const res = await postJson(`${gw.url}/tool/call`, callBody('claims_go', { task: 'x' }));
      expect(res.json.data).toMatchObject({ success: true, data: { output: 'sent', state: 'completed' } });
    }
    // The dialect stays 1.0: the peer understood SendMessage, so only its streaming was missing.
    expect(peer.methods()).toEqual(['SendStreamingMessage', 'SendMessage', 'SendMessage']);
    expect((await agentsOf(gw))[0].dialect).toBe('1.0');
  });

  it('answers at the final event without waiting for the stream to end, and keeps the connection for the next call', async () => {
    const release = deferred();
    let held: StubRequest | undefined;
    let streams = 0;
    const peer = track(
      await startStub((r) => {
        if (r.path === CARD) return streamingCard('lingering')(r);
        if (r.rpc?.method !== 'SendStreamingMessage') return rpcError(r, -32601, 'method not found');
        const id = `l${++streams}`;
        const sse = [
          event(r, { task: { id, status: { state: 'TASK_STATE_SUBMITTED' } } }),
          event(r, {
            artifactUpdate: {
              taskId: id,
              artifact: { artifactId: 'a', parts: [{ text: `out ${id}` }] },
              lastChunk: true,
            },
          }),
          event(r, { statusUpdate: { taskId: id, status: { state: 'TASK_STATE_COMPLETED' } } }),
        ];
        // The first stream stays open after its final event until the test releases it.
        if (held) return { sse };
        held = r;
        return { sse, holdUntil: release.promise };
      }),
    );
    const gw = track(await startGateway({ config: { agents: { lingering: { card: peer.url } } } }));
    const first = await postJson(`${gw.url}/tool/call`, callBody('lingering_go', { task: 'x' }));
    expect(first.json.data).toMatchObject({
      success: true,
      data: { output: 'out l1', state: 'completed', metadata: { polls: 0 } },
    });
    // The answer came while the peer still held the stream open.
    expect(held!.connectionClosed()).toBe(false);
    release.resolve();
    for (let i = 0; i < 5; i++)
      expect((await postJson(`${gw.url}/tool/call`, callBody('lingering_go', { task: 'x' }))).json.data.success).toBe(
        true,
      );
    // The rest of the first stream was read, not cut: its connection is still open (a cut closes it at once).
    expect(held!.connectionClosed()).toBe(false);
    expect(peer.methods()).toEqual(Array(6).fill('SendStreamingMessage'));
  });
});

describe('parseAgentsConfig and the agents config section', () => {
  it('fills every default and keeps configuration order', () => {
    expect(
      parseAgentsConfig({
        b: { card: 'http://127.0.0.1:1/x.json' },
        a: { card: 'http://127.0.0.1:2', enabled: false },
      }),
    ).toEqual([
      {
        name: 'b',
        card: 'http://127.0.0.1:1/x.json',
        headers: {},
        timeout_ms: 300000,
        poll_ms: 1000,
        mode: 'auto',
        cross_origin_headers: false,
        enabled: true,
      },
      {
        name: 'a',
        card: 'http://127.0.0.1:2',
        headers: {},
        timeout_ms: 300000,
        poll_ms: 1000,
        mode: 'auto',
        cross_origin_headers: false,
        enabled: false,
      },
    ]);
  });

  it('rejects unknown keys and bad values, naming them', () => {
    expect(() => parseAgentsConfig({ x: { card: 'http://h', pol_ms: 5 } })).toThrow(/x: .*pol_ms/);
    expect(() => parseAgentsConfig({ x: { card: 'ftp://h' } })).toThrow(/x\.card: must be an http\(s\) URL/);
    expect(() => parseAgentsConfig({ x: { card: 'http://h', timeout_ms: 0 } })).toThrow(/x\.timeout_ms/);
    expect(() => parseAgentsConfig({ x: { card: 'http://h', mode: 'stream' } })).toThrow(/x\.mode/);
  });

  it('a disabled agent is reported and never fetched', async () => {
    const peer = track(await startStub(cardOnly('off', ['x'])));
    const gw = track(await startGateway({ config: { agents: { off: { card: peer.url, enabled: false } } } }));
    expect((await agentsOf(gw))[0]).toMatchObject({ state: 'disabled', tools: [] });
    expect(peer.requests).toEqual([]);
  });
});
