/**
 * OpenAPI documents as a tool source (issue 56): a real API (Hono +
 * zod-openapi, test/helpers/openapi-api.ts) whose operations become tools of
 * a real gateway; calls go over real HTTP and the API records what it got.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoServer, startTestApi, type TestApi } from '../helpers/openapi-api.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const list = async (gw: TestGateway, query = '') =>
  (await postJson(`${gw.url}/tool/list`, { type: 'tool/list/req', query, include_deferred: true })).json.tools as any[];
const call = async (
  gw: TestGateway,
  tool: string,
  args: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) => (await postJson(`${gw.url}/tool/call`, callBody(tool, args, extra))).json;

describe('an OpenAPI 3.0 document as a tool source', { timeout: 60_000 }, () => {
  let api: TestApi;
  let other: TestApi;
  let gw: TestGateway;
  let writes: TestGateway;
  beforeAll(async () => {
    other = await startEchoServer();
    api = await startTestApi({ otherOrigin: other.url });
    const spec = `${api.url}/openapi.json`;
    gw = await startGateway({
      config: {
        openapi: { sources: { shop: { spec, allow_private: true, timeout_s: 0.5, max_response_bytes: 1000 } } },
      },
    });
    writes = await startGateway({
      config: {
        openapi: {
          sources: {
            shop: {
              spec,
              allow_private: true,
              operations: {
                include: ['createItem', 'POST /api/f*', 'tag:items', 'plantTree'],
                exclude: ['deleteItem'],
              },
            },
          },
        },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await writes?.close();
    await api?.close();
    await other?.close();
  });

  it('offers only the GET and HEAD operations by default, each a tool with the exact schema', async () => {
    const tools = await list(gw);
    const names = tools.map((t) => t.name).sort();
    expect(names).toEqual([
      'shop_big',
      'shop_broken',
      'shop_elsewhere',
      'shop_events',
      'shop_getItem',
      'shop_here',
      'shop_missing',
      'shop_slow',
    ]);
    const get = tools.find((t) => t.name === 'shop_getItem');
    expect(get).toMatchObject({
      kind: 'openapi',
      toolkit: 'shop',
      idempotent: true,
      defer_loading: false,
      description: expect.stringContaining('Get one item'),
    });
    expect(get.tags).toEqual(['items', 'openapi']);
    expect(get.input_schema).toEqual({
      type: 'object',
      properties: {
        id: { type: 'string', description: 'Item id' },
        fields: { type: 'array', items: { type: 'string' }, description: 'Fields to return' },
        tag: { type: 'array', items: { type: 'string' }, description: 'query parameter tag' },
        sort: { type: 'string', enum: ['asc', 'desc'], description: 'query parameter sort' },
        api_key: { type: 'string', description: 'The API key (when it is not in a header)' },
        'x-tenant': { type: 'string', description: 'Tenant' },
      },
      required: ['id', 'x-tenant'],
      additionalProperties: false,
    });
    expect(get.input_parameters.find((p: any) => p.name === 'sort')).toMatchObject({
      type: 'string',
      enum: ['asc', 'desc'],
    });
    // Deprecated: found by search, not listed up front.
    expect((await list(gw, 'deprecated')).find((t) => t.name === 'shop_oldThing')).toMatchObject({
      defer_loading: true,
    });
  });

  it('include opts into writes (operationIds, METHOD /path globs, tags), exclude wins; $refs are resolved, a cycle is any value', async () => {
    const tools = await list(writes);
    const names = tools.map((t) => t.name).sort();
    expect(names).toEqual(['shop_createItem', 'shop_getItem', 'shop_plantTree', 'shop_submitForm']);
    const create = tools.find((t) => t.name === 'shop_createItem');
    expect(create.idempotent).toBe(false);
    expect(create.input_schema.properties.body).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, description: 'Item name' },
        category: { type: 'string', enum: ['book', 'tool', 'toy'] },
        dimensions: {
          type: 'object',
          properties: { width: { type: 'number' }, height: { type: 'number' } },
          required: ['width', 'height'],
        },
      },
      required: ['name', 'category'],
      description: 'Request body (application/json)',
    });
    expect(create.input_schema.required).toEqual(['body']);
    const tree = tools.find((t) => t.name === 'shop_plantTree').input_schema.properties.body;
    expect(tree.properties.label).toEqual({ type: 'string' });
    expect(tree.required).toEqual(['label']);
    expect(tree.properties.children.items.description).toMatch(/^Any JSON value/);
  });

  it('builds the request exactly: path parameters percent-encoded, query arrays in their style, headers', async () => {
    const r = await call(gw, 'shop_getItem', {
      id: 'a/b c?',
      fields: ['x', 'y z'],
      tag: ['t1', 't2'],
      sort: 'asc',
      'x-tenant': 'acme',
    });
    expect(r.data).toMatchObject({
      success: true,
      data: { status: 200, headers: { 'content-type': 'application/json' } },
    });
    expect(r.data.data.body).toEqual({
      id: 'a/b c?',
      name: 'raw:/api/items/a%2Fb%20c%3F?fields=x,y%20z&tag=t1&tag=t2&sort=asc',
      category: 'book',
      tags: ['acme'],
    });
  });

  it('validates the arguments before any request leaves', async () => {
    const before = api.requests.length;
    const r = await call(gw, 'shop_getItem', { id: '1', sort: 'sideways' });
    expect(r).toMatchObject({ type: 'error', code: 'invalid_arguments' });
    expect(JSON.stringify(r.detail)).toMatch(/x-tenant/);
    expect(api.requests.length).toBe(before);
  });

  it('sends JSON and form bodies', async () => {
    const created = await call(writes, 'shop_createItem', {
      body: { name: 'lamp', category: 'tool', dimensions: { width: 1, height: 2 } },
    });
    expect(created.data).toMatchObject({
      success: true,
      data: { status: 201, body: { id: 'new-1', name: 'lamp', category: 'tool', tags: ['{"width":1,"height":2}'] } },
    });
    expect(api.requests.at(-1)).toMatchObject({
      method: 'POST',
      url: '/api/items',
      headers: { 'content-type': 'application/json' },
    });
    const form = await call(writes, 'shop_submitForm', { body: { name: 'a b', colors: ['red', 'blue'] } });
    expect(form.data).toMatchObject({ success: true, data: { body: { got: 'name=a+b&colors=red&colors=blue' } } });
    expect(api.requests.at(-1)!.headers['content-type']).toBe('application/x-www-form-urlencoded');
  });

  it('a non-2xx answer is a tool failure naming the status and an excerpt of the body', async () => {
    const missing = await call(gw, 'shop_missing', {});
    expect(missing.data).toMatchObject({
      success: false,
      error_code: 'tool_error',
      error: 'GET /api/missing answered 404: {"error":"nothing here"}',
      data: { status: 404, body: { error: 'nothing here' } },
    });
    const broken = await call(gw, 'shop_broken', {});
    expect(broken.data).toMatchObject({
      success: false,
      error: expect.stringMatching(/^GET \/api\/broken answered 500: .*the database is on fire/),
    });
  });

  it('gives up at timeout_s, and cuts a body at max_response_bytes', async () => {
    const slow = await call(gw, 'shop_slow', { ms: 3000 });
    expect(slow.data).toMatchObject({ success: false, error: expect.stringMatching(/timed out after 0.5 s/) });
    const quick = await call(gw, 'shop_slow', { ms: 10 });
    expect(quick.data).toMatchObject({ success: true, data: { body: { waited: 10 } } });
    const big = await call(gw, 'shop_big', { n: 5000 });
    expect(big.data).toMatchObject({ success: true, truncated: true, data: { truncated: true } });
    expect(big.data.data.body).toBe('x'.repeat(1000));
  });

  it('streams an event-stream answer as events, and returns them', async () => {
    const r = await call(gw, 'shop_events', {}, { streaming: true });
    expect(r.data).toMatchObject({ success: true });
    expect(r.data.data.body).toEqual([1, 2, 3].map((n) => ({ event: 'tick', data: { n }, id: String(n) })));
    const artifacts = (r.data.events as any[]).filter((e) => e.kind === 'artifact').map((e) => e.data);
    expect(artifacts).toEqual(
      [1, 2, 3].map((n) =>
        expect.objectContaining({ name: 'tick', mime: 'text/event-stream', chunk: `{"n":${n}}`, final: false }),
      ),
    );
  });

  it('follows a redirect within the origin, and to another origin without the request headers', async () => {
    const here = await call(gw, 'shop_here', {});
    // Landed on getItem without the required header: the API itself answers (400 from no validation: 200 raw).
    expect(here.data.data.status).toBe(200);
    expect(api.requests.at(-1)!.url).toBe('/api/items/moved?sort=asc');
    const away = await call(gw, 'shop_elsewhere', {});
    expect(away.data).toMatchObject({ success: true, data: { status: 200, body: { method: 'GET', url: '/landing' } } });
  });
});
