/**
 * Credentials an OpenAPI source holds (issue 56): every auth kind against a
 * real API that requires it, a real OAuth2 client-credentials token endpoint
 * issuing expiring tokens, redirects to another origin, and a grep of
 * everything the gateway emitted (logs, answers, events, the audit file,
 * /metrics, /sources) for the secrets, with an MCP server over HTTP and an
 * A2A agent that echo the credential they were sent.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayConfigInput } from '../../src/index.js';
import { rpcError, rpcResult, startStub, waitFor, type Stub, type StubRequest } from '../helpers/a2a-stub.js';
import { startMcpHttpServer } from '../helpers/mcp-http-server.js';
import { LogCapture } from '../helpers/log-capture.js';
import { startEchoServer, startTestApi, type ApiAuth, type TestApi } from '../helpers/openapi-api.js';
import { callBody, openSse, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const SECRETS = {
  TOKEN: 'tok-9f8e7d6c5b4a-bearer-secret',
  KEY: 'key-1a2b3c4d5e6f-header-secret',
  QKEY: 'qkey-0011223344-query-secret',
  USER: 'svc-user-basic',
  PASS: 'pw-5566778899-basic-secret',
  CLIENT: 'client-abc-oauth',
  CLIENT_SECRET: 'cs-77ab88cd99ef-oauth-secret',
};

/** Everything the gateway emitted during this file, to grep for the secrets. */
const emitted: string[] = [];
const logs = new LogCapture('debug');
let dir: string;
const running: { gw: TestGateway; api: TestApi }[] = [];
/** Gateways and peers of the MCP and A2A cases, closed after each. */
const peers: (TestGateway | Stub)[] = [];

type SourceAuth = NonNullable<NonNullable<NonNullable<GatewayConfigInput['openapi']>['sources']>[string]['auth']>;

async function setUp(
  apiAuth: ApiAuth,
  authOf: SourceAuth | ((apiUrl: string) => SourceAuth),
  extra: { tokenLifetimeS?: number; otherOrigin?: string } = {},
) {
  const api = await startTestApi({ auth: apiAuth, ...extra });
  const auth = typeof authOf === 'function' ? authOf(api.url) : authOf;
  const gw = await startGateway({
    config: {
      openapi: { sources: { shop: { spec: `${api.url}/openapi.json`, allow_private: true, auth } } },
      audit: { path: join(dir, 'audit.jsonl') },
    },
    env: { ...SECRETS },
    logger: logs.logger,
  });
  running.push({ gw, api });
  return { api, gw };
}

async function call(gw: TestGateway, tool: string, args: Record<string, unknown>) {
  const r = await postJson(`${gw.url}/tool/call`, callBody(tool, args, { streaming: true }));
  emitted.push(JSON.stringify(r.json));
  return r.json;
}
/** A streamed call over SSE: its events and its answer (the frames kept for the grep). */
async function callStreamed(gw: TestGateway, tool: string, args: Record<string, unknown>) {
  const sse = await openSse(`${gw.url}/tool/call`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(callBody(tool, args, { streaming: true })),
  });
  const frames = await sse.rest();
  emitted.push(...frames.map((f) => f.data));
  return {
    events: frames.filter((f) => f.event === 'tool/event').map((f) => f.json),
    data: frames.find((f) => f.event === 'tool/call/resp')!.json.data,
  };
}
async function list(gw: TestGateway) {
  const r = await postJson(`${gw.url}/tool/list`, { type: 'tool/list/req' });
  emitted.push(JSON.stringify(r.json));
  return r.json.tools as any[];
}
const ITEM = { id: '7', 'x-tenant': 'acme' };

