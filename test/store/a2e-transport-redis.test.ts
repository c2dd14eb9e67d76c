/**
 * A2E transport sessions shared through Redis (store.kind: redis) by three
 * real gateway processes on one real redis-server: a session opened on one
 * instance takes messages on another and streams from a third; the stream's
 * instance killed with SIGKILL, the client resumes on another with
 * Last-Event-ID and gets every frame once, in order; the session stays bound
 * to the token that opened it on every instance; Redis down → 503 with
 * Retry-After, Redis back → served again without a restart.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { A2eTestClient, type A2eMessage } from '../helpers/a2e-client.js';
import { startCluster, type Cluster } from '../helpers/instances.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const X = { Authorization: 'Bearer token-x' };
const Y = { Authorization: 'Bearer token-y' };

let cluster: Cluster;
/** The transport base URL of instance i. */
const at = (i: number) => `${cluster.instances[i]!.url}/a2e/v1`;

beforeAll(async () => {
  cluster = await startCluster({
    count: 3,
    config: [
      'auth:',
      '  tokens:',
      `    - { name: agent-x, token_sha256: "${sha256('token-x')}" }`,
      `    - { name: agent-y, token_sha256: "${sha256('token-y')}" }`,
    ].join('\n'),
  });
}, 120_000);
afterAll(() => cluster?.dispose());

/** A session opened on instance `open`, its messages sent to `send`, its stream read from `stream`, handshake done. */
async function session(open: number, send: number, stream: number): Promise<A2eTestClient> {
  const client = await A2eTestClient.open(at(open), X);
  client.sendTo = at(send);
  client.streamFrom = at(stream);
  expect((await client.openStream()).status).toBe(200);
  const hs = await client.request({
    type: 'handshake/req',
    agent_id: 'scale-test',
    agent_caps: ['tools'],
    auth_token: '',
  });
  expect(hs.response).toMatchObject({ type: 'handshake/resp', ok: true });
  return client;
}

const ticks = (events: A2eMessage[]) => events.map((e) => e.seq as number);

