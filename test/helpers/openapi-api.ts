/**
 * A REST API with an OpenAPI document, built for the OpenAPI-source tests
 * with Hono + zod-openapi: `$ref`'d schemas, path/query/header parameters, a
 * JSON body, an enum, arrays, a required header, a 4xx, a 5xx, a slow and an
 * SSE operation, a form body, a recursive schema, a redirect to another
 * origin. It requires the credential `auth` names (checked on every /api
 * route) and serves a real OAuth2 client-credentials token endpoint issuing
 * tokens that expire after `tokenLifetimeS`.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { OpenAPIHono, createRoute } from '@hono/zod-openapi';
import { z } from 'zod';

export type ApiAuth =
  | { type: 'none' }
  | { type: 'bearer'; token: string }
  | { type: 'header'; name: string; value: string }
  | { type: 'query'; name: string; value: string }
  | { type: 'basic'; username: string; password: string }
  | { type: 'oauth2'; clientId: string; clientSecret: string; scope: string };

export interface TestApi {
  url: string;
  /** Every request the API got (method, path with query, headers), in order. */
  requests: { method: string; url: string; headers: Record<string, string>; body: string }[];
  /** Tokens issued by the token endpoint, in order. */
  issued: string[];
  /** Tokens the API refuses from now on although unexpired (a revocation: the next call gets a 401). */
  revoked: Set<string>;
  close(): Promise<void>;
}

const Item = z
  .object({
    id: z.string().meta({ description: 'Item id' }),
    name: z.string(),
    category: z.enum(['book', 'tool', 'toy']).meta({ description: 'What kind of item' }),
    tags: z.array(z.string()),
  })
  .meta({ id: 'Item' });
const NewItem = z
  .object({
    name: z.string().min(1).meta({ description: 'Item name' }),
    category: z.enum(['book', 'tool', 'toy']),
    dimensions: z.object({ width: z.number(), height: z.number() }).meta({ id: 'Dimensions' }).optional(),
  })
  .meta({ id: 'NewItem' });
const Problem = z.object({ error: z.string() }).meta({ id: 'Problem' });
const json = <T extends z.ZodType>(schema: T, description = 'OK') => ({
  description,
  content: { 'application/json': { schema } },
});

