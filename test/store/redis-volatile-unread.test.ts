/**
 * Frames an instance pushed into a transport session's outbox that the
 * stream had not read yet when Redis lost its data (restarted without
 * persistence): the instance that pushed them pushes them again with their
 * frame ids once the session is put back, so the client gets each exactly
 * once, in order, with no frame id skipped. Where no instance has them left
 * (the one that pushed them died with Redis's data), the stream gets a notice
 * naming exactly the frames that will not come. A call's answer pushed again
 * so ends the lease a watcher put back for it: one answer, the real one.
 * Real gateway processes, one
 * real redis-server killed and started empty; the instance holding the stream
 * is paused (SIGSTOP) so that it reads nothing while the frames are pushed.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { A2eTestClient } from '../helpers/a2e-client.js';
import { startCluster, type Cluster, type Instance } from '../helpers/instances.js';
import { followUntilAnswered, openSession, restartRedisEmpty } from '../helpers/redis-faults.js';

let cluster: Cluster;
let a: Instance;
let b: Instance;
let c: Instance;
beforeAll(async () => {
  cluster = await startCluster({ count: 3, prefix: 'volatile-unread:', config: 'calls:\n  owner_lease_s: 2' });
  [a, b, c] = cluster.instances as [Instance, Instance, Instance];
}, 120_000);
afterAll(() => cluster?.dispose());

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Frame ids the client got (notices carry none), and the ranges notices said were lost. */
function framesAndLost(client: A2eTestClient): { ids: number[]; lost: [number, number][] } {
  const ids = client.frameIds.filter((id) => id !== '').map(Number);
  const lost = client.received
    .filter((m) => m.type === 'error' && (m.detail as any)?.lost_frames)
    .map((m) => [(m.detail as any).lost_frames.from, (m.detail as any).lost_frames.to] as [number, number]);
  return { ids, lost };
}

/**
 * A ticker (every 100 ms) runs while the instance holding the stream is paused; `whilePaused` runs then; Redis is
 * restarted empty (SIGKILLing `lost` while it is down) before the holder goes on.
 */
async function tickAcrossUnreadLoss(
  client: A2eTestClient,
  id: string,
  holder: Instance,
  lost: Instance[],
  whilePaused: () => Promise<void> = () => sleep(700),
) {
  const count = 30;
  const answered = client.waitFor((m) => m.req_id === id && m.type === 'tool/call/resp', 60_000, 'the answer');
  expect(
    (
      await client.send({
        type: 'tool/call/req',
        id,
        tool_name: 'ticker',
        arguments: { count, every_ms: 100 },
        streaming: true,
      })
    ).status,
  ).toBe(202);
  await client.waitFor((m) => m.req_id === id && m.seq === 3, 20_000, 'tick 3');
  const readBefore = client.frameIds.length;
  process.kill(holder.pid, 'SIGSTOP');
  try {
    await whilePaused(); // ticks pushed into Redis that the paused holder does not read
    await restartRedisEmpty(cluster.redis, ...lost);
  } finally {
    process.kill(holder.pid, 'SIGCONT');
  }
  return { answered, readBefore, count };
}

it('frames pushed and not yet read when Redis restarted empty are pushed again by their instance: the stream gets each once, in order, no id skipped, no notice', async () => {
  const client = await openSession(b, a, 'unread'); // the call runs on A, the stream is held by B
  const id = 'ticks-unread';
  const { answered, readBefore, count } = await tickAcrossUnreadLoss(client, id, b, []);
  expect(client.frameIds.length).toBe(readBefore); // B read nothing while paused

  await followUntilAnswered(client, answered);
  expect((await answered).data).toMatchObject({ success: true, data: { pid: a.pid, ticks: count } });
  const ticks = client.received.filter((m) => m.req_id === id && m.type === 'tool/event').map((m) => m.seq);
  expect(ticks).toEqual([...Array(count).keys()]);
  const { ids, lost } = framesAndLost(client);
  expect(lost).toEqual([]);
  expect(ids).toEqual(ids.map((_, i) => ids[0]! + i));
  expect(client.received.filter((m) => m.type === 'error')).toEqual([]);
  await client.dropStream();
}, 90_000);

