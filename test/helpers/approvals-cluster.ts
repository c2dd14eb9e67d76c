/**
 * Two real gateway processes (A, B) on one real redis-server with `hold` gated for approval: the setup of the
 * approvals scale-out tests. The tokens agent (the caller), alice and bob (approvers); a gated call resource started
 * on A and followed from B; B's pending list; a stream's final response.
 */
import { expect } from 'vitest';
import { startCluster, type Cluster, type Instance } from './instances.js';
import { callBody, openSse, postJson, type SseStream } from './server.js';

export const SECRET = {
  agent: 'agent-secret-0123456789',
  alice: 'alice-secret-0123456789',
  bob: 'bob-secret-0123456789',
};
export type Who = keyof typeof SECRET;
export const as = (who: Who) => ({ Authorization: `Bearer ${SECRET[who]}` });

export interface ApprovalsCluster {
  cluster: Cluster;
  a: Instance;
  b: Instance;
  /** GET /admin/approvals on `base` as `who` (an approver by default). */
  listOn(base: string, who?: Who): Promise<any[]>;
  /** A gated call resource started on A by `who`, followed from B; its approval id from the status event. */
  startHeld(
    correlation: string,
    who?: Who,
  ): Promise<{ res: Awaited<ReturnType<typeof postJson>>; stream: SseStream; approvalId: string }>;
}

/** `leaseS`: calls.owner_lease_s; `prefix`: the cluster's key prefix. */
export async function startApprovalsCluster(options: { leaseS: number; prefix: string }): Promise<ApprovalsCluster> {
  const cluster = await startCluster({
    count: 2,
    prefix: options.prefix,
    env: { AGENT_TOKEN: SECRET.agent, ALICE_TOKEN: SECRET.alice, BOB_TOKEN: SECRET.bob },
    config: [
      `calls:\n  owner_lease_s: ${options.leaseS}`,
      'auth:\n  tokens:',
      '    - { name: agent, token_env: AGENT_TOKEN }',
      '    - { name: alice, token_env: ALICE_TOKEN }',
      '    - { name: bob, token_env: BOB_TOKEN }',
      'sessions:\n  required: false',
      'approvals:\n  require: [hold]\n  approvers: { names: [alice, bob] }',
    ].join('\n'),
  });
  const [a, b] = [cluster.instances[0]!, cluster.instances[1]!];
  const onB = (url: string) => {
    const u = new URL(url);
    u.host = new URL(b.url).host;
    return u.href;
  };
  return {
    cluster,
    a,
    b,
    async listOn(base, who = 'alice') {
      const res = await fetch(`${base}/admin/approvals`, { headers: as(who) });
      expect(res.status).toBe(200);
      return ((await res.json()) as { approvals: any[] }).approvals;
    },
    async startHeld(correlation, who = 'agent') {
      const res = await postJson(
        `${a.url}/tool/calls`,
        callBody('hold', { ms: 60_000 }, { correlation_id: correlation }),
        as(who),
      );
      expect(res.status).toBe(202);
      const stream = await openSse(onB(res.json.events_url), { headers: as(who) });
      const first = await stream.next();
      expect(first!.json).toMatchObject({ kind: 'status', data: { approval: { id: expect.any(String) } } });
      expect(first!.json.data.message).toMatch(/^awaiting approval/);
      return { res, stream, approvalId: first!.json.data.approval.id as string };
    },
  };
}

/** The final response on a stream (events before it are skipped). */
export async function finalOf(stream: SseStream) {
  const rest = await stream.rest();
  const last = rest.at(-1)!;
  expect(last.event).toBe('tool/call/resp');
  return last.json.data;
}
