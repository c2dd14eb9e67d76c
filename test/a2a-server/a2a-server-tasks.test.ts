/**
 * The gateway as an A2A agent, the methods around tasks that the A2A TCK
 * checks (issue 53): ListTasks / tasks/list, a message naming a task
 * (message.taskId), GetExtendedAgentCard, the push notification config
 * methods, SubscribeToTask on unknown and finished tasks, GetTask's
 * historyLength, and a2a_server.default_skill. Plain JSON-RPC over HTTP to a
 * real gateway, as the TCK sends it.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatedPlugin, type GateControl } from '../helpers/gated.js';
import { callBody, openSse, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const TOKENS = { alice: 'alice-secret', bob: 'bob-secret' };
const V1 = { 'A2A-Version': '1.0' };

let gw: TestGateway; // auth on: alice may call everything, bob only echo
let open: TestGateway; // no auth, a2a_server.default_skill: echo
let gated: GateControl;

beforeAll(async () => {
  gated = gatedPlugin();
  gw = await startGateway({
    config: {
      sessions: { required: false }, // so a test can call a tool through POST /tool/call too
      auth: {
        tokens: [
          { name: 'alice', token_sha256: sha256(TOKENS.alice) },
          { name: 'bob', token_sha256: sha256(TOKENS.bob), allow: ['echo'] },
        ],
      },
    },
    plugins: [gated.plugin],
  });
  open = await startGateway({ config: { a2a_server: { default_skill: 'echo' } }, plugins: [gatedPlugin().plugin] });
});
afterAll(async () => {
  await gw?.close();
  await open?.close();
});

let nextId = 0;
/** One JSON-RPC request; `as` a token of `gw` (or none), in A2A 1.0 unless `dialect` says 0.3. */
async function rpc(
  method: string,
  params: unknown,
  opts: { as?: keyof typeof TOKENS; dialect?: '1.0' | '0.3'; url?: string } = {},
) {
  const headers: Record<string, string> = opts.dialect === '0.3' ? {} : { ...V1 };
  if (opts.as) headers.Authorization = `Bearer ${TOKENS[opts.as]}`;
  const res = await postJson(`${opts.url ?? gw.url}/a2a`, { jsonrpc: '2.0', id: ++nextId, method, params }, headers);
  expect(res.status).toBe(200);
  return res.json as { result?: any; error?: { code: number; message: string; data?: any } };
}

/** Run echo(text) to the end as `as`, in context `contextId`; the finished task. */
async function echo(as: keyof typeof TOKENS, text: string, contextId?: string) {
  const sent = await rpc(
    'SendMessage',
    {
      message: {
        messageId: `m-${text}`,
        role: 'ROLE_USER',
        contextId,
        parts: [{ text }],
        metadata: { skillId: 'echo' },
      },
    },
    { as },
  );
  expect(sent.result?.task?.status.state, JSON.stringify(sent)).toBe('TASK_STATE_COMPLETED');
  return sent.result.task;
}

/** Start gated(key) without waiting; the working task. */
async function startGated(key: string, contextId?: string) {
  const sent = await rpc(
    'SendMessage',
    {
      message: {
        messageId: `m-${key}`,
        role: 'ROLE_USER',
        contextId,
        parts: [{ data: { key, steps: 1 } }],
        metadata: { skillId: 'gated' },
      },
      configuration: { returnImmediately: true },
    },
    { as: 'alice' },
  );
  expect(sent.result?.task?.status.state, JSON.stringify(sent)).toBe('TASK_STATE_WORKING');
  return sent.result.task;
}

