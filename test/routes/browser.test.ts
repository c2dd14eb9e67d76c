/**
 * A real Chromium, through a real nginx (same origin: the test page and the
 * gateway are both behind it): `new EventSource(events_url)` on a running
 * call, cut by an nginx reload and resumed by the browser itself; and the
 * /docs page with no network beyond 127.0.0.1.
 */
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { gatedPlugin } from '../helpers/gated.js';
import { readmeLocationBlock, startNginx, type Nginx } from '../helpers/nginx.js';
import { startGateway, type TestGateway } from '../helpers/server.js';

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>watch a call</title></head>
<body><pre id="log"></pre>
<script>
  // Start a call resource and follow it with a plain EventSource, reporting everything to the test.
  window.watch = async (key, steps) => {
    const res = await fetch('/a2e/tool/calls', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ tool_name: 'gated', arguments: { key, steps } }),
    });
    const call = await res.json();
    const es = new EventSource(call.events_url);
    window.es = es;
    es.addEventListener('open', () => window.report({ type: 'open' }));
    es.addEventListener('error', () => window.report({ type: 'error', readyState: es.readyState }));
    es.addEventListener('tool/event', (e) => window.report({ type: 'event', id: e.lastEventId, event: JSON.parse(e.data) }));
    // Deliberately not closed here: the gateway's 204 on reconnect must stop EventSource by itself.
    es.addEventListener('tool/call/resp', (e) => window.report({ type: 'resp', id: e.lastEventId, resp: JSON.parse(e.data) }));
    return { status: res.status, ...call };
  };
