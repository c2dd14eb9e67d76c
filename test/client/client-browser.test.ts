/**
 * ToolAPI in a real Chromium: src/client bundled for the browser by Vite (no
 * Node built-ins available), loaded from the gateway's own origin, driving
 * list, a streaming call with live events, and a refused call.
 */
import type { Browser, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolContext } from '../../src/index.js';
import { launchChromium } from '../helpers/browser.js';
import { definePlugin, echoTool } from '../helpers/plugins.js';
import { startGateway, type TestGateway } from '../helpers/server.js';

const plugin = definePlugin('browser', [
  echoTool,
  [
    {
      name: 'count',
      description: 'Counts to n with a progress event per step',
      input_parameters: [{ name: 'n', type: 'integer', description: 'n', required: true }],
    },
    (args, ctx: ToolContext) => {
      for (let i = 1; i <= Number(args.n); i++)
        ctx.emit('progress', { pct: Math.round((i / Number(args.n)) * 100), message: `step ${i}` });
      return { counted: args.n };
    },
  ],
]);

let gw: TestGateway;
let browser: Browser;
let page: Page;
beforeAll(async () => {
  const out = await build({
    configFile: false,
    logLevel: 'silent',
    build: { write: false, minify: false, lib: { entry: 'src/client/index.ts', formats: ['es'], fileName: 'client' } },
  });
  const bundle = (out as { output: { code: string }[] }[])[0]!.output[0]!.code;
  gw = await startGateway({ plugins: [plugin] });
  browser = await launchChromium();
  page = await browser.newPage();
  // The page and the bundle are served "from the gateway's origin" by the browser itself, so the client's
  // requests are same-origin; every other request goes to the real gateway.
  await page.route(`${gw.url}/test-page/**`, (route) => {
    const url = route.request().url();
    if (url.endsWith('/client.js')) return route.fulfill({ contentType: 'text/javascript', body: bundle });
    return route.fulfill({
      contentType: 'text/html',
      body: `<!doctype html><title>client</title><script type="module">import { ToolAPI } from './client.js'; window.ToolAPI = ToolAPI;</script>`,
    });
  });
  await page.goto(`${gw.url}/test-page/index.html`);
  await page.waitForFunction(() => 'ToolAPI' in window);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

describe('ToolAPI in Chromium', () => {
  it('lists, streams a call with its events, and turns a refusal into a result', async () => {
    const out = await page.evaluate(async () => {
      const { ToolAPI } = window as unknown as { ToolAPI: typeof import('../../src/client/index.js').ToolAPI };
      const api = new ToolAPI(location.origin);
      const tools = (await api.list()).map((t) => t.name);
      const seen: string[] = [];
      const result = await api.call(
        'count',
        { n: 3 },
        { onEvent: (e) => seen.push(`${e.kind}:${(e.data as { message: string }).message}`) },
      );
      const refused = await api.call('nope', {});
      return { tools, seen, result, refused, node: typeof (globalThis as { process?: unknown }).process };
    });
    expect(out.node).toBe('undefined'); // really a browser
    expect(out.tools).toEqual(['echo', 'count']);
    expect(out.seen).toEqual(['progress:step 1', 'progress:step 2', 'progress:step 3']);
    expect(out.result).toMatchObject({ success: true, data: { counted: 3 } });
    expect(out.result.events).toHaveLength(3);
    expect(out.refused).toMatchObject({ success: false, error_code: 'unknown_tool' });
  });
});
