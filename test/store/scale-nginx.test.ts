/**
 * Two gateway processes sharing one real Redis behind a real nginx, with the
 * docs/scale-out-guide.md's `upstream` block (round-robin, no stickiness) and its store config:
 * a session opened through nginx works on whichever instance takes each call,
 * a call resource's events are followed, cut and resumed across instances
 * with every event exactly once, and a cancel reaches the instance running it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../helpers/instances.js';
import { readmeBlock, startNginx, type Nginx } from '../helpers/nginx.js';
import { openSse, postJson } from '../helpers/server.js';

let cluster: Cluster;
let nginx: Nginx;

/** The documented upstream block and location, pointed at this test's instances. */
async function readmeUpstream(ports: number[]): Promise<{ http: string; server: string }> {
  const block = await readmeBlock('scale-upstream', 'nginx');
  const upstream = /upstream a2e_gateways \{[\s\S]*?\n\}/.exec(block)?.[0];
  const location = / {4}location \/ \{[\s\S]*?\n {4}\}/.exec(block)?.[0];
  if (!upstream || !location)
    throw new Error('the documented scale-upstream block lost its upstream or its location /');
  const servers = upstream.match(/^\s*server 127\.0\.0\.1:\d+;$/gm) ?? [];
  expect(servers.length).toBe(2);
  let i = 0;
  const pointed = upstream.replace(/^(\s*server 127\.0\.0\.1:)\d+;$/gm, (_m, head: string) => `${head}${ports[i++]};`);
  return { http: pointed, server: location };
}

beforeAll(async () => {
  const store = await readmeBlock('scale-config', 'yaml');
  // The documented store section as written, with its ${REDIS_URL} pointed at the test's Redis.
  cluster = await startCluster({ count: 2, config: `sessions:\n  required: false\n`, storeSection: store, env: {} });
  const ports = cluster.instances.map((g) => Number(new URL(g.url).port));
  const { http, server } = await readmeUpstream(ports);
  nginx = await startNginx({ http, server });
}, 180_000);
afterAll(async () => {
  await nginx?.stop();
  await cluster?.dispose();
});

const ticker = (count: number) => ({ tool_name: 'ticker', arguments: { count, every_ms: 20 } });

describe('two instances behind nginx round-robin, one Redis', () => {
  it('a session opened on one instance carries calls on both', async () => {
    const hs = await postJson(`${nginx.url}/handshake`, { agent_id: 'scale-test', agent_caps: ['tools'] });
    expect(hs.status).toBe(200);
    expect(hs.json.ok).toBe(true);
    const pids = new Set<number>();
    for (let i = 0; i < 8; i++) {
      const r = await postJson(`${nginx.url}/tool/call`, {
        tool_name: 'whoami',
        arguments: {},
        session_id: hs.json.session_id,
      });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      pids.add(r.json.data.data.pid);
    }
    expect([...pids].sort()).toEqual(cluster.instances.map((g) => g.pid).sort());
  });

  it('a call resource is followed across instances: cut, resumed, every event exactly once and in order', async () => {
    const started = await postJson(`${nginx.url}/tool/calls`, ticker(40));
    expect(started.status).toBe(202);
    const eventsUrl = new URL(started.json.events_url);
    const path = `${eventsUrl.pathname}${eventsUrl.search}`;
    const seqs: number[] = [];
    const first = await openSse(`${nginx.url}${path}`);
    for (let ev = await first.next(); ev && seqs.length < 10; ev = await first.next()) {
      if (ev.event === 'tool/event') seqs.push(Number(ev.id));
    }
    first.abort();
    // Resume through nginx again (the other instance, round-robin) from the last seq seen.
    let resp: any;
    for (;;) {
      const again = await openSse(`${nginx.url}${path}`, { headers: { 'Last-Event-ID': String(seqs.at(-1)) } });
      expect(again.status).toBe(200);
      for (const ev of await again.rest()) {
        if (ev.event === 'tool/event') seqs.push(Number(ev.id));
        if (ev.event === 'tool/call/resp') resp = ev.json;
      }
      if (resp) break;
    }
    expect(seqs).toEqual(Array.from({ length: 40 }, (_v, i) => i));
    expect(resp.data.success).toBe(true);
  });

  it('DELETE through nginx stops the call on whichever instance runs it', async () => {
    const started = await postJson(`${nginx.url}/tool/calls`, { tool_name: 'hold', arguments: { ms: 60_000 } });
    const id = started.json.call_id as string;
    for (let i = 0; i < 2; i++) {
      // Two cancels in a row: round-robin sends at least one of them to the instance that does not run the call.
      const del = await fetch(`${nginx.url}/tool/calls/${id}`, { method: 'DELETE' });
      expect(del.status).toBe(200);
    }
    await expect
      .poll(async () => (await (await fetch(`${nginx.url}/tool/calls/${id}`)).json()).state, { timeout: 10_000 })
      .toBe('canceled');
  });
});
