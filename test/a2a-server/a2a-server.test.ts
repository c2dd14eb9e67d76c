/**
 * The gateway as an A2A agent, driven by the official @a2a-js/sdk client
 * (ClientFactory from the card URL) in A2A 1.0 and in its v0.3 compatibility
 * mode; and two gateways federated through A2A (B's `agents` config points
 * at A's card).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role, TaskState, type Message, type Part, type Task } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { ToolError, ToolOutput, type ToolContext } from '../../src/index.js';
import { gateMap, gatedPlugin, type GateControl } from '../helpers/gated.js';
import { definePlugin, sleep } from '../helpers/plugins.js';
import { waitFor } from '../helpers/a2a-stub.js';
import { sample, scrape } from '../helpers/metrics.js';
import { callBody, openSse, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * `steps`: for each of 3 steps, a status event and an artifact chunk, then
 * waits for the test to open gate (key, i). Takes one required string
 * (`key`), so plain text reaches it too. Plus the three stub behaviours.
 */
function a2aTestPlugin() {
  const gate = gateMap();
  const finishedAt = new Map<string, number>();
  const plugin = definePlugin('a2a-test', [
    [
      {
        name: 'steps',
        description: 'Three steps, each a status event and an artifact chunk, each waiting for the test',
        input_parameters: [
          { name: 'key', type: 'string', description: 'Names this call for the test', required: true },
        ],
      },
      async (args, ctx: ToolContext) => {
        const key = String(args.key);
        for (let i = 0; i < 3; i++) {
          ctx.emit('status', { message: `step ${i}` });
          ctx.emit('artifact', { name: 'log.txt', mime: 'text/plain', chunk: `chunk ${i};`, final: i === 2 });
          await Promise.race([
            gate(key, i).promise,
            new Promise((_, reject) =>
              ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true }),
            ),
          ]);
        }
        finishedAt.set(key, performance.now());
        return new ToolOutput({ data: { key, steps: 3 }, summary: `${key}: 3 steps` });
      },
    ],
    [
      {
        name: 'instant',
        description: 'Completes at once',
        input_parameters: [{ name: 'task', type: 'string', description: 'Anything', required: true }],
      },
      (args) => ({ done: args.task }),
    ],
    [
      {
        name: 'slow',
        description: 'Takes 300 ms',
        input_parameters: [{ name: 'task', type: 'string', description: 'Anything', required: true }],
      },
      async (args, ctx: ToolContext) => {
        await sleep(300, ctx.signal);
        return { done: args.task };
      },
    ],
    [
      {
        name: 'broken',
        description: 'Fails',
        input_parameters: [{ name: 'task', type: 'string', description: 'Anything', required: true }],
      },
      () => {
        throw new ToolError('diff would not apply');
      },
    ],
  ]);
  return {
    plugin,
    open: (key: string, i: number) => gate(key, i).resolve(),
    finishedAt: (key: string) => finishedAt.get(key),
  };
}

// ---------------------------------------------------------------- SDK client helpers

type Mode = '1.0' | '0.3';

const dataPart = (value: Record<string, unknown>): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
});
const textPart = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

function message(parts: Part[], skillId?: string): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts,
    metadata: skillId === undefined ? undefined : { skillId },
    extensions: [],
    referenceTaskIds: [],
  };
}

const request = (msg: Message, returnImmediately = false) => ({
  tenant: '',
  message: msg,
  configuration: {
    acceptedOutputModes: [],
    taskPushNotificationConfig: undefined,
    historyLength: undefined,
    returnImmediately,
  },
  metadata: undefined,
});

const asTask = (result: unknown): Task => {
  expect(result).toHaveProperty('status');
  return result as Task;
};

/** The data and text of a task's artifact `name`. */
function artifactOf(task: Task, name: string): { data: unknown[]; text: string } {
  const a = task.artifacts.find((x) => x.name === name);
  expect(a, `artifact "${name}" in ${JSON.stringify(task.artifacts.map((x) => x.name))}`).toBeDefined();
  const data = a!.parts.flatMap((p) => (p.content?.$case === 'data' ? [p.content.value] : []));
  const text = a!.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
  return { data, text };
}

