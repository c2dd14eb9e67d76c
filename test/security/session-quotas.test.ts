/**
 * Session exhaustion (issue 20, finding 5): sessions count against a quota
 * per token (per client address without one); an owner at its quota loses
 * its own least recently used idle session, never anyone else's; a
 * transport session must complete its handshake quickly or it is closed.
 * Floods are bounded in count; other clients are reached from another
 * loopback address (127.0.0.2) so per-address quotas are real.
 */
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { GatewayConfigInput } from '../../src/index.js';
import type { A2eHttpTransport } from '../../src/transport/a2e-http/index.js';
import { A2eTestClient } from '../helpers/a2e-client.js';
import { callBody } from '../helpers/server.js';
import { STORE_KINDS, storeConfigs } from '../helpers/stores.js';
import { post, sha256, startSecureGateway, type SecureGateway } from './helpers.js';

const ALICE = 'quota-alice-token-0123456789abcdef';
const BOB = 'quota-bob-token-0123456789abcdefgh';
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const tokens = {
  tokens: [
    { name: 'alice', token_sha256: sha256(ALICE) },
    { name: 'bob', token_sha256: sha256(BOB) },
  ],
};

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});
async function gateway(config: GatewayConfigInput): Promise<SecureGateway> {
  const gw = await startSecureGateway({ config });
  cleanup.push(() => gw.close());
  return gw;
}

/** POST with no body from a given local (loopback) address. */
function postFrom(
  url: string,
  localAddress: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', localAddress, headers: { 'Content-Length': '0', ...headers } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, json: body ? JSON.parse(body) : undefined }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Run `fn` `n` times, `width` at a time. */
async function flood<T>(n: number, width: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i += width)
    out.push(...(await Promise.all(Array.from({ length: Math.min(width, n - i) }, (_, j) => fn(i + j)))));
  return out;
}

describe('A2E transport session quotas', () => {
  it('1,000 session opens without a token from one address do not lock out another address', async () => {
    const gw = await gateway({});
    const base = `${gw.url}/a2e/v1`;
    // A client on another address is working before the flood…
    const other = await postFrom(`${base}/session`, '127.0.0.2');
    expect(other.status).toBe(200);
    const victim = A2eTestClient.forSession(base, other.json.session_id as string);
    await victim.openStream();
    cleanup.push(() => victim.dropStream());
    expect((await victim.request({ type: 'handshake/req', agent_caps: ['tools'] })).response.ok).toBe(true);

    const started = performance.now();
    const opened = await flood(1000, 25, () => postFrom(`${base}/session`, '127.0.0.1'));
    const seconds = (performance.now() - started) / 1000;
    expect(seconds).toBeLessThan(60);
    // …every open from the flooding address succeeded by closing that address's own oldest session…
    expect(opened.filter((r) => r.status !== 200)).toEqual([]);
    const transport = gw.gateway.transport as A2eHttpTransport;
    expect(transport.size).toBeLessThanOrEqual(16 + 1);
    const first = A2eTestClient.forSession(base, opened[0]!.json.session_id as string);
    const gone = await first.send({ type: 'ping' });
    expect(gone.status).toBe(404);
    // …and the other address's session is untouched, and it can still open new ones.
    expect(
      (await victim.request({ type: 'tool/call/req', tool_name: 'echo', arguments: { text: 'still here' } })).response
        .data,
    ).toMatchObject({
      success: true,
      data: { text: 'still here' },
    });
    expect((await postFrom(`${base}/session`, '127.0.0.2')).status).toBe(200);
  });

  it('with auth, 1,000 opens without a token are refused (401) and leave no session; a token still opens one', async () => {
    const gw = await gateway({ auth: tokens });
    const base = `${gw.url}/a2e/v1`;
    const refused = await flood(1000, 25, () => postFrom(`${base}/session`, '127.0.0.1'));
    expect(new Set(refused.map((r) => r.status))).toEqual(new Set([401]));
    expect((gw.gateway.transport as A2eHttpTransport).size).toBe(0);
    const { client, handshake } = await A2eTestClient.connect(base, {}, bearer(BOB));
    cleanup.push(() => client.dropStream());
    expect(handshake.response.ok).toBe(true);
  });

  it("one token at its quota closes its own least recently used idle session, never another token's", async () => {
    const gw = await gateway({ auth: tokens, transport: { max_sessions_per_principal: 3 } });
    const base = `${gw.url}/a2e/v1`;
    const { client: bob } = await A2eTestClient.connect(base, {}, bearer(BOB));
    cleanup.push(() => bob.dropStream());
    await bob.dropStream(); // idle, like alice's: still never hers to close

    const alice: A2eTestClient[] = [];
    for (let i = 0; i < 3; i++) {
      const c = await A2eTestClient.open(base, bearer(ALICE));
      expect((await c.send({ type: 'handshake/req', agent_caps: ['tools'] })).status).toBe(202);
      alice.push(c);
    }
    // alice[0] is used again, so alice[1] is now the least recently used.
    expect((await alice[0]!.send({ type: 'ping' })).status).toBe(202);
    const fourth = await A2eTestClient.open(base, bearer(ALICE));
    expect((await alice[1]!.send({ type: 'ping' })).status).toBe(404);
    for (const c of [alice[0]!, alice[2]!, fourth]) expect((await c.send({ type: 'ping' })).status).toBe(202);

    // With a stream on each of her sessions none is idle: her next open is refused, saying why; bob is unaffected.
    const streams = [alice[0]!, alice[2]!, fourth];
    for (const c of streams) await c.openStream();
    cleanup.push(async () => void (await Promise.all(streams.map((c) => c.dropStream()))));
    const refused = await fetch(`${base}/session`, { method: 'POST', headers: bearer(ALICE) });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(((await refused.json()) as { detail: string }).detail).toContain('transport.max_sessions_per_principal');
    await bob.openStream();
    const call = await bob.request({ type: 'tool/call/req', tool_name: 'echo', arguments: { text: 'bob' } });
    expect(call.response.data).toMatchObject({ success: true, data: { text: 'bob' } });
    expect((await fetch(`${base}/session`, { method: 'POST', headers: bearer(BOB) })).status).toBe(200);
  });

  it('a session that does not complete its handshake within handshake_timeout_s is closed; one that did stays', async () => {
    const gw = await gateway({ transport: { handshake_timeout_s: 0.5 } });
    const base = `${gw.url}/a2e/v1`;
    const silent = await A2eTestClient.open(base);
    await silent.openStream(); // a stream attached does not keep a session without a handshake alive
    cleanup.push(() => silent.dropStream());
    const { client: shook } = await A2eTestClient.connect(base);
    cleanup.push(() => shook.dropStream());
    await silent.streamEnded(); // the gateway closed it
    const late = await silent.send({ type: 'handshake/req', agent_caps: ['tools'] });
    expect(late.status).toBe(404);
    expect(((await late.json()) as { detail: string }).detail).toMatch(
      /unknown or expired session|handshake_timeout_s/,
    );
    expect((await shook.request({ type: 'ping' })).response.type).toBe('pong');
    expect((gw.gateway.transport as A2eHttpTransport).size).toBe(1);
  });
});

