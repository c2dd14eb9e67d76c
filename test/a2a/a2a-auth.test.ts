/**
 * `auth` on a remote A2A agent (issue 56): the gateway adds the credential to
 * the card fetch and every call; the caller never holds it. A real stub peer
 * over HTTP that refuses requests without the token and records each one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { rpcResult, startStub, type StubRequest } from '../helpers/a2a-stub.js';
import { callBody, postJson, startGateway } from '../helpers/server.js';

const CARD = '/.well-known/agent-card.json';
const TOKEN = 'a2a-agent-token-3c2b1a0f';
const COMPLETED = {
  id: 't1',
  status: { state: 'completed' },
  artifacts: [{ parts: [{ kind: 'text', text: 'done' }] }],
};
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(
    open
      .splice(0)
      .reverse()
      .map((x) => x.close()),
  );
});

describe('agents.<id>.auth', () => {
  it('the card fetch and the calls carry the configured credential; an unset variable fails the agent, naming it', async () => {
    const peer = await startStub((r: StubRequest) => {
      if (r.headers.authorization !== `Bearer ${TOKEN}`) return { status: 401, json: { error: 'unauthorized' } };
      if (r.path === CARD)
        return {
          json: { name: 'guarded', skills: [{ id: 'work', description: 'work skill' }], url: `${peer.url}/rpc` },
        };
      return r.rpc ? rpcResult(r, COMPLETED) : undefined;
    });
    open.push(peer);
    const gw = await startGateway({
      config: {
        agents: {
          guarded: { card: peer.url, auth: { type: 'bearer', token_env: 'AGENT_TOKEN' } },
          unset: { card: peer.url, auth: { type: 'bearer', token_env: 'NO_SUCH_AGENT_TOKEN' } },
        },
      },
      env: { AGENT_TOKEN: TOKEN },
    });
    open.push(gw);
    const agents = Object.fromEntries(
      ((await (await fetch(`${gw.url}/agents`)).json()).agents as any[]).map((a) => [a.name, a]),
    );
    expect(agents.guarded).toMatchObject({ state: 'ok', tools: ['guarded_work'] });
    expect(agents.unset).toMatchObject({
      state: 'failed',
      last_error: expect.stringContaining('environment variable NO_SUCH_AGENT_TOKEN is not set'),
    });
    const r = await postJson(`${gw.url}/tool/call`, callBody('guarded_work', { task: 'go' }));
    expect(r.json.data).toMatchObject({ success: true, data: { output: 'done' } });
    expect(peer.requests.filter((q) => q.rpc).every((q) => q.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
    expect(peer.requests.filter((q) => q.rpc).length).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(r.json) + JSON.stringify(agents)).not.toContain(TOKEN);
  });

  it('a query credential is refused by the config, saying which kinds an agent takes', async () => {
    await expect(
      startGateway({
        config: { agents: { q: { card: 'http://127.0.0.1:1', auth: { type: 'query', name: 'k', value_env: 'K' } } } },
      }),
    ).rejects.toThrow(/an agent takes a header credential/);
  });
});
