/**
 * Every door inherits approvals from the engine: one table of doors, each starting the same gated call, showing
 * its caller that it waits (in the door's own way) while nothing runs, and answering with the tool's result once
 * an approver approves it through POST /admin/approvals/{id}.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A2eTestClient } from '../helpers/a2e-client.js';
import { definePlugin, echoTool } from '../helpers/plugins.js';
import { callBody, openSse, postJson, startGateway, type SseStream, type TestGateway } from '../helpers/server.js';
import { waitFor } from '../helpers/a2a-stub.js';

const TEXT = 'approved-through-the-door';
let ran = 0;
const countedEcho: typeof echoTool = [echoTool[0], (args, ctx) => (ran++, echoTool[1](args, ctx))];

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({
    plugins: [definePlugin('t', [countedEcho])],
    config: { approvals: { require: ['echo'] }, a2a_server: { enabled: true } },
  });
});
afterAll(async () => {
  await gw?.close();
});

/** A started call as its door shows it: what it says while waiting, and its final answer's text. */
interface Started {
  waiting(): Promise<string>;
  result(): Promise<string>;
}

interface DoorRow {
  name: string;
  /** The door the approval names. */
  door: string;
  start(corr: string): Promise<Started>;
}

/** The first frame and the rest of an SSE answer. */
async function frames(stream: SseStream): Promise<Started> {
  const first = stream.next();
  return {
    waiting: async () => JSON.stringify((await first)?.json),
    result: async () => {
      await first;
      return JSON.stringify((await stream.rest()).at(-1)?.json);
    },
  };
}

const ROWS: DoorRow[] = [
  {
    name: 'POST /tool/call (JSON): waits, then answers',
    door: 'rest',
    async start(corr) {
      const answer = postJson(`${gw.url}/tool/call`, callBody('echo', { text: TEXT }, { correlation_id: corr }));
      return {
        // The JSON door has nothing to show while it waits: the approval lists it.
        waiting: async () => JSON.stringify((await approvalOf('rest', corr)).arguments) + ' awaiting approval',
        result: async () => JSON.stringify((await answer).json),
      };
    },
  },
  {
    name: 'POST /tool/call (SSE): a status event naming the approval, then the result',
    door: 'rest',
    async start(corr) {
      return frames(
        await openSse(`${gw.url}/tool/call`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(callBody('echo', { text: TEXT }, { correlation_id: corr, streaming: true })),
        }),
      );
    },
  },
  {
    name: 'POST /tool/calls: the call resource reports awaiting_approval, its events the status event',
    door: 'rest',
    async start(corr) {
      const r = await postJson(`${gw.url}/tool/calls`, callBody('echo', { text: TEXT }, { correlation_id: corr }));
      const stream = await frames(await openSse(r.json.events_url));
      return {
        waiting: async () => {
          const view = (await fetch(r.json.result_url).then((res) => res.json())) as any;
          expect(view.state).toBe('awaiting_approval');
          return stream.waiting();
        },
        result: stream.result,
      };
    },
  },
  {
    name: 'A2E transport: a tool/event status, then the response',
    door: 'a2e',
    async start(corr) {
      const base = `${gw.url}/a2e/v1`;
      const open = (await fetch(`${base}/session`, { method: 'POST' }).then((r) => r.json())) as any;
      const client = A2eTestClient.forSession(base, open.session_id);
      await client.openStream();
      const exchange = client.request(callBody('echo', { text: TEXT }, { correlation_id: corr, streaming: true }));
      const event = client.waitFor((m) => m.type === 'tool/event', 20_000, 'the status event');
      return {
        waiting: async () => JSON.stringify(await event),
        result: async () => {
          const { response } = await exchange;
          await client.dropStream();
          return JSON.stringify(response);
        },
      };
    },
  },
  {
    name: 'MCP at POST /mcp: a progress notification with the status message, then the result',
    door: 'mcp',
    async start() {
      const body = {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: TEXT }, _meta: { progressToken: 'p1' } },
      };
      return frames(
        await openSse(`${gw.url}/mcp`, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            'MCP-Protocol-Version': '2025-06-18',
          },
          body: JSON.stringify(body),
        }),
      );
    },
  },
  {
    name: 'A2A message/send (non-blocking): the task stays working with a status message naming the approval',
    door: 'a2a',
    async start() {
      const message = {
        kind: 'message',
        messageId: `m-${Date.now()}`,
        role: 'user',
        parts: [{ kind: 'data', data: { text: TEXT } }],
        metadata: { skillId: 'echo' },
      };
      const sent = await postJson(`${gw.url}/a2a`, {
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message, configuration: { blocking: false } },
      });
      const taskId = sent.json.result.id as string;
      const get = async () =>
        (await postJson(`${gw.url}/a2a`, { jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { id: taskId } })).json
          .result;
      return {
        waiting: async () => {
          const task = await waitFor('the status message', async () => {
            const t = await get();
            return JSON.stringify(t.status).includes('awaiting approval') ? t : undefined;
          });
          expect(task.status.state).toBe('working');
          return JSON.stringify(task.status);
        },
        result: async () => {
          const task = await waitFor('the completed task', async () => {
            const t = await get();
            return t.status.state === 'completed' ? t : undefined;
          });
          return JSON.stringify(task.artifacts);
        },
      };
    },
  },
];

