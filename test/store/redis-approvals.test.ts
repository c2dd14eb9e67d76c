/**
 * Approvals with store.kind redis: two real gateway processes (A, B) on one real redis-server. A gated call
 * resource started on A is listed on B, decided on B (approve, deny, a valid and an invalid edit), and the
 * decision reaches A, which runs or refuses the call; B's /admin/events shows A's approvals live (approvers
 * only); two approvers deciding at once on A and B: exactly one wins; self-approval is refused on B too;
 * A killed (SIGKILL) while its call waits: the call fails visibly on B within the lease, through the same
 * lease/sweep as any call, and its approval leaves B's list.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { as, finalOf as final, startApprovalsCluster, type ApprovalsCluster } from '../helpers/approvals-cluster.js';
import { callBody, openSse, postJson } from '../helpers/server.js';
import { waitFor } from '../helpers/a2a-stub.js';

const LEASE_S = 2;

let cluster: ApprovalsCluster['cluster'];
let a: ApprovalsCluster['a'];
let b: ApprovalsCluster['b'];
let listOn: ApprovalsCluster['listOn'];
let startHeld: ApprovalsCluster['startHeld'];
beforeAll(async () => {
  ({ cluster, a, b, listOn, startHeld } = await startApprovalsCluster({ leaseS: LEASE_S, prefix: 'approvals:' }));
}, 120_000);
afterAll(() => cluster?.dispose());

/** The pid of instance A (the hold tool answers with the pid of the process that ran it). */
const pidOf = (i: { pid: number }) => i.pid;

it('a call held on A is listed on B, approved on B with edited arguments, and runs on A; an invalid edit is refused and changes nothing', async () => {
  // B's console (an approver's /admin/events) sees A's approval come and go live; a non-approver's sees none.
  const watcher = await openSse(`${b.url}/admin/events`, { headers: as('alice') });
  const outsider = await openSse(`${b.url}/admin/events`, { headers: as('agent') });
  expect((await watcher.next())!.event).toBe('snapshot');
  expect((await outsider.next())!.event).toBe('snapshot');

  const { stream, approvalId, res } = await startHeld('edit-on-b');
  const listed = await waitFor('the approval listed on B', async () =>
    (await listOn(b.url)).find((x) => x.id === approvalId),
  );
  expect(listed).toMatchObject({
    call_id: res.json.call_id,
    tool_name: 'hold',
    arguments: { ms: 60_000 },
    principal: 'agent',
    door: 'rest',
    correlation_id: 'edit-on-b',
    rule: 'hold',
    url: `/admin/approvals/${approvalId}`,
  });
  expect(listed.owner).toBeUndefined();
  expect(listed.expires_at).toBeGreaterThan(listed.created_at);
  const one = await fetch(`${b.url}/admin/approvals/${approvalId}`, { headers: as('bob') });
  expect(one.status).toBe(200);
  expect(((await one.json()) as any).id).toBe(approvalId);

  let frame = await watcher.next();
  while (frame && frame.event !== 'approval.pending') frame = await watcher.next();
  expect(frame!.json).toMatchObject({ id: approvalId, tool_name: 'hold', principal: 'agent' });

  // An edit the tool's schema refuses (checked on B): 422, and the approval still waits.
  const invalid = await postJson(
    `${b.url}/admin/approvals/${approvalId}`,
    { decision: 'approve', arguments: { ms: 'soon' } },
    as('alice'),
  );
  expect(invalid.status).toBe(422);
  expect(invalid.json.code).toBe('invalid_arguments');
  expect((await listOn(b.url)).map((x) => x.id)).toContain(approvalId);
  expect((await listOn(a.url)).map((x) => x.id)).toContain(approvalId);

  const decided = await postJson(
    `${b.url}/admin/approvals/${approvalId}`,
    { decision: 'approve', arguments: { ms: 10 }, reason: 'short one' },
    as('alice'),
  );
  expect(decided.status).toBe(200);
  expect(decided.json).toEqual({ id: approvalId, decision: 'approve', call_id: res.json.call_id, edited: true });
  // It ran on A (its pid), with the edited arguments (10 ms, not 60 s).
  expect(await final(stream)).toMatchObject({ success: true, tool_name: 'hold', data: { pid: pidOf(a) } });
  expect(await listOn(b.url)).toEqual([]);
  expect(await listOn(a.url)).toEqual([]);

  frame = await watcher.next();
  while (frame && frame.event !== 'approval.decided') frame = await watcher.next();
  expect(frame!.json).toEqual({ id: approvalId, call_id: res.json.call_id, decision: 'approve', approver: 'alice' });
  watcher.abort();
  // The outsider (the caller, no approver) sees its own next call on B finish, and no approval frame before it.
  const marker = await postJson(`${b.url}/tool/call`, callBody('whoami', {}), as('agent'));
  expect(marker.status).toBe(200);
  const seen: string[] = [];
  for (let e = await outsider.next(); e; e = await outsider.next()) {
    seen.push(e.event ?? '');
    if (e.event === 'call.finished' && e.json.tool_name === 'whoami') break;
  }
  outsider.abort();
  expect(seen).toContain('call.finished');
  expect(seen.filter((e) => e.startsWith('approval.'))).toEqual([]);
}, 60_000);

