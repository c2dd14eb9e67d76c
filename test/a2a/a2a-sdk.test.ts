/**
 * The gateway against real peers built with the official A2A JS SDK, in
 * strict A2A 1.0 mode and in the SDK's v0.3 compatibility mode.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSdkPeer, type SdkPeer } from '../helpers/a2a-sdk-peer.js';
import { waitFor } from '../helpers/a2a-stub.js';
import { callBody, openSse, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const MODES = [
  {
    mode: 'strict',
    send: 'SendMessage',
    get: 'GetTask',
    stream: 'SendStreamingMessage',
    cancel: 'CancelTask',
    version: '1.0',
  },
  {
    mode: 'compat',
    send: 'message/send',
    get: 'tasks/get',
    stream: 'message/stream',
    cancel: 'tasks/cancel',
    version: undefined,
  },
] as const;

describe.each(MODES)('a real @a2a-js/sdk peer in $mode mode', ({ mode, send, get, stream, cancel, version }) => {
  let peer: SdkPeer;
  /** The agent with the default mode (auto): the peer offers streaming, so every call streams. */
  let gw: TestGateway;
  /** The same peer with `mode: poll`: send, then poll. */
  let gwPoll: TestGateway;
  const gateways = () => ({ auto: gw, poll: gwPoll });
  const callOn = (g: TestGateway, skill: string, task: string, extra: Record<string, unknown> = {}) =>
    postJson(`${g.url}/tool/call`, callBody(`SDK_Agent_${skill}`, { task }, extra));
  const call = (skill: string, task: string, extra: Record<string, unknown> = {}) => callOn(gw, skill, task, extra);

  beforeAll(async () => {
    peer = await startSdkPeer(mode);
    [gw, gwPoll] = await Promise.all([
      startGateway({ config: { agents: { sdk: { card: peer.url, poll_ms: 50, timeout_ms: 20_000 } } } }),
      startGateway({ config: { agents: { sdk: { card: peer.url, poll_ms: 50, timeout_ms: 20_000, mode: 'poll' } } } }),
    ]);
  });
  afterAll(async () => {
    await gw?.close();
    await gwPoll?.close();
    await peer?.close();
  });

  it('offers one tool per skill, found under the base URL, with the dialect the card implies', async () => {
    const list = await postJson(`${gw.url}/tool/list`, { filter_kind: 'a2a' });
    expect(list.json.tools.map((t: any) => t.name)).toEqual([
      'SDK_Agent_complete',
      'SDK_Agent_fail',
      'SDK_Agent_answer',
      'SDK_Agent_stream',
      'SDK_Agent_hang',
    ]);
    expect(list.json.tools[0]).toMatchObject({
      toolkit: 'SDK Agent',
      tags: ['sdk', 'complete', 'a2a'],
      version: '2.0.0',
    });
    const agents = await (await fetch(`${gw.url}/agents`)).json();
    expect(agents.agents).toEqual([
      expect.objectContaining({
        name: 'sdk',
        state: 'ok',
        agent_name: 'SDK Agent',
        dialect: mode === 'strict' ? '1.0' : '0.3',
        streaming: true,
        endpoint: `${peer.url}/a2a/jsonrpc`,
      }),
    ]);
  });

  it('a completing skill (mode auto): one streaming request that ends with the task, output from the artifact', async () => {
    const before = peer.calls.length;
    const res = await call('complete', 'ship it');
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ success: true, data: { output: 'done: ship it', state: 'completed' } });
    expect(res.json.data.data.metadata).toMatchObject({ agent: 'sdk', state: 'completed', polls: 0 });
    expect(res.json.data.data.metadata.taskId).toMatch(/[0-9a-f-]{36}/);
    expect(res.json.data.data.artifacts).toEqual([expect.objectContaining({ name: 'result', artifactId: 'result' })]);
    // A non-streaming call: no events are forwarded to the caller.
    expect(res.json.data.events).toEqual([]);
    expect(peer.calls.slice(before)).toEqual([{ method: stream, version }]);
  });

  it('a completing skill (mode poll): submit, poll, output from the artifact', async () => {
    const before = peer.calls.length;
    const res = await callOn(gwPoll, 'complete', 'ship it');
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ success: true, data: { output: 'done: ship it', state: 'completed' } });
    expect(res.json.data.data.metadata).toMatchObject({ agent: 'sdk', state: 'completed' });
    expect(res.json.data.data.metadata.taskId).toMatch(/[0-9a-f-]{36}/);
    expect(res.json.data.data.artifacts).toEqual([expect.objectContaining({ name: 'result', artifactId: 'result' })]);
    const mine = peer.calls.slice(before);
    expect(mine[0]).toEqual({ method: send, version });
    expect(mine.slice(1).length).toBeGreaterThanOrEqual(1);
    expect(mine.slice(1).every((c) => c.method === get && c.version === version)).toBe(true);
    expect(res.json.data.data.metadata.polls).toBe(mine.length - 1);
  });

  it.each(['auto', 'poll'] as const)(
    'a failing skill (mode %s): tool_error carrying the remote status message',
    async (agentMode) => {
      const before = peer.calls.length;
      const res = await callOn(gateways()[agentMode], 'fail', 'apply the patch');
      expect(res.json.data).toMatchObject({ success: false, error_code: 'tool_error', data: { state: 'failed' } });
      expect(res.json.data.error).toContain('diff would not apply');
      expect(res.json.data.data.metadata.state).toBe('failed');
      const methods = peer.calls.slice(before).map((c) => c.method);
      if (agentMode === 'auto') {
        expect(methods).toEqual([stream]);
      } else {
        expect(methods[0]).toBe(send);
        expect(methods.slice(1).every((m) => m === get)).toBe(true);
      }
    },
  );

  it.each(['auto', 'poll'] as const)(
    'a direct message answer (mode %s): completed at once, no task, no polls',
    async (agentMode) => {
      const before = peer.calls.length;
      const res = await callOn(gateways()[agentMode], 'answer', 'what is up');
      expect(res.json.data).toMatchObject({
        success: true,
        data: { output: 'answer: what is up', state: 'completed', metadata: { polls: 0 } },
      });
      expect(peer.calls.slice(before).map((c) => c.method)).toEqual([agentMode === 'auto' ? stream : send]);
    },
  );

  it('sequential streamed calls reuse the keep-alive connection (the stream is read to its end, not cut)', async () => {
    await call('answer', 'warm up');
    const before = peer.connections();
    for (let i = 0; i < 10; i++) expect((await call('complete', `task ${i}`)).json.data.success).toBe(true);
    // Cutting each stream after its final event would open one connection per call.
    expect(peer.connections() - before).toBeLessThanOrEqual(2);
  });

  it('streaming: artifact chunks and status updates arrive as events, over SSE', async () => {
    const before = peer.calls.length;
    const sse = await openSse(`${gw.url}/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(callBody('SDK_Agent_stream', { task: 'tell a story' }, { streaming: true })),
    });
    expect(sse.status).toBe(200);
    const frames = await sse.rest();
    const events = frames.filter((f) => f.event === 'tool/event').map((f) => f.json);
    const artifacts = events.filter((e) => e.kind === 'artifact').map((e) => e.data);
    expect(artifacts).toEqual([
      { name: 'story.txt', mime: 'text/plain', chunk: 'alpha ', final: false },
      { name: 'story.txt', mime: 'text/plain', chunk: 'beta ', final: false },
      { name: 'story.txt', mime: 'text/plain', chunk: 'gamma', final: true },
    ]);
    const statuses = events.filter((e) => e.kind === 'status').map((e) => e.data);
    expect(statuses.map((s) => s.state)).toContain('working');
    expect(statuses.some((s) => s.message.includes('halfway'))).toBe(true);
    expect(statuses.at(-1).state).toBe('completed');
    const resp = frames.find((f) => f.event === 'tool/call/resp')!.json;
    expect(resp.data).toMatchObject({ success: true, data: { output: 'alpha beta gamma', state: 'completed' } });
    expect(peer.calls.slice(before).map((c) => c.method)).toEqual([stream]);
  });

  it('streaming a failing skill forwards the failure as a tool_error', async () => {
    const sse = await openSse(`${gw.url}/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(callBody('SDK_Agent_fail', { task: 'x' }, { streaming: true })),
    });
    const frames = await sse.rest();
    const resp = frames.find((f) => f.event === 'tool/call/resp')!.json;
    expect(resp.data).toMatchObject({ success: false, error_code: 'tool_error', data: { state: 'failed' } });
    expect(resp.data.error).toContain('diff would not apply');
  });

  it('a streaming call with mode poll sends and polls, emitting a status event per state change', async () => {
    const before = peer.calls.length;
    const sse = await openSse(`${gwPoll.url}/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(callBody('SDK_Agent_stream', { task: 'tell a story' }, { streaming: true })),
    });
    expect(sse.status).toBe(200);
    const frames = await sse.rest();
    const statuses = frames
      .filter((f) => f.event === 'tool/event' && f.json.kind === 'status')
      .map((f) => f.json.data.state);
    expect(statuses.at(-1)).toBe('completed');
    // One event per change of state, never the same state twice in a row.
    expect(statuses.every((s, i) => i === 0 || s !== statuses[i - 1])).toBe(true);
    const resp = frames.find((f) => f.event === 'tool/call/resp')!.json;
    expect(resp.data).toMatchObject({ success: true, data: { state: 'completed' } });
    // The polled task holds the appended chunks as separate parts: joined as they are, the same text as streamed.
    expect(resp.data.data.output).toBe('alpha beta gamma');
    const methods = peer.calls.slice(before).map((c) => c.method);
    expect(methods[0]).toBe(send);
    expect(methods.length).toBeGreaterThanOrEqual(2);
    expect(methods.slice(1).every((m) => m === get)).toBe(true);
  });

  it('a streaming client that disconnects stops the stream and cancels the remote task', async () => {
    const before = peer.canceled.length;
    const sse = await openSse(`${gw.url}/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(callBody('SDK_Agent_hang', { task: 'wait' }, { streaming: true })),
    });
    // The first status event means the remote task exists; then hang up.
    for (let e = await sse.next(); e && !(e.event === 'tool/event' && e.json.kind === 'status'); e = await sse.next());
    sse.abort();
    await waitFor('the peer to record a cancel', () => peer.canceled.length > before);
    await waitFor(
      'the stream method and the cancel at the peer',
      () => peer.calls.some((c) => c.method === stream) && peer.calls.some((c) => c.method === cancel),
    );
  });

  it.each(['auto', 'poll'] as const)(
    'a call that times out (mode %s) cancels the remote task, and the peer records the cancel',
    async (agentMode) => {
      const before = peer.calls.length;
      const canceledBefore = peer.canceled.length;
      const res = await callOn(gateways()[agentMode], 'hang', 'wait forever', { timeout: 1 });
      expect(res.json.data.success).toBe(false);
      expect(res.json.data.error).toContain('timed out');
      // The run stops just before the call's deadline, so the answer still has the task's data.
      expect(res.json.data.data).toMatchObject({ state: 'timeout', metadata: { agent: 'sdk', state: 'timeout' } });
      const taskId = res.json.data.data.metadata.taskId;
      expect(taskId).toMatch(/[0-9a-f-]{36}/);
      expect(res.json.data.error).toContain(taskId);
      await waitFor('the peer to cancel the task', () => peer.canceled.slice(canceledBefore).includes(taskId), 5000);
      const methods = peer.calls.slice(before).map((c) => c.method);
      expect(methods[0]).toBe(agentMode === 'auto' ? stream : send);
      expect(methods).toContain(cancel);
    },
  );
});