const statusText = (task: Task) =>
  task.status?.message?.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('') ?? '';

interface SdkClient {
  client: Client;
  /** JSON-RPC methods sent, with the A2A-Version header each carried. */
  sent: { method: string; version: string | null }[];
}

/**
 * A client made the way an application makes one: ClientFactory from the
 * card URL. In 0.3 mode the SDK's v0.3 compatibility layer is on and the
 * card is read as a 0.3 client reads it (url, preferredTransport,
 * protocolVersion; no 1.0 supportedInterfaces), so it speaks 0.3.
 */
async function sdkClient(url: string, mode: Mode, token?: string): Promise<SdkClient> {
  const sent: SdkClient['sent'] = [];
  const fetchImpl: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    if (token) headers.set('Authorization', `Bearer ${token}`);
    if (typeof init?.body === 'string')
      sent.push({ method: JSON.parse(init.body).method, version: headers.get('a2a-version') });
    const res = await fetch(input, { ...init, headers });
    if (mode === '1.0' || !String(input).endsWith('/.well-known/agent-card.json')) return res;
    const { supportedInterfaces: _v1, securityRequirements: _v1s, ...legacy } = await res.json();
    return new Response(JSON.stringify(legacy), {
      status: res.status,
      headers: { 'content-type': 'application/json' },
    });
  };
  const legacyCompat = { enabled: mode === '0.3' };
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl, legacyCompat }),
  });
  // A card URL is used as it is; a base URL gets the well-known path (from its origin, as the SDK resolves it).
  return { client: await (url.endsWith('.json') ? factory.createFromUrl(url, '') : factory.createFromUrl(url)), sent };
}

/** The error an SDK call throws, with the JSON-RPC code and data the gateway sent. */
async function rpcFailure(p: Promise<unknown>): Promise<{ message: string; code: number | undefined; data: any }> {
  const err: any = await p.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  return { message: String(err.message), code: err.envelopeCode ?? err.errorResponse?.error?.code, data: err.data };
}

// ---------------------------------------------------------------- the gateway

const TOKENS = { full: 'full-secret', limited: 'limited-secret' };
let gw: TestGateway;
let authGw: TestGateway;
let gated: GateControl;
let test: ReturnType<typeof a2aTestPlugin>;
const auditPath = join(mkdtempSync(join(tmpdir(), 'a2a-server-')), 'audit.jsonl');
/** The audit file's records so far. */
async function auditRecords(): Promise<
  { tool_name: string; door?: string; success: boolean; error_code: string | null }[]