it('a call held on A, denied on B: its caller gets tool_denied naming the approver and the reason', async () => {
  const { stream, approvalId } = await startHeld('deny-on-b');
  const denied = await postJson(
    `${b.url}/admin/approvals/${approvalId}`,
    { decision: 'deny', reason: 'not during the freeze' },
    as('bob'),
  );
  expect(denied.status).toBe(200);
  expect(await final(stream)).toMatchObject({
    success: false,
    error_code: 'tool_denied',
    error: 'denied by bob: not during the freeze',
  });
  expect(await listOn(b.url)).toEqual([]);
}, 30_000);

it('POST /tool/call (JSON) on A waits; found on B by its correlation id and approved there, A answers the caller', async () => {
  const call = postJson(
    `${a.url}/tool/call`,
    callBody('hold', { ms: 5 }, { correlation_id: 'json-door' }),
    as('agent'),
  );
  const found = await waitFor('the approval listed on B by correlation id', async () => {
    const r = await fetch(`${b.url}/admin/approvals?correlation_id=json-door&door=rest&tool=hold`, {
      headers: as('bob'),
    });
    return ((await r.json()) as any).approvals[0];
  });
  expect(found).toMatchObject({ principal: 'agent', arguments: { ms: 5 } });
  const other = await fetch(`${b.url}/admin/approvals?correlation_id=someone-else`, { headers: as('bob') });
  expect(((await other.json()) as any).approvals).toEqual([]);
  expect((await postJson(`${b.url}/admin/approvals/${found.id}`, { decision: 'approve' }, as('bob'))).status).toBe(200);
  const res = await call;
  expect(res.status).toBe(200);
  expect(res.json.data).toMatchObject({ success: true, tool_name: 'hold', data: { pid: pidOf(a) } });
}, 30_000);

it('nobody approves their own call on another instance either', async () => {
  const { stream, approvalId } = await startHeld('self', 'alice');
  const self = await postJson(`${b.url}/admin/approvals/${approvalId}`, { decision: 'approve' }, as('alice'));
  expect(self.status).toBe(403);
  expect(self.json.message).toMatch(/nobody approves their own call/);
  expect((await listOn(b.url, 'bob')).map((x) => x.id)).toEqual([approvalId]);
  expect((await postJson(`${b.url}/admin/approvals/${approvalId}`, { decision: 'deny' }, as('bob'))).status).toBe(200);
  expect(await final(stream)).toMatchObject({ error_code: 'tool_denied' });
}, 30_000);

it('two approvers deciding at once (on A and B, on B twice): exactly one decision is applied, the other gets 404 saying it was decided', async () => {
  for (let round = 0; round < 4; round++) {
    const { stream, approvalId } = await startHeld(`race-${round}`);
    // Even rounds: the instance holding the call against another; odd rounds: two deciders both elsewhere.
    const first = round % 2 === 0 ? a.url : b.url;
    const [approved, denied] = await Promise.all([
      postJson(`${first}/admin/approvals/${approvalId}`, { decision: 'approve', arguments: { ms: 1 } }, as('alice')),
      postJson(`${b.url}/admin/approvals/${approvalId}`, { decision: 'deny', reason: 'race' }, as('bob')),
    ]);
    expect([approved.status, denied.status].sort()).toEqual([200, 404]);
    const loser = approved.status === 404 ? approved : denied;
    expect(loser.json.message).toMatch(/no pending approval with this id: it was decided/);
    const data = await final(stream);
    if (approved.status === 200) expect(data).toMatchObject({ success: true, data: { pid: pidOf(a) } });
    else expect(data).toMatchObject({ success: false, error: 'denied by bob: race' });
  }
}, 60_000);

