/**
 * Handshake sessions and admission limits shared through Redis (store.kind
 * redis), between two real gateway processes on one real redis-server: a
 * session opened on A serves calls on B, its max_parallel counts calls on
 * both (in a running-call set that expires with their lease), a token's rate
 * limit holds across both, a session closed on A is gone on B, and a killed
 * instance's running calls stop counting once their lease lapses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../security/helpers.js';
import { postJson, callBody } from '../helpers/server.js';
import { startCluster, type Cluster, type Instance } from '../helpers/instances.js';
import type { RedisClient } from '../helpers/redis.js';

const TOKENS = {
  alice: 'redis-sessions-alice-0123456789',
  bob: 'redis-sessions-bob-0123456789ab',
  carol: 'redis-sessions-carol-0123456789',
};
const bearer = (name: keyof typeof TOKENS) => ({ Authorization: `Bearer ${TOKENS[name]}` });
const RATE = 20;
const BURST = 20;

let cluster: Cluster;
let a: Instance;
let b: Instance;
let redis: RedisClient;
beforeAll(async () => {
  cluster = await startCluster({
    count: 2,
    prefix: 'rs-test:',
    config: [
      'auth:\n  tokens:',
      ...Object.entries(TOKENS).map(([name, token]) => `    - name: ${name}\n      token_sha256: "${sha256(token)}"`),
      'sessions:\n  required: false\n  max_parallel: 2\n  max_per_principal: 3',
      `limits:\n  rate_per_s: ${RATE}\n  rate_burst: ${BURST}`,
      'calls:\n  owner_lease_s: 1',
    ].join('\n'),
  });
  [a, b] = cluster.instances as [Instance, Instance];
  redis = await cluster.redis.client();
}, 120_000);
afterAll(() => cluster?.dispose());

async function handshake(on: Instance, who: keyof typeof TOKENS): Promise<string> {
  const r = await postJson(
    `${on.url}/handshake`,
    { type: 'handshake/req', agent_id: 't', agent_caps: ['tools'] },
    bearer(who),
  );
  expect(r.status).toBe(200);
  return r.json.session_id as string;
}
const whoami = (on: Instance, who: keyof typeof TOKENS, session = '') =>
  postJson(`${on.url}/tool/call`, callBody('whoami', {}, { session_id: session }), bearer(who));
/** A call resource holding a slot of `session` until cancelled. */
async function hold(on: Instance, session: string): Promise<string> {
  const r = await postJson(
    `${on.url}/tool/calls`,
    callBody('hold', { ms: 60_000 }, { session_id: session }),
    bearer('alice'),
  );
  expect(r.status).toBe(202);
  return r.json.call_id as string;
}
const cancel = (on: Instance, callId: string) =>
  fetch(`${on.url}/tool/calls/${callId}`, { method: 'DELETE', headers: bearer('alice') });

describe('handshake sessions across instances', () => {
  it('a session opened on A lists and calls on B, where B runs the call', async () => {
    const session = await handshake(a, 'alice');
    const list = await postJson(`${b.url}/tool/list`, { session_id: session }, bearer('alice'));
    expect(list.status).toBe(200);
    expect(list.json.tools.map((t: { name: string }) => t.name)).toContain('whoami');
    const call = await whoami(b, 'alice', session);
    expect(call.status).toBe(200);
    expect(call.json.data.data.pid).toBe(b.pid);
    // Another token cannot use it on either instance, and the refusal is the one an unknown id gets.
    const foreign = await whoami(b, 'bob', session);
    const unknown = await whoami(a, 'alice', 'f'.repeat(32));
    expect(foreign.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(foreign.json.message).toBe(unknown.json.message);
    expect(foreign.json.message).toMatch(/unknown or expired/);
  });

  it("a session's max_parallel counts its calls on A and B together, and a slot frees when a call ends", async () => {
    const session = await handshake(a, 'alice');
    const onA = await hold(a, session);
    const onB = await hold(b, session);
    for (const on of [a, b]) {
      const third = await whoami(on, 'alice', session);
      expect(third.status).toBe(429);
      expect(third.json.code).toBe('rate_limited');
      expect(third.json.message).toMatch(/already runs 2 calls \(its max_parallel\)/);
      expect(third.headers.get('retry-after')).toBe('1');
    }
    // The running-call set holds both slots and expires with their lease (calls.owner_lease_s 1), so the
    // set of a session whose instances all died does not outlive its calls.
    const running = `rs-test:session-calls:${session}`;
    expect(await redis.zCard(running)).toBe(2);
    const ttl = await redis.pTTL(running);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1000);
    expect((await cancel(b, onB)).status).toBe(200);
    // The slot is given back when the call settles (a moment after the cancel).
    await expect
      .poll(async () => (await whoami(a, 'alice', session)).status, { timeout: 10_000, interval: 100 })
      .toBe(200);
    expect((await cancel(a, onA)).status).toBe(200);
  });

  it("a session closed by its owner's quota on A is refused on B; the other sessions go on", async () => {
    const first = await handshake(a, 'carol');
    const second = await handshake(b, 'carol');
    const third = await handshake(a, 'carol');
    expect((await whoami(b, 'carol', first)).status).toBe(200); // used again: `second` is now the least recently used
    const fourth = await handshake(a, 'carol');
    const evicted = await whoami(b, 'carol', second);
    expect(evicted.status).toBe(401);
    expect(evicted.json.message).toMatch(/unknown or expired/);
    for (const s of [first, third, fourth]) expect((await whoami(b, 'carol', s)).status).toBe(200);
  });

  it("a token's rate limit holds across both instances: accepted calls stay within rate × time + burst", async () => {
    const perInstance = 60;
    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: perInstance * 2 }, (_, i) =>
        whoami(i % 2 === 0 ? a : b, 'bob').then((r) => ({ on: i % 2, r })),
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    const accepted = results.filter(({ r }) => r.status === 200);
    const refused = results.filter(({ r }) => r.status === 429);
    expect(accepted.length + refused.length).toBe(results.length);
    expect(accepted.length).toBeGreaterThanOrEqual(BURST);
    expect(accepted.length).toBeLessThanOrEqual(Math.floor(RATE * seconds + BURST));
    // Both instances refused some: they drew on one bucket, not one each.
    for (const on of [0, 1]) expect(refused.filter((x) => x.on === on).length).toBeGreaterThan(0);
    for (const { r } of refused) {
      expect(r.json.code).toBe('rate_limited');
      expect(r.json.message).toMatch(/too many calls for token "bob" \(limits\.rate_per_s\)/);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  });

  it('the running calls of a killed instance stop counting against max_parallel once their lease lapses', async () => {
    const session = await handshake(b, 'alice');
    await hold(a, session);
    await hold(a, session);
    expect((await whoami(b, 'alice', session)).status).toBe(429);
    await a.kill();
    // calls.owner_lease_s is 1: B admits calls in the session again within a few seconds.
    await expect
      .poll(async () => (await whoami(b, 'alice', session)).status, { timeout: 15_000, interval: 200 })
      .toBe(200);
  });
});