describe('OpenAPI source credentials', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'a2e-openapi-auth-'));
  });
  afterEach(async () => {
    for (const p of peers.splice(0).reverse()) {
      if ('requests' in p === false) emitted.push(await (await fetch(`${(p as TestGateway).url}/sources`)).text());
      await p.close();
    }
    for (const { gw, api } of running.splice(0)) {
      emitted.push(await (await fetch(`${gw.url}/metrics`)).text(), await (await fetch(`${gw.url}/sources`)).text());
      await gw.close();
      await api.close();
    }
  });
  afterAll(async () => {
    emitted.push(logs.text, await readFile(join(dir, 'audit.jsonl'), 'utf8').catch(() => ''));
    await rm(dir, { recursive: true, force: true });
  });

  it('bearer: the token is sent, the caller never sees it', async () => {
    const { gw, api } = await setUp({ type: 'bearer', token: SECRETS.TOKEN }, { type: 'bearer', token_env: 'TOKEN' });
    expect((await call(gw, 'shop_getItem', ITEM)).data).toMatchObject({ success: true, data: { status: 200 } });
    expect(api.requests.at(-1)!.headers.authorization).toBe(`Bearer ${SECRETS.TOKEN}`);
  });

  it('header: an API key header; a parameter of that name is not offered to callers', async () => {
    const { gw, api } = await setUp(
      { type: 'header', name: 'x-tenant', value: SECRETS.KEY },
      { type: 'header', name: 'X-Tenant', value_env: 'KEY' },
    );
    const get = (await list(gw)).find((t) => t.name === 'shop_getItem');
    expect(Object.keys(get.input_schema.properties)).not.toContain('x-tenant');
    expect((await call(gw, 'shop_getItem', { id: '7' })).data).toMatchObject({ success: true });
    expect(api.requests.at(-1)!.headers['x-tenant']).toBe(SECRETS.KEY);
  });

  it('query: an API key query parameter, hidden from the schema; an answer echoing it is scrubbed', async () => {
    const { gw, api } = await setUp(
      { type: 'query', name: 'api_key', value: SECRETS.QKEY },
      { type: 'query', name: 'api_key', value_env: 'QKEY' },
    );
    const get = (await list(gw)).find((t) => t.name === 'shop_getItem');
    expect(Object.keys(get.input_schema.properties)).not.toContain('api_key');
    const r = await call(gw, 'shop_getItem', ITEM);
    expect(api.requests.at(-1)!.url).toBe(`/api/items/7?api_key=${SECRETS.QKEY}`);
    // The API echoes the raw query in `name`: the result shows it redacted.
    expect(r.data.data.body.name).toBe('raw:/api/items/7?api_key=[redacted]');
  });

  it('basic: user and password from the environment', async () => {
    const { gw, api } = await setUp(
      { type: 'basic', username: SECRETS.USER, password: SECRETS.PASS },
      { type: 'basic', username_env: 'USER', password_env: 'PASS' },
    );
    expect((await call(gw, 'shop_getItem', ITEM)).data).toMatchObject({ success: true });
    expect(api.requests.at(-1)!.headers.authorization).toMatch(/^Basic /);
  });

  it('a refused credential is a tool failure naming the status; the API echoing the header shows it redacted', async () => {
    const { gw } = await setUp({ type: 'bearer', token: 'another-token' }, { type: 'bearer', token_env: 'TOKEN' });
    const r = await call(gw, 'shop_getItem', ITEM);
    expect(r.data).toMatchObject({
      success: false,
      error: expect.stringMatching(
        /^GET \/api\/items\/7 answered 401 \(check the source's auth\): .*Bearer \[redacted\]/,
      ),
    });
  });

  it('an unset environment variable leaves the source unhealthy, saying which variable', async () => {
    const { gw } = await setUp({ type: 'none' }, { type: 'bearer', token_env: 'NOT_SET_ANYWHERE' });
    expect(await list(gw)).toEqual([]);
    await waitFor('the warning', () => logs.records.find((l) => /NOT_SET_ANYWHERE is not set/.test(l.msg)));
    const [source] = (await (await fetch(`${gw.url}/sources`)).json()).sources;
    expect(source).toMatchObject({
      id: 'shop',
      kind: 'openapi',
      health: 'failed',
      tool_count: 0,
      last_error: 'environment variable NOT_SET_ANYWHERE is not set; set it to the bearer credential',
    });
  });

  it('oauth2_client_credentials: a token is fetched, reused, renewed before it expires, and renewed once on a 401', async () => {
    const { gw, api } = await setUp(
      {
        type: 'oauth2',
        clientId: SECRETS.CLIENT,
        clientSecret: SECRETS.CLIENT_SECRET,
        scope: 'items:read items:write',
      },
      (url) => ({
        type: 'oauth2_client_credentials',
        token_url: `${url}/oauth/token`,
        client_id_env: 'CLIENT',
        client_secret_env: 'CLIENT_SECRET',
        scopes: ['items:read', 'items:write'],
      }),
      { tokenLifetimeS: 2 },
    );
    expect((await call(gw, 'shop_getItem', ITEM)).data).toMatchObject({ success: true });
    expect((await call(gw, 'shop_getItem', ITEM)).data).toMatchObject({ success: true });
    expect(api.issued).toHaveLength(1);
    expect(api.requests.at(-1)!.headers.authorization).toBe(`Bearer ${api.issued[0]}`);
    // A 2 s token is renewed at half its life, before the API would refuse it.
    await new Promise((r) => setTimeout(r, 1100));
    expect((await call(gw, 'shop_getItem', ITEM)).data).toMatchObject({ success: true });
    expect(api.issued).toHaveLength(2);
    expect(api.requests.at(-1)!.headers.authorization).toBe(`Bearer ${api.issued[1]}`);
    // The API revokes the token: the 401 fetches a new one and the call is tried once more.
    api.revoked.add(api.issued[1]!);
    const before = api.requests.length;
    expect((await call(gw, 'shop_getItem', ITEM)).data).toMatchObject({ success: true });
    expect(api.issued).toHaveLength(3);
    expect(api.requests.slice(before).map((r) => r.url.split('?')[0])).toEqual([
      '/api/items/7',
      '/oauth/token',
      '/api/items/7',
    ]);
    // Every token was fetched with the client's credentials over Basic, never seen by the caller.
    for (const r of api.requests.filter((q) => q.url === '/oauth/token'))
      expect(r.body).toBe('grant_type=client_credentials&scope=items%3Aread+items%3Awrite');
  });

  it('a redirect to another origin carries no credential; one within the origin does', async () => {
    const other = await startEchoServer();
    try {
      const { gw, api } = await setUp(
        { type: 'bearer', token: SECRETS.TOKEN },
        { type: 'bearer', token_env: 'TOKEN' },
        { otherOrigin: other.url },
      );
      const away = await call(gw, 'shop_elsewhere', {});
      expect(away.data).toMatchObject({ success: true, data: { body: { url: '/landing' } } });
      expect(other.requests).toHaveLength(1);
      expect(other.requests[0]!.headers.authorization).toBeUndefined();
      expect(JSON.stringify(other.requests)).not.toContain(SECRETS.TOKEN);
      const here = await call(gw, 'shop_here', {});
      expect(here.data).toMatchObject({ success: true, data: { status: 200 } });
      expect(api.requests.at(-1)).toMatchObject({
        url: '/api/items/moved?sort=asc',
        headers: { authorization: `Bearer ${SECRETS.TOKEN}` },
      });
    } finally {
      await other.close();
    }
  });

  it('an MCP server over HTTP that echoes the credential in progress, a log, its result and its error hands the caller none of it', async () => {
    const mcp = await startMcpHttpServer(SECRETS.TOKEN);
    try {
      const gw = await startGateway({
        config: {
          mcp: { servers: { careless: { url: mcp.url, auth: { type: 'bearer', token_env: 'TOKEN' } } } },
          audit: { path: join(dir, 'audit.jsonl') },
        },
        env: { ...SECRETS },
        logger: logs.logger,
      });
      peers.push(gw);
      const ok = await callStreamed(gw, 'careless_whoami', {});
      // The server did get the token (else it could not have echoed it), and the caller sees it redacted everywhere.
      expect(ok.data).toMatchObject({
        success: true,
        data: { text: 'you sent Bearer [redacted]', structuredContent: { authorization: 'Bearer [redacted]' } },
      });
      expect(ok.events.map((e: any) => [e.kind, e.data.message])).toEqual(
        expect.arrayContaining([
          ['progress', 'sent Bearer [redacted]'],
          ['log', 'got Bearer [redacted]'],
        ]),
      );
      const failed = await callStreamed(gw, 'careless_whoami', { fail: true });
      expect(failed.data).toMatchObject({ success: false, error: 'refused: Bearer [redacted]' });
      expect(JSON.stringify(failed.data.data)).toContain('refused: Bearer [redacted]');
    } finally {
      await mcp.close();
    }
  });

  it('a remote A2A agent that echoes the credential in a status, an artifact and an error hands the caller none of it', async () => {
    const peer = await startStub((r: StubRequest) => {
      const auth = String(r.headers.authorization);
      if (auth !== `Bearer ${SECRETS.TOKEN}`) return { status: 401, json: { error: 'unauthorized' } };
      if (r.path === '/.well-known/agent-card.json')
        return {
          json: {
            name: 'careless',
            url: `${peer.url}/rpc`,
            skills: ['echo', 'fail', 'reject'].map((id) => ({ id, description: `the ${id} skill` })),
          },
        };
      if (!r.rpc) return undefined;
      const skill = r.rpc.params?.message?.metadata?.skillId;
      if (skill === 'reject') return rpcError(r, -32000, `token ${auth} is not welcome`);
      const text = (t: string) => ({ role: 'agent', messageId: 'm1', parts: [{ kind: 'text', text: t }] });
      return rpcResult(r, {
        kind: 'task',
        id: 't1',
        contextId: 'c1',
        status: { state: skill === 'fail' ? 'failed' : 'completed', message: text(`status saw ${auth}`) },
        artifacts:
          skill === 'fail' ? [] : [{ artifactId: 'a1', parts: [{ kind: 'text', text: `artifact of ${auth}` }] }],
      });
    });
    peers.push(peer);
    const gw = await startGateway({
      config: {
        agents: { careless: { card: peer.url, auth: { type: 'bearer', token_env: 'TOKEN' } } },
        audit: { path: join(dir, 'audit.jsonl') },
      },
      env: { ...SECRETS },
      logger: logs.logger,
    });
    peers.push(gw);
    const ok = await callStreamed(gw, 'careless_echo', { task: 'go' });
    expect(ok.data).toMatchObject({ success: true, data: { output: 'artifact of Bearer [redacted]' } });
    expect(ok.events.map((e: any) => e.data.message)).toContain(
      'careless: task completed: status saw Bearer [redacted]',
    );
    const failed = await callStreamed(gw, 'careless_fail', { task: 'go' });
    expect(failed.data).toMatchObject({
      success: false,
      error: 'agent "careless" task failed: status saw Bearer [redacted]',
    });
    const rejected = await callStreamed(gw, 'careless_reject', { task: 'go' });
    expect(rejected.data).toMatchObject({
      success: false,
      error: expect.stringContaining('token Bearer [redacted] is not welcome'),
    });
    // The peer got the token on every request.
    expect(peer.requests.filter((q) => q.rpc).every((q) => q.headers.authorization === `Bearer ${SECRETS.TOKEN}`)).toBe(
      true,
    );
    emitted.push(await (await fetch(`${gw.url}/sources`)).text());
  });

  it('no secret appears in anything the gateway emitted (answers, events, tool lists, logs, audit file, /metrics, /sources)', async () => {
    // Runs last: the other cases filled `emitted`.
    const everything = [...emitted, logs.text, await readFile(join(dir, 'audit.jsonl'), 'utf8')].join('\n');
    expect(everything.length).toBeGreaterThan(10_000);
    expect(everything).toContain('shop_getItem');
    const basic = Buffer.from(`${SECRETS.USER}:${SECRETS.PASS}`).toString('base64');
    for (const secret of [SECRETS.TOKEN, SECRETS.KEY, SECRETS.QKEY, SECRETS.PASS, SECRETS.CLIENT_SECRET, basic])
      expect(everything).not.toContain(secret);
  });
});
