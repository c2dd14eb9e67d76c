/**
 * Human approval of gated calls against a real gateway: gated and ungated tools side by side; approve, deny,
 * edit (valid and invalid), timeout, cancel while waiting, self-approval refused, a non-approver refused on every
 * route, per-token and argument-conditioned rules, the audit record and metrics of each decision.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definePlugin, echoTool, type Handler } from '../helpers/plugins.js';
import { callBody, openSse, postJson, startGateway, type TestGateway } from '../helpers/server.js';
import { waitFor } from '../helpers/a2a-stub.js';
import type { ToolDefinitionInput } from '../../src/index.js';

const started: string[] = [];
const writeTool: [ToolDefinitionInput, Handler] = [
  {
    name: 'write',
    description: 'Pretend to write a file',
    input_parameters: [
      { name: 'path', type: 'string', description: 'Where', required: true },
      { name: 'text', type: 'string', description: 'What', required: true },
    ],
    kind: 'native',
  },
  (args) => {
    started.push(String(args.path));
    return { wrote: args.path, text: args.text };
  },
];

const env = {
  AGENT_TOKEN: 'agent-secret',
  ALICE_TOKEN: 'alice-secret',
  BOSS_TOKEN: 'boss-secret',
  EVE_TOKEN: 'eve-secret',
};
const SECRET = { agent: env.AGENT_TOKEN, alice: env.ALICE_TOKEN, boss: env.BOSS_TOKEN, eve: env.EVE_TOKEN };
const as = (who: keyof typeof SECRET) => ({ Authorization: `Bearer ${SECRET[who]}` });

let gw: TestGateway;
let auditPath: string;
beforeAll(async () => {
  auditPath = join(await mkdtemp(join(tmpdir(), 'approvals-')), 'audit.jsonl');
  gw = await startGateway({
    plugins: [definePlugin('t', [echoTool, writeTool])],
    env,
    config: {
      sessions: { required: false },
      audit: { path: auditPath },
      auth: {
        tokens: [
          { name: 'agent', token_env: 'AGENT_TOKEN' },
          { name: 'alice', token_env: 'ALICE_TOKEN' },
          { name: 'boss', token_env: 'BOSS_TOKEN', admin: true },
          { name: 'eve', token_env: 'EVE_TOKEN', approve: ['echo'] },
        ],
      },
      approvals: {
        require: [{ tool: 'write', when: { path: { not_glob: '/scratch/**' } } }],
        approvers: { names: ['alice'] },
        timeout_s: 60,
      },
    },
  });
});
afterAll(async () => {
  await gw?.close();
});

/** The pending approval of the call with this correlation id, once it is listed. */
async function pending(correlation: string): Promise<any> {
  return waitFor('a pending approval', async () => {
    const r = await fetch(`${gw.url}/admin/approvals?correlation_id=${correlation}`, { headers: as('alice') });
    const body = (await r.json()) as any;
    return body.approvals[0];
  });
}

const decide = (id: string, body: unknown, who: keyof typeof SECRET = 'alice') =>
  postJson(`${gw.url}/admin/approvals/${id}`, body, as(who));