/** Wait until GetTask says the task has finished. */
async function finished(id: string): Promise<any> {
  for (;;) {
    const got = await rpc('GetTask', { id }, { as: 'alice' });
    if (got.result.status.state !== 'TASK_STATE_WORKING') return got.result;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('ListTasks', () => {
  it("lists only the caller's own tasks, most recently updated first, artifacts left out unless asked for", async () => {
    const ctx = `list-own-${Date.now()}`;
    const a1 = await echo('alice', 'one', ctx);
    const a2 = await echo('alice', 'two', ctx);
    const b1 = await echo('bob', 'bobs', ctx);
    // A call resource of POST /tool/calls is no A2A task, even with the same correlation id and token.
    const rest = await postJson(`${gw.url}/tool/calls`, callBody('echo', { text: 'rest' }, { correlation_id: ctx }), {
      Authorization: `Bearer ${TOKENS.alice}`,
    });
    expect(rest.json.call_id, JSON.stringify(rest.json)).toEqual(expect.any(String));

    const alice = await rpc('ListTasks', { contextId: ctx }, { as: 'alice' });
    expect(alice.result).toMatchObject({ totalSize: 2, pageSize: 2, nextPageToken: '' });
    expect(alice.result.tasks.map((t: any) => t.id)).toEqual([a2.id, a1.id]);
    expect(alice.result.tasks[0]).not.toHaveProperty('artifacts');
    expect(alice.result.tasks[0]).toMatchObject({
      contextId: ctx,
      status: { state: 'TASK_STATE_COMPLETED' },
      metadata: { tool_name: 'echo' },
    });
    const times = alice.result.tasks.map((t: any) => Date.parse(t.status.timestamp));
    expect(times[0]).toBeGreaterThanOrEqual(times[1]);

    const bob = await rpc('ListTasks', { contextId: ctx }, { as: 'bob' });
    expect(bob.result.tasks.map((t: any) => t.id)).toEqual([b1.id]);

    const withArtifacts = await rpc('ListTasks', { contextId: ctx, includeArtifacts: true }, { as: 'alice' });
    expect(withArtifacts.result.tasks[0].artifacts[0].parts[0]).toEqual({
      data: { text: 'two' },
      mediaType: 'application/json',
    });
  });

  it('filters by contextId, status and statusTimestampAfter; an unknown context is an empty page', async () => {
    const ctx = `list-filter-${Date.now()}`;
    const done = await echo('alice', 'done', ctx);
    const since = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 5));
    const working = await startGated(`filter-${ctx}`, ctx);

    const byState = await rpc('ListTasks', { contextId: ctx, status: 'TASK_STATE_WORKING' }, { as: 'alice' });
    expect(byState.result.tasks.map((t: any) => t.id)).toEqual([working.id]);
    const completed = await rpc('ListTasks', { contextId: ctx, status: 'TASK_STATE_COMPLETED' }, { as: 'alice' });
    expect(completed.result.tasks.map((t: any) => t.id)).toEqual([done.id]);
    const after = await rpc('ListTasks', { contextId: ctx, statusTimestampAfter: since }, { as: 'alice' });
    expect(after.result.tasks.map((t: any) => t.id)).toEqual([working.id]);
    expect((await rpc('ListTasks', { contextId: `${ctx}-none` }, { as: 'alice' })).result).toEqual({
      tasks: [],
      nextPageToken: '',
      pageSize: 0,
      totalSize: 0,
    });

    gated.open(`filter-${ctx}`, 0);
    expect((await finished(working.id)).status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('pages with pageSize and nextPageToken, each task once, the last page with an empty token', async () => {
    const ctx = `list-pages-${Date.now()}`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.unshift((await echo('alice', `p${i}`, ctx)).id);
    const seen: string[] = [];
    let token = '';
    const pages: number[] = [];
    do {
      const page = await rpc(
        'ListTasks',
        { contextId: ctx, pageSize: 2, ...(token && { pageToken: token }) },
        { as: 'alice' },
      );
      expect(page.result.totalSize).toBe(5);
      pages.push(page.result.pageSize);
      seen.push(...page.result.tasks.map((t: any) => t.id));
      token = page.result.nextPageToken;
    } while (token);
    expect(pages).toEqual([2, 2, 1]);
    expect(seen).toEqual(ids);
  });

  it('history: the message that started the task; historyLength 0 leaves it out', async () => {
    const ctx = `list-history-${Date.now()}`;
    await echo('alice', 'remember me', ctx);
    const full = await rpc('ListTasks', { contextId: ctx }, { as: 'alice' });
    expect(full.result.tasks[0].history).toEqual([
      {
        messageId: 'm-remember me',
        role: 'ROLE_USER',
        parts: [{ text: 'remember me' }],
        taskId: full.result.tasks[0].id,
        contextId: ctx,
        metadata: { skillId: 'echo' },
      },
    ]);
    const none = await rpc('ListTasks', { contextId: ctx, historyLength: 0 }, { as: 'alice' });
    expect(none.result.tasks[0]).not.toHaveProperty('history');
  });

  it('refuses bad parameters with -32602 saying what they must be', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ pageSize: 0 }, /pageSize must be an integer from 1 to 100/],
      [{ pageSize: 101 }, /pageSize must be an integer from 1 to 100/],
      [{ pageSize: -1 }, /pageSize/],
      [{ pageToken: 'invalid-token-xyz' }, /pageToken is not a token this agent gave/],
      [{ status: 'INVALID_STATUS' }, /not a task state: use e\.g\. TASK_STATE_WORKING/],
      [{ statusTimestampAfter: '-1' }, /statusTimestampAfter must be an ISO 8601 time/],
      [{ historyLength: -1 }, /historyLength must be an integer of 0 or more/],
    ];
    for (const [params, message] of cases) {
      const res = await rpc('ListTasks', params, { as: 'alice' });
      expect(res.error, JSON.stringify(params)).toMatchObject({
        code: -32602,
        message: expect.stringMatching(message),
      });
    }
  });

  it('in 0.3 it is tasks/list, with 0.3 shapes', async () => {
    const ctx = `list-03-${Date.now()}`;
    const task = await echo('alice', 'old', ctx);
    const res = await rpc('tasks/list', { contextId: ctx, status: 'completed' }, { as: 'alice', dialect: '0.3' });
    expect(res.result.tasks).toHaveLength(1);
    expect(res.result.tasks[0]).toMatchObject({ kind: 'task', id: task.id, status: { state: 'completed' } });
    expect(res.result.tasks[0].history[0]).toMatchObject({
      kind: 'message',
      role: 'user',
      parts: [{ kind: 'text', text: 'old' }],
    });
  });
});

