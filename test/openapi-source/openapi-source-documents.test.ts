/**
 * OpenAPI sources beyond one API (issue 56): a Swagger 2.0 document from a
 * file, the gateway's own /openapi.json as the source of a second gateway, a
 * document that fails to load next to one that works, GET /sources, and a
 * reload that adds and removes a source.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createGateway, createLogger, defineConfig, type GatewayConfigInput } from '../../src/index.js';
import { waitFor } from '../helpers/a2a-stub.js';
import { startEchoServer, startTestApi } from '../helpers/openapi-api.js';
import { callBody, postJson, startGateway } from '../helpers/server.js';

const PETSTORE = fileURLToPath(new URL('../fixtures/petstore-swagger2.yaml', import.meta.url));
const list = async (url: string) => (await postJson(`${url}/tool/list`, { type: 'tool/list/req' })).json.tools as any[];
const call = async (url: string, tool: string, args: Record<string, unknown>) =>
  (await postJson(`${url}/tool/call`, callBody(tool, args))).json;
const sources = async (url: string) => (await (await fetch(`${url}/sources`)).json()).sources as any[];

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

describe('OpenAPI documents', { timeout: 60_000 }, () => {
  it('a Swagger 2.0 document from a YAML file: body, formData and collectionFormat parameters, definitions by $ref', async () => {
    const echo = await startEchoServer();
    cleanup.push(() => echo.close());
    const gw = await startGateway({
      config: {
        openapi: {
          sources: {
            pets: {
              spec: PETSTORE,
              base_url: `${echo.url}/v2`,
              allow_private: true,
              operations: { include: ['tag:pet', 'uploadFile'] },
              auth: { type: 'header', name: 'api_key', value_env: 'PET_KEY' },
            },
          },
        },
      },
      env: { PET_KEY: 'pet-key-secret' },
    });
    cleanup.push(() => gw.close());
    const tools = await list(gw.url);
    expect(tools.map((t) => t.name).sort()).toEqual([
      'pets_addPet',
      'pets_findPetsByStatus',
      'pets_getPetById',
      'pets_updatePetWithForm',
    ]);
    const find = tools.find((t) => t.name === 'pets_findPetsByStatus');
    // api_key is the source's credential: not offered.
    expect(find.input_schema.properties).toEqual({
      status: {
        type: 'array',
        items: { type: 'string', enum: ['available', 'pending', 'sold'] },
        description: 'query parameter status',
      },
    });
    const byId = tools.find((t) => t.name === 'pets_getPetById');
    expect(byId.input_schema.properties.petId).toEqual({
      type: 'integer',
      format: 'int64',
      description: 'path parameter petId (format: int64)',
    });
    const add = tools.find((t) => t.name === 'pets_addPet');
    expect(add.input_schema.properties.body.properties.category).toEqual({
      type: 'object',
      properties: {
        id: { type: 'integer', format: 'int64', description: '(format: int64)' },
        name: { type: 'string' },
      },
    });
    expect(add.input_schema.properties.body.required).toEqual(['name', 'photoUrls']);

    const found = await call(gw.url, 'pets_findPetsByStatus', { status: ['available', 'sold'] });
    expect(found.data).toMatchObject({
      success: true,
      data: {
        body: {
          method: 'GET',
          url: '/v2/pet/findByStatus?status=available&status=sold',
          headers: { api_key: '[redacted]' },
        },
      },
    });
    expect(echo.requests.at(-1)!.headers.api_key).toBe('pet-key-secret');
    const form = await call(gw.url, 'pets_updatePetWithForm', { petId: 5, body: { name: 'Rex', status: 'sold' } });
    expect(form.data).toMatchObject({
      success: true,
      data: {
        body: {
          method: 'POST',
          url: '/v2/pet/5',
          body: 'name=Rex&status=sold',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        },
      },
    });
    const added = await call(gw.url, 'pets_addPet', { body: { name: 'Tom', photoUrls: [] } });
    expect(JSON.parse(added.data.data.body.body)).toEqual({ name: 'Tom', photoUrls: [] });
    expect((await call(gw.url, 'pets_addPet', { body: { photoUrls: [] } })).code).toBe('invalid_arguments');
  });

  it("the gateway's own /openapi.json as a source of a second gateway: read_file of the first through the second", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'a2e-openapi-self-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'hello.txt'), 'hello through two gateways');
    const first = await startGateway({ config: { tools: { fs: { root: dir } } } });
    cleanup.push(() => first.close());
    const second = await startGateway({
      config: {
        openapi: {
          sources: {
            first: {
              spec: `${first.url}/openapi.json`,
              allow_private: true,
              operations: { include: ['callTool', 'listTools', 'GET /healthz'] },
            },
          },
        },
      },
    });
    cleanup.push(() => second.close());
    const names = (await list(second.url)).map((t) => t.name).sort();
    expect(names).toEqual(['first_callTool', 'first_health', 'first_listTools']);
    const r = await call(second.url, 'first_callTool', {
      body: { type: 'tool/call/req', tool_name: 'read_file', arguments: { path: 'hello.txt' } },
    });
    expect(r.data).toMatchObject({
      success: true,
      data: { status: 200, body: { type: 'tool/call/resp', data: { success: true, tool_name: 'read_file' } } },
    });
    expect(JSON.stringify(r.data.data.body.data.data)).toContain('hello through two gateways');
  });

  it('a document that fails to load leaves its source failed in GET /sources while the others serve', async () => {
    const api = await startTestApi();
    cleanup.push(() => api.close());
    const gw = await startGateway({
      config: {
        openapi: {
          sources: {
            good: { spec: `${api.url}/openapi.json`, allow_private: true },
            nofile: { spec: join(tmpdir(), 'no-such-dir-a2e', 'openapi.yaml') },
            notfound: { spec: `${api.url}/nothing.json`, allow_private: true },
            guarded: { spec: `${api.url}/openapi.json` },
          },
        },
      },
    });
    cleanup.push(() => gw.close());
    expect((await call(gw.url, 'good_missing', {})).data).toMatchObject({
      success: false,
      error: expect.stringContaining('answered 404'),
    });
    const all = await sources(gw.url);
    expect(all.map((s) => [s.id, s.kind, s.health])).toEqual([
      ['good', 'openapi', 'ok'],
      ['nofile', 'openapi', 'failed'],
      ['notfound', 'openapi', 'failed'],
      ['guarded', 'openapi', 'failed'],
    ]);
    expect(all[0]).toMatchObject({ tool_count: 9, last_error: null, last_refresh: expect.any(String) });
    expect(all[1].last_error).toBe(
      'the OpenAPI document could not be loaded: the spec file does not exist; check openapi.sources.<id>.spec',
    );
    expect(all[2].last_error).toMatch(/answered 404; check the spec URL$/);
    // Without allow_private, tools.http's address rules apply to the document too.
    expect(all[3].last_error).toMatch(/127\.0\.0\.1 is a loopback address/);
    expect(JSON.stringify(all)).not.toContain(tmpdir());
  });

  it('a reload adds and removes a source', async () => {
    const api = await startTestApi();
    cleanup.push(() => api.close());
    let next: GatewayConfigInput = {
      server: { port: 0 },
      tools: { fs: { enabled: false }, shell: { enabled: false }, http: { enabled: false }, eval: { enabled: false } },
    };
    const configOf = () => defineConfig(next);
    const gateway = await createGateway({
      config: configOf(),
      loadConfig: async () => configOf(),
      logger: createLogger('silent'),
    });
    const { url } = await gateway.listen();
    cleanup.push(() => gateway.close());
    expect(await list(url)).toEqual([]);
    next = { ...next, openapi: { sources: { shop: { spec: `${api.url}/openapi.json`, allow_private: true } } } };
    expect((await postJson(`${url}/admin/reload`, {})).status).toBe(200);
    await waitFor('the added source', async () => (await list(url)).some((t) => t.name === 'shop_getItem'));
    expect((await sources(url)).map((s) => s.id)).toEqual(['shop']);
    next = { ...next, openapi: { sources: {} } };
    expect((await postJson(`${url}/admin/reload`, {})).status).toBe(200);
    expect(await list(url)).toEqual([]);
    expect(await sources(url)).toEqual([]);
  });

  it('refresh_s re-reads the document: a changed document changes the tools; a broken one keeps the last tools, degraded', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'a2e-openapi-refresh-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const spec = join(dir, 'api.json');
    const doc = (ops: string[]) =>
      JSON.stringify({
        openapi: '3.1.0',
        info: { title: 't', version: '1' },
        servers: [{ url: 'http://127.0.0.1:9' }],
        paths: Object.fromEntries(
          ops.map((o) => [`/${o}`, { get: { operationId: o, responses: { 200: { description: 'OK' } } } }]),
        ),
      });
    await writeFile(spec, doc(['one']));
    const gw = await startGateway({ config: { openapi: { sources: { t: { spec, refresh_s: 1 } } } } });
    cleanup.push(() => gw.close());
    expect((await list(gw.url)).map((t) => t.name)).toEqual(['t_one']);
    await writeFile(spec, doc(['two', 'three']).replace('"operationId":"three",', ''));
    // An operation without an operationId is named after its method and path.
    await waitFor(
      'the changed tools',
      async () => (await list(gw.url)).map((t) => t.name).join() === 't_two,t_get_three',
      10_000,
    );
    await writeFile(spec, '{"openapi": "3.1.0", "paths": {');
    const degraded = await waitFor(
      'the failed refresh',
      async () => (await sources(gw.url)).find((s) => s.health === 'degraded'),
      10_000,
    );
    expect(degraded).toMatchObject({
      id: 't',
      tool_count: 2,
      last_error: expect.stringMatching(/neither valid JSON nor valid YAML/),
    });
    expect((await list(gw.url)).map((t) => t.name)).toEqual(['t_two', 't_get_three']);
  });
});
