/**
 * A call resource's view on an instance that does not run it is read from
 * Redis, which can lag behind what a reader already saw (the owner's writes on
 * their way, or a call put back after Redis lost its data): a Last-Event-ID
 * ahead of that view's count is waited on, not refused with 400 (a browser's
 * EventSource stops for good on a 400). Two real gateway processes, one real
 * redis-server. The 400 stays where the view cannot lag: the instance running
 * the call (and the in-memory store, test/routes/call-resources.test.ts).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startCluster, type Cluster, type Instance } from '../helpers/instances.js';
import { callBody, openSse, postJson } from '../helpers/server.js';

async function getJson(url: string, init: RequestInit = {}): Promise<{ status: number; json: any }> {
  const res = await fetch(url, init);
  return { status: res.status, json: await res.json() };
}

let cluster: Cluster;
let a: Instance;
let b: Instance;
beforeAll(async () => {
  cluster = await startCluster({ count: 2, prefix: 'resume-ahead:', config: 'calls:\n  owner_lease_s: 2' });
  [a, b] = cluster.instances as [Instance, Instance];
}, 120_000);
afterAll(() => cluster?.dispose());

it('Last-Event-ID ahead of what Redis holds of a running call, on an instance that does not run it: the stream waits for the events after it, then the final response', async () => {
  const count = 30;
  const res = await postJson(`${a.url}/tool/calls`, callBody('ticker', { count, every_ms: 100 }));
  expect(res.status).toBe(202);
  const { events_url, result_url } = res.json as { events_url: string; result_url: string };
  const onB = (url: string) => url.replace(a.url, b.url);
  await expect
    .poll(async () => (await getJson(onB(result_url))).json.events, { timeout: 10_000 })
    .toBeGreaterThanOrEqual(3);
  const known = (await getJson(onB(result_url))).json.events as number;
  const after = known + 4; // ahead of B's view: as a reader that saw events Redis does not hold (yet)

  // Where the call runs the count cannot lag: an id ahead of it is refused there, as before.
  const refused = await getJson(events_url, { headers: { 'Last-Event-ID': String(known + 40) } });
  expect(refused.status).toBe(400);
  expect(refused.json.message).toContain('is ahead of this call');

  const stream = await openSse(onB(events_url), { headers: { 'Last-Event-ID': String(after) } });
  expect(stream.status).toBe(200);
  const seqs: number[] = [];
  let final: any;
  for (let e = await stream.next(); e; e = await stream.next()) {
    if (e.event === 'tool/call/resp') final = e.json;
    else if (e.event === 'tool/event') seqs.push(e.json.seq);
    else throw new Error(`unexpected frame ${e.event}: ${e.data}`);
  }
  expect(final?.data).toMatchObject({ success: true, data: { ticks: count } });
  expect(seqs.length).toBeGreaterThan(0);
  expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => after + 1 + i));
}, 60_000);

it('a Last-Event-ID ahead of a lagging view past where the call ends: the final response still comes (written below it), and no event twice', async () => {
  const res = await postJson(`${a.url}/tool/calls`, callBody('ticker', { count: 10, every_ms: 100 }));
  expect(res.status).toBe(202);
  const onB = (url: string) => url.replace(a.url, b.url);
  await expect
    .poll(async () => (await getJson(onB(res.json.result_url))).json.events, { timeout: 10_000 })
    .toBeGreaterThanOrEqual(1);
  const stream = await openSse(onB(res.json.events_url), { headers: { 'Last-Event-ID': '50' } });
  expect(stream.status).toBe(200);
  const frames: string[] = [];
  let final: any;
  for (let e = await stream.next(); e; e = await stream.next()) {
    frames.push(e.event ?? '');
    if (e.event === 'tool/call/resp') final = e.json;
  }
  expect(frames).toEqual(['tool/call/resp']);
  expect(final?.data).toMatchObject({ success: true, data: { ticks: 10 } });
}, 60_000);