describe('a message naming a task (message.taskId)', () => {
  const followUp = (taskId: string, text = 'more') =>
    rpc(
      'SendMessage',
      {
        message: {
          messageId: `f-${taskId}-${text}`,
          taskId,
          role: 'ROLE_USER',
          parts: [{ text }],
          metadata: { skillId: 'echo' },
        },
      },
      { as: 'alice' },
    );
  const count = async () => (await rpc('ListTasks', {}, { as: 'alice' })).result.totalSize as number;

  it('an unknown task is not found (-32001) and starts nothing', async () => {
    const before = await count();
    const res = await followUp('no-such-task');
    expect(res.error).toMatchObject({
      code: -32001,
      message: expect.stringMatching(/task "no-such-task" not found: it was never started here/),
    });
    expect(await count()).toBe(before);
  });

  it('a finished task takes no more messages: UnsupportedOperation (-32004) with its state', async () => {
    const task = await echo('alice', 'first');
    const before = await count();
    const res = await followUp(task.id);
    expect(res.error).toMatchObject({ code: -32004, data: { id: task.id, state: 'completed' } });
    expect(res.error!.message).toMatch(
      /already completed and takes no more messages; send the message without message\.taskId to start a new task/,
    );
    expect(await count()).toBe(before);
  });

  it('a running task is refused too (a tool takes all its input when it starts), and runs on', async () => {
    const key = `follow-${Date.now()}`;
    const task = await startGated(key);
    const res = await followUp(task.id);
    expect(res.error).toMatchObject({ code: -32004, data: { id: task.id, state: 'working' } });
    expect(res.error!.message).toMatch(
      /still working: a tool takes all its input when it starts.*SubscribeToTask.*CancelTask/,
    );
    gated.open(key, 0);
    expect((await finished(task.id)).status.state).toBe('TASK_STATE_COMPLETED');
  });

  it("another token's task is not found, as if it did not exist", async () => {
    const task = await echo('alice', 'mine');
    const res = await rpc(
      'SendMessage',
      {
        message: {
          messageId: 'steal',
          taskId: task.id,
          role: 'ROLE_USER',
          parts: [{ text: 'x' }],
          metadata: { skillId: 'echo' },
        },
      },
      { as: 'bob' },
    );
    expect(res.error).toMatchObject({ code: -32001 });
  });
});

