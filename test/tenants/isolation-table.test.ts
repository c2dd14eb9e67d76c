/**
 * Per-principal scoping on every door, as one table (issue 57, docs/tenants.md): principal A opens things — a
 * running call resource, a transport session, an A2A task, a REST session, files in its workspace — and principal B,
 * holding their ids, tries to see, cancel, read the events of, or list each. Every row proves A can (the control) and
 * B cannot. A new per-principal resource is one more row.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A2eTestClient } from '../helpers/a2e-client.js';
import { callBody, openSse, postJson, startGateway, type TestGateway } from '../helpers/server.js';
import { releaseHeld, sha256, testTools } from '../security/helpers.js';

const A = 'tenant-a-token-0123456789abcdef0123';
const B = 'tenant-b-token-fedcba9876543210fedc';
const as = (token: string) => ({ Authorization: `Bearer ${token}` });

let base: string;
let gw: TestGateway;

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'a2e-tenant-table-'));
  chmodSync(base, 0o755);
  gw = await startGateway({
    plugins: [testTools()],
    config: {
      auth: {
        tokens: [
          { name: 'a', token_sha256: sha256(A) },
          { name: 'b', token_sha256: sha256(B) },
        ],
      },
      sessions: { required: false },
      tools: { fs: { root: join(base, '{principal}') } },
    },
  });
}, 60_000);

afterAll(async () => {
  releaseHeld();
  await gw?.close();
  rmSync(base, { recursive: true, force: true });
});

/** What one principal's attempt on a resource came to: whether it reached it, with the evidence. */
interface Attempt {
  reached: boolean;
  evidence: string;
}

interface Row {
  name: string;
  /** A opens the resource; returns how a principal tries to use it. */
  open(): Promise<(token: string) => Promise<Attempt>>;
}

/** A's running call resource (the `hold` tool), started fresh for each row. */
async function runningCall(): Promise<{ id: string; url: string }> {
  const r = await postJson(`${gw.url}/tool/calls`, callBody('hold', { ms: 60_000 }), as(A));
  expect(r.status, JSON.stringify(r.json)).toBe(202);
  return { id: r.json.call_id as string, url: `${gw.url}/tool/calls/${r.json.call_id as string}` };
}

const status = async (res: Response, ok: number): Promise<Attempt> => ({
  reached: res.status === ok,
  evidence: `${res.status} ${(await res.text()).slice(0, 200)}`,
});

const ROWS: Row[] = [
  {
    name: 'see a call resource (GET /tool/calls/{id})',
    async open() {
      const call = await runningCall();
      return async (token) => status(await fetch(call.url, { headers: as(token) }), 200);
    },
  },
  {
    name: "read a call's events (GET /tool/calls/{id}/events)",
    async open() {
      const call = await runningCall();
      return async (token) => {
        const ctl = new AbortController();
        const r = await fetch(`${call.url}/events`, {
          headers: { Accept: 'text/event-stream', ...as(token) },
          signal: ctl.signal,
        });
        const attempt = { reached: r.status === 200, evidence: String(r.status) };
        ctl.abort();
        return attempt;
      };
    },
  },
  {
    name: 'cancel a call (DELETE /tool/calls/{id}); checked last, as the owner cancels it',
    async open() {
      const call = await runningCall();
      return async (token) => {
        const r = await fetch(call.url, { method: 'DELETE', headers: as(token) });
        const after = (await fetch(call.url, { headers: as(A) }).then((x) => x.json())) as { state?: string };
        // Reached only if the call is no longer running once this token asked.
        return {
          reached: r.status < 300 && after.state !== 'running',
          evidence: `${r.status}, then state ${String(after.state)}`,
        };
      };
    },
  },
  {
    name: 'list calls in the activity feed (GET /admin/events snapshot)',
    async open() {
      const call = await runningCall();
      return async (token) => {
        const s = await openSse(`${gw.url}/admin/events`, { headers: as(token) });
        const first = await s.next();
        s.abort();
        const ids = ((first?.json?.calls ?? []) as { call_id: string }[]).map((c) => c.call_id);
        return { reached: ids.includes(call.id), evidence: `snapshot of ${ids.length} call(s)` };
      };
    },
  },
  {
    name: "use a REST session (POST /tool/call with A's session_id)",
    async open() {
      const hs = await postJson(
        `${gw.url}/handshake`,
        { type: 'handshake/req', agent_id: 'a', agent_caps: ['tools'] },
        as(A),
      );
      const session = hs.json.session_id as string;
      return async (token) => {
        const r = await postJson(
          `${gw.url}/tool/call`,
          callBody('echo', { text: 'x' }, { session_id: session }),
          as(token),
        );
        return {
          reached: r.json?.data?.success === true,
          evidence: `${r.status} ${JSON.stringify(r.json).slice(0, 200)}`,
        };
      };
    },
  },
  {
    name: 'send on and read an A2E transport session (POST /send, GET /stream)',
    async open() {
      const owned = await A2eTestClient.open(`${gw.url}/a2e/v1`, as(A));
      return async (token) => {
        const other = A2eTestClient.forSession(owned.base, owned.sessionId, as(token));
        const sent = await other.send({ type: 'ping' });
        const stream = await other.openStream();
        const reached = sent.status === 202 && stream.status === 200;
        await other.dropStream();
        return { reached, evidence: `send ${sent.status}, stream ${stream.status}` };
      };
    },
  },
  {
    name: 'see an A2A task (tasks/get)',
    async open() {
      const message = {
        kind: 'message',
        messageId: `m-${Date.now()}`,
        role: 'user',
        parts: [{ kind: 'data', data: { text: 'hi' } }],
        metadata: { skillId: 'echo' },
      };
      const sent = await postJson(
        `${gw.url}/a2a`,
        { jsonrpc: '2.0', id: 1, method: 'message/send', params: { message } },
        as(A),
      );
      const taskId = sent.json.result?.id as string;
      expect(taskId, JSON.stringify(sent.json)).toBeTruthy();
      return async (token) => {
        const got = await postJson(
          `${gw.url}/a2a`,
          { jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { id: taskId } },
          as(token),
        );
        return { reached: got.json.result?.id === taskId, evidence: JSON.stringify(got.json).slice(0, 200) };
      };
    },
  },
  {
    name: 'read or list files in a workspace (read_file, list_dir)',
    async open() {
      const w = await postJson(
        `${gw.url}/tool/call`,
        callBody('write_file', { path: 'a-notes.txt', content: 'for a only' }),
        as(A),
      );
      expect(w.json.data.success, JSON.stringify(w.json)).toBe(true);
      return async (token) => {
        const read = await postJson(`${gw.url}/tool/call`, callBody('read_file', { path: 'a-notes.txt' }), as(token));
        const list = await postJson(`${gw.url}/tool/call`, callBody('list_dir', { path: '.' }), as(token));
        const reached =
          JSON.stringify(read.json).includes('for a only') || JSON.stringify(list.json).includes('a-notes.txt');
        return { reached, evidence: JSON.stringify(read.json.data).slice(0, 200) };
      };
    },
  },
];

describe('principal B cannot reach what principal A opened, on any door', () => {
  it.each(ROWS.map((r) => [r.name, r] as const))('%s', async (_name, row) => {
    const use = await row.open();
    const b = await use(B);
    expect(b.reached, `B reached A's resource: ${b.evidence}`).toBe(false);
    const a = await use(A);
    expect(a.reached, `the owner could not reach its own resource (the row proves nothing): ${a.evidence}`).toBe(true);
  });
});