async function approvalOf(door: string, corr?: string): Promise<any> {
  return waitFor(`a pending approval from door ${door}`, async () => {
    const body = (await fetch(`${gw.url}/admin/approvals?door=${door}${corr ? `&correlation_id=${corr}` : ''}`).then(
      (r) => r.json(),
    )) as any;
    return body.approvals[0];
  });
}

describe('approvals on every door', () => {
  it.each(ROWS.map((r, i) => [r.name, r, i] as const))('%s', async (_name, row, i) => {
    const corr = `door-${i}`;
    const before = ran;
    const started = await row.start(corr);
    const approval = await approvalOf(row.door, row.door === 'rest' || row.door === 'a2e' ? corr : undefined);
    expect(approval).toMatchObject({ tool_name: 'echo', arguments: { text: TEXT }, door: row.door });
    expect(await started.waiting()).toContain('awaiting approval');
    expect(ran, 'nothing of the tool ran while it waited').toBe(before);
    const decided = await postJson(`${gw.url}/admin/approvals/${approval.id}`, { decision: 'approve' });
    expect(decided.status).toBe(200);
    expect(await started.result()).toContain(TEXT);
    expect(ran).toBe(before + 1);
  });
});

describe('canceling a waiting call removes its approval', () => {
  const gone = (id: string) =>
    waitFor('the approval gone', async () =>
      (await fetch(`${gw.url}/admin/approvals/${id}`)).status === 404 ? true : undefined,
    );

  it('a client that disconnects from POST /tool/call (SSE)', async () => {
    const stream = await openSse(`${gw.url}/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(callBody('echo', { text: TEXT }, { correlation_id: 'cancel-sse', streaming: true })),
    });
    const approval = await approvalOf('rest', 'cancel-sse');
    stream.abort();
    await gone(approval.id);
  });

  it('A2A tasks/cancel', async () => {
    const message = {
      kind: 'message',
      messageId: `c-${Date.now()}`,
      role: 'user',
      parts: [{ kind: 'data', data: { text: TEXT } }],
      metadata: { skillId: 'echo' },
    };
    const sent = await postJson(`${gw.url}/a2a`, {
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: { message, configuration: { blocking: false } },
    });
    const approval = await approvalOf('a2a');
    const canceled = await postJson(`${gw.url}/a2a`, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tasks/cancel',
      params: { id: sent.json.result.id },
    });
    expect(canceled.json.result.status.state).toBe('canceled');
    await gone(approval.id);
  });
});
