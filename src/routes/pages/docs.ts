/**
 * GET /openapi.json, GET /docs (Swagger UI, served from the package itself
 * so it works without internet) and GET /healthz.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { z } from 'zod';
import type { Engine } from '../../engine/index.js';
import type { StoreHealth } from '../../store/index.js';
import { jsonResponse } from '../http/respond.js';

const require = createRequire(import.meta.url);

/** The static Swagger UI files we serve, by their public name. */
const UI_FILES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>a2e-gateway API</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="icon" href="docs/favicon-32x32.png">
  <link rel="stylesheet" href="docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="docs/swagger-ui-bundle.js"></script>
  <script src="docs/init.js"></script>
</body>
</html>
`;

/**
 * Headers of every HTML answer (and of the docs assets): the page may load
 * scripts, styles and images from this gateway only, fetch only from it, run
 * no inline or evaluated script, and never be framed (clickjacking). Swagger
 * UI sets styles through the DOM (not inline markup), which CSP allows.
 */
export const HTML_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self' data:; " +
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
});

// Relative URL: works under any base path or proxy prefix.
const DOCS_INIT = `window.ui = SwaggerUIBundle({ url: new URL('openapi.json', document.baseURI).href, dom_id: '#swagger-ui', deepLinking: true });\n`;

export const StoreStatus = z
  .object({
    kind: z.enum(['memory', 'redis']).meta({ description: 'store.kind' }),
    ok: z.boolean().meta({ description: 'Whether the store answers; false makes /healthz answer 503' }),
    error: z.string().optional().meta({ description: 'Why it does not, in words' }),
  })
  .meta({ id: 'StoreStatus' });

export const UnavailableToolStatus = z
  .object({
    name: z.string().meta({ description: 'The tool, e.g. run_command' }),
    reason: z.string().meta({ description: 'Why this host cannot offer it, and what would fix it' }),
  })
  .meta({ id: 'UnavailableToolStatus' });

export const Health = z
  .object({
    status: z
      .enum(['ok', 'degraded'])
      .meta({ description: '"degraded" (HTTP 503) while the shared store is unreachable: what needs it answers 503' }),
    tools: z.int().meta({ description: 'Number of tools registered' }),
    running_calls: z.int().meta({ description: 'Calls currently running' }),
    uptime_s: z.number(),
    store: StoreStatus,
    unavailable_tools: z.array(UnavailableToolStatus).optional().meta({
      description:
        'Tools the gateway would offer but cannot on this host (e.g. run_command without a sandbox), and why; absent when none',
    }),
  })
  .meta({ id: 'Health' });

export const healthRoute = createRoute({
  method: 'get',
  path: '/healthz',
  operationId: 'health',
  tags: ['meta'],
  summary: 'Liveness and a few counters',
  responses: {
    200: {
      description: 'The gateway is up',
      content: {
        'application/json': {
          schema: Health,
          example: { status: 'ok', tools: 12, running_calls: 0, uptime_s: 3600.5, store: { kind: 'memory', ok: true } },
        },
      },
    },
    503: {
      description: 'The gateway is up but its shared store (store.kind: redis) is not reachable',
      content: {
        'application/json': {
          schema: Health,
          example: {
            status: 'degraded',
            tools: 12,
            running_calls: 0,
            uptime_s: 3600.5,
            store: { kind: 'redis', ok: false, error: 'connection refused' },
          },
        },
      },
    },
  },
});

export const openapiRoute = createRoute({
  method: 'get',
  path: '/openapi.json',
  operationId: 'openapi',
  tags: ['meta'],
  summary: 'This OpenAPI document',
  responses: {
    200: {
      description: 'The OpenAPI 3.1 document, generated from the schemas that validate requests',
      content: {
        'application/json': {
          schema: z.record(z.string(), z.unknown()),
          example: { openapi: '3.1.0', info: { title: 'a2e-gateway', version: '0.1.0' }, paths: {} },
        },
      },
    },
  },
});

export const docsRoute = createRoute({
  method: 'get',
  path: '/docs',
  operationId: 'docs',
  tags: ['meta'],
  summary: 'Interactive API documentation (works offline)',
  responses: {
    200: {
      description: 'An HTML page (Swagger UI)',
      content: { 'text/html': { schema: z.string(), example: '<!doctype html><html lang="en">…</html>' } },
    },
  },
});

export interface DocsDeps {
  engine: Engine;
  /** The OpenAPI document, built once. */
  document: () => unknown;
  /** The store's state (default: memory, always ok). */
  store?: () => StoreHealth;
}

const MEMORY_STORE: StoreHealth = { kind: 'memory', ok: true };

export function registerDocsRoutes(app: OpenAPIHono, deps: DocsDeps): void {
  const started = Date.now();
  app.openAPIRegistry.registerPath(healthRoute);
  app.get(healthRoute.path, (c) => {
    const store = deps.store?.() ?? MEMORY_STORE;
    const health: z.output<typeof Health> = {
      status: store.ok ? 'ok' : 'degraded',
      tools: deps.engine.registry.all().length,
      running_calls: deps.engine.running,
      uptime_s: (Date.now() - started) / 1000,
      store,
    };
    const unavailable = deps.engine.registry.allUnavailable();
    if (unavailable.length > 0) health.unavailable_tools = unavailable;
    return jsonResponse(c, health, store.ok ? 200 : 503, store.ok ? undefined : { 'Retry-After': '1' });
  });

  app.openAPIRegistry.registerPath(openapiRoute);
  app.get(openapiRoute.path, (c) => jsonResponse(c, deps.document()));

  app.openAPIRegistry.registerPath(docsRoute);
  app.get(docsRoute.path, (c) => c.html(DOCS_HTML, 200, HTML_SECURITY_HEADERS));

  const uiDir = dirname(require.resolve('swagger-ui-dist/package.json'));
  const cache = new Map<string, Uint8Array>();
  // One parametric route (not a static /docs/init.js beside it): Hono's fastest router, RegExpRouter,
  // cannot mix the two at the same position and would leave every request to the slower TrieRouter.
  app.get('/docs/:file', async (c) => {
    const file = c.req.param('file');
    if (file === 'init.js')
      return c.body(DOCS_INIT, 200, { ...HTML_SECURITY_HEADERS, 'Content-Type': 'text/javascript; charset=utf-8' });
    const type = UI_FILES[file];
    if (!type) return c.notFound();
    let bytes = cache.get(file);
    if (!bytes) {
      bytes = new Uint8Array(await readFile(join(uiDir, file)));
      cache.set(file, bytes);
    }
    return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
      ...HTML_SECURITY_HEADERS,
      'Content-Type': type,
      'Cache-Control': 'public, max-age=86400',
    });
  });
}