describe('A2E transport sessions across instances (Redis)', () => {
  it('opened on A, messages sent to B (the call runs on B), stream read on C', async () => {
    const client = await session(0, 1, 2);
    const ping = await client.request({ type: 'ping' });
    expect(ping.response.type).toBe('pong');
    const who = await client.request({ type: 'tool/call/req', tool_name: 'whoami', arguments: {} });
    expect(who.response.data).toMatchObject({ success: true, data: { pid: cluster.instances[1]!.pid } });
    const n = 20;
    const ticker = await client.request({
      type: 'tool/call/req',
      tool_name: 'ticker',
      arguments: { count: n, every_ms: 5 },
      streaming: true,
    });
    expect(ticks(ticker.events)).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(ticker.response.data).toMatchObject({ success: true, data: { pid: cluster.instances[1]!.pid, ticks: n } });
    expect(ticker.late()).toEqual([]);
    // The frame ids are the session's, whichever instance wrote the frame: 0, 1, 2, … none missing, none twice.
    expect(client.lastEventId).toBe(String(client.received.length - 1));
    await client.dropStream();
  });

  it('a session stays bound to the token that opened it on every instance', async () => {
    const client = await A2eTestClient.open(at(0), X);
    for (const i of [1, 2]) {
      const foreign = await client.send(
        { type: 'ping' },
        { ...Y, 'X-Session-Id': client.sessionId, 'Content-Type': 'text/plain' },
      );
      expect(foreign.status).toBe(403);
      expect(((await foreign.json()) as { detail: string }).detail).toContain('belongs to another token');
      const none = await fetch(`${at(i)}/stream`, { headers: { 'X-Session-Id': client.sessionId } });
      expect(none.status).toBe(401);
      await none.body?.cancel();
      const other = await fetch(`${at(i)}/stream`, { headers: { ...Y, 'X-Session-Id': client.sessionId } });
      expect(other.status).toBe(403);
      await other.body?.cancel();
      client.sendTo = at(i);
    }
    // The owner's token works anywhere; a handshake naming the other token is refused.
    client.sendTo = at(2);
    client.streamFrom = at(1);
    await client.openStream();
    const hs = await client.request({ type: 'handshake/req', agent_caps: ['tools'], auth_token: 'token-y' });
    expect(hs.response).toMatchObject({ ok: false });
    expect(hs.response.reason).toContain('another token than the one this session belongs to');
    await client.dropStream();
  });

  it('the stream on A, A killed (SIGKILL) mid-call: the client resumes on B with Last-Event-ID and gets every frame once, in order', async () => {
    const client = await session(1, 1, 0); // opened and sent to B, stream on A
    const n = 60;
    const id = 'ticker-across-a-kill';
    const answered = client.waitFor(
      (m) => m.req_id === id && m.type === 'tool/call/resp',
      60_000,
      'the ticker response',
    );
    expect(
      (
        await client.send({
          type: 'tool/call/req',
          id,
          tool_name: 'ticker',
          arguments: { count: n, every_ms: 40 },
          streaming: true,
        })
      ).status,
    ).toBe(202);
    await client.waitFor((m) => m.req_id === id && m.seq === 10, 30_000, 'tick 10 on A');
    await cluster.instances[0]!.kill();
    await client.streamEnded();
    const before = client.received.length;
    expect(client.received.some((m) => m.req_id === id && m.type === 'tool/call/resp')).toBe(false); // the call spans the kill

    client.streamFrom = at(1);
    expect((await client.openStream({ lastEventId: client.lastEventId })).status).toBe(200);
    const response = await answered;
    expect(response.data).toMatchObject({ success: true, data: { pid: cluster.instances[1]!.pid, ticks: n } });
    expect(client.received.length).toBeGreaterThan(before);
    const events = client.received.filter((m) => m.req_id === id && m.type === 'tool/event');
    expect(ticks(events)).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(events.map((e) => e.data.message)).toEqual(Array.from({ length: n }, (_, i) => `tick ${i}`));
    expect(new Set(client.received.map((m) => m.id)).size).toBe(client.received.length);
    // Nothing after the response, and the session goes on from another instance.
    const ping = await client.request({ type: 'ping' });
    expect(ping.response.type).toBe('pong');
    expect(client.received.filter((m) => m.req_id === id && m.type === 'tool/call/resp')).toHaveLength(1);
    await client.dropStream();
  }, 120_000);

  it('a shutdown sent to one instance closes the session everywhere: its stream elsewhere ends, every instance answers 404', async () => {
    const client = await session(1, 2, 1);
    expect((await client.send({ type: 'shutdown', timeout: 0 })).status).toBe(202);
    await client.streamEnded();
    for (const i of [1, 2]) {
      client.sendTo = at(i);
      expect((await client.send({ type: 'ping' })).status).toBe(404);
    }
  });

  it('Redis stopped: the transport answers 503 with Retry-After and the gateway stays up; Redis back: served again without a restart', async () => {
    const client = await session(1, 2, 2);
    await client.dropStream();
    await cluster.redis.stop();
    try {
      const send = await client.send({ type: 'ping' });
      expect(send.status).toBe(503);
      expect(send.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(((await send.json()) as { detail: string }).detail).toContain('Redis');
      const open = await fetch(`${at(1)}/session`, { method: 'POST', headers: X });
      expect(open.status).toBe(503);
      expect(open.headers.get('retry-after')).toMatch(/^\d+$/);
      const stream = await fetch(`${at(2)}/stream`, { headers: { ...X, 'X-Session-Id': client.sessionId } });
      expect(stream.status).toBe(503);
      await stream.body?.cancel();
      expect((await fetch(`${at(1)}/health`, { headers: X })).status).toBe(200); // the gateway is up
    } finally {
      await cluster.redis.start();
    }
    // Its data did not survive (persistence off): a new session works across instances again.
    await vi.waitFor(
      async () => expect((await fetch(`${at(1)}/session`, { method: 'POST', headers: X })).status).toBe(200),
      { timeout: 20_000, interval: 200 },
    );
    const again = await session(1, 2, 1);
    const who = await again.request({ type: 'tool/call/req', tool_name: 'whoami', arguments: {} });
    expect(who.response.data).toMatchObject({ success: true, data: { pid: cluster.instances[2]!.pid } });
    await again.dropStream();
  }, 60_000);
});
