/**
 * A token rotated by a reload with store.kind redis (two real gateway
 * processes, one real redis-server): the old credential's sessions and A2E
 * transport sessions end in Redis, so on every instance; each instance's
 * reload ends the streams it holds with a last frame saying why; the old
 * call resource's access token stops working and the name's new holder does
 * not own it; a session the new credential opened between the instances'
 * reloads survives the second. The memory-store case: test/security/credential-rotation.test.ts.
 */
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../security/helpers.js';
import { A2eTestClient } from '../helpers/a2e-client.js';
import { callBody, openSse, postJson } from '../helpers/server.js';
import { startCluster, SCALE_TOOLS, type Cluster, type Instance } from '../helpers/instances.js';

const PREFIX = 'cred-rotation:';
const OPS = 'rotation-ops-0123456789abcdef01';
const OLD = 'rotation-alice-old-0123456789ab';
const NEW = 'rotation-alice-new-0123456789ab';
const as = (token: string) => ({ Authorization: `Bearer ${token}` });
const REVOKED = /removed or changed by a configuration reload/;

const tail = (alice: string) =>
  [
    'auth:\n  tokens:',
    `    - name: ops\n      token_sha256: "${sha256(OPS)}"\n      admin: true`,
    `    - name: alice\n      token_sha256: "${sha256(alice)}"`,
    'sessions:\n  required: false',
  ].join('\n');

let cluster: Cluster;
let a: Instance;
let b: Instance;
beforeAll(async () => {
  cluster = await startCluster({ count: 2, prefix: PREFIX, config: tail(OLD) });
  [a, b] = cluster.instances as [Instance, Instance];
}, 120_000);
afterAll(async () => {
  await cluster?.dispose();
});

async function reload(on: Instance) {
  const r = await postJson(`${on.url}/admin/reload`, {}, as(OPS));
  expect(r.status).toBe(200);
  expect(r.json.status).toBe('reloaded');
  return r.json as { sessions_ended: number };
}

describe('a token rotated by a reload, with store.kind redis', () => {
  it("ends the old credential's sessions and transport sessions everywhere, and the streams each instance holds", async () => {
    const hs = await postJson(
      `${a.url}/handshake`,
      { type: 'handshake/req', agent_id: 't', agent_caps: ['tools'] },
      as(OLD),
    );
    const session = hs.json.session_id as string;
    expect(
      (await postJson(`${b.url}/tool/call`, callBody('whoami', {}, { session_id: session }), as(OLD))).status,
    ).toBe(200);
    // A transport session opened on A, its stream held by B.
    const transport = await A2eTestClient.open(`${a.url}/a2e/v1`, as(OLD));
    transport.streamFrom = `${b.url}/a2e/v1`;
    await transport.openStream();
    expect(
      (await transport.request({ type: 'handshake/req', agent_id: 't', agent_caps: ['tools'], auth_token: '' }))
        .response.ok,
    ).toBe(true);
    // A call resource running on A, its events followed on B with the access token, and B's activity stream.
    const resource = await postJson(`${a.url}/tool/calls`, callBody('hold', { ms: 60_000 }), as(OLD));
    expect(resource.status).toBe(202);
    const events = await openSse(resource.json.events_url.replace(a.url, b.url));
    const activity = await openSse(`${b.url}/admin/events`, { headers: as(OLD) });
    expect(events.status).toBe(200);
    expect((await activity.next())?.event).toBe('snapshot');

    await writeFile(
      cluster.configPath,
      `server:\n  port: 0\nstore:\n  kind: redis\n  url: ${cluster.redis.url}\n  prefix: "${PREFIX}"\nplugins:\n  - module: ${JSON.stringify(SCALE_TOOLS)}\n${tail(NEW)}\n`,
    );
    // A's reload ends the sessions in Redis (the handshake session, the transport session and its handshake session).
    expect((await reload(a)).sessions_ended).toBe(3);
    // The transport session is closed in Redis: B ends the stream it holds.
    await transport.streamEnded();
    expect(
      (await postJson(`${b.url}/tool/call`, callBody('whoami', {}, { session_id: session }), as(OLD))).status,
    ).toBe(401);
    // Between the two reloads the name's new holder opens a session on A: B's reload must not end it.
    const fresh = await postJson(
      `${a.url}/handshake`,
      { type: 'handshake/req', agent_id: 't', agent_caps: ['tools'] },
      as(NEW),
    );
    expect(fresh.json.ok).toBe(true);

    // B's reload ends the two streams it holds, each with a last frame saying why, and nothing of the new credential.
    expect((await reload(b)).sessions_ended).toBe(2);
    expect(
      (await postJson(`${b.url}/tool/call`, callBody('whoami', {}, { session_id: fresh.json.session_id }), as(NEW)))
        .status,
    ).toBe(200);
    for (const s of [events, activity]) {
      const last = (await s.rest()).at(-1);
      expect(last?.data).toMatch(REVOKED);
    }
    // The old call's access token no longer reads it; the name's new holder does not own it, on either instance.
    expect((await fetch(resource.json.events_url.replace(a.url, b.url))).status).toBe(401);
    for (const on of [a, b])
      expect((await fetch(resource.json.result_url.replace(a.url, on.url), { headers: as(NEW) })).status).toBe(404);
    expect((await postJson(`${b.url}/tool/call`, callBody('whoami', {}), as(OLD))).status).toBe(401);
    expect((await postJson(`${b.url}/tool/call`, callBody('whoami', {}), as(NEW))).status).toBe(200);
    await postJson(`${a.url}/admin/reload`, {}, as(OPS)); // nothing left to end
  }, 60_000);
});
