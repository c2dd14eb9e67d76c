/**
 * What docs/openapi-sources.md says of parameters and safety defaults, held against real servers on
 * 127.0.0.1 (node:http): cookie parameters, a name used in two places, header parameters never offered;
 * tools.http's address rules on the API's base URL and on the token endpoint unless allow_private; the
 * 64 KiB bound on a token endpoint's answer.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

/** A server on 127.0.0.1 recording each request; `answer` gives the JSON body of each. */
async function serve(answer: (path: string, headers: IncomingHttpHeaders) => unknown) {
  const seen: { path: string; headers: IncomingHttpHeaders }[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '/';
      seen.push({ path, headers: req.headers });
      const body = answer(path, req.headers);
      if (body === undefined) return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

const document = (base: string) => ({
  openapi: '3.0.3',
  info: { title: 'claims', version: '1' },
  servers: [{ url: base }],
  paths: {
    '/api/prefs/{id}': {
      get: {
        operationId: 'prefs',
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'id', in: 'header', schema: { type: 'string' } },
          { name: 'session', in: 'cookie', required: true, schema: { type: 'string' } },
          { name: 'theme', in: 'cookie', schema: { type: 'string', enum: ['dark', 'light'] } },
          { name: 'Accept', in: 'header', schema: { type: 'string' } },
          { name: 'Content-Type', in: 'header', schema: { type: 'string' } },
          { name: 'Authorization', in: 'header', schema: { type: 'string' } },
        ],
        responses: { '200': { description: 'What the API got' } },
      },
    },
    '/api/things/{thing-id}': {
      get: {
        parameters: [
          { name: 'thing-id', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'X-Fixed', in: 'header', schema: { type: 'string' } },
        ],
        responses: { '200': { description: 'What the API got' } },
      },
    },
    '/api/upload': {
      post: {
        operationId: 'upload',
        requestBody: {
          required: true,
          content: { 'multipart/form-data': { schema: { type: 'object', properties: { file: { type: 'string' } } } } },
        },
        responses: { '200': { description: 'Stored' } },
      },
    },
  },
});

/** A token endpoint's answer padded to about `bytes`. */
const tokenAnswer = (token: string, bytes: number) => ({
  access_token: token,
  token_type: 'Bearer',
  expires_in: 3600,
  pad: 'x'.repeat(bytes),
});

