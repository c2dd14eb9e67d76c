/**
 * a2a.max_message_bytes: an A2A agent's answer (a card, a JSON-RPC answer,
 * one event of a stream) over the limit fails that call or card fetch,
 * saying so, before it is buffered whole; the agent's next, smaller answer
 * is read as usual. Against hand-written peers on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rpcError, rpcResult, startStub, type Stub, type StubRequest } from '../helpers/a2a-stub.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const CARD = '/.well-known/agent-card.json';
const MiB = 1024 * 1024;
const LIMIT = MiB;

const card = (name: string, streaming: boolean, pad = '') => ({
  name,
  description: pad,
  skills: [{ id: 'go', description: 'go skill' }],
  capabilities: { streaming },
});
/** The text the peer answers `task` with: "big:N" asks for N characters. */
const answerText = (task: string) => (task.startsWith('big:') ? 'x'.repeat(Number(task.slice(4))) : `done ${task}`);
const taskOf = (r: StubRequest): string => r.rpc?.params?.message?.parts?.[0]?.text ?? '';
const completed = (id: string, text: string) => ({
  task: { id, status: { state: 'TASK_STATE_COMPLETED' }, artifacts: [{ parts: [{ text }] }] },
});

describe('A2A answers over a2a.max_message_bytes', () => {
  let streaming: Stub;
  let plain: Stub;
  let bigCard: Stub;
  let gw: TestGateway;
  let n = 0;

  beforeAll(async () => {
    streaming = await startStub((r) => {
      if (r.path === CARD) return { json: card('streamer', true) };
      if (r.rpc?.method !== 'SendStreamingMessage') return rpcError(r, -32601, 'method not found');
      const id = `s${++n}`;
      const event = (result: unknown) => ({ jsonrpc: '2.0', id: r.rpc?.id ?? null, result });
      return {
        sse: [
          event({ task: { id, status: { state: 'TASK_STATE_WORKING' } } }),
          event({
            artifactUpdate: {
              taskId: id,
              artifact: { artifactId: 'a', parts: [{ text: answerText(taskOf(r)) }] },
              lastChunk: true,
            },
          }),
          event({ statusUpdate: { taskId: id, status: { state: 'TASK_STATE_COMPLETED' } } }),
        ],
      };
    });
    plain = await startStub((r) => {
      if (r.path === CARD) return { json: card('plain', false) };
      if (r.rpc?.method === 'SendMessage') return rpcResult(r, completed(`p${++n}`, answerText(taskOf(r))));
      return rpcError(r, -32601, 'method not found');
    });
    bigCard = await startStub((r) =>
      r.path === CARD ? { json: card('bigcard', false, 'd'.repeat(2 * LIMIT)) } : undefined,
    );
    gw = await startGateway({
      config: {
        agents: { streamer: { card: streaming.url }, plain: { card: plain.url }, bigcard: { card: bigCard.url } },
        a2a: { max_message_bytes: LIMIT },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    await Promise.all([streaming, plain, bigCard].map((s) => s?.close()));
  });

  const call = async (tool: string, task: string) =>
    (await postJson(`${gw.url}/tool/call`, callBody(tool, { task }))).json.data;

  it('one event of a stream over the limit fails the call, saying so; the next call streams as usual', async () => {
    const r = await call('streamer_go', `big:${3 * MiB}`);
    expect(r.success).toBe(false);
    expect(r.error).toMatch(
      new RegExp(
        `^agent "streamer": an event of the stream of POST http://127\\.0\\.0\\.1:\\d+/? is larger than ${LIMIT} bytes \\(a2a\\.max_message_bytes\\); ask the agent for less or raise a2a\\.max_message_bytes$`,
      ),
    );
    const fits = await call('streamer_go', `big:${LIMIT - 4096}`);
    expect(fits).toMatchObject({ success: true });
    expect(fits.data.output).toHaveLength(LIMIT - 4096);
    expect(await call('streamer_go', 'small')).toMatchObject({ success: true, data: { output: 'done small' } });
  }, 60_000);

  it('a JSON-RPC answer over the limit fails the call, saying so; the next call is answered', async () => {
    const r = await call('plain_go', `big:${3 * MiB}`);
    expect(r.success).toBe(false);
    expect(r.error).toMatch(
      /^agent "plain": the answer of http:\/\/127\.0\.0\.1:\d+\/? is larger than 1048576 bytes \(a2a\.max_message_bytes\); ask the agent for less/,
    );
    expect(await call('plain_go', 'small')).toMatchObject({ success: true, data: { output: 'done small' } });
  }, 60_000);

  it('a card over the limit leaves that agent failed, saying so, and the others loaded', async () => {
    const agents = (await (await fetch(`${gw.url}/agents`)).json()).agents as any[];
    const byName = new Map(agents.map((a) => [a.name, a]));
    expect(byName.get('bigcard')).toMatchObject({ state: 'failed', tools: [] });
    expect(byName.get('bigcard').last_error).toMatch(/is larger than 1048576 bytes \(a2a\.max_message_bytes\)/);
    expect(byName.get('streamer').state).toBe('ok');
    expect(byName.get('plain').state).toBe('ok');
  });
});
