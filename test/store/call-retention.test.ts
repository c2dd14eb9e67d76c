/**
 * Finished call resources are kept per principal: each token's share is `calls.max_retained_per_principal`, its
 * own oldest dropped first, so one caller cannot push out another's results; `calls.max_retained` is the
 * gateway-wide backstop, and a call it dropped answers a 404 that names it. The regression: one pool dropped
 * oldest-first across all tokens, and alice's 1,050 POST /tool/calls made bob's finished call answer 404.
 *
 * Both stores; with Redis every read also goes through a second instance, so the shared copy is held to the
 * same shares (not only the owner's memory).
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definePlugin, echoTool } from '../helpers/plugins.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';
import { STORE_KINDS, storeConfigs, type StoreKind } from '../helpers/stores.js';

const stores = storeConfigs();
const sha = (t: string) => createHash('sha256').update(t).digest('hex');
const NAMES = ['alice', 'bob', 'carol', 'dave'];
const tokenOf = (name: string) => `${name}-token-0123456789`;

interface Setup {
  owner: TestGateway;
  /** The owner itself in memory; a second instance sharing the store with Redis. */
  reader: TestGateway;
  close(): Promise<void>;
}

async function setup(
  kind: StoreKind,
  calls: { max_retained_per_principal: number; max_retained: number },
): Promise<Setup> {
  const config = {
    ...(await stores(kind)),
    calls,
    sessions: { required: false },
    auth: { tokens: NAMES.map((name) => ({ name, token_sha256: sha(tokenOf(name)) })) },
  };
  const plugins = [definePlugin('t', [echoTool])];
  const owner = await startGateway({ plugins, config });
  const reader = kind === 'memory' ? owner : await startGateway({ plugins, config });
  return {
    owner,
    reader,
    close: async () => void (await Promise.all([owner.close(), reader === owner ? undefined : reader.close()])),
  };
}

const auth = (name: string) => ({ authorization: `Bearer ${tokenOf(name)}` });

async function read(gw: TestGateway, name: string, id: string): Promise<{ status: number; json: any }> {
  const res = await fetch(`${gw.url}/tool/calls/${id}`, { headers: auth(name) });
  return { status: res.status, json: await res.json() };
}

/** Start a call as `name` and wait until it is finished everywhere (in the shared copy too). */
async function finishedCall(s: Setup, name: string): Promise<string> {
  const res = await postJson(`${s.owner.url}/tool/calls`, callBody('echo', { text: name }), auth(name));
  expect(res.status).toBe(202);
  const id = res.json.call_id as string;
  await expect.poll(async () => (await read(s.reader, name, id)).json.state).toBe('completed');
  return id;
}

describe.each(STORE_KINDS)('calls.max_retained_per_principal (store: %s)', (kind) => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup(kind, { max_retained_per_principal: 5, max_retained: 100 });
  });
  afterAll(() => s?.close());

  it("one token's many calls drop only its own oldest: another token's finished call stays readable", async () => {
    const bobs = await finishedCall(s, 'bob');
    const alices: string[] = [];
    for (let i = 0; i < 12; i++) alices.push(await finishedCall(s, 'alice'));

    for (const gw of [s.owner, s.reader]) {
      expect((await read(gw, 'bob', bobs)).status).toBe(200);
      const statuses = await Promise.all(alices.map(async (id) => (await read(gw, 'alice', id)).status));
      expect(statuses).toEqual([...Array(7).fill(404), ...Array(5).fill(200)]);
    }
    const gone = await read(s.reader, 'alice', alices[0]!);
    expect(gone.json.code).toBe('not_found');
    expect(gone.json.message).toContain('calls.max_retained_per_principal (5)');
  });
});

describe.each(STORE_KINDS)('calls.max_retained, the gateway-wide backstop (store: %s)', (kind) => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup(kind, { max_retained_per_principal: 4, max_retained: 10 });
  });
  afterAll(() => s?.close());

  it('beyond it the oldest finished calls of all tokens are dropped, and the 404 names the backstop', async () => {
    const started: [string, string][] = [];
    for (const name of ['alice', 'bob', 'carol'])
      for (let i = 0; i < 4; i++) started.push([name, await finishedCall(s, name)]);
    for (const gw of [s.owner, s.reader]) {
      const statuses = await Promise.all(started.map(async ([name, id]) => (await read(gw, name, id)).status));
      // 12 finished, each token within its share of 4: the two oldest of all go.
      expect(statuses).toEqual([404, 404, ...Array(10).fill(200)]);
    }
    const gone = await read(s.reader, 'alice', started[0]![1]);
    expect(gone.json.message).toMatch(/calls\.max_retained \(10\)/);
    expect(gone.json.message).toContain('all tokens together');
  });
});
