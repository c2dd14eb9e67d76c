import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig, openApiFor } from '../../src/index.js';
import { definePlugin, echoTool } from '../helpers/plugins.js';
import { startGateway, type TestGateway } from '../helpers/server.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ plugins: [definePlugin('t', [echoTool])] });
});
afterAll(() => gw.close());

describe('OpenAPI', () => {
  it('openapi/openapi.json is up to date (run `npm run openapi` after changing routes or schemas)', async () => {
    const committed = JSON.parse(await readFile(new URL('../../openapi/openapi.json', import.meta.url), 'utf8'));
    expect(committed).toEqual(JSON.parse(JSON.stringify(openApiFor(defineConfig()))));
  });

  it('GET /openapi.json serves an OpenAPI 3.1 document describing every route, the SSE variant included', async () => {
    const res = await fetch(`${gw.url}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/a2e/v1/health',
      '/a2e/v1/send',
      '/a2e/v1/session',
      '/a2e/v1/stream',
      '/admin/approvals',
      '/admin/approvals/{id}',
      '/admin/events',
      '/admin/reload',
      '/admin/workspaces',
      '/admin/workspaces/{name}',
      '/agents',
      '/docs',
      '/handshake',
      '/healthz',
      '/mcp',
      '/mcp-servers',
      '/metrics',
      '/openapi.json',
      '/readyz',
      '/sources',
      '/tool/call',
      '/tool/calls',
      '/tool/calls/{id}',
      '/tool/calls/{id}/events',
      '/tool/list',
      '/ui',
    ]);
    const call = doc.paths['/tool/call'].post;
    expect(call.operationId).toBe('callTool');
    expect(call.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/ToolCallRequest');
    expect(Object.keys(call.responses['200'].content)).toEqual(['application/json', 'text/event-stream']);
    expect(Object.keys(call.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '413',
      '422',
      '429',
      '500',
      '503',
    ]);
    // the request schema is the validating one: required fields and defaults match the spec
    const req = doc.components.schemas.ToolCallRequest;
    expect(req.required).toEqual(['tool_name', 'arguments']);
    expect(req.properties.timeout.default).toBe(30);
    // Document-wide parts, applied to every operation (routes added later included)
    expect(doc.info.license).toEqual({ name: 'MIT', identifier: 'MIT' });
    expect(doc.security).toEqual([{}, { bearerAuth: [] }]);
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const op of Object.values<any>(item)) {
        expect(op.operationId, path).toBeTruthy();
        expect(op.summary, path).toBeTruthy();
        expect(op.parameters, path).toContainEqual({ $ref: '#/components/parameters/RequestId' });
        expect(
          Object.keys(op.responses).some((s) => s.startsWith('4')),
          path,
        ).toBe(true);
        // Examples everywhere a body travels (add `example` next to the schema in the route's createRoute)
        for (const [type, media] of Object.entries<any>(op.requestBody?.content ?? {})) {
          expect(media.example ?? media.examples, `${path} request ${type} example`).toBeDefined();
        }
        for (const [status, response] of Object.entries<any>(op.responses)) {
          for (const [type, media] of Object.entries<any>(response.content ?? {})) {
            expect(media.example ?? media.examples, `${path} ${status} ${type} example`).toBeDefined();
          }
        }
        for (const [status, response] of Object.entries<any>(op.responses)) {
          expect(response.headers['X-Request-Id'], `${path} ${status}`).toEqual({
            $ref: '#/components/headers/RequestId',
          });
          if (status.startsWith('2')) continue;
          // The A2E message transport refuses sessions as the reference SDK's server does: {"detail": "…"}.
          if (
            path.startsWith('/a2e/v1/') &&
            response.content['application/json'].schema.$ref === '#/components/schemas/A2ETransportDetail'
          ) {
            expect(typeof response.content['application/json'].example.detail, `${path} ${status}`).toBe('string');
            continue;
          }
          // The MCP door answers protocol errors as JSON-RPC errors, as MCP clients expect; auth refusals are Errors.
          if (
            path === '/mcp' &&
            response.content['application/json'].schema.$ref === '#/components/schemas/JsonRpcErrorResponse'
          ) {
            expect(response.content['application/json'].example.error.message, `${path} ${status}`).toBeTruthy();
            continue;
          }
          // A degraded health check answers its usual body (store.ok false) with 503, as load balancers expect.
          if (path === '/healthz' && status === '503') {
            expect(response.content['application/json'].example.store.ok, `${path} ${status}`).toBe(false);
            continue;
          }
          expect(response.content['application/json'].schema.$ref, `${path} ${status}`).toBe(
            '#/components/schemas/Error',
          );
          expect(response.content['application/json'].example.type, `${path} ${status}`).toBe('error');
        }
      }
    }
    expect(call.responses['422'].content['application/json'].example.code).toBe('invalid_arguments');
    expect(doc.paths['/metrics'].get.responses['200'].content).toHaveProperty('text/plain');
    for (const name of [
      'ToolDefinition',
      'ToolParameter',
      'ToolResult',
      'ToolEvent',
      'ToolListRequest',
      'ToolListResponse',
      'ToolCallResponse',
      'Error',
    ]) {
      expect(doc.components.schemas).toHaveProperty(name);
    }
  });

  // The document of `npm run openapi` comes from the route specs alone (src/routes/table.ts); it must be
  // the very document a running gateway with that config serves, paths and schemas in the same order.
  it.each([
    ['the defaults', {}],
    ['mcp.serve off and a base path', { mcp: { serve: { enabled: false } }, server: { base_path: '/gw' } }],
    ['the A2E transport off', { transport: { enabled: false } }],
    ['the A2E transport at another path', { transport: { path: '/msg' } }],
  ] as const)('openApiFor(config) is the document a gateway serves with %s', async (_name, input) => {
    const served = await startGateway({ config: input, plugins: [definePlugin('t', [echoTool])] });
    try {
      const doc = await (await fetch(`${served.url}/openapi.json`)).text();
      expect(doc.trimEnd()).toBe(JSON.stringify(openApiFor(served.gateway.config)));
    } finally {
      await served.close();
    }
  });

  it('GET /docs serves an offline docs page whose assets come from the gateway itself', async () => {
    const res = await fetch(`${gw.url}/docs`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).not.toMatch(/https?:\/\//); // nothing from a CDN
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(3);
    for (const asset of assets) {
      const r = await fetch(new URL(asset, `${gw.url}/docs`));
      expect(r.status, asset).toBe(200);
      expect((await r.arrayBuffer()).byteLength, asset).toBeGreaterThan(50);
    }
    expect((await fetch(`${gw.url}/docs/package.json`)).status).toBe(404);
    expect((await fetch(`${gw.url}/docs/..%2Fpackage.json`)).status).toBe(404);
  });

  it('GET /healthz', async () => {
    const res = await fetch(`${gw.url}/healthz`);
    expect(await res.json()).toMatchObject({ status: 'ok', tools: 1, running_calls: 0 });
  });
});
