/**
 * A config reload with store.kind redis (two real gateway processes, one real
 * redis-server): the sessions of a token the reload removed end in Redis, so
 * on every instance, and do not come back when a token of that name is added
 * again; the token rate limit the Lua script takes follows the reloaded
 * `limits.rate_per_s` / `limits.rate_burst` from the next call on.
 */
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../security/helpers.js';
import { callBody, postJson } from '../helpers/server.js';
import { startCluster, SCALE_TOOLS, type Cluster, type Instance } from '../helpers/instances.js';
import type { RedisClient } from '../helpers/redis.js';

const PREFIX = 'rs-reload:';
const TOKENS = { ops: 'redis-reload-ops-0123456789abcdef', user: 'redis-reload-user-0123456789abcd' };
const bearer = (name: keyof typeof TOKENS) => ({ Authorization: `Bearer ${TOKENS[name]}` });

/** The whole config file (startCluster's format), with or without the `user` token and with this rate limit. */
function configFile(cluster: Cluster, { user, rate, burst }: { user: boolean; rate: number; burst: number }): string {
  return (
    [
      'server:\n  port: 0',
      `store:\n  kind: redis\n  url: ${cluster.redis.url}\n  prefix: "${PREFIX}"`,
      `plugins:\n  - module: ${JSON.stringify(SCALE_TOOLS)}`,
      'auth:\n  tokens:',
      `    - name: ops\n      token_sha256: "${sha256(TOKENS.ops)}"\n      admin: true`,
      ...(user ? [`    - name: user\n      token_sha256: "${sha256(TOKENS.user)}"`] : []),
      'sessions:\n  required: false',
      `limits:\n  rate_per_s: ${rate}\n  rate_burst: ${burst}`,
    ].join('\n') + '\n'
  );
}

let cluster: Cluster;
let a: Instance;
let b: Instance;
let redis: RedisClient;
beforeAll(async () => {
  // startCluster writes its own file first; every reload below rewrites it whole.
  cluster = await startCluster({
    count: 2,
    prefix: PREFIX,
    config: configTail({ user: true, rate: 1000, burst: 1000 }),
  });
  [a, b] = cluster.instances as [Instance, Instance];
  redis = await cluster.redis.client();
}, 120_000);
afterAll(() => cluster?.dispose());

/** What startCluster appends to its own server/store/plugins lines: the same auth, sessions and limits as configFile. */
function configTail(o: { user: boolean; rate: number; burst: number }): string {
  return [
    'auth:\n  tokens:',
    `    - name: ops\n      token_sha256: "${sha256(TOKENS.ops)}"\n      admin: true`,
    ...(o.user ? [`    - name: user\n      token_sha256: "${sha256(TOKENS.user)}"`] : []),
    'sessions:\n  required: false',
    `limits:\n  rate_per_s: ${o.rate}\n  rate_burst: ${o.burst}`,
  ].join('\n');
}

async function reload(on: Instance, o: { user: boolean; rate: number; burst: number }) {
  await writeFile(cluster.configPath, configFile(cluster, o));
  const r = await postJson(`${on.url}/admin/reload`, {}, bearer('ops'));
  expect(r.status).toBe(200);
  expect(r.json.status).toBe('reloaded');
  return r.json as { changed: string[]; sessions_ended: number };
}

async function handshake(on: Instance, who: keyof typeof TOKENS): Promise<string> {
  const r = await postJson(
    `${on.url}/handshake`,
    { type: 'handshake/req', agent_id: 't', agent_caps: ['tools'] },
    bearer(who),
  );
  expect(r.status).toBe(200);
  return r.json.session_id as string;
}
const call = (on: Instance, who: keyof typeof TOKENS, session = '') =>
  postJson(`${on.url}/tool/call`, callBody('whoami', {}, { session_id: session }), bearer(who));

describe('config reload with store.kind redis', () => {
  it("a removed token's sessions end in Redis, for every instance, and stay ended when the name comes back", async () => {
    const userOnA = await handshake(a, 'user');
    const userOnB = await handshake(b, 'user');
    const ops = await handshake(b, 'ops');
    expect((await call(b, 'user', userOnA)).status).toBe(200);

    const answer = await reload(a, { user: false, rate: 1000, burst: 1000 });
    expect(answer.changed).toEqual(['auth.tokens']);
    expect(answer.sessions_ended).toBe(2);
    expect(await redis.exists([`${PREFIX}session:${userOnA}`, `${PREFIX}session:${userOnB}`])).toBe(0);
    expect(await redis.zScore(`${PREFIX}sessions`, userOnA)).toBeNull();
    expect(await redis.zCard(`${PREFIX}sessions:owner:principal:user`)).toBe(0);

    // B has not reloaded, so the token still authenticates there, but its sessions are gone.
    const onB = await call(b, 'user', userOnB);
    expect(onB.status).toBe(401);
    expect(onB.json.message).toMatch(/unknown or expired/);
    expect((await call(b, 'ops', ops)).status).toBe(200);

    // The token is added again (say, with the old secret by mistake): its old sessions do not come back.
    await reload(a, { user: true, rate: 1000, burst: 1000 });
    for (const [on, session] of [
      [a, userOnA],
      [b, userOnB],
    ] as const) {
      const again = await call(on, 'user', session);
      expect(again.status).toBe(401);
      expect(again.json.message).toMatch(/unknown or expired/);
    }
    // A new handshake works, and the other token's session went on throughout.
    expect((await call(a, 'user', await handshake(a, 'user'))).status).toBe(200);
    expect((await call(a, 'ops', ops)).status).toBe(200);
  });

  it('the rate limit in Redis follows the reloaded limits.rate_per_s and rate_burst from the next call', async () => {
    // Lowered: rate 1/s, burst 3. The bucket was filled under burst 1000; from now on it holds at most 3.
    const lowered = await reload(a, { user: true, rate: 1, burst: 3 });
    expect(lowered.changed).toEqual(expect.arrayContaining(['limits.rate_per_s', 'limits.rate_burst']));
    const started = Date.now();
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await call(a, 'ops')).status);
    const elapsedS = (Date.now() - started) / 1000;
    const accepted = statuses.filter((s) => s === 200).length;
    expect(accepted).toBeGreaterThanOrEqual(3);
    expect(accepted).toBeLessThanOrEqual(3 + Math.ceil(elapsedS * 1));
    expect(statuses.filter((s) => s !== 200).every((s) => s === 429)).toBe(true);
    const refused = await call(a, 'ops');
    expect(refused.status).toBe(429);
    expect(refused.json.code).toBe('rate_limited');
    expect(await redis.pTTL(`${PREFIX}rate:ops`)).toBeLessThanOrEqual(4000); // burst / rate + 1 s, under the new limits

    // Raised: the same emptied bucket refills at the new rate at once (at the old 1/s, 20 calls would take 20 s).
    await reload(a, { user: true, rate: 1000, burst: 1000 });
    for (let i = 0; i < 20; i++) {
      const r = await call(a, 'ops');
      expect(r.status, `call ${i + 1} after raising the rate: ${JSON.stringify(r.json)}`).toBe(200);
    }
  });
});
