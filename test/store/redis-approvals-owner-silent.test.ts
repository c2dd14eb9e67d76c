/**
 * A decision made on B for a call held on A, when A does not answer, with real processes on one real redis-server:
 *
 * - A paused (SIGSTOP): still subscribed and leased in Redis's eyes, so the decision is claimed and sent, but A
 *   cannot confirm it. B answers 503 (retryable, Retry-After) after its 10 s wait, naming where to look, and the
 *   approval is listed again (a decision A never receives is not lost). A second approver's decision meanwhile is
 *   sent too and answered the same. A resumed (SIGCONT) applies the first decision only: the call runs with its
 *   edited arguments on A, not denied; every list is empty, and a decision after that gets 404.
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

it('A paused: a decision made on B answers a retryable 503 after the documented wait and the approval is listed again; resumed, A applies the first decision only', async () => {
  expect(DOC).toContain(
    `If that instance is there but does not confirm within ${CONFIRM_WAIT_S} s (paused or overloaded), it answers 503 ` +
      '(retryable) naming `GET /tool/calls/{id}` and `GET /admin/approvals/{id}`: the approval is listed again, and ' +
      'when that instance resumes it applies the first decision it was sent; any later one finds it decided.',
  );
  const { a, b } = t;
  const { res, stream, approvalId } = await t.startHeld('paused-owner');
  await waitFor('the approval listed on B', async () => (await t.listOn(b.url)).some((x) => x.id === approvalId));
  /** A decision on B while A is paused: 503 after the wait, saying so; the approval listed again. */
  const unconfirmed = async (who: 'alice' | 'bob', decision: object) => {
    const started = performance.now();
    const decided = await fetch(`${b.url}/admin/approvals/${approvalId}`, {
      method: 'POST',
      headers: { ...as(who), 'content-type': 'application/json' },
      body: JSON.stringify(decision),
    });
    const waitedS = (performance.now() - started) / 1000;
    const body = (await decided.json()) as any;
    expect(decided.status).toBe(503);
    expect(decided.headers.get('retry-after')).toBe('1');
    expect(body).toMatchObject({ code: 'unavailable', retryable: true });
    expect(body.message).toBe(
      `the gateway instance holding this call did not confirm the decision within ${CONFIRM_WAIT_S} s; ` +
        'the approval is listed again, but that instance may still apply this decision when it resumes: ' +
        `GET /tool/calls/${res.json.call_id} or GET /admin/approvals/${approvalId} tells`,
    );
    expect(waitedS).toBeGreaterThanOrEqual(CONFIRM_WAIT_S - 0.5);
    expect(waitedS).toBeLessThan(CONFIRM_WAIT_S + 10);
    expect((await t.listOn(b.url, 'bob')).map((x) => x.id)).toEqual([approvalId]);
    const one = await fetch(`${b.url}/admin/approvals/${approvalId}`, { headers: as('alice') });
    expect(one.status).toBe(200);
  };
  process.kill(a.pid, 'SIGSTOP');
  let resumed = false;
  try {
    await unconfirmed('alice', { decision: 'approve', arguments: { ms: 1 }, reason: 'while A sleeps' });
    await unconfirmed('bob', { decision: 'deny', reason: 'me too' });
    process.kill(a.pid, 'SIGCONT');
    resumed = true;
    // A applies the first decision it was sent (approve, edited), and only that one: the call runs there.
    const data = await finalOf(stream);
    expect(data).toMatchObject({ success: true, tool_name: 'hold', data: { pid: a.pid } });
    const call = await fetch(`${b.url}/tool/calls/${res.json.call_id}`, { headers: as('agent') });
    expect(((await call.json()) as any).state).toBe('completed');
    await waitFor('the approval gone from both lists', async () => {
      const [onA, onB] = await Promise.all([t.listOn(a.url), t.listOn(b.url)]);
      return onA.length === 0 && onB.length === 0;
    });
    const late = await postJson(`${b.url}/admin/approvals/${approvalId}`, { decision: 'deny' }, as('bob'));
    expect(late.status).toBe(404);
    expect(late.json.message).toMatch(/no pending approval with this id: it was decided/);
  } finally {
    if (!resumed) process.kill(a.pid, 'SIGCONT');
  }
}, 120_000);

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