const storeOf = storeConfigs();
/** Live handshake sessions, in whichever store holds them. */
async function liveSessions(gw: SecureGateway): Promise<number> {
  const redis = gw.gateway.stores.redis;
  return redis ? redis.client.zCard(redis.key('sessions')) : gw.gateway.security.sessions.size;
}

describe.each(STORE_KINDS)('handshake session quotas (sessions.max_per_principal, %s store)', (kind) => {
  it("one token at its quota loses its own least recently used session, never another token's", async () => {
    const gw = await gateway({ ...(await storeOf(kind)), auth: tokens, sessions: { max_per_principal: 3 } });
    const handshake = async (token: string) =>
      (await post(`${gw.url}/handshake`, { type: 'handshake/req', agent_caps: ['tools'] }, bearer(token))).json
        .session_id as string;
    const call = async (token: string, session: string) =>
      (await post(`${gw.url}/tool/call`, callBody('echo', { text: 'x' }, { session_id: session }), bearer(token)))
        .status;

    const bobs = await handshake(BOB);
    const alices = [await handshake(ALICE), await handshake(ALICE), await handshake(ALICE)];
    expect(await call(ALICE, alices[0]!)).toBe(200); // used again: alices[1] is the least recently used
    const fourth = await handshake(ALICE);
    expect(await call(ALICE, alices[1]!)).toBe(401);
    for (const s of [alices[0]!, alices[2]!, fourth]) expect(await call(ALICE, s)).toBe(200);
    expect(await call(BOB, bobs)).toBe(200);
    expect(await liveSessions(gw)).toBe(4);
  });

  it('1,000 anonymous handshakes from one address do not lock out another address', async () => {
    const gw = await gateway({ ...(await storeOf(kind)), sessions: { max_per_principal: 10, max_sessions: 50 } });
    const from = (address: string) =>
      new Promise<{ status: number; json: any }>((resolve, reject) => {
        const body = JSON.stringify({ type: 'handshake/req', agent_caps: ['tools'] });
        const req = request(
          `${gw.url}/handshake`,
          {
            method: 'POST',
            localAddress: address,
            headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (text += c));
            res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text) }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    const other = await from('127.0.0.2');
    const flooded = await flood(1000, 25, () => from('127.0.0.1'));
    expect(flooded.filter((r) => r.status !== 200)).toEqual([]);
    expect(await liveSessions(gw)).toBe(11);
    // The other address's session still works, and it can open another.
    const r = await post(`${gw.url}/tool/call`, callBody('echo', { text: 'y' }, { session_id: other.json.session_id }));
    expect(r.status).toBe(200);
    expect((await from('127.0.0.2')).status).toBe(200);
  });
});