describe('OpenAPI sources: parameters and safety defaults as documented', { timeout: 60_000 }, () => {
  let api: Awaited<ReturnType<typeof serve>>;
  let tokens: Awaited<ReturnType<typeof serve>>;
  let gw: TestGateway;
  let dir: string;
  const call = async (tool: string, args: Record<string, unknown>) =>
    (await postJson(`${gw.url}/tool/call`, callBody(tool, args))).json;

  beforeAll(async () => {
    api = await serve((path, headers) =>
      path === '/openapi.json'
        ? document(api.url)
        : path.startsWith('/api/')
          ? { path, cookie: headers.cookie ?? null, id: headers.id ?? null, fixed: headers['x-fixed'] ?? null }
          : path === '/big.json'
            ? { ...document(api.url), 'x-pad': 'x'.repeat(20_000) }
            : undefined,
    );
    // Also an API (its document is the file below), on a port tools.http.allow_hosts does not allow.
    tokens = await serve((path, headers) =>
      path.startsWith('/api/')
        ? { path, cookie: headers.cookie ?? null }
        : path === '/oauth/token'
          ? tokenAnswer('tok-small', 10)
          : path === '/oauth/near'
            ? tokenAnswer('tok-near', 60 * 1024)
            : path === '/oauth/big'
              ? tokenAnswer('tok-big', 100 * 1024)
              : undefined,
    );
    dir = await mkdtemp(join(tmpdir(), 'a2e-openapi-claims-'));
    const file = join(dir, 'claims.json');
    await writeFile(file, JSON.stringify(document(tokens.url)));
    const bigFile = join(dir, 'big.json');
    await writeFile(bigFile, JSON.stringify({ ...document(api.url), 'x-pad': 'x'.repeat(20_000) }));
    const spec = `${api.url}/openapi.json`;
    const oauth = (path: string) => ({
      type: 'oauth2_client_credentials' as const,
      token_url: `${tokens.url}${path}`,
      client_id_env: 'CID',
      client_secret_env: 'CSECRET',
    });
    gw = await startGateway({
      config: {
        // The API's port is allowed (so the document and the API are), the token endpoint's is not.
        tools: { http: { allow_hosts: [`127.0.0.1:${api.port}`] } },
        openapi: {
          max_spec_bytes: 16 * 1024,
          sources: {
            open: {
              spec,
              allow_private: true,
              operations: { include: ['prefs', 'upload', 'GET /api/things/*'] },
              headers: { 'X-Fixed': 'fixed-value-4c1d' },
            },
            bigurl: { spec: `${api.url}/big.json`, allow_private: true },
            bigfile: { spec: bigFile },
            // The document is a file (no address to check); its server, the API, is on a port not allowed.
            guarded: { spec: file },
            unguarded: { spec: file, allow_private: true },
            tokguard: { spec, auth: oauth('/oauth/token') },
            tokopen: { spec, allow_private: true, auth: oauth('/oauth/token') },
            toknear: { spec, allow_private: true, auth: oauth('/oauth/near') },
            tokbig: { spec, allow_private: true, auth: oauth('/oauth/big') },
          },
        },
      },
      env: { CID: 'client-id', CSECRET: 'client-secret-1234' },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await api?.close();
    await tokens?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('cookie parameters are arguments sent in one Cookie header; a name in two places gets its location; Accept, Content-Type and Authorization are not offered', async () => {
    const tools = (await postJson(`${gw.url}/tool/list`, { type: 'tool/list/req' })).json.tools as any[];
    const prefs = tools.find((t) => t.name === 'open_prefs');
    expect(Object.keys(prefs.input_schema.properties).sort()).toEqual(['id_header', 'id_path', 'session', 'theme']);
    expect(prefs.input_schema.required.sort()).toEqual(['id_path', 'session']);
    expect(prefs.input_schema.properties.theme).toMatchObject({ enum: ['dark', 'light'] });
    const r = await call('open_prefs', { id_path: 'p 1', id_header: 'h1', session: 'a b;c', theme: 'dark' });
    expect(r.data).toMatchObject({
      success: true,
      data: { status: 200, body: { path: '/api/prefs/p%201', id: 'h1', cookie: 'session=a%20b%3Bc; theme=dark' } },
    });
    // A wrong cookie value is refused before any request leaves.
    const before = api.seen.length;
    expect(await call('open_prefs', { id_path: '1', session: 's', theme: 'pink' })).toMatchObject({
      code: 'invalid_arguments',
    });
    expect(api.seen.length).toBe(before);
  });

  it('an operation without an operationId is named after its method and path; a multipart upload is left out; a fixed header is sent, not offered, never shown', async () => {
    const tools = (await postJson(`${gw.url}/tool/list`, { type: 'tool/list/req' })).json.tools as any[];
    expect(tools.filter((t) => t.toolkit === 'open').map((t) => t.name)).toEqual([
      'open_prefs',
      'open_get_api_things_thing-id',
    ]);
    const thing = tools.find((t) => t.name === 'open_get_api_things_thing-id');
    expect(Object.keys(thing.input_schema.properties)).toEqual(['thing-id']);
    const r = await call('open_get_api_things_thing-id', { 'thing-id': 't/1' });
    expect(r.data).toMatchObject({ success: true, data: { body: { path: '/api/things/t%2F1' } } });
    expect(api.seen.at(-1)!.headers['x-fixed']).toBe('fixed-value-4c1d');
    // The API echoed it: the caller sees it redacted, and no list or status shows it.
    expect(r.data.data.body.fixed).toBe('[redacted]');
    const sources = await (await fetch(`${gw.url}/sources`)).text();
    expect(JSON.stringify(tools) + sources).not.toContain('fixed-value-4c1d');
  });

  it('a document is read up to openapi.max_spec_bytes, from a URL and from a file; a larger one leaves its source failed, saying so', async () => {
    const sources = (await (await fetch(`${gw.url}/sources`)).json()).sources as any[];
    expect(sources.find((s) => s.id === 'bigurl')).toMatchObject({
      health: 'failed',
      last_error: expect.stringMatching(/more than 16384 bytes/),
    });
    expect(sources.find((s) => s.id === 'bigfile')).toMatchObject({
      health: 'failed',
      last_error: expect.stringMatching(/more than openapi\.max_spec_bytes \(16384\)/),
    });
    expect(sources.find((s) => s.id === 'open')).toMatchObject({ health: 'ok', tool_count: 2 });
  });

  it("tools.http's address rules apply to the API's base URL unless allow_private", async () => {
    const before = tokens.seen.length;
    const refused = await call('guarded_prefs', { id_path: '1', session: 's' });
    expect(refused.data).toMatchObject({
      success: false,
      error: expect.stringMatching(/127\.0\.0\.1 is a loopback address/),
    });
    expect(tokens.seen.length).toBe(before);
    expect((await call('unguarded_prefs', { id_path: '1', session: 's' })).data).toMatchObject({ success: true });
    expect(tokens.seen.at(-1)!.path).toBe('/api/prefs/1');
  });

  it("tools.http's address rules apply to the token endpoint unless allow_private", async () => {
    const before = tokens.seen.length;
    const refused = await call('tokguard_prefs', { id_path: '1', session: 's' });
    expect(refused.data).toMatchObject({
      success: false,
      error: expect.stringMatching(/token endpoint .*127\.0\.0\.1 is a loopback address/),
    });
    expect(tokens.seen.length).toBe(before);
    const ok = await call('tokopen_prefs', { id_path: '1', session: 's' });
    expect(ok.data).toMatchObject({ success: true });
    expect(api.seen.at(-1)!.headers.authorization).toBe('Bearer tok-small');
  });

  it("a token endpoint's answer is read up to 64 KiB: a larger one fails the call, saying so", async () => {
    const near = await call('toknear_prefs', { id_path: '1', session: 's' });
    expect(near.data).toMatchObject({ success: true });
    expect(api.seen.at(-1)!.headers.authorization).toBe('Bearer tok-near');
    const big = await call('tokbig_prefs', { id_path: '1', session: 's' });
    expect(big.data).toMatchObject({
      success: false,
      error: expect.stringMatching(/token endpoint at 127\.0\.0\.1:\d+ could not be reached .*more than 65536 bytes/),
    });
    expect(JSON.stringify(big)).not.toContain('tok-big');
  });
});