export async function startTestApi(
  options: { auth?: ApiAuth; tokenLifetimeS?: number; otherOrigin?: string } = {},
): Promise<TestApi> {
  const auth = options.auth ?? { type: 'none' };
  const requests: TestApi['requests'] = [];
  const issued: string[] = [];
  const revoked = new Set<string>();
  const valid = new Map<string, number>(); // token → expiry (ms)
  const app = new OpenAPIHono();

  app.use('*', async (c, next) => {
    const body = c.req.method === 'GET' || c.req.method === 'HEAD' ? '' : await c.req.raw.clone().text();
    requests.push({
      method: c.req.method,
      url: c.req.url.replace(/^https?:\/\/[^/]+/, ''),
      headers: Object.fromEntries(c.req.raw.headers),
      body,
    });
    await next();
  });

  // The token endpoint (RFC 6749 §4.4): client authentication by HTTP Basic.
  app.post('/oauth/token', async (c) => {
    if (auth.type !== 'oauth2') return c.json({ error: 'unsupported_grant_type' }, 400);
    const form = new URLSearchParams(await c.req.text());
    const expected = `Basic ${Buffer.from(`${auth.clientId}:${auth.clientSecret}`).toString('base64')}`;
    if (c.req.header('authorization') !== expected) return c.json({ error: 'invalid_client' }, 401);
    if (form.get('grant_type') !== 'client_credentials') return c.json({ error: 'unsupported_grant_type' }, 400);
    if (form.get('scope') !== auth.scope) return c.json({ error: 'invalid_scope' }, 400);
    const token = `tok-${randomBytes(12).toString('hex')}`;
    const lifetime = options.tokenLifetimeS ?? 3600;
    valid.set(token, Date.now() + lifetime * 1000);
    issued.push(token);
    return c.json({ access_token: token, token_type: 'Bearer', expires_in: lifetime });
  });

  app.use('/api/*', async (c, next) => {
    const authz = c.req.header('authorization') ?? '';
    let ok: boolean;
    switch (auth.type) {
      case 'none':
        ok = true;
        break;
      case 'bearer':
        ok = authz === `Bearer ${auth.token}`;
        break;
      case 'header':
        ok = c.req.header(auth.name) === auth.value;
        break;
      case 'query':
        ok = new URL(c.req.url).searchParams.get(auth.name) === auth.value;
        break;
      case 'basic':
        ok = authz === `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
        break;
      case 'oauth2': {
        const token = authz.replace(/^Bearer /, '');
        ok = (valid.get(token) ?? 0) > Date.now() && !revoked.has(token);
        break;
      }
    }
    if (!ok) return c.json({ error: `unauthorized; the request had authorization "${authz}"` }, 401);
    await next();
  });

  // Documented, not validated by zod-openapi (which does not parse `style`): the answer shows the raw request.
  app.openAPIRegistry.registerPath(
    createRoute({
      method: 'get',
      path: '/api/items/{id}',
      operationId: 'getItem',
      summary: 'Get one item',
      tags: ['items'],
      request: {
        params: z.object({ id: z.string().meta({ param: { name: 'id', in: 'path' }, description: 'Item id' }) }),
        query: z.object({
          fields: z
            .array(z.string())
            .optional()
            .meta({
              param: { name: 'fields', in: 'query', style: 'form', explode: false },
              description: 'Fields to return',
            }),
          tag: z
            .array(z.string())
            .optional()
            .meta({ param: { name: 'tag', in: 'query', style: 'form', explode: true } }),
          sort: z
            .enum(['asc', 'desc'])
            .optional()
            .meta({ param: { name: 'sort', in: 'query' } }),
          api_key: z
            .string()
            .optional()
            .meta({ param: { name: 'api_key', in: 'query' }, description: 'The API key (when it is not in a header)' }),
        }),
        headers: z.object({
          'x-tenant': z
            .string()
            .meta({ param: { name: 'x-tenant', in: 'header', required: true }, description: 'Tenant' }),
        }),
      },
      responses: { 200: json(Item), 404: json(Problem, 'No such item') },
    }),
  );
  app.get('/api/items/:id', (c) => {
    const url = new URL(c.req.url);
    return c.json(
      {
        id: c.req.param('id'),
        name: `raw:${url.pathname}?${url.search.slice(1)}`,
        category: 'book' as const,
        tags: [c.req.header('x-tenant') ?? ''],
      },
      200,
    );
  });

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/items',
      operationId: 'createItem',
      summary: 'Create an item',
      tags: ['items'],
      request: { body: { required: true, content: { 'application/json': { schema: NewItem } } } },
      responses: { 201: json(Item, 'Created') },
    }),
    async (c) => {
      const body = (await c.req.json()) as z.infer<typeof NewItem>;
      return c.json(
        { id: 'new-1', name: body.name, category: body.category, tags: [JSON.stringify(body.dimensions ?? null)] },
        201,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/items/{id}',
      operationId: 'deleteItem',
      tags: ['items'],
      request: { params: z.object({ id: z.string() }) },
      responses: { 204: { description: 'Deleted' } },
    }),
    (c) => c.body(null, 204),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/missing',
      operationId: 'missing',
      summary: 'Always 404',
      responses: { 404: json(Problem, 'Not found') },
    }),
    (c) => c.json({ error: 'nothing here' }, 404),
  );
  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/broken',
      operationId: 'broken',
      summary: 'Always 500',
      responses: { 500: json(Problem, 'Broken') },
    }),
    (c) => c.json({ error: 'the database is on fire' }, 500),
  );
  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/slow',
      operationId: 'slow',
      summary: 'Answers after ms milliseconds',
      request: { query: z.object({ ms: z.coerce.number().int() }) },
      responses: { 200: json(z.object({ waited: z.number() })) },
    }),
    async (c) => {
      const ms = Number(c.req.query('ms'));
      await new Promise((r) => setTimeout(r, ms));
      return c.json({ waited: ms }, 200);
    },
  );
  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/big',
      operationId: 'big',
      summary: 'n bytes of text',
      request: { query: z.object({ n: z.coerce.number().int() }) },
      responses: { 200: { description: 'text', content: { 'text/plain': { schema: z.string() } } } },
    }),
    (c) => c.text('x'.repeat(Number(c.req.query('n'))), 200),
  );
  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/events',
      operationId: 'events',
      summary: 'Three events',
      responses: { 200: { description: 'events', content: { 'text/event-stream': { schema: z.string() } } } },
    }),
    () => {
      const enc = new TextEncoder();
      const stream = new ReadableStream({
        async start(controller) {
          for (let i = 1; i <= 3; i++) {
            controller.enqueue(enc.encode(`event: tick\nid: ${i}\ndata: {"n":${i}}\n\n`));
            await new Promise((r) => setTimeout(r, 20));
          }
          controller.close();
        },
      });
      return new Response(stream, { headers: { 'content-type': 'text/event-stream' } }) as never;
    },
  );
  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/elsewhere',
      operationId: 'elsewhere',
      summary: 'Redirects to another origin',
      responses: { 302: { description: 'Redirect' } },
    }),
    (c) => c.redirect(`${options.otherOrigin ?? 'http://127.0.0.1:9'}/landing`, 302) as never,
  );
  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/here',
      operationId: 'here',
      summary: 'Redirects within the origin',
      responses: { 302: { description: 'Redirect' } },
    }),
    (c) => c.redirect('/api/items/moved?sort=asc', 302) as never,
  );
  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/old',
      operationId: 'oldThing',
      summary: 'Deprecated',
      deprecated: true,
      responses: { 200: json(z.object({ old: z.boolean() })) },
    }),
    (c) => c.json({ old: true }, 200),
  );
  app.post('/api/forms', async (c) => c.json({ got: await c.req.text() }));
  app.post('/api/trees', async (c) => c.json(await c.req.json()));

  app.get('/openapi.json', (c) => {
    const doc = app.getOpenAPIDocument({
      openapi: '3.0.3',
      info: { title: 'Test API', version: '1.0.0' },
      servers: [{ url: '/' }],
    }) as any;
    // What zod-openapi does not write: a form-only body and a recursive schema.
    doc.paths['/api/forms'] = {
      post: {
        operationId: 'submitForm',
        requestBody: {
          required: true,
          content: {
            'application/x-www-form-urlencoded': {
              schema: {
                type: 'object',
                properties: { name: { type: 'string' }, colors: { type: 'array', items: { type: 'string' } } },
                required: ['name'],
              },
            },
          },
        },
        responses: { 200: { description: 'OK' } },
      },
    };
    doc.components.schemas.Tree = {
      type: 'object',
      properties: {
        label: { type: 'string' },
        children: { type: 'array', items: { $ref: '#/components/schemas/Tree' } },
      },
      required: ['label'],
    };
    doc.paths['/api/trees'] = {
      post: {
        operationId: 'plantTree',
        requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Tree' } } } },
        responses: { 200: { description: 'OK' } },
      },
    };
    return c.json(doc);
  });

  const server = createAdaptorServer({ fetch: app.fetch });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    issued,
    revoked,
    async close() {
      (server as unknown as { closeAllConnections(): void }).closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A server that answers every request with what it got: `{ method, url, headers, body }` (the other origin of the redirect tests). */
export async function startEchoServer(): Promise<TestApi> {
  const requests: TestApi['requests'] = [];
  const server = createAdaptorServer({
    fetch: async (req: Request) => {
      const seen = {
        method: req.method,
        url: req.url.replace(/^https?:\/\/[^/]+/, ''),
        headers: Object.fromEntries(req.headers),
        body: await req.text(),
      };
      requests.push(seen);
      return Response.json(seen);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    issued: [],
    revoked: new Set(),
    async close() {
      (server as unknown as { closeAllConnections(): void }).closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