> {
  await gw.gateway.security.auditFile!.flush();
  return readFileSync(auditPath, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}

beforeAll(async () => {
  gated = gatedPlugin();
  test = a2aTestPlugin();
  gw = await startGateway({
    config: { a2a_server: { name: 'Gateway A', description: 'Tools of gateway A' }, audit: { path: auditPath } },
    plugins: [gated.plugin, test.plugin],
  });
  authGw = await startGateway({
    config: {
      a2a_server: { name: 'Guarded gateway' },
      auth: {
        tokens: [
          { name: 'full', token_sha256: sha256(TOKENS.full) },
          {
            name: 'limited',
            token_sha256: sha256(TOKENS.limited),
            deny: ['gated', 'steps', 'slow', 'broken', 'instant', 'burst'],
          },
        ],
      },
    },
    plugins: [gatedPlugin().plugin, a2aTestPlugin().plugin],
  });
});
afterAll(async () => {
  await gw?.close();
  await authGw?.close();
});

describe('the agent card', () => {
  it('is served at /.well-known/agent-card.json with 1.0 and 0.3 fields and one skill per tool', async () => {
    const res = await fetch(`${gw.url}/.well-known/agent-card.json`);
    expect(res.status).toBe(200);
    const card = await res.json();
    const endpoint = `${gw.url}/a2a`;
    expect(card).toMatchObject({
      name: 'Gateway A',
      description: 'Tools of gateway A',
      capabilities: { streaming: true },
      supportedInterfaces: [
        { url: endpoint, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: endpoint, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      ],
      url: endpoint,
      preferredTransport: 'JSONRPC',
      protocolVersion: '0.3.0',
    });
    expect(card.securitySchemes).toBeUndefined();
    const tools = (await postJson(`${gw.url}/tool/list`, {})).json.tools.map((t: any) => t.name);
    expect(card.skills.map((s: any) => s.id)).toEqual(tools);
    expect(card.skills.find((s: any) => s.id === 'echo')).toMatchObject({
      name: 'echo',
      description: 'Echo the given text back',
      tags: ['test', 'text'],
    });
  });

  it('with auth: says bearer, lists no skill without a token, and only the allowed ones for a token', async () => {
    const card = async (token?: string) => {
      const res = await fetch(`${authGw.url}/.well-known/agent-card.json`, {
        headers: token ? { Authorization: `Bearer ${token}` } : {},
      });
      return { status: res.status, json: await res.json() };
    };
    const anonymous = await card();
    expect(anonymous.status).toBe(200);
    expect(anonymous.json.skills).toEqual([]);
    expect(anonymous.json.securitySchemes.bearer).toMatchObject({
      type: 'http',
      scheme: 'bearer',
      httpAuthSecurityScheme: { scheme: 'Bearer' },
    });
    expect((await card(TOKENS.full)).json.skills.map((s: any) => s.id)).toEqual([
      'echo',
      'gated',
      'burst',
      'steps',
      'instant',
      'slow',
      'broken',
    ]);
    expect((await card(TOKENS.limited)).json.skills.map((s: any) => s.id)).toEqual(['echo']);
    expect((await card('wrong-token')).status).toBe(401);
    // The endpoint itself needs the token.
    const rpc = await postJson(`${authGw.url}/a2a`, { jsonrpc: '2.0', id: 1, method: 'message/send', params: {} });
    expect(rpc.status).toBe(401);
  });
});

describe.each(['1.0', '0.3'] as const)('the official SDK client in A2A %s', (mode) => {
  const methods =
    mode === '1.0'
      ? { send: 'SendMessage', stream: 'SendStreamingMessage', get: 'GetTask', cancel: 'CancelTask' }
      : { send: 'message/send', stream: 'message/stream', get: 'tasks/get', cancel: 'tasks/cancel' };
  const version = mode;
  let sdk: SdkClient;
  beforeAll(async () => {
    sdk = await sdkClient(gw.url, mode);
  });

  it('discovers the card from the gateway URL', async () => {
    const card = await sdk.client.getAgentCard();
    expect(card.name).toBe('Gateway A');
    expect(card.skills.map((s) => s.id)).toContain('echo');
    expect(sdk.client.protocolVersion).toBe(mode === '1.0' ? '1.0' : '0.3');
  });

  it('a blocking send runs the tool and answers with the completed task and its result artifact', async () => {
    const before = sdk.sent.length;
    const task = asTask(await sdk.client.sendMessage(request(message([dataPart({ text: 'hello' })], 'echo'))));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(artifactOf(task, 'result')).toEqual({ data: [{ text: 'hello' }], text: '{"text":"hello"}' });
    expect(sdk.sent.slice(before)).toEqual([{ method: methods.send, version }]);
    // The task stays readable.
    const again = await sdk.client.getTask({ tenant: '', id: task.id, historyLength: undefined });
    expect(again.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(again.metadata).toMatchObject({ tool_name: 'echo' });
    // Audited like any call, with the door.
    expect(
      (await auditRecords()).filter((r) => r.tool_name === 'echo' && r.door === 'a2a' && r.success).length,
    ).toBeGreaterThan(0);
  });

  it('a data part {tool_name, arguments} names the tool, and text reaches a tool with one required string', async () => {
    const byData = asTask(
      await sdk.client.sendMessage(
        request(message([dataPart({ tool_name: 'echo', arguments: { text: 'via data' } })])),
      ),
    );
    expect(artifactOf(byData, 'result').data).toEqual([{ text: 'via data' }]);
    const byText = asTask(await sdk.client.sendMessage(request(message([textPart('plain words')], 'echo'))));
    expect(artifactOf(byText, 'result').data).toEqual([{ text: 'plain words' }]);
  });

  it('a streaming send delivers status and artifact updates while the tool runs, then the result', async () => {
    const key = `stream-${mode}`;
    const before = sdk.sent.length;
    const received: {
      at: number;
      kind: string;
      text: string;
      state?: TaskState;
      append?: boolean;
      lastChunk?: boolean;
    }[] = [];
    for await (const ev of sdk.client.sendMessageStream(request(message([dataPart({ key })], 'steps')))) {
      const p = ev.payload!;
      const at = performance.now();
      if (p.$case === 'task') received.push({ at, kind: 'task', text: '', state: p.value.status?.state });
      else if (p.$case === 'statusUpdate') {
        const text =
          p.value.status?.message?.parts.map((x) => (x.content?.$case === 'text' ? x.content.value : '')).join('') ??
          '';
        received.push({ at, kind: 'status', text, state: p.value.status?.state });
      } else if (p.$case === 'artifactUpdate') {
        const a = p.value.artifact!;
        const text = a.parts
          .map((x) =>
            x.content?.$case === 'text'
              ? x.content.value
              : x.content?.$case === 'data'
                ? JSON.stringify(x.content.value)
                : '',
          )
          .join('|');
        received.push({ at, kind: `artifact:${a.name}`, text, append: p.value.append, lastChunk: p.value.lastChunk });
        // The tool waits at gate i until its chunk i has arrived here: the updates cannot be a replay at the end.
        const m = /^chunk (\d);$/.exec(text);
        if (m) test.open(key, Number(m[1]));
      }
    }
    expect(sdk.sent.slice(before)).toEqual([{ method: methods.stream, version }]);
    expect(received.map((r) => [r.kind, r.text])).toEqual([
      ['task', ''],
      ['status', 'step 0'],
      ['artifact:log.txt', 'chunk 0;'],
      ['status', 'step 1'],
      ['artifact:log.txt', 'chunk 1;'],
      ['status', 'step 2'],
      ['artifact:log.txt', 'chunk 2;'],
      ['artifact:result', `{"key":"${key}","steps":3}|${key}: 3 steps`],
      ['status', ''],
    ]);
    expect(received[0]!.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(received.filter((r) => r.kind === 'artifact:log.txt').map((r) => [r.append, r.lastChunk])).toEqual([
      [false, false],
      [true, false],
      [true, true],
    ]);
    expect(received.at(-1)!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // Arrival times: every step's updates arrived before the tool finished.
    const finished = test.finishedAt(key)!;
    for (const r of received.slice(0, 7)) expect(r.at).toBeLessThan(finished);
  });

  it('a non-blocking send answers at once with a working task; GetTask follows it to the end', async () => {
    const key = `poll-${mode}`;
    const before = sdk.sent.length;
    const task = asTask(await sdk.client.sendMessage(request(message([dataPart({ key, steps: 2 })], 'gated'), true)));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    await waitFor('the tool to start', () => gated.emittedAt(key).length === 1);
    const running = await sdk.client.getTask({ tenant: '', id: task.id, historyLength: undefined });
    expect(running.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(statusText(running)).toBe('step 0 (0%)');
    gated.open(key, 0);
    gated.open(key, 1);
    let done: Task | undefined;
    await waitFor('the task to complete', async () => {
      done = await sdk.client.getTask({ tenant: '', id: task.id, historyLength: undefined });
      return done.status?.state === TaskState.TASK_STATE_COMPLETED;
    });
    expect(artifactOf(done!, 'result').data).toEqual([{ key, steps: 2 }]);
    expect(sdk.sent.slice(before).map((s) => s.method)).toEqual([
      methods.send,
      ...Array(sdk.sent.length - before - 1).fill(methods.get),
    ]);
  });

  it('SubscribeToTask follows a running task: the task as it is, then its updates, then the result', async () => {
    const key = `subscribe-${mode}`;
    const task = asTask(await sdk.client.sendMessage(request(message([dataPart({ key })], 'steps'), true)));
    const before = sdk.sent.length;
    const seen: string[] = [];
    for await (const ev of sdk.client.resubscribeTask({ tenant: '', id: task.id })) {
      const p = ev.payload!;
      if (p.$case === 'task') {
        seen.push(`task ${p.value.id === task.id}`);
        test.open(key, 0); // the tool waits at its first gate until the subscription is open
      } else if (p.$case === 'statusUpdate') seen.push(`status ${p.value.status?.state}`);
      else if (p.$case === 'artifactUpdate') {
        const text = p.value.artifact!.parts.map((x) => (x.content?.$case === 'text' ? x.content.value : '')).join('');
        seen.push(`artifact ${p.value.artifact!.name}`);
        const m = /^chunk (\d);$/.exec(text);
        if (m) test.open(key, Number(m[1]));
      }
    }
    expect(sdk.sent.slice(before).map((x) => x.method)).toEqual([
      mode === '1.0' ? 'SubscribeToTask' : 'tasks/resubscribe',
    ]);
    // Step 0 came before the subscription; steps 1 and 2 and the result came through it.
    expect(seen).toEqual([
      'task true',
      `status ${TaskState.TASK_STATE_WORKING}`,
      'artifact log.txt',
      `status ${TaskState.TASK_STATE_WORKING}`,
      'artifact log.txt',
      'artifact result',
      `status ${TaskState.TASK_STATE_COMPLETED}`,
    ]);
  });

  it('cancel stops a running task: the tool is aborted and the task is canceled', async () => {
    const key = `cancel-${mode}`;
    const task = asTask(await sdk.client.sendMessage(request(message([dataPart({ key, steps: 3 })], 'gated'), true)));
    await waitFor('the tool to start', () => gated.emittedAt(key).length === 1);
    const canceled = await sdk.client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(await gated.aborted(key)).toBe('tool "gated" was canceled');
    expect((await sdk.client.getTask({ tenant: '', id: task.id, historyLength: undefined })).status?.state).toBe(
      TaskState.TASK_STATE_CANCELED,
    );
    // A finished task cannot be canceled again.
    const again = await rpcFailure(sdk.client.cancelTask({ tenant: '', id: task.id, metadata: undefined }));
    expect(again.message).toMatch(/already canceled; only a working task can be canceled/);
    const unknown = await rpcFailure(sdk.client.getTask({ tenant: '', id: 'no-such-task', historyLength: undefined }));
    expect(unknown.code).toBe(-32001);
  });

  it('invalid arguments are a JSON-RPC invalid-params error (-32602) with the problems', async () => {
    const err = await rpcFailure(sdk.client.sendMessage(request(message([dataPart({ text: 5 })], 'echo'))));
    expect(err.code).toBe(-32602);
    expect(err.message).toMatch(/invalid arguments for tool "echo": arguments\.text: expected string/);
    expect(err.data?.problems?.[0]).toMatchObject({ path: 'arguments.text' });
    const noData = await rpcFailure(sdk.client.sendMessage(request(message([textPart('two params')], 'gated'))));
    expect(noData.code).toBe(-32602);
    expect(noData.message).toMatch(
      /"gated" takes key \(string, required\), steps \(integer, required\): send its arguments as a data part/,
    );
  });

  it('an unknown skill is "method not found" (-32601) listing the skills; a message naming none is refused the same way', async () => {
    const err = await rpcFailure(sdk.client.sendMessage(request(message([dataPart({})], 'no_such_tool'))));
    expect(err.code).toBe(-32601);
    expect(err.message).toMatch(/no tool named "no_such_tool"\. This agent's skills: "echo", "gated"/);
    expect(err.data?.skills).toContain('echo');
    const unnamed = await rpcFailure(sdk.client.sendMessage(request(message([textPart('do something')]))));
    expect(unnamed.code).toBe(-32602);
    expect(unnamed.message).toMatch(/does not say which skill to run: set message.metadata.skillId to one of "echo"/);
  });

  it('a token that may not call a tool is refused it, and sees only what it may call', async () => {
    const limited = await sdkClient(authGw.url, mode, TOKENS.limited);
    expect((await limited.client.getAgentCard()).skills.map((s) => s.id)).toEqual(['echo']);
    const ok = asTask(await limited.client.sendMessage(request(message([textPart('allowed')], 'echo'))));
    expect(ok.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const denied = await rpcFailure(limited.client.sendMessage(request(message([textPart('x')], 'instant'))));
    expect(denied.message).toMatch(/tool "instant" is not allowed/);
    expect(denied.data).toMatchObject({ code: 'tool_denied' });
    // Another token's task is not visible.
    const full = await sdkClient(authGw.url, mode, TOKENS.full);
    const theirs = asTask(await full.client.sendMessage(request(message([textPart('mine')], 'instant'))));
    expect(
      (await rpcFailure(limited.client.getTask({ tenant: '', id: theirs.id, historyLength: undefined }))).code,
    ).toBe(-32001);
  });

  it.each([
    ['instant', TaskState.TASK_STATE_COMPLETED, 0],
    ['slow', TaskState.TASK_STATE_COMPLETED, 300],
    ['broken', TaskState.TASK_STATE_FAILED, 0],
  ] as const)('the "%s" tool ends %s', async (tool, state, atLeastMs) => {
    const started = performance.now();
    const task = asTask(await sdk.client.sendMessage(request(message([textPart('go')], tool))));
    expect(task.status?.state).toBe(state);
    expect(performance.now() - started).toBeGreaterThanOrEqual(atLeastMs - 5);
    if (state === TaskState.TASK_STATE_FAILED) {
      expect(statusText(task)).toBe('diff would not apply');
      expect(task.artifacts).toEqual([]);
    } else {
      expect(artifactOf(task, 'result').data).toEqual([{ done: 'go' }]);
    }
    // The same through a stream: the last update carries the final state.
    const states: (TaskState | undefined)[] = [];
    for await (const ev of sdk.client.sendMessageStream(request(message([textPart('go')], tool)))) {
      if (ev.payload?.$case === 'statusUpdate') states.push(ev.payload.value.status?.state);
    }
    expect(states.at(-1)).toBe(state);
  });
});

describe('on the wire', () => {
  const rpc = (method: string, params: unknown, headers: Record<string, string> = {}) =>
    postJson(`${gw.url}/a2a`, { jsonrpc: '2.0', id: 'r1', method, params }, headers);

  it('0.3 shapes: kind tags, lower-case states, `final` on the last status update; log events go in status metadata', async () => {
    const stream = await openSse(`${gw.url}/a2a`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'message/stream',
        params: {
          message: {
            kind: 'message',
            messageId: 'w1',
            contextId: 'ctx-1',
            role: 'user',
            parts: [{ kind: 'data', data: { count: 2 } }],
            metadata: { skillId: 'burst' },
          },
        },
      }),
    });
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const items = (await stream.rest()).map((e) => e.json);
    expect(items.every((i) => i.jsonrpc === '2.0' && i.id === 7)).toBe(true);
    const results = items.map((i) => i.result);
    expect(results.map((r) => [r.kind, r.status?.state ?? null, r.final ?? null])).toEqual([
      ['task', 'working', null],
      ['status-update', 'working', false],
      ['status-update', 'working', false],
      ['artifact-update', null, null],
      ['status-update', 'completed', true],
    ]);
    expect(results[0]).toMatchObject({ contextId: 'ctx-1', history: [] });
    expect(results[1].metadata).toMatchObject({ event: 'log', seq: 0, level: 'info', message: 'line 0' });
    expect(results[1].status.message).toBeUndefined();
    expect(results[3].artifact.parts).toEqual([
      { kind: 'data', data: { count: 2 } },
      { kind: 'text', text: '{"count":2}' },
    ]);
  });

  it('a task past its timeout (metadata.timeout) is canceled, saying so', async () => {
    const key = 'timeout';
    const sent = await rpc(
      'SendMessage',
      {
        message: {
          messageId: 'w2',
          role: 'ROLE_USER',
          parts: [{ data: { key, steps: 2 } }],
          metadata: { skillId: 'gated', timeout: 1 },
        },
      },
      { 'A2A-Version': '1.0' },
    );
    expect(sent.json.result.task.status.state).toBe('TASK_STATE_CANCELED');
    expect(sent.json.result.task.status.message.parts[0].text).toMatch(/timed out after 1 s and was stopped/);
    expect(await gated.aborted(key)).toMatch(/timed out/);
  });

  it("protocol errors: not JSON, not JSON-RPC, the other dialect's method, a missing message", async () => {
    const notJson = await postJson(`${gw.url}/a2a`, '{oops');
    expect(notJson.json.error).toMatchObject({ code: -32700 });
    expect((await postJson(`${gw.url}/a2a`, { method: 'x' })).json.error).toMatchObject({
      code: -32600,
      message: expect.stringMatching(/"jsonrpc": "2.0"/),
    });
    const wrongDialect = await rpc('message/send', {}, { 'A2A-Version': '1.0' });
    expect(wrongDialect.json).toMatchObject({ id: 'r1', error: { code: -32601 } });
    expect(wrongDialect.json.error.message).toMatch(
      /"message\/send" is the A2A 0.3 name; with A2A-Version: 1.0 the methods are SendMessage/,
    );
    expect((await rpc('message/send', { message: {} })).json.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/"parts" array/),
    });
  });
});

describe('gateway → gateway', () => {
  let b: TestGateway;
  beforeAll(async () => {
    b = await startGateway({ config: { agents: { a: { card: gw.url, poll_ms: 50 } } } });
  });
  afterAll(async () => {
    await b?.close();
  });

  it("A's tools are B's A2A-backed tools; a call goes through both", async () => {
    const list = await postJson(`${b.url}/tool/list`, { filter_kind: 'a2a' });
    const names = list.json.tools.map((t: any) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'Gateway_A_echo',
        'Gateway_A_steps',
        'Gateway_A_instant',
        'Gateway_A_slow',
        'Gateway_A_broken',
      ]),
    );
    expect(list.json.tools.find((t: any) => t.name === 'Gateway_A_echo')).toMatchObject({
      kind: 'a2a',
      toolkit: 'Gateway A',
    });
    const agents = await (await fetch(`${b.url}/agents`)).json();
    expect(agents.agents[0]).toMatchObject({
      name: 'a',
      state: 'ok',
      dialect: '1.0',
      streaming: true,
      endpoint: `${gw.url}/a2a`,
    });

    const res = await postJson(`${b.url}/tool/call`, callBody('Gateway_A_echo', { task: 'across' }));
    expect(res.json.data).toMatchObject({ success: true, data: { output: '{"text":"across"}', state: 'completed' } });
    // A ran its own echo with the text as its one required string parameter.
    expect((await auditRecords()).some((r) => r.tool_name === 'echo' && r.door === 'a2a' && r.success)).toBe(true);
  });

  it("events of a call on A arrive at B's caller while A's tool runs", async () => {
    const key = 'federated';
    const stream = await openSse(`${b.url}/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(callBody('Gateway_A_steps', { task: key }, { streaming: true })),
    });
    const seen: string[] = [];
    for (;;) {
      const ev = await stream.next();
      if (!ev) break;
      if (ev.event !== 'tool/event') {
        seen.push(ev.event ?? '');
        expect(ev.json.data).toMatchObject({ success: true, data: { state: 'completed' } });
        expect(ev.json.data.data.output).toContain(`${key}: 3 steps`);
        continue;
      }
      const { kind, data } = ev.json;
      seen.push(kind === 'artifact' ? `artifact ${data.name}: ${data.chunk}` : `${kind}: ${data.message}`);
      const m = kind === 'artifact' && /^chunk (\d);$/.exec(data.chunk);
      if (m) test.open(key, Number(m[1])); // A's tool waits for its chunk to reach B's caller
    }
    expect(seen).toEqual(
      expect.arrayContaining([
        'status: a: task working: step 0',
        'artifact log.txt: chunk 0;',
        'artifact log.txt: chunk 2;',
        'tool/call/resp',
      ]),
    );
    expect(seen.indexOf('artifact log.txt: chunk 0;')).toBeLessThan(seen.indexOf('artifact log.txt: chunk 1;'));
  });

  it.each([
    ['instant', true, 'completed'],
    ['slow', true, 'completed'],
    ['broken', false, undefined],
  ] as const)('A\'s "%s" tool through B', async (tool, success, state) => {
    const res = await postJson(`${b.url}/tool/call`, callBody(`Gateway_A_${tool}`, { task: 'go' }));
    expect(res.json.data.success).toBe(success);
    if (success) expect(res.json.data.data).toMatchObject({ output: '{"done":"go"}', state });
    else expect(res.json.data.error).toMatch(/diff would not apply/);
  });
});

describe('the same gate as the REST routes', () => {
  it('Host and Origin are checked; a refused call attempt is audited with door "a2a"; calls are counted in /metrics', async () => {
    const body = {
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: {
        message: {
          kind: 'message',
          messageId: 'm',
          role: 'user',
          parts: [{ kind: 'text', text: 'x' }],
          metadata: { skillId: 'echo' },
        },
      },
    };
    const foreign = await postJson(`${gw.url}/a2a`, body, { Origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.json.message).toMatch(/origin "https:\/\/evil.example" is not allowed/);
    const { request: raw } = await import('node:http');
    const badHost = await new Promise<number>((resolve, reject) => {
      const r = raw(
        `${gw.url}/a2a`,
        { method: 'POST', headers: { Host: 'attacker.example', 'Content-Type': 'application/json' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      r.on('error', reject);
      r.end(JSON.stringify(body));
    });
    expect(badHost).toBe(403);
    const records = await auditRecords();
    expect(records.filter((r) => r.door === 'a2a' && r.error_code === 'forbidden' && r.tool_name === '').length).toBe(
      2,
    );

    const before = sample(await scrape(gw.url), 'a2e_tool_calls_total', { tool: 'echo', outcome: 'success' }) ?? 0;
    expect((await postJson(`${gw.url}/a2a`, body)).json.result.status.state).toBe('completed');
    expect(sample(await scrape(gw.url), 'a2e_tool_calls_total', { tool: 'echo', outcome: 'success' })).toBe(before + 1);
  });

  it('under server.base_path the card and the endpoint move with it', async () => {
    const based = await startGateway({
      config: { server: { base_path: '/gw' }, a2a_server: { path: '/agent' } },
      plugins: [gatedPlugin().plugin],
    });
    try {
      const origin = new URL(based.url).origin;
      const card = await (await fetch(`${origin}/gw/.well-known/agent-card.json`)).json();
      expect(card.url).toBe(`${origin}/gw/agent`);
      const sdk = await sdkClient(`${origin}/gw/.well-known/agent-card.json`, '1.0');
      const task = asTask(await sdk.client.sendMessage(request(message([textPart('based')], 'echo'))));
      expect(artifactOf(task, 'result').data).toEqual([{ text: 'based' }]);
      expect((await fetch(`${origin}/.well-known/agent-card.json`)).status).toBe(404);
    } finally {
      await based.close();
    }
  });

  it('a2a_server.enabled: false serves neither the card nor the endpoint', async () => {
    const off = await startGateway({ config: { a2a_server: { enabled: false } }, plugins: [gatedPlugin().plugin] });
    try {
      expect((await fetch(`${off.url}/.well-known/agent-card.json`)).status).toBe(404);
      expect((await postJson(`${off.url}/a2a`, {})).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});
