/**
 * A decision made on B for a call held on A, when A does not answer, with real processes on one real redis-server:
 *
 * - A paused (SIGSTOP): still subscribed and leased in Redis's eyes, so the decision is claimed and sent, but A
 *   cannot confirm it. B answers 503 (retryable, Retry-After) after its 10 s wait, naming where to look; the
 *   decision stays claimed (a second approver gets 404: no double decision). A resumed (SIGCONT) applies it: the
 *   call runs with the approved arguments on A, and every list is empty.
 * - A killed (SIGKILL) before its lease lapses: nobody is subscribed for it, so B answers 503 at once and nothing
 *   is decided (the approval is listed again), until the sweep fails the call as lost.
 *
 * calls.owner_lease_s is long (40 s) so A's lease holds through the pause.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { as, finalOf, startApprovalsCluster, type ApprovalsCluster } from '../helpers/approvals-cluster.js';
import { postJson } from '../helpers/server.js';
import { waitFor } from '../helpers/a2a-stub.js';

/** How long B waits for A's confirmation (DELIVER_TIMEOUT_MS in src/store/redis/approvals.ts, docs/approvals.md). */
const CONFIRM_WAIT_S = 10;

/** docs/approvals.md, white space folded: the sentences these tests hold. */
const DOC = readFileSync(new URL('../../docs/approvals.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');

let t: ApprovalsCluster;
beforeAll(async () => {
  t = await startApprovalsCluster({ leaseS: 40, prefix: 'approvals-silent:' });
}, 120_000);
afterAll(async () => {
  // A left paused by a failed test would never stop.
  if (t && t.a.proc.exitCode === null && t.a.proc.signalCode === null) process.kill(t.a.pid, 'SIGCONT');
  await t?.cluster.dispose();
});

it('A paused: the decision made on B answers a retryable 503 after the documented wait, stays claimed, and A applies it once resumed', async () => {
  expect(DOC).toContain(
    `If that instance is there but does not confirm within ${CONFIRM_WAIT_S} s (paused or overloaded), it answers 503 ` +
      '(retryable) naming `GET /tool/calls/{id}` and `GET /admin/approvals/{id}`: the decision stays claimed ' +
      "(another approver's gets 404) and the instance applies it when it resumes.",
  );
  const { a, b } = t;
  const { res, stream, approvalId } = await t.startHeld('paused-owner');
  await waitFor('the approval listed on B', async () => (await t.listOn(b.url)).some((x) => x.id === approvalId));
  process.kill(a.pid, 'SIGSTOP');
  let resumed = false;
  try {
    const started = performance.now();
    const decided = await fetch(`${b.url}/admin/approvals/${approvalId}`, {
      method: 'POST',
      headers: { ...as('alice'), 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve', arguments: { ms: 1 }, reason: 'while A sleeps' }),
    });
    const waitedS = (performance.now() - started) / 1000;
    const body = (await decided.json()) as any;
    expect(decided.status).toBe(503);
    expect(decided.headers.get('retry-after')).toBe('1');
    expect(body.code).toBe('unavailable');
    expect(body.retryable).toBe(true);
    expect(body.message).toBe(
      `the gateway instance holding this call did not confirm the decision within ${CONFIRM_WAIT_S} s; ` +
        `it may or may not apply it: GET /tool/calls/${res.json.call_id} or GET /admin/approvals/${approvalId} tells`,
    );
    expect(waitedS).toBeGreaterThanOrEqual(CONFIRM_WAIT_S - 0.5);
    expect(waitedS).toBeLessThan(CONFIRM_WAIT_S + 10);

    // Claimed: it left the list, and another approver's decision finds nothing to decide (no second decision).
    expect(await t.listOn(b.url, 'bob')).toEqual([]);
    const second = await postJson(
      `${b.url}/admin/approvals/${approvalId}`,
      { decision: 'deny', reason: 'too late' },
      as('bob'),
    );
    expect(second.status).toBe(404);
    expect(second.json.message).toMatch(/no pending approval with this id: it was decided/);
    const one = await fetch(`${b.url}/admin/approvals/${approvalId}`, { headers: as('alice') });
    expect(one.status).toBe(404);

    process.kill(a.pid, 'SIGCONT');
    resumed = true;
    // A applies the decision it was sent: the call runs there with the approved (edited) arguments.
    const data = await finalOf(stream);
    expect(data).toMatchObject({ success: true, tool_name: 'hold', data: { pid: a.pid } });
    const call = await fetch(`${b.url}/tool/calls/${res.json.call_id}`, { headers: as('agent') });
    expect(((await call.json()) as any).state).toBe('completed');
    expect(await t.listOn(a.url)).toEqual([]);
    expect(await t.listOn(b.url)).toEqual([]);
  } finally {
    if (!resumed) process.kill(a.pid, 'SIGCONT');
  }
}, 90_000);

it('A killed before its lease lapses: the decision made on B answers 503 at once, nothing is decided, and the approval is listed again', async () => {
  expect(DOC).toContain(
    'If no instance listens for it (restarting or lost), it answers 503 (retryable) at once and nothing is decided: ' +
      'the approval is listed again.',
  );
  const { a, b } = t;
  const { approvalId } = await t.startHeld('killed-owner');
  await waitFor('the approval listed on B', async () => (await t.listOn(b.url)).some((x) => x.id === approvalId));
  await a.kill();
  const started = performance.now();
  const decided = await postJson(`${b.url}/admin/approvals/${approvalId}`, { decision: 'approve' }, as('alice'));
  expect(decided.status).toBe(503);
  expect(decided.json.retryable).toBe(true);
  expect(decided.json.message).toMatch(
    /^the gateway instance holding this call does not answer \(restarting or lost\); nothing was decided/,
  );
  expect(performance.now() - started).toBeLessThan(5000);
  // Not decided: still listed on B (until the lease lapses and the sweep fails the call as lost).
  expect((await t.listOn(b.url)).map((x) => x.id)).toEqual([approvalId]);
}, 60_000);