</script></body></html>`;

interface Report {
  type: 'open' | 'error' | 'event' | 'resp';
  id?: string;
  readyState?: number;
  event?: { seq: number; kind: string; data: { message: string } };
  resp?: { type: string; data: { success: boolean; data: unknown } };
}

const gates = gatedPlugin();
let gw: TestGateway;
let nginx: Nginx;
let browser: Browser;
beforeAll(async () => {
  gw = await startGateway({
    plugins: [gates.plugin],
    config: { server: { base_path: '/a2e', trust_proxy: true, heartbeat_s: 1 }, calls: { retry_ms: 200 } },
  });
  nginx = await startNginx({
    server: await readmeLocationBlock(Number(new URL(gw.url).port)),
    files: { 'page.html': PAGE },
    // On reload, old workers drop open streams after 200 ms: a real mid-stream cut.
    main: 'worker_shutdown_timeout 200ms;',
  });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await nginx?.stop();
  await gw?.close();
});

/** What the page reported, and a way to wait for a report. */
async function reporter(page: Page) {
  const reports: Report[] = [];
  const waiters: { pred: (r: Report[]) => boolean; resolve: () => void }[] = [];
  await page.exposeFunction('report', (r: Report) => {
    reports.push(r);
    for (const w of [...waiters]) {
      if (w.pred(reports)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  });
  const until = (what: string, pred: (r: Report[]) => boolean, ms = 15_000) =>
    new Promise<void>((resolve, reject) => {
      if (pred(reports)) return resolve();
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `browser: ${what} did not happen within ${ms} ms; reports: ${JSON.stringify(reports.map((r) => [r.type, r.id ?? r.readyState]))}`,
            ),
          ),
        ms,
      );
      waiters.push({ pred, resolve: () => (clearTimeout(timer), resolve()) });
    });
  return { reports, until };
}

describe('Chromium', () => {
  it('EventSource follows a running call, survives a cut (nginx reload) by resuming itself, and stops after the result', async () => {
    const page = await browser.newPage();
    const { reports, until } = await reporter(page);
    const eventRequests: { lastEventId: string | undefined; status: number }[] = [];
    page.on('response', async (res) => {
      if (!res.url().includes('/events')) return;
      const headers = await res.request().allHeaders();
      eventRequests.push({ lastEventId: headers['last-event-id'], status: res.status() });
    });
    await page.goto(`${nginx.url}/page.html`);
    const steps = 6;
    const key = 'browser-1';
    const call = await page.evaluate(([k, n]) => (window as any).watch(k, n), [key, steps] as const);
    expect(call.status).toBe(202);
    expect(call.events_url).toBe(`${nginx.url}/a2e/tool/calls/${call.call_id}/events`);

    const events = () => reports.filter((r) => r.type === 'event');
    // Events 0 and 1 arrive live; the tool waits on the test after each.
    await until('event 0', () => events().length >= 1);
    gates.open(key, 0);
    await until('event 1', () => events().length >= 2);

    // Cut the stream: reload nginx; the old worker drops the connection, EventSource reconnects with Last-Event-ID.
    await nginx.reload();
    gates.open(key, 1); // event 2 is emitted around the cut: it must come exactly once either way
    await until('the reconnect after the cut', (r) => r.filter((x) => x.type === 'open').length >= 2);
    for (let i = 2; i < steps; i++) {
      await until(`event ${i}`, () => events().length >= i + 1);
      gates.open(key, i);
    }
    await until('the final response', (r) => r.some((x) => x.type === 'resp'));
    // After the response the stream ends; EventSource reconnects once, gets 204, and stops for good.
    await until('EventSource closed', (r) => r.some((x) => x.type === 'error' && x.readyState === 2));

    expect(events().map((r) => r.event!.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(events().map((r) => r.id)).toEqual(['0', '1', '2', '3', '4', '5']);
    expect(events()[3]!.event).toMatchObject({ kind: 'progress', data: { message: 'step 3' } });
    const resp = reports.find((r) => r.type === 'resp')!;
    expect(resp.id).toBe('6');
    expect(resp.resp).toMatchObject({ type: 'tool/call/resp', data: { success: true, data: { key, steps } } });
    expect(reports.filter((r) => r.type === 'resp')).toHaveLength(1);
    expect(await page.evaluate(() => (window as any).es.readyState)).toBe(2);
    // The requests the browser made: first, the resume after the cut, the one after the end.
    await expect.poll(() => eventRequests.length).toBe(3);
    expect(eventRequests[0]).toEqual({ lastEventId: undefined, status: 200 });
    expect(eventRequests[1]!.status).toBe(200);
    expect(['1', '2']).toContain(eventRequests[1]!.lastEventId);
    expect(eventRequests[2]).toEqual({ lastEventId: '6', status: 204 });
    await page.close();
  });

  it('the /docs page lists the operations with no network beyond 127.0.0.1', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const blocked: string[] = [];
    await context.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === '127.0.0.1') return route.continue();
      blocked.push(url.href);
      return route.abort('internetdisconnected');
    });
    await page.goto(`${nginx.url}/a2e/docs`);
    await page.waitForSelector('.opblock-summary-path', { timeout: 20_000 });
    const paths = await page.$$eval('.opblock .opblock-summary', (els) =>
      els.map(
        (el) =>
          `${el.querySelector('.opblock-summary-method')?.textContent} ${el.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`,
      ),
    );
    expect(paths).toEqual(
      expect.arrayContaining([
        'POST /tool/list',
        'POST /tool/call',
        'POST /tool/calls',
        'GET /tool/calls/{id}',
        'DELETE /tool/calls/{id}',
        'GET /tool/calls/{id}/events',
        'GET /healthz',
      ]),
    );
    expect(await page.textContent('.servers')).toContain('/a2e');
    const dir = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
    await mkdir(dir, { recursive: true });
    const shot = `${dir}docs.png`;
    await page.screenshot({ path: shot, fullPage: true });
    console.log(
      `[browser] /docs screenshot: ${shot}${blocked.length ? `; outside requests blocked: ${blocked.join(', ')}` : '; no outside requests were attempted'}`,
    );
    await context.close();
  });
});
