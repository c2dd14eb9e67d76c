/**
 * An agent card names the JSON-RPC endpoint the gateway then posts to (issue
 * 20, finding 8): a card naming one on another origin than its own is
 * refused — with or without configured headers — unless the operator opted in
 * with agents.<id>.cross_origin: true (or the older cross_origin_headers: true).
 * Real stub peers over HTTP; the other origin records every request it gets.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { rpcResult, startStub, type StubRequest } from '../helpers/a2a-stub.js';
import { callBody, postJson, startGateway } from '../helpers/server.js';

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

const COMPLETED = {
  id: 't1',
  status: { state: 'completed' },
  artifacts: [{ parts: [{ kind: 'text', text: 'done' }] }],
};

describe('A2A endpoints on another origin', () => {
  it('are refused without the opt-in, headers or not; cross_origin: true and the older cross_origin_headers: true allow them', async () => {
    const elsewhere = track(await startStub((r) => (r.rpc ? rpcResult(r, COMPLETED) : undefined)));
    // A peer whose card names its endpoint on `elsewhere`.
    const peer = async (name: string) =>
      track(
        await startStub((r: StubRequest) =>
          r.path === CARD
            ? { json: { name, skills: [{ id: 'work', description: 'work skill' }], url: `${elsewhere.url}/rpc` } }
            : undefined,
        ),
      );
    const [far, opt, old] = [await peer('far'), await peer('opt'), await peer('old')];
    const gw = track(
      await startGateway({
        config: {
          agents: {
            bare: { card: far.url },
            withHeaders: { card: `${far.url}${CARD}`, headers: { 'X-Api-Key': 'agent-secret' } },
            offAgain: { card: `${far.url}/x/`, cross_origin: false },
            optIn: { card: opt.url, cross_origin: true, headers: { 'X-Api-Key': 'opt-key' } },
            legacy: { card: old.url, cross_origin_headers: true },
          },
        },
      }),
    );
    const agents = Object.fromEntries(
      ((await (await fetch(`${gw.url}/agents`)).json()).agents as any[]).map((a) => [a.name, a]),
    );
    for (const name of ['bare', 'withHeaders', 'offAgain']) {
      expect(agents[name].state, name).toBe('failed');
      expect(agents[name].last_error).toContain(
        `names its JSON-RPC endpoint on ${elsewhere.url}, not on the card's origin ${far.url}`,
      );
      expect(agents[name].last_error).toContain(`agents.${name}.cross_origin: true`);
      expect(agents[name].last_error).not.toContain('agent-secret');
    }
    expect(elsewhere.requests).toHaveLength(0);
    expect(agents.optIn).toMatchObject({ state: 'ok', tools: ['opt_work'] });
    expect(agents.legacy).toMatchObject({ state: 'ok', tools: ['old_work'] });

    for (const tool of ['opt_work', 'old_work']) {
      const r = await postJson(`${gw.url}/tool/call`, callBody(tool, { task: 'go' }));
      expect(r.json.data, tool).toMatchObject({ success: true, data: { output: 'done' } });
    }
    expect(elsewhere.requests.length).toBeGreaterThanOrEqual(2);
    // The opted-in agent's headers went with it (the operator said that endpoint is the agent's own).
    expect(elsewhere.requests.some((q) => q.headers['x-api-key'] === 'opt-key')).toBe(true);
    expect(elsewhere.requests.some((q) => q.headers['x-api-key'] === 'agent-secret')).toBe(false);
  });

  it("an endpoint on the card's own origin needs no opt-in", async () => {
    let self = '';
    const peer = track(
      await startStub((r) =>
        r.path === CARD
          ? { json: { name: 'near', skills: [{ id: 'work', description: 'work skill' }], url: `${self}/rpc` } }
          : r.rpc
            ? rpcResult(r, COMPLETED)
            : undefined,
      ),
    );
    self = peer.url;
    const gw = track(
      await startGateway({ config: { agents: { near: { card: peer.url, headers: { 'X-Api-Key': 'k' } } } } }),
    );
    const r = await postJson(`${gw.url}/tool/call`, callBody('near_work', { task: 'go' }));
    expect(r.json.data).toMatchObject({ success: true, data: { output: 'done' } });
    const rpcs = peer.requests.filter((q) => q.rpc);
    expect(rpcs.length).toBeGreaterThan(0);
    expect(rpcs.every((q) => q.path === '/rpc' && q.headers['x-api-key'] === 'k')).toBe(true);
  });
});
