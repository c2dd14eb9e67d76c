/**
 * Every door inherits approvals from the engine: one table of doors, each starting the same gated call, showing
 * its caller that it waits (in the door's own way) while nothing runs, and answering with the tool's result once
 * an approver approves it through POST /admin/approvals/{id}. mcp-stdio is a real child process (`a2e-gateway
 * mcp-stdio --port 0`, its approvals decided through its own HTTP API) with the same tool as a plugin module.
 * Then every door's way of canceling a waiting call: the approval leaves the pending list and the tool never runs.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpStdioChild } from '../helpers/mcp-stdio-child.js';
import { A2eTestClient } from '../helpers/a2e-client.js';
import { definePlugin, echoTool } from '../helpers/plugins.js';
import { callBody, openSse, postJson, startGateway, type SseStream, type TestGateway } from '../helpers/server.js';
import { waitFor } from '../helpers/a2a-stub.js';

const TEXT = 'approved-through-the-door';
let ran = 0;
const countedEcho: typeof echoTool = [echoTool[0], (args, ctx) => (ran++, echoTool[1](args, ctx))];

let gw: TestGateway;
/** The mcp-stdio child's folder: its config, its plugin, and the file its echo appends a line to per run. */
let dir: string;
let stdio: McpStdioChild;
const stdioRan = () => {
  try {
    return readFileSync(join(dir, 'ran'), 'utf8').length;
  } catch {
    return 0;
  }
};
beforeAll(async () => {
  gw = await startGateway({
    plugins: [definePlugin('t', [countedEcho])],
    config: { approvals: { require: ['echo'] }, a2a_server: { enabled: true } },
  });
  dir = mkdtempSync(join(tmpdir(), 'a2e-approval-stdio-'));
  writeFileSync(
    join(dir, 'echo.mjs'),
    `import { appendFileSync } from 'node:fs';
export const plugin = {
  name: 'stdio-echo',
  listTools: () => [{ name: 'echo', description: 'Echo the given text back',
    input_parameters: [{ name: 'text', type: 'string', description: 'Text to echo', required: true }] }],
  executeTool: (_name, args) => (appendFileSync(${JSON.stringify(join(dir, 'ran'))}, 'x'), { text: args.text }),
};
`,
  );
  writeFileSync(join(dir, 'gateway.yaml'), 'plugins:\n  - module: ./echo.mjs\napprovals:\n  require: [echo]\n');
  stdio = await McpStdioChild.start(join(dir, 'gateway.yaml'));
}, 60_000);
afterAll(async () => {
  await stdio?.close();
  await gw?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
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
  /** The gateway that holds the call (its /admin/approvals): the test gateway unless said otherwise. */
  gateway?: () => string;
  /** How many times the tool ran there. */
  ran?: () => number;
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
    name: 'mcp-stdio: a progress notification with the status message, then the result',
    door: 'mcp',
    gateway: () => stdio.url,
    ran: stdioRan,
    async start() {
      const id = `stdio-${Date.now()}`;
      stdio.send({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: TEXT }, _meta: { progressToken: id } },
      });
      return {
        waiting: async () =>
          JSON.stringify(
            await stdio.next(
              (m) => m.method === 'notifications/progress' && m.params.progressToken === id,
              'the progress notification',
            ),
          ),
        result: async () => JSON.stringify(await stdio.next((m) => m.id === id, 'the tools/call answer')),
      };
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

async function approvalOf(door: string, corr?: string, base = gw.url): Promise<any> {
  return waitFor(`a pending approval from door ${door}`, async () => {
    const body = (await fetch(`${base}/admin/approvals?door=${door}${corr ? `&correlation_id=${corr}` : ''}`).then(
      (r) => r.json(),
    )) as any;
    return body.approvals[0];
  });
}

describe('approvals on every door', () => {
  it.each(ROWS.map((r, i) => [r.name, r, i] as const))('%s', async (_name, row, i) => {
    const corr = `door-${i}`;
    const base = row.gateway?.() ?? gw.url;
    const runs = row.ran ?? (() => ran);
    const before = runs();
    const started = await row.start(corr);
    const approval = await approvalOf(row.door, row.door === 'rest' || row.door === 'a2e' ? corr : undefined, base);
    expect(approval).toMatchObject({ tool_name: 'echo', arguments: { text: TEXT }, door: row.door });
    expect(await started.waiting()).toContain('awaiting approval');
    expect(runs(), 'nothing of the tool ran while it waited').toBe(before);
    const decided = await postJson(`${base}/admin/approvals/${approval.id}`, { decision: 'approve' });
    expect(decided.status).toBe(200);
    expect(await started.result()).toContain(TEXT);
    expect(runs()).toBe(before + 1);
  });
});

/** One door's way to cancel a waiting call. */
interface CancelRow {
  name: string;
  door: string;
  /** Start a gated call; returns what cancels it. */
  start(corr: string): Promise<() => Promise<void>>;
  gateway?: () => string;
  ran?: () => number;
}

const a2aMessage = (id: string) => ({
  kind: 'message',
  messageId: id,
  role: 'user',
  parts: [{ kind: 'data', data: { text: TEXT } }],
  metadata: { skillId: 'echo' },
});

const MCP_HEADERS = {
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
  'MCP-Protocol-Version': '2025-06-18',
};

const CANCEL_ROWS: CancelRow[] = [
  {
    name: 'POST /tool/call (JSON): the client disconnects',
    door: 'rest',
    async start(corr) {
      const abort = new AbortController();
      const answer = fetch(`${gw.url}/tool/call`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(callBody('echo', { text: TEXT }, { correlation_id: corr })),
        signal: abort.signal,
      }).catch(() => undefined);
      return async () => {
        abort.abort();
        await answer;
      };
    },
  },
  {
    name: 'POST /tool/call (SSE): the client disconnects',
    door: 'rest',
    async start(corr) {
      const stream = await openSse(`${gw.url}/tool/call`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(callBody('echo', { text: TEXT }, { correlation_id: corr, streaming: true })),
      });
      return async () => stream.abort();
    },
  },
  {
    name: 'call resource: DELETE /tool/calls/{id}',
    door: 'rest',
    async start(corr) {
      const r = await postJson(`${gw.url}/tool/calls`, callBody('echo', { text: TEXT }, { correlation_id: corr }));
      return async () => {
        const deleted = await fetch(r.json.result_url, { method: 'DELETE' });
        expect(deleted.status).toBe(200);
        expect(((await deleted.json()) as any).state).toBe('canceled');
      };
    },
  },
  {
    name: 'A2E transport: shutdown with timeout 0',
    door: 'a2e',
    async start(corr) {
      const base = `${gw.url}/a2e/v1`;
      const open = (await fetch(`${base}/session`, { method: 'POST' }).then((r) => r.json())) as any;
      const client = A2eTestClient.forSession(base, open.session_id);
      await client.openStream();
      void client.request(callBody('echo', { text: TEXT }, { correlation_id: corr })).catch(() => undefined);
      return async () => {
        expect((await client.send({ type: 'shutdown', timeout: 0 })).status).toBe(202);
        await client.dropStream();
      };
    },
  },
  {
    name: 'MCP at POST /mcp: notifications/cancelled',
    door: 'mcp',
    async start() {
      const id = `cancel-${Date.now()}`;
      const stream = await openSse(`${gw.url}/mcp`, {
        method: 'POST',
        headers: MCP_HEADERS,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'echo', arguments: { text: TEXT }, _meta: { progressToken: id } },
        }),
      });
      await stream.next(); // the progress notification: the call waits
      return async () => {
        const r = await fetch(`${gw.url}/mcp`, {
          method: 'POST',
          headers: MCP_HEADERS,
          body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } }),
        });
        expect(r.status).toBe(202);
        // A cancelled request gets no answer: its stream ends without one.
        expect((await stream.rest()).map((f) => f.json?.id)).not.toContain(id);
      };
    },
  },
  {
    name: 'mcp-stdio: notifications/cancelled',
    door: 'mcp',
    gateway: () => stdio.url,
    ran: stdioRan,
    async start() {
      const id = `stdio-cancel-${Date.now()}`;
      stdio.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: TEXT } } });
      return async () => stdio.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } });
    },
  },
  {
    name: 'A2A tasks/cancel',
    door: 'a2a',
    async start() {
      const sent = await postJson(`${gw.url}/a2a`, {
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: a2aMessage(`c-${Date.now()}`), configuration: { blocking: false } },
      });
      return async () => {
        const canceled = await postJson(`${gw.url}/a2a`, {
          jsonrpc: '2.0',
          id: 2,
          method: 'tasks/cancel',
          params: { id: sent.json.result.id },
        });
        expect(canceled.json.result.status.state).toBe('canceled');
      };
    },
  },
];

describe('canceling a waiting call removes its approval, and the tool never runs', () => {
  it.each(CANCEL_ROWS.map((r, i) => [r.name, r, i] as const))('%s', async (_name, row, i) => {
    const corr = `cancel-${i}`;
    const base = row.gateway?.() ?? gw.url;
    const runs = row.ran ?? (() => ran);
    const before = runs();
    const cancel = await row.start(corr);
    const approval = await approvalOf(row.door, row.door === 'rest' || row.door === 'a2e' ? corr : undefined, base);
    await cancel();
    await waitFor('the approval gone', async () =>
      (await fetch(`${base}/admin/approvals/${approval.id}`)).status === 404 ? true : undefined,
    );
    // Nothing left to approve: deciding it now finds nothing, and the tool did not run.
    expect((await postJson(`${base}/admin/approvals/${approval.id}`, { decision: 'approve' })).status).toBe(404);
    expect(((await fetch(`${base}/admin/approvals`).then((r) => r.json())) as any).approvals).toEqual([]);
    expect(runs()).toBe(before);
  });
});