describe('approvals', () => {
  it('runs an ungated call at once, and one gated only by an argument condition when the condition holds', async () => {
    const free = await postJson(`${gw.url}/tool/call`, callBody('echo', { text: 'hi' }), as('agent'));
    expect(free.status).toBe(200);
    const scratch = await postJson(
      `${gw.url}/tool/call`,
      callBody('write', { path: '/scratch/a', text: 'x' }),
      as('agent'),
    );
    expect(scratch.status).toBe(200);
    expect(scratch.json.data.data).toEqual({ wrote: '/scratch/a', text: 'x' });
  });

  it('holds a gated call (awaiting_approval, a status event naming the approval) until an approver approves it', async () => {
    const res = await postJson(
      `${gw.url}/tool/calls`,
      callBody('write', { path: '/etc/x', text: 'a' }, { correlation_id: 'corr-1' }),
      as('agent'),
    );
    expect(res.status).toBe(202);
    const stream = await openSse(res.json.events_url, { headers: as('agent') });
    const status = await stream.next();
    expect(status!.json).toMatchObject({
      kind: 'status',
      data: { approval: { id: expect.any(String), url: expect.stringMatching(/^\/admin\/approvals\//) } },
    });
    expect(status!.json.data.message).toMatch(/^awaiting approval/);
    const approval = await pending('corr-1');
    expect(approval).toMatchObject({
      id: status!.json.data.approval.id,
      tool_name: 'write',
      arguments: { path: '/etc/x', text: 'a' },
      principal: 'agent',
      door: 'rest',
      correlation_id: 'corr-1',
      call_id: res.json.call_id,
    });
    expect(approval.id.length).toBeGreaterThanOrEqual(24);
    const view = await fetch(res.json.result_url, { headers: as('agent') }).then((r) => r.json() as any);
    expect(view.state).toBe('awaiting_approval');
    expect(started).not.toContain('/etc/x');
    // Filters narrow the list.
    const other = await fetch(`${gw.url}/admin/approvals?principal=nobody`, { headers: as('alice') }).then(
      (r) => r.json() as any,
    );
    expect(other.approvals).toEqual([]);

    const ok = await decide(approval.id, { decision: 'approve', reason: 'looks fine' });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ decision: 'approve', call_id: res.json.call_id, edited: false });
    const rest = await stream.rest();
    const final = rest.at(-1)!.json;
    expect(final.data).toMatchObject({ success: true, data: { wrote: '/etc/x' } });
    // Decided once: a second decision finds nothing.
    expect((await decide(approval.id, { decision: 'deny' })).status).toBe(404);
  });

  it('answers a denied call tool_denied naming the approver and reason, on the JSON door', async () => {
    const call = postJson(
      `${gw.url}/tool/call`,
      callBody('write', { path: '/etc/y', text: 'b' }, { correlation_id: 'corr-y' }),
      as('agent'),
    );
    const approval = await pending('corr-y');
    const no = await decide(approval.id, { decision: 'deny', reason: 'not in prod' }, 'boss');
    expect(no.status).toBe(200);
    const res = await call;
    expect(res.json.data).toMatchObject({
      success: false,
      error_code: 'tool_denied',
      error: 'denied by boss: not in prod',
    });
    expect(started).not.toContain('/etc/y');
  });

  it('runs approved edited arguments, refuses invalid edits (the approval stays pending), and audits both versions', async () => {
    const call = postJson(
      `${gw.url}/tool/call`,
      callBody('write', { path: '/etc/z', text: 'c' }, { correlation_id: 'corr-z' }),
      as('agent'),
    );
    const approval = await pending('corr-z');
    const bad = await decide(approval.id, { decision: 'approve', arguments: { path: 42 } });
    expect(bad.status).toBe(422);
    expect(bad.json.code).toBe('invalid_arguments');
    expect((await pending('corr-z')).id).toBe(approval.id);
    const good = await decide(approval.id, { decision: 'approve', arguments: { path: '/scratch/z', text: 'c' } });
    expect(good.json.edited).toBe(true);
    const res = await call;
    expect(res.json.data).toMatchObject({ success: true, data: { wrote: '/scratch/z' } });
    const lines = await waitFor('the audit record', async () => {
      const text = await readFile(auditPath, 'utf8').catch(() => '');
      const found = text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .filter((r) => r.approval?.id === approval.id);
      return found.length ? found : undefined;
    });
    expect(lines[0].approval).toMatchObject({
      decision: 'approve',
      approver: 'alice',
      arguments: { path: '/etc/z', text: 'c' },
      edited_arguments: { path: '/scratch/z', text: 'c' },
    });
  });

  it('refuses self-approval and a non-approver on every route, and hides approvals from non-approvers', async () => {
    const call = postJson(
      `${gw.url}/tool/call`,
      callBody('echo', { text: 'gated for eve' }, { correlation_id: 'corr-eve' }),
      as('eve'),
    );
    const approval = await pending('corr-eve');
    expect(approval.principal).toBe('eve');
    // eve is no approver: 403 everywhere, whatever the id.
    for (const [method, path] of [
      ['GET', '/admin/approvals'],
      ['GET', `/admin/approvals/${approval.id}`],
      ['POST', `/admin/approvals/${approval.id}`],
      ['GET', '/admin/approvals/made-up'],
    ]) {
      const r = await fetch(`${gw.url}${path}`, {
        method,
        headers: { ...as('eve'), 'Content-Type': 'application/json' },
        body: method === 'POST' ? '{"decision":"approve"}' : undefined,
      });
      expect(r.status, `${method} ${path}`).toBe(403);
    }
    // A per-token rule gates eve's echo, not agent's.
    expect((await postJson(`${gw.url}/tool/call`, callBody('echo', { text: 'x' }), as('agent'))).status).toBe(200);
    const deny = await decide(approval.id, { decision: 'deny', reason: 'no' });
    expect(deny.status).toBe(200);
    expect((await call).json.data.error_code).toBe('tool_denied');
  });

  it('refuses an approver deciding their own call', async () => {
    const call = postJson(
      `${gw.url}/tool/call`,
      callBody('write', { path: '/etc/self', text: 'd' }, { correlation_id: 'corr-self' }),
      as('alice'),
    );
    const approval = await pending('corr-self');
    const self = await decide(approval.id, { decision: 'approve' });
    expect(self.status).toBe(403);
    expect(self.json.message).toMatch(/nobody approves their own call/);
    expect((await decide(approval.id, { decision: 'approve' }, 'boss')).status).toBe(200);
    expect((await call).json.data.success).toBe(true);
  });

  it('removes the approval of a call canceled while it waits', async () => {
    const res = await postJson(
      `${gw.url}/tool/calls`,
      callBody('write', { path: '/etc/cancel', text: 'e' }, { correlation_id: 'corr-cancel' }),
      as('agent'),
    );
    const approval = await pending('corr-cancel');
    const del = await fetch(res.json.result_url, { method: 'DELETE', headers: as('agent') });
    expect(del.status).toBeLessThan(300);
    await waitFor('the approval gone', async () => {
      const r = await fetch(`${gw.url}/admin/approvals/${approval.id}`, { headers: as('alice') });
      return r.status === 404 ? true : undefined;
    });
    expect(started).not.toContain('/etc/cancel');
  });

  it('counts decisions in approvals_total and the wait histogram', async () => {
    const text = await fetch(`${gw.url}/metrics`, { headers: as('boss') }).then((r) => r.text());
    expect(text).toMatch(/a2e_approvals_total\{decision="approve"\} [1-9]/);
    expect(text).toMatch(/a2e_approvals_total\{decision="deny"\} [1-9]/);
    expect(text).toMatch(/a2e_approval_wait_seconds_count\{decision="approve"\} [1-9]/);
  });
});

describe('approval wait limit', () => {
  it('ends a call nobody decided tool_denied saying the approval expired, and starts the tool timeout only on approval', async () => {
    const short = await startGateway({
      plugins: [definePlugin('t', [echoTool])],
      config: { approvals: { require: ['echo'], timeout_s: 2 } },
    });
    try {
      const res = await postJson(`${short.url}/tool/call`, callBody('echo', { text: 'late' }));
      expect(res.json.data).toMatchObject({ success: false, error_code: 'tool_denied' });
      expect(res.json.data.error).toMatch(/expired after 2 s/);
      // A wait longer than the call's own timeout: approved, the tool still runs (its timeout starts then).
      const call = postJson(`${short.url}/tool/call`, callBody('echo', { text: 'slow approver' }, { timeout: 1 }));
      const list = await waitFor('pending', async () => {
        const body = (await fetch(`${short.url}/admin/approvals`).then((r) => r.json())) as any;
        return body.approvals[0];
      });
      await new Promise((r) => setTimeout(r, 1200));
      expect((await postJson(`${short.url}/admin/approvals/${list.id}`, { decision: 'approve' })).status).toBe(200);
      expect((await call).json.data).toMatchObject({ success: true, data: { text: 'slow approver' } });
    } finally {
      await short.close();
    }
  });
});

describe('approvals and reload', () => {
  it('a reload changes which tools are gated for new calls only; a pending approval keeps its rule', async () => {
    const { createGateway, createLogger, defineConfig } = await import('../../src/index.js');
    const config = (require: string[]) =>
      defineConfig({
        server: { port: 0 },
        tools: {
          fs: { enabled: false },
          shell: { enabled: false },
          http: { enabled: false },
          eval: { enabled: false },
        },
        approvals: { require },
      });
    let next = config(['echo']);
    const gateway = await createGateway({
      config: next,
      plugins: [definePlugin('t', [echoTool, writeTool])],
      logger: createLogger('silent'),
      loadConfig: async () => next,
    });
    const { url } = await gateway.listen(0, '127.0.0.1');
    try {
      const held = postJson(`${url}/tool/call`, callBody('echo', { text: 'before' }));
      const approval = await waitFor(
        'pending',
        async () => ((await fetch(`${url}/admin/approvals`).then((r) => r.json())) as any).approvals[0],
      );
      next = config(['write']);
      expect(await gateway.reload('test')).toMatchObject({ status: 'reloaded', changed: ['approvals.require'] });
      // New calls follow the new rules: echo runs at once, write waits.
      expect((await postJson(`${url}/tool/call`, callBody('echo', { text: 'after' }))).json.data.success).toBe(true);
      const write = postJson(`${url}/tool/call`, callBody('write', { path: '/p', text: 't' }));
      const second = await waitFor(
        'write pending',
        async () => ((await fetch(`${url}/admin/approvals?tool=write`).then((r) => r.json())) as any).approvals[0],
      );
      // The echo approval made before the reload is still pending and still decides its call.
      const list = ((await fetch(`${url}/admin/approvals`).then((r) => r.json())) as any).approvals;
      expect(list.map((a: any) => a.id).sort()).toEqual([approval.id, second.id].sort());
      expect(list.find((a: any) => a.id === approval.id).rule).toBe('echo');
      await postJson(`${url}/admin/approvals/${approval.id}`, { decision: 'approve' });
      await postJson(`${url}/admin/approvals/${second.id}`, { decision: 'deny', reason: 'r' });
      expect((await held).json.data).toMatchObject({ success: true, data: { text: 'before' } });
      expect((await write).json.data).toMatchObject({ error_code: 'tool_denied', error: 'denied by an approver: r' });
    } finally {
      await gateway.close();
    }
  });
});

describe('approvals on /admin/events', () => {
  it('an approver sees pending approvals live; a non-approver sees none', async () => {
    const approverStream = await openSse(`${gw.url}/admin/events`, { headers: as('alice') });
    const eveStream = await openSse(`${gw.url}/admin/events`, { headers: as('eve') });
    const seen: string[] = [];
    const collect = async (stream: typeof approverStream, into: string[], until: (e: any) => boolean) => {
      for (;;) {
        const e = await stream.next();
        if (!e) return;
        into.push(`${e.event} ${e.data}`);
        if (until(e)) return;
      }
    };
    const approverDone = collect(approverStream, seen, (e) => e.event === 'approval.decided');
    const call = postJson(
      `${gw.url}/tool/call`,
      callBody('echo', { text: 'watched' }, { correlation_id: 'corr-watch' }),
      as('eve'),
    );
    const approval = await pending('corr-watch');
    await decide(approval.id, { decision: 'deny', reason: 'seen' });
    await call;
    await approverDone;
    expect(seen[0]).toMatch(/^snapshot .*"approvals":\[/);
    expect(seen.find((l) => l.startsWith('approval.pending '))).toContain(approval.id);
    expect(seen.find((l) => l.startsWith('approval.decided '))).toContain('"decision":"deny"');
    // eve's own stream: her call's lifecycle, no approval frames (read what came, then stop).
    const eveSeen: string[] = [];
    await collect(eveStream, eveSeen, (e) => e.event === 'call.finished');
    eveStream.abort();
    approverStream.abort();
    expect(eveSeen.length).toBeGreaterThan(0);
    expect(eveSeen.filter((l) => l.startsWith('approval'))).toEqual([]);
  });
});
