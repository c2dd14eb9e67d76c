/**
 * /docs under a Content-Security-Policy and framing protection (issue 20,
 * finding 7): the headers are on every HTML answer and its assets; a real
 * Chromium renders Swagger UI and runs a request from it with no CSP
 * violation; a page on another origin cannot frame it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { startGateway, type TestGateway } from '../helpers/server.js';

let gw: TestGateway;
let browser: Browser;
let framer: Server;
let framerUrl: string;

beforeAll(async () => {
  gw = await startGateway();
  browser = await launchChromium();
  // Another origin (another port) whose page tries to frame the docs.
  framer = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(
      `<!doctype html><title>framer</title><iframe id="f" src="${gw.url}/docs" width="800" height="600"></iframe>`,
    );
  });
  await new Promise<void>((resolve) => framer.listen(0, '127.0.0.1', resolve));
  framerUrl = `http://127.0.0.1:${(framer.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await browser?.close();
  framer?.closeAllConnections();
  await new Promise((resolve) => framer?.close(resolve));
  await gw?.close();
});

describe('/docs security headers', () => {
  it('the page and its assets carry a CSP with frame-ancestors none, X-Frame-Options DENY and nosniff', async () => {
    for (const path of ['/docs', '/docs/init.js', '/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css']) {
      const r = await fetch(`${gw.url}${path}`);
      expect(r.status, path).toBe(200);
      const csp = r.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe');
      expect(r.headers.get('x-frame-options')).toBe('DENY');
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
      await r.arrayBuffer();
    }
  });

  it('Swagger UI renders and runs "Try it out" in Chromium with no CSP violation', async () => {
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) =>
        console.error(`Content Security Policy violation: ${e.violatedDirective} ${e.blockedURI}`),
      );
    });
    await page.goto(`${gw.url}/docs`);
    await page.waitForSelector('#operations-meta-health .opblock-summary', { timeout: 20_000 });
    await page.click('#operations-meta-health .opblock-summary');
    await page.click('#operations-meta-health .try-out__btn');
    // The request Swagger UI makes (connect-src 'self'), and its answer shown on the page.
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${gw.url}/healthz`, { timeout: 20_000 }),
      page.click('#operations-meta-health .execute'),
    ]);
    expect(response.status()).toBe(200);
    await page.waitForSelector('#operations-meta-health >> text=Server response', { timeout: 20_000 });
    expect(await page.textContent('#operations-meta-health')).toContain('"running_calls"');
    expect(violations).toEqual([]);
    await page.close();
  }, 60_000);

  it('a page on another origin cannot frame it', async () => {
    const page = await browser.newPage();
    await page.goto(framerUrl);
    const frame = await (await page.waitForSelector('#f')).contentFrame();
    // Give the frame time to load what it would (the framer page itself has loaded).
    await page.waitForLoadState('load');
    expect(frame).not.toBeNull();
    // Blocked by frame-ancestors: the frame holds Chromium's error page, never the Swagger UI.
    expect(frame!.url()).not.toBe(`${gw.url}/docs`);
    expect(await frame!.$('#swagger-ui')).toBeNull();
    await page.close();
  }, 60_000);
});