it('frames whose instance died with Redis and that no stream had read, behind a frame another instance pushed again: the stream gets a notice naming exactly those, and every other frame once, in order', async () => {
  const client = await openSession(b, c, 'unread-lost'); // the call runs on C, which dies with Redis's data
  const id = 'ticks-lost';
  const { answered } = await tickAcrossUnreadLoss(client, id, b, [c], async () => {
    await sleep(400);
    // A answers a ping after C's unread ticks: A pushes it again, C's ticks before it are gone.
    client.sendTo = `${a.url}/a2e/v1`;
    expect((await client.send({ type: 'ping', id: 'ping-behind' })).status).toBe(202);
    await sleep(300);
  });
  // C's call is answered as lost (its lease put back by B, which saw its events, lapses); its unread ticks are gone.
  await followUntilAnswered(client, answered);
  expect((await answered).data).toMatchObject({ success: false, error_code: 'tool_error' });
  await client.waitFor((m) => m.req_id === 'ping-behind' && m.type === 'pong', 20_000, 'the pong');
  const { ids, lost } = framesAndLost(client);
  expect(client.received.filter((m) => m.req_id === 'ping-behind')).toHaveLength(1);
  expect(lost.length).toBeGreaterThan(0);
  // Every id from the first to the last came once, or was named lost; none both.
  const named = new Set(lost.flatMap(([from, to]) => Array.from({ length: to - from + 1 }, (_, i) => from + i)));
  expect(ids.filter((n) => named.has(n))).toEqual([]);
  const all = [...ids, ...named].sort((x, y) => x - y);
  expect(all).toEqual(all.map((_, i) => all[0]! + i));
  expect(ids).toEqual([...ids].sort((x, y) => x - y));
  const notice = client.received.find((m) => m.type === 'error')!;
  expect(notice).toMatchObject({ code: 'unavailable', retryable: true, req_id: '' });
  expect(notice.message).toMatch(/^the shared store \(Redis\) lost its data .*frames \d+\.\.\d+ of this stream/);
  await client.dropStream();
}, 90_000);

it("a call answered while the stream's instance was not reading, just before Redis lost its data: its answer is pushed again and ends its lease, so the client gets that answer once and no 'instance lost' answer after it", async () => {
  const client = await openSession(b, a, 'unread-answer'); // the call runs on A, the stream is held by B
  const id = 'answered-unread';
  const answered = client.waitFor((m) => m.req_id === id && m.type === 'tool/call/resp', 60_000, 'the answer');
  expect(
    (
      await client.send({
        type: 'tool/call/req',
        id,
        tool_name: 'ticker',
        arguments: { count: 8, every_ms: 100 },
        streaming: true,
      })
    ).status,
  ).toBe(202);
  await client.waitFor((m) => m.req_id === id && m.seq === 2, 20_000, 'tick 2');
  process.kill(b.pid, 'SIGSTOP'); // B saw the call's events (it would put its lease back), not its answer
  try {
    await sleep(1200); // A answers meanwhile
    await restartRedisEmpty(cluster.redis);
  } finally {
    process.kill(b.pid, 'SIGCONT');
  }
  await followUntilAnswered(client, answered);
  expect((await answered).data).toMatchObject({ success: true, data: { pid: a.pid, ticks: 8 } });
  await sleep(2 * 2000 + 1500); // two leases and a sweep: a lease put back for it would have lapsed into an answer
  expect(client.received.filter((m) => m.req_id === id && m.type === 'tool/call/resp')).toHaveLength(1);
  expect(client.received.filter((m) => m.type === 'error')).toEqual([]);
  await client.dropStream();
}, 90_000);