describe('GetExtendedAgentCard', () => {
  it("with auth: is advertised on the card and answers the caller's own card (the skills of its token), in both dialects", async () => {
    const card = await (await fetch(`${gw.url}/.well-known/agent-card.json`)).json();
    expect(card.capabilities.extendedAgentCard).toBe(true);
    expect(card.supportsAuthenticatedExtendedCard).toBe(true);
    expect(card.skills).toEqual([]); // no token

    const alice = await rpc('GetExtendedAgentCard', {}, { as: 'alice' });
    expect(alice.result.skills.map((s: any) => s.id).sort()).toEqual(['burst', 'echo', 'gated']);
    expect(alice.result.supportedInterfaces[0]).toMatchObject({ url: `${gw.url}/a2a`, protocolBinding: 'JSONRPC' });
    const bob = await rpc('agent/getAuthenticatedExtendedCard', {}, { as: 'bob', dialect: '0.3' });
    expect(bob.result.skills.map((s: any) => s.id)).toEqual(['echo']);
    expect(bob.result).toMatchObject({ name: card.name, url: `${gw.url}/a2a`, protocolVersion: '0.3.0' });
  });

  it('without auth: not advertised (the public card lists every skill) and answered with -32007', async () => {
    const card = await (await fetch(`${open.url}/.well-known/agent-card.json`)).json();
    expect(card.capabilities).not.toHaveProperty('extendedAgentCard');
    expect(card).not.toHaveProperty('supportsAuthenticatedExtendedCard');
    expect(card.skills.map((s: any) => s.id)).toContain('echo');
    for (const [method, dialect] of [
      ['GetExtendedAgentCard', '1.0'],
      ['agent/getAuthenticatedExtendedCard', '0.3'],
    ] as const) {
      const res = await rpc(method, {}, { url: open.url, dialect });
      expect(res.error, method).toMatchObject({
        code: -32007,
        message: expect.stringMatching(/no extended card: without auth .* already lists every skill/),
      });
    }
  });
});

describe('push notifications are not offered', () => {
  it('every push notification config method answers PushNotificationNotSupported (-32003), in both dialects', async () => {
    const v1 = [
      'CreateTaskPushNotificationConfig',
      'GetTaskPushNotificationConfig',
      'ListTaskPushNotificationConfigs',
      'DeleteTaskPushNotificationConfig',
    ];
    const v03 = [
      'tasks/pushNotificationConfig/set',
      'tasks/pushNotificationConfig/get',
      'tasks/pushNotificationConfig/list',
      'tasks/pushNotificationConfig/delete',
    ];
    for (const [methods, dialect] of [
      [v1, '1.0'],
      [v03, '0.3'],
    ] as const) {
      for (const method of methods) {
        const res = await rpc(method, { taskId: 'x', id: 'x' }, { as: 'alice', dialect });
        expect(res.error, method).toMatchObject({
          code: -32003,
          message: expect.stringMatching(/does not send push notifications/),
        });
      }
    }
  });
});

describe('SubscribeToTask and GetTask', () => {
  it('SubscribeToTask: an unknown task is not found (-32001); a finished one has nothing to follow (-32004 in 1.0)', async () => {
    expect((await rpc('SubscribeToTask', { id: 'no-such-task' }, { as: 'alice' })).error).toMatchObject({
      code: -32001,
    });
    expect(
      (await rpc('tasks/resubscribe', { id: 'no-such-task' }, { as: 'alice', dialect: '0.3' })).error,
    ).toMatchObject({ code: -32001 });
    const task = await echo('alice', 'over');
    const res = await rpc('SubscribeToTask', { id: task.id }, { as: 'alice' });
    expect(res.error).toMatchObject({
      code: -32004,
      data: { state: 'completed' },
      message: expect.stringMatching(/already completed.*GetTask/),
    });
    // 0.3 readers get the final task, then the end of the stream.
    const stream = await openSse(`${gw.url}/a2a`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKENS.alice}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/resubscribe', params: { id: task.id } }),
    });
    const items = (await stream.rest()).map((e) => e.json.result);
    expect(items.map((i) => [i.kind, i.status.state])).toEqual([['task', 'completed']]);
  });

  it('GetTask honours historyLength: the starting message (a data part for a tool of several parameters); 0 leaves it out', async () => {
    const key = `history-${Date.now()}`;
    const task = await startGated(key, 'ctx-history');
    gated.open(key, 0);
    await finished(task.id);
    const got = await rpc('GetTask', { id: task.id }, { as: 'alice' });
    // The status time is when the task finished, not when it is read.
    await new Promise((r) => setTimeout(r, 20));
    expect((await rpc('GetTask', { id: task.id }, { as: 'alice' })).result.status.timestamp).toBe(
      got.result.status.timestamp,
    );
    expect(got.result.history).toEqual([
      {
        messageId: `m-${key}`,
        role: 'ROLE_USER',
        parts: [{ data: { key, steps: 1 }, mediaType: 'application/json' }],
        taskId: task.id,
        contextId: 'ctx-history',
        metadata: { skillId: 'gated' },
      },
    ]);
    expect((await rpc('GetTask', { id: task.id, historyLength: 1 }, { as: 'alice' })).result.history).toHaveLength(1);
    expect((await rpc('GetTask', { id: task.id, historyLength: 0 }, { as: 'alice' })).result).not.toHaveProperty(
      'history',
    );
    expect((await rpc('GetTask', { id: task.id, historyLength: -2 }, { as: 'alice' })).error).toMatchObject({
      code: -32602,
    });
  });
});