it('an instance has one id and one pub/sub connection: its approval names the owner its call resource names, and the calls’ and approvals’ channels share a connection', async () => {
  expect(readFileSync(new URL('../../docs/scale-out.md', import.meta.url), 'utf8').replace(/\s+/g, ' ')).toContain(
    "Between instances: cancels and approval decisions go on channels named with the instance's one id (the owner " +
      "its call resources and approvals both record), and an instance listens to all of them, and to the calls' and " +
      "approvals' shared channels and the A2E transport's control channel, on one pub/sub connection.",
  );
  const { res, approvalId, stream } = await startHeld('one-instance');
  const redis = await cluster.redis.client();
  try {
    const entry = JSON.parse((await redis.get(`approvals:approval:${approvalId}`)) ?? 'null');
    const callOwner = await redis.hGet(`approvals:call:${res.json.call_id}`, 'owner');
    expect(callOwner).toMatch(/^[0-9a-f-]{36}$/);
    expect(entry?.owner).toBe(callOwner);
    // Both stores listen on channels named with that one id.
    const channels = (await redis.sendCommand(['PUBSUB', 'CHANNELS', `approvals:*${callOwner}`])) as string[];
    expect(channels.sort()).toEqual(
      [
        `approvals:approvals:decide:${callOwner}`,
        `approvals:approvals:reply:${callOwner}`,
        `approvals:calls:stop:${callOwner}`,
      ].sort(),
    );
    // CLIENT LIST, per subscribing connection, how many channels it holds: on each instance one connection carries the
    // calls' two (stop, running), the approvals' three (decide, reply, changes) and the A2E transport's control channel.
    const list = String(await redis.sendCommand(['CLIENT', 'LIST']));
    const subs = list
      .trim()
      .split('\n')
      .map((line) => Number(/ sub=(\d+)/.exec(line)?.[1] ?? 0))
      .filter((n) => n > 0)
      .sort();
    expect(subs).toEqual([6, 6]);
  } finally {
    await redis.close(); // before the next test stops Redis under it
  }
  expect((await postJson(`${b.url}/admin/approvals/${approvalId}`, { decision: 'deny' }, as('bob'))).status).toBe(200);
  expect(await final(stream)).toMatchObject({ error_code: 'tool_denied' });
}, 30_000);

it('Redis down: listing and deciding answer 503 (retryable); back without its data, the approval is listed again and decided on B', async () => {
  const { res, approvalId } = await startHeld('redis-down');
  await waitFor('the approval listed on B', async () => (await listOn(b.url)).some((x) => x.id === approvalId));
  await cluster.redis.stop();
  try {
    const list = await fetch(`${b.url}/admin/approvals`, { headers: as('alice') });
    expect(list.status).toBe(503);
    expect(((await list.json()) as any).message).toMatch(/shared store \(Redis\) is unavailable.*retry shortly/);
    const decide = await postJson(`${b.url}/admin/approvals/${approvalId}`, { decision: 'approve' }, as('alice'));
    expect(decide.status).toBe(503);
  } finally {
    await cluster.redis.start(); // no persistence: it comes back empty
  }
  // A's lease renewal finds the lease gone and writes the approval again.
  await waitFor(
    'the approval listed on B again',
    async () => {
      const r = await fetch(`${b.url}/admin/approvals`, { headers: as('alice') });
      return r.status === 200 && ((await r.json()) as any).approvals.some((x: any) => x.id === approvalId);
    },
    LEASE_S * 5000,
    100,
  );
  const decided = await postJson(
    `${b.url}/admin/approvals/${approvalId}`,
    { decision: 'approve', arguments: { ms: 1 } },
    as('alice'),
  );
  expect(decided.status).toBe(200);
  const done = await waitFor('the call completed on A', async () => {
    const r = await fetch(`${a.url}/tool/calls/${res.json.call_id}`, { headers: as('agent') });
    const body = (await r.json()) as any;
    return body.state === 'completed' ? body : undefined;
  });
  expect(done.result.data).toMatchObject({ success: true, data: { pid: pidOf(a) } });
}, 60_000);

it('A killed (SIGKILL) while its call waits: B streams a failed final response within the lease and the approval leaves B’s list', async () => {
  const { stream, approvalId } = await startHeld('killed');
  await waitFor('the approval listed on B', async () => (await listOn(b.url)).some((x) => x.id === approvalId));
  const watcher = await openSse(`${b.url}/admin/events`, { headers: as('alice') });
  expect((await watcher.next())!.json.approvals.map((x: any) => x.id)).toEqual([approvalId]);
  const killedAt = performance.now();
  await a.kill();
  const data = await final(stream);
  expect(data).toMatchObject({ success: false, tool_name: 'hold' });
  expect(data.error).toMatch(/^the gateway instance running tool "hold" was lost/);
  expect(performance.now() - killedAt).toBeLessThan((LEASE_S * 1.5 + 1.5) * 1000);
  await waitFor('the approval gone from B’s list', async () => (await listOn(b.url)).length === 0, LEASE_S * 3000);
  let frame = await watcher.next();
  while (frame && frame.event !== 'approval.decided') frame = await watcher.next();
  expect(frame!.json).toMatchObject({ id: approvalId, decision: 'canceled', approver: null });
  watcher.abort();
  // Deciding it now: 404, nothing to decide.
  const late = await postJson(`${b.url}/admin/approvals/${approvalId}`, { decision: 'approve' }, as('alice'));
  expect(late.status).toBe(404);
}, 60_000);
