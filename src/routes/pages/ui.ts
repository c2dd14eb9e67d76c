/**
 * GET /ui: the console, a single page built by Vite from ui/ into dist/ui
 * (`npm run build`) and served from the package itself — no CDN, no external
 * font or script — under a strict Content-Security-Policy: only this origin's
 * own scripts, styles and connections.
 */
import { readFile } from 'node:fs/promises';
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { z } from 'zod';
import { GatewayError } from '../../engine/index.js';
import { distFile } from '../../package-root.js';
import { ErrorMessage } from '../../protocol/index.js';

/** Headers of every console answer. `connect-src 'self'` covers fetch and EventSource to the gateway. */
export const UI_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
};

export const uiRoute = createRoute({
  method: 'get',
  path: '/ui',
  operationId: 'console',
  tags: ['meta'],
  summary: 'The console: tools, a form to run them, live activity, agents (a web page)',
  description: 'Served when `ui.enabled` is true (default: on a loopback bind, or when `auth` is on).',
  responses: {
    200: {
      description: 'An HTML page',
      content: { 'text/html': { schema: z.string(), example: '<!doctype html><html lang="en">…</html>' } },
    },
    404: {
      description: 'The console is turned off (`ui.enabled: false`)',
      content: { 'application/json': { schema: ErrorMessage } },
    },
    503: {
      description: 'The console was not built in this installation (`unavailable`)',
      content: { 'application/json': { schema: ErrorMessage } },
    },
  },
});

export interface UiDeps {
  /** `ui.enabled`; undefined = on when the bind is loopback or auth is on. */
  enabled: boolean | undefined;
  authOn: boolean;
  loopbackBind: () => boolean;
  /** Where the built page is (default: dist/ui of this package). */
  dir?: string;
}

export function registerUiRoutes(app: OpenAPIHono, deps: UiDeps): void {
  const dir = (deps.dir ?? distFile('ui')).replace(/\/?$/, '/');
  const enabled = () => deps.enabled ?? (deps.loopbackBind() || deps.authOn);
  const off = () =>
    new GatewayError(
      'not_found',
      'the console is turned off on this gateway; set ui.enabled: true in the config to serve it at /ui',
    );
  const cache = new Map<string, Uint8Array>();
  const load = async (file: string): Promise<Uint8Array> => {
    let bytes = cache.get(file);
    if (!bytes) {
      try {
        bytes = new Uint8Array(await readFile(`${dir}${file}`));
      } catch {
        throw new GatewayError(
          'unavailable',
          'the console is not built in this installation; run `npm run build` (it builds dist/ui)',
        );
      }
      // Vite links assets relative to the page ("./assets/…"); the page is served at …/ui (no slash), so prefix ui/.
      if (file === 'index.html')
        bytes = new TextEncoder().encode(new TextDecoder().decode(bytes).replaceAll('"./assets/', '"ui/assets/'));
      cache.set(file, bytes);
    }
    return bytes;
  };

  app.openAPIRegistry.registerPath(uiRoute);
  app.get(uiRoute.path, async (c) => {
    if (!enabled()) throw off();
    const html = await load('index.html');
    return c.body(html as Uint8Array<ArrayBuffer>, 200, {
      ...UI_SECURITY_HEADERS,
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-cache',
    });
  });

  app.get('/ui/assets/:file', async (c) => {
    if (!enabled()) throw off();
    const file = c.req.param('file');
    const type = TYPES[file.slice(file.lastIndexOf('.') + 1)];
    if (!type || !/^[\w.-]+$/.test(file) || file.startsWith('.')) return c.notFound();
    let bytes: Uint8Array;
    try {
      bytes = await load(`assets/${file}`);
    } catch {
      return c.notFound();
    }
    // File names carry a content hash: cache for good.
    return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
      ...UI_SECURITY_HEADERS,
      'Content-Type': type,
      'Cache-Control': 'public, max-age=31536000, immutable',
    });
  });
}