describe('a2a_server.default_skill', () => {
  it('runs a message that names no skill; a named skill still wins; unset, such a message is refused', async () => {
    const plain = await rpc(
      'SendMessage',
      { message: { messageId: 'd1', role: 'ROLE_USER', parts: [{ text: 'hello' }] } },
      { url: open.url },
    );
    expect(plain.result.task).toMatchObject({
      status: { state: 'TASK_STATE_COMPLETED' },
      metadata: { tool_name: 'echo' },
    });
    expect(plain.result.task.artifacts[0].parts[0].data).toEqual({ text: 'hello' });
    const plain03 = await rpc(
      'message/send',
      { message: { kind: 'message', messageId: 'd2', role: 'user', parts: [{ kind: 'text', text: 'hi' }] } },
      { url: open.url, dialect: '0.3' },
    );
    expect(plain03.result).toMatchObject({
      kind: 'task',
      status: { state: 'completed' },
      metadata: { tool_name: 'echo' },
    });
    const named = await rpc(
      'SendMessage',
      {
        message: {
          messageId: 'd3',
          role: 'ROLE_USER',
          parts: [{ data: { count: 1 } }],
          metadata: { skillId: 'burst' },
        },
      },
      { url: open.url },
    );
    expect(named.result.task.metadata.tool_name).toBe('burst');

    const unset = await rpc(
      'SendMessage',
      { message: { messageId: 'd4', role: 'ROLE_USER', parts: [{ text: 'hello' }] } },
      { as: 'alice' },
    );
    expect(unset.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/does not say which skill to run.*a2a_server\.default_skill/),
    });
  });
});

describe('a message missing what every A2A message must have', () => {
  it('is invalid params (-32602) saying what is missing, and starts no task', async () => {
    const before = (await rpc('ListTasks', {}, { url: open.url })).result.totalSize;
    const cases: [Record<string, unknown>, '1.0' | '0.3', RegExp][] = [
      [{ messageId: 'e1', role: 'ROLE_USER', parts: [] }, '1.0', /non-empty "parts" array/],
      [{ role: 'ROLE_USER', parts: [{ text: 'x' }] }, '1.0', /must have a "messageId"/],
      [{ messageId: 'e2', parts: [{ text: 'x' }] }, '1.0', /must have a "role": "ROLE_USER"/],
      [
        { messageId: 'e3', role: 'ROLE_USER', parts: [{ type: 'unsupported_type' }] },
        '1.0',
        /parts\[0\] must hold one of "text", "data"/,
      ],
      [
        { kind: 'message', messageId: 'e4', role: 'user', parts: [{ type: 'unsupported_type', text: 'x' }] },
        '0.3',
        /parts\[0\] must have "kind": "text", "file" or "data"/,
      ],
      [{ kind: 'message', messageId: 'e5', parts: [{ kind: 'text', text: 'x' }] }, '0.3', /must have a "role": "user"/],
    ];
    for (const [message, dialect, why] of cases) {
      const res = await rpc(
        dialect === '1.0' ? 'SendMessage' : 'message/send',
        { message },
        { url: open.url, dialect },
      );
      expect(res.error, JSON.stringify(message)).toMatchObject({ code: -32602, message: expect.stringMatching(why) });
    }
    expect((await rpc('ListTasks', {}, { url: open.url })).result.totalSize).toBe(before);
  });
});

describe('errors for a client that reads an event stream', () => {
  it('a request accepting only text/event-stream gets its JSON-RPC error as one SSE event; other requests get JSON', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 'sub-1',
      method: 'SubscribeToTask',
      params: { id: 'no-such-task' },
    });
    const stream = await openSse(`${gw.url}/a2a`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'text/event-stream',
        Authorization: `Bearer ${TOKENS.alice}`,
        ...V1,
      },
      body,
    });
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await stream.rest()).map((e) => e.json);
    expect(events).toEqual([
      {
        jsonrpc: '2.0',
        id: 'sub-1',
        error: {
          code: -32001,
          message: expect.stringMatching(/task "no-such-task" not found: it was never started here/),
          data: { id: 'no-such-task' },
        },
      },
    ]);

    const json = await fetch(`${gw.url}/a2a`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${TOKENS.alice}`,
        ...V1,
      },
      body,
    });
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await json.json()).error.code).toBe(-32001);
  });
});
