/**
 * The three examples of the A2A.agentTools spec, as stub peers over real
 * HTTP, called through the gateway over HTTP.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { agentTools } from '../../src/a2a/tools.js';
import { rpcResult, startStub } from '../helpers/a2a-stub.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const CARD = '/.well-known/agent-card.json';
const open: { close(): Promise<void> }[] = [];
const track = <T extends { close(): Promise<void> }>(x: T): T => (open.push(x), x);
afterEach(async () => {
  await Promise.all(
    open
      .splice(0)
      .reverse()
      .map((x) => x.close()),
  );
});

async function gatewayFor(agents: Record<string, unknown>): Promise<TestGateway> {
  return track(await startGateway({ config: { agents: agents as never } }));
}

describe('spec example 1: the smallest useful call — one skill, one tool', () => {
  it('a card with one skill becomes the tool reviewer_review taking a required string "task"', async () => {
    const peer = track(
      await startStub((r) =>
        r.path === CARD
          ? { json: { name: 'reviewer', skills: [{ id: 'review', description: 'Review some code' }] } }
          : undefined,
      ),
    );
    const gw = await gatewayFor({ reviewer: { card: `${peer.url}${CARD}` } });

    const list = await postJson(`${gw.url}/tool/list`, { filter_kind: 'a2a' });
    expect(list.status).toBe(200);
    expect(list.json.tools).toHaveLength(1);
    const tool = list.json.tools[0];
    expect(tool).toMatchObject({
      name: 'reviewer_review',
      description: 'Review some code',
      kind: 'a2a',
      toolkit: 'reviewer',
      tags: ['a2a'],
      input_parameters: [{ name: 'task', type: 'string', required: true }],
    });
    expect(tool.input_parameters.filter((p: any) => p.required).map((p: any) => p.name)).toEqual(['task']);

    // The library function gives the same tool without a gateway.
    const tools = await agentTools(`${peer.url}${CARD}`);
    expect(tools.map((t) => t.name)).toEqual(['reviewer_review']);
    expect(tools[0]!.definition.kind).toBe('a2a');

    // "task" really is required.
    const missing = await postJson(`${gw.url}/tool/call`, callBody('reviewer_review', {}));
    expect(missing.status).toBe(422);
    expect(missing.json.message).toContain('task');
  });
});

describe('spec example 2: the realistic case — a full submit→poll round trip', () => {
  it('SendMessage answers "working"; the second GetTask completes with an artifact', async () => {
    let polls = 0;
    const peer = track(
      await startStub((r) => {
        if (r.path === CARD) return { json: { name: 'planner', skills: [{ id: 'plan', description: 'Plan a task' }] } };
        if (r.rpc?.method === 'SendMessage') return rpcResult(r, { id: 't1', status: { state: 'working' } });
        const n = ++polls;
        return rpcResult(r, {
          id: 't1',
          status: { state: n < 2 ? 'working' : 'completed' },
          ...(n < 2 ? {} : { artifacts: [{ parts: [{ kind: 'text', text: '3 steps planned' }] }] }),
        });
      }),
    );
    const gw = await gatewayFor({ planner: { card: `${peer.url}${CARD}`, timeout_ms: 5000, poll_ms: 10 } });

    const res = await postJson(`${gw.url}/tool/call`, callBody('planner_plan', { task: 'ship the release' }));
    expect(res.status).toBe(200);
    const r = res.json.data;
    expect(r.success).toBe(true);
    expect(r.data.output).toBe('3 steps planned');
    expect(polls).toBeGreaterThanOrEqual(2);
    expect(r.data.metadata).toMatchObject({ agent: 'planner', taskId: 't1', state: 'completed' });
    expect(r.data.metadata.polls).toBeGreaterThanOrEqual(2);
    expect(r.data.metadata.ms).toBeGreaterThanOrEqual(0);
    expect(r.data.state).toBe('completed');

    // What went over the wire: the task text as the one text part, the skill id in metadata, A2A 1.0 headers.
    const send = peer.requests.find((q) => q.rpc?.method === 'SendMessage')!;
    expect(send.headers['a2a-version']).toBe('1.0');
    expect(send.rpc!.params.message).toMatchObject({
      role: 'ROLE_USER',
      parts: [{ text: 'ship the release' }],
      metadata: { skillId: 'plan' },
    });
    expect(send.rpc!.params.configuration).toEqual({ returnImmediately: true });
    expect(
      peer
        .methods()
        .slice(1)
        .every((m) => m === 'GetTask'),
    ).toBe(true);
  });
});

describe('spec example 3: the full surface — several skills, a failed task is a tool error', () => {
  it('reviewer_fail ends failed: success false, the remote message in error, state failed', async () => {
    const peer = track(
      await startStub((r) => {
        if (r.path === CARD) {
          return {
            json: {
              name: 'reviewer',
              skills: [
                { id: 'review', description: 'Review some code' },
                { id: 'fail', description: 'Always fails' },
              ],
            },
          };
        }
        if (r.rpc?.method === 'SendMessage') return rpcResult(r, { id: 't1', status: { state: 'submitted' } });
        return rpcResult(r, {
          id: 't1',
          status: {
            state: 'failed',
            message: { role: 'agent', parts: [{ kind: 'text', text: 'diff would not apply' }] },
          },
        });
      }),
    );
    const gw = await gatewayFor({ reviewer: { card: `${peer.url}${CARD}`, timeout_ms: 5000, poll_ms: 5 } });

    const list = await postJson(`${gw.url}/tool/list`, { filter_kind: 'a2a' });
    expect(list.json.tools.map((t: any) => t.name).sort()).toEqual(['reviewer_fail', 'reviewer_review']);

    const res = await postJson(`${gw.url}/tool/call`, callBody('reviewer_fail', { task: 'please fail' }));
    expect(res.status).toBe(200);
    const r = res.json.data;
    expect(r.success).toBe(false);
    expect(r.error_code).toBe('tool_error');
    expect(r.error).toContain('diff would not apply');
    expect(r.data.state).toBe('failed');
    expect(r.data.metadata).toMatchObject({ agent: 'reviewer', taskId: 't1', state: 'failed', polls: 1 });
    expect(r.data.output).toBe('diff would not apply');
  });
});
