/**
 * The console (GET /ui) in a real Chromium against a real gateway (under a
 * base path), with every request that is not to 127.0.0.1 blocked: tools
 * listed, searched and filtered; a form generated from nested and enum
 * parameters showing the gateway's own 422 problems under the fields; a
 * gated call streaming progress, logs and an artifact while it provably
 * runs; cancel; live activity in a second tab; a reload mid-call; auth with
 * a wrong and an allow-listed token; axe-core; screenshots.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAPIHono } from '@hono/zod-openapi';
import type { ToolContext } from '../../src/index.js';
import { asGatewayError, errorResponse } from '../../src/routes/http/errors.js';
import { registerUiRoutes } from '../../src/routes/pages/ui.js';
import { launchChromium } from '../helpers/browser.js';
import { gatedPlugin } from '../helpers/gated.js';
import { deferred, definePlugin } from '../helpers/plugins.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

/** `stepper` emits progress, a log line and an artifact chunk for step i, then waits until the test opens gate i. */
function stepperPlugin() {
  const gates = new Map<string, ReturnType<typeof deferred<void>>>();
  const gate = (key: string, i: number) => {
    let d = gates.get(`${key}#${i}`);
    if (!d) gates.set(`${key}#${i}`, (d = deferred()));
    return d;
  };
  const emitted = new Map<string, number>();
  const plugin = definePlugin('console-test', [
    [
      {
        name: 'stepper',
        description: 'Reports each step (progress, a log line, a piece of report.txt), then waits for the test',
        tags: ['test'],
        input_parameters: [
          { name: 'key', type: 'string', description: 'Names this call for the test', required: true },
          { name: 'steps', type: 'integer', description: 'Number of steps', required: true },
        ],
      },
      async (args, ctx: ToolContext) => {
        const key = String(args.key);
        const steps = Number(args.steps);
        for (let i = 0; i < steps; i++) {
          ctx.emit('progress', { pct: Math.round((i / steps) * 100), message: `step ${i}` });
          ctx.emit('log', { level: 'info', message: `line ${i}` });
          ctx.emit('artifact', {
            name: 'report.txt',
            mime: 'text/plain',
            chunk: `part ${i}\n`,
            final: i === steps - 1,
          });
          emitted.set(key, i + 1);
          await gate(key, i).promise;
        }
        return { key, steps, report: 'report.txt' };
      },
    ],
    [
      {
        name: 'deploy',
        description: 'Deploy a service (nested and enum parameters)',
        kind: 'demo',
        tags: ['ops'],
        input_parameters: [
          { name: 'service', type: 'string', description: 'Service to deploy', required: true },
          { name: 'env', type: 'string', description: 'Target environment', required: true, enum: ['staging', 'prod'] },
          { name: 'replicas', type: 'integer', description: 'How many instances to run' },
          {
            name: 'options',
            type: 'object',
            description: 'Rollout options',
            properties: {
              strategy: {
                name: 'strategy',
                type: 'string',
                description: 'Rollout strategy',
                enum: ['rolling', 'blue-green'],
              },
              max_surge: {
                name: 'max_surge',
                type: 'integer',
                description: 'Extra instances during the rollout',
                required: true,
              },
              dry_run: { name: 'dry_run', type: 'boolean', description: 'Only print the plan' },
            },
          },
          { name: 'labels', type: 'array', description: 'Labels to attach' },
        ],
      },
      (args) => ({ deployed: args }),
    ],
    [
      { name: 'archive_logs', description: 'Archive old log files into a tarball', tags: ['ops'], defer_loading: true },
      () => ({ archived: 0 }),
    ],
  ]);
  return {
    plugin,
    open: (key: string, i: number) => gate(key, i).resolve(),
    emitted: (key: string) => emitted.get(key) ?? 0,
  };
}

const gates = gatedPlugin();
const stepper = stepperPlugin();
const ADMIN = 'admin-token-0123456789';
const LIMITED = 'limited-token-0123456789';
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

let gw: TestGateway;
let authGw: TestGateway;
let browser: Browser;
beforeAll(async () => {
  gw = await startGateway({
    plugins: [gates.plugin, stepper.plugin],
    config: { server: { base_path: '/a2e', heartbeat_s: 1 } },
  });
  authGw = await startGateway({
    plugins: [gates.plugin, stepper.plugin],
    config: {
      auth: {
        tokens: [
          { name: 'admin', token_sha256: sha256(ADMIN) },
          { name: 'limited', token_sha256: sha256(LIMITED), allow: ['echo'] },
        ],
      },
    },
  });
  browser = await launchChromium();
  await mkdir(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await authGw?.close();
});

interface Opened {
  context: BrowserContext;
  page: Page;
  /** Requests to anywhere but 127.0.0.1 (blocked). */
  outside: string[];
  /** Console errors and page errors (a CSP violation would show here). */
  errors: string[];
}

/** A fresh browser context whose requests outside 127.0.0.1 are blocked and recorded. */
async function openConsole(url: string, width = 1280): Promise<Opened> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const outside: string[] = [];
  await context.route('**/*', (route) => {
    const u = new URL(route.request().url());
    if (u.hostname === '127.0.0.1') return route.continue();
    outside.push(u.href);
    return route.abort('internetdisconnected');
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  return { context, page, outside, errors };
}

const toolNames = (page: Page) => page.$$eval('.tool-item', (els) => els.map((el) => (el as HTMLElement).dataset.tool));
const logLines = (page: Page) => page.$$eval('.call .logs li', (els) => els.map((el) => el.textContent));
const fieldError = (page: Page, path: string) => page.locator(`.field:has(> [name="${path}"]) > .error`);

async function runTool(
  page: Page,
  tool: string,
  values: Record<string, string>,
): Promise<{ call_id: string; events_url: string }> {
  await page.click(`.tool-item[data-tool="${tool}"]`);
  for (const [path, value] of Object.entries(values)) await page.fill(`[name="${path}"]`, value);
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/tool/calls') && r.request().method() === 'POST'),
    page.click('button:has-text("Run")'),
  ]);
  expect(response.status()).toBe(202);
  return (await response.json()) as { call_id: string; events_url: string };
}

// Each test drives one or two real browser tabs; a busy 2-core machine needs room.
describe('console', { timeout: 120_000 }, () => {
  it('is served under the base path with a strict CSP, and is off when ui.enabled is false', async () => {
    const res = await fetch(`${gw.url}/ui`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    const script = /src="(ui\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script, html).toBeDefined();
    expect(html).not.toMatch(/https?:\/\//); // nothing external
    const asset = await fetch(`${gw.url}/${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toContain('text/javascript');
    expect((await fetch(`${gw.url}/ui/assets/..%2Fpackage.json`)).status).toBe(404);

    // The default: on for a loopback bind or with auth, off otherwise (the route as createApp mounts it).
    for (const [loopback, authOn, expected] of [
      [true, false, 200],
      [false, true, 200],
      [false, false, 404],
    ] as const) {
      const app = new OpenAPIHono();
      app.onError((err, c) => errorResponse(c, asGatewayError(err)));
      registerUiRoutes(app, { enabled: undefined, authOn, loopbackBind: () => loopback });
      expect((await app.request('/ui')).status, `loopback ${loopback}, auth ${authOn}`).toBe(expected);
    }
    const off = await startGateway({ config: { ui: { enabled: false } } });
    try {
      const r = await fetch(`${off.url}/ui`);
      expect(r.status).toBe(404);
      expect((await r.json()).message).toContain('ui.enabled');
    } finally {
      await off.close();
    }
  });

  it('loads with every outside request blocked (none attempted), lists, searches and filters the tools', async () => {
    const { context, page, outside, errors } = await openConsole(`${gw.url}/ui`);
    await page.waitForSelector('.tool-item');
    expect((await toolNames(page)).sort()).toEqual(['burst', 'deploy', 'echo', 'gated', 'stepper']);

    // The gateway's search: best match first; a deferred tool only when asked for.
    await page.fill('input[type="search"]', 'echo the text');
    await expect.poll(() => toolNames(page).then((n) => n[0])).toBe('echo');
    await page.fill('input[type="search"]', 'archive log files');
    await expect.poll(() => page.textContent('.tools-side [role="status"]')).toMatch(/matching/);
    expect(await toolNames(page)).not.toContain('archive_logs');
    await page.check('text=Include deferred tools in search');
    await expect.poll(() => toolNames(page).then((n) => n[0])).toBe('archive_logs');

    // Filters: by kind and by tag.
    await page.fill('input[type="search"]', '');
    await page.uncheck('text=Include deferred tools in search');
    await page.selectOption('select >> nth=0', 'demo');
    await expect.poll(() => toolNames(page)).toEqual(['deploy']);
    await page.selectOption('select >> nth=0', '');
    await page.selectOption('select >> nth=1', 'text');
    await expect.poll(() => toolNames(page)).toEqual(['echo']);

    expect(outside).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('says which tools this host cannot offer, and why (run_command without a sandbox, say)', async () => {
    // A real plugin that cannot offer its tool here, as the shell plugin does when no sandbox can be made.
    const hostBound = {
      name: 'host-bound',
      listTools: () => [],
      executeTool: () => null,
      unavailableTools: () => [
        {
          tool: { name: 'render_video', description: 'Render a video on the GPU', input_parameters: [] },
          reason: 'this host has no GPU; run the gateway on one that has',
        },
      ],
    };
    const g = await startGateway({ plugins: [stepper.plugin, hostBound] });
    try {
      const { context, page, errors } = await openConsole(`${g.url}/ui`);
      await expect
        .poll(() => page.textContent('#health'))
        .toContain('render_video is unavailable: this host has no GPU; run the gateway on one that has');
      expect(await page.textContent('#health')).toMatch(/^3 tools registered/);
      expect(errors).toEqual([]);
      await context.close();
    } finally {
      await g.close();
    }
  });

  it("generates the form from nested and enum parameters, and shows the gateway's 422 problems under the fields", async () => {
    const { context, page, errors } = await openConsole(`${gw.url}/ui`);
    await page.click('.tool-item[data-tool="deploy"]');
    // Enum → select with its values; nested object → a fieldset of its own fields; required marks; help text.
    expect(await page.$$eval('select[name="arguments.env"] option', (os) => os.map((o) => o.textContent))).toEqual([
      '— choose —',
      'staging',
      'prod',
    ]);
    expect(
      await page.$$eval('select[name="arguments.options.strategy"] option', (os) =>
        os.map((o) => (o as HTMLOptionElement).value),
      ),
    ).toEqual(['', 'rolling', 'blue-green']);
    expect(await page.textContent('fieldset.nested legend')).toContain('options');
    expect(await page.getAttribute('[name="arguments.options.max_surge"]', 'aria-required')).toBe('true');
    expect(await page.getAttribute('[name="arguments.replicas"]', 'aria-required')).toBeNull();
    expect(await page.textContent('.field:has(> [name="arguments.service"]) .help')).toBe('Service to deploy');
    const serviceLabel = await page.getAttribute('[name="arguments.service"]', 'id');
    expect(await page.textContent(`label[for="${serviceLabel}"]`)).toContain('(required)');

    // Wrong values go to the gateway as typed; its 422 names each field, and the page shows it there.
    await page.fill('[name="arguments.service"]', 'billing');
    await page.selectOption('[name="arguments.env"]', 'prod');
    await page.fill('[name="arguments.replicas"]', 'three');
    await page.fill('[name="arguments.options.max_surge"]', '1.5');
    const [refusal] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/tool/calls')),
      page.click('button:has-text("Run")'),
    ]);
    expect(refusal.status()).toBe(422);
    const problems = ((await refusal.json()) as { detail: { problems: { path: string; message: string }[] } }).detail
      .problems;
    expect(problems).toEqual(
      expect.arrayContaining([
        { path: 'arguments.replicas', message: 'expected integer, got string' },
        { path: 'arguments.options.max_surge', message: 'expected integer, got number' },
      ]),
    );
    await expect.poll(() => fieldError(page, 'arguments.replicas').textContent()).toBe('expected integer, got string');
    expect(await fieldError(page, 'arguments.options.max_surge').textContent()).toBe('expected integer, got number');
    expect(await page.getAttribute('[name="arguments.replicas"]', 'aria-invalid')).toBe('true');
    expect(await fieldError(page, 'arguments.service').isHidden()).toBe(true);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('arguments.replicas');

    // Fixed: the call runs and its result is shown.
    await page.fill('[name="arguments.replicas"]', '3');
    await page.fill('[name="arguments.options.max_surge"]', '1');
    await page.selectOption('[name="arguments.options.dry_run"]', 'true');
    await page.fill('[name="arguments.labels"]', '["blue", "eu"]');
    const [accepted] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/tool/calls')),
      page.click('button:has-text("Run")'),
    ]);
    expect(accepted.status()).toBe(202);
    await page.waitForSelector('.call.ok .result .json');
    expect(await fieldError(page, 'arguments.replicas').isHidden()).toBe(true);
    const result = await page.textContent('.call .result .json');
    for (const part of ['"billing"', '"prod"', '3', 'max_surge', 'true', '"eu"']) expect(result).toContain(part);
    // Chromium logs the 422 answer itself as a failed resource; nothing else went wrong.
    expect(errors.filter((e) => !/status of 422/.test(e))).toEqual([]);
    await context.close();
  });

  it('streams a call: progress, status, log lines and the artifact advance while the tool provably runs, then the result', async () => {
    const { context, page } = await openConsole(`${gw.url}/ui`);
    await page.waitForSelector('.tool-item');
    const key = 'ui-stream';
    const steps = 4;
    await runTool(page, 'stepper', { 'arguments.key': key, 'arguments.steps': String(steps) });
    for (let i = 0; i < steps; i++) {
      // The tool is parked on gate i: it has emitted step i and cannot finish, so what the page shows came live.
      await page.waitForFunction((n) => document.querySelectorAll('.call .logs li').length === n, i + 1);
      expect(stepper.emitted(key)).toBe(i + 1);
      expect(await page.$eval('.call progress', (p) => (p as HTMLProgressElement).value)).toBe(
        Math.round((i / steps) * 100),
      );
      expect(await page.textContent('.call .status')).toBe(`Running: step ${i}`);
      expect(await page.textContent('.call .artifact pre')).toBe(
        Array.from({ length: i + 1 }, (_, j) => `part ${j}\n`).join(''),
      );
      expect(await page.$('.call .result .json')).toBeNull();
      if (i === 2) {
        // Mid-call, for the docs: at 1280 and 375 px (no horizontal scrolling there).
        await page.screenshot({ path: `${ARTIFACTS}console-1280.png`, fullPage: true });
        await page.setViewportSize({ width: 375, height: 800 });
        await page.screenshot({ path: `${ARTIFACTS}console-375.png`, fullPage: true });
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
        await page.setViewportSize({ width: 1280, height: 900 });
      }
      stepper.open(key, i);
    }
    await page.waitForSelector('.call.ok .result .json');
    expect(await page.textContent('.call .status')).toMatch(/^Completed in \d+/);
    expect(await page.$eval('.call progress', (p) => (p as HTMLProgressElement).value)).toBe(100);
    expect(await logLines(page)).toEqual(['info line 0', 'info line 1', 'info line 2', 'info line 3']);
    expect(await page.textContent('.call .artifact summary')).toContain('report.txt (text/plain');
    expect(await page.textContent('.call .result .json')).toContain('"ui-stream"');
    expect(await page.textContent('.call .result')).toMatch(/Duration \d+/);
    await page.screenshot({ path: `${ARTIFACTS}console-done-1280.png`, fullPage: true });
    await context.close();
  });

  it('cancel stops the tool', async () => {
    const { context, page } = await openConsole(`${gw.url}/ui`);
    await page.waitForSelector('.tool-item');
    const key = 'ui-cancel';
    const { call_id } = await runTool(page, 'gated', { 'arguments.key': key, 'arguments.steps': '3' });
    await page.waitForFunction(() => document.querySelector('.call .status')?.textContent === 'Running: step 0');
    const aborted = gates.aborted(key);
    await page.click('button:has-text("Cancel call")');
    expect(await aborted).toMatch(/cancel/);
    await page.waitForSelector('.call.failed');
    expect(await page.textContent('.call .status')).toMatch(/^Canceled after/);
    expect(gw.gateway.engine.running).toBe(0);
    const resource = await (await fetch(`${gw.url}/tool/calls/${call_id}`)).json();
    expect(resource.state).toBe('canceled');
    await context.close();
  });

  it('a second tab sees a call appear in live activity within 1 s, and finish', async () => {
    const watcher = await openConsole(`${gw.url}/ui#activity`);
    await watcher.page.waitForFunction(() => document.querySelector('.live')?.textContent === '● Live');
    const runner = await openConsole(`${gw.url}/ui`);
    await runner.page.waitForSelector('.tool-item');
    // The watching tab notes (wall clock) when each call's row first appears.
    await watcher.page.evaluate(() => {
      const seen: Record<string, number> = ((window as any).seen = {});
      new MutationObserver(() => {
        for (const li of document.querySelectorAll<HTMLElement>('.activity li[data-call-id]'))
          seen[li.dataset.callId!] ??= Date.now();
      }).observe(document.body, { childList: true, subtree: true });
    });
    const key = 'ui-live';
    const { call_id } = await runTool(runner.page, 'gated', { 'arguments.key': key, 'arguments.steps': '2' });
    await watcher.page.waitForSelector(`.activity li[data-call-id="${call_id}"][data-state="running"]`, {
      timeout: 5000,
    });
    // From the call's start in the gateway to its row in the other tab.
    const { created_at } = await (await fetch(`${gw.url}/tool/calls/${call_id}`)).json();
    const shownAt: number = await watcher.page.evaluate((id) => (window as any).seen[id], call_id);
    console.log(`[ui] call shown in the other tab ${Math.round(shownAt - created_at * 1000)} ms after it started`);
    expect(shownAt - created_at * 1000).toBeLessThan(1000);
    expect(await watcher.page.textContent('#running-badge')).toBe('1');
    expect(await watcher.page.textContent(`.activity li[data-call-id="${call_id}"]`)).toContain('gated');

    // Watch it from the activity tab, then let it finish: both tabs see the end.
    await watcher.page.click(`.activity li[data-call-id="${call_id}"] button`);
    await watcher.page.waitForFunction(
      () => document.querySelector('.watch .call .status')?.textContent === 'Running: step 0',
    );
    gates.open(key, 0);
    gates.open(key, 1);
    await watcher.page.waitForSelector(`.activity li[data-call-id="${call_id}"][data-state="completed"]`);
    await watcher.page.waitForSelector('.watch .call.ok');
    await runner.page.waitForSelector('.call.ok');
    await watcher.page.screenshot({ path: `${ARTIFACTS}console-activity-1280.png`, fullPage: true });
    expect(watcher.outside).toEqual([]);
    await watcher.context.close();
    await runner.context.close();
  });

  it('live activity: every column starts at the same place in every row, whatever the row holds', async () => {
    const { context, page } = await openConsole(`${gw.url}/ui#activity`);
    await page.waitForFunction(() => document.querySelector('.live')?.textContent === '● Live');
    // Rows that differ in each cell: a short and a long tool name, completed and refused (with an error code).
    await postJson(`${gw.url}/tool/call`, callBody('echo', { text: 'x' }));
    await postJson(`${gw.url}/tool/call`, callBody('stepper', { steps: 1 }));
    await postJson(`${gw.url}/tool/call`, callBody('echo', {}));
    await page.waitForFunction(() => document.querySelectorAll('.activity li[data-call-id]').length >= 3);
    const lefts = await page.$$eval('.activity li[data-call-id]', (rows) =>
      rows.map((row) => [...row.children].map((cell) => Math.round(cell.getBoundingClientRect().left))),
    );
    for (let column = 0; column < lefts[0]!.length; column++) {
      expect(new Set(lefts.map((row) => row[column])), `column ${column}: ${JSON.stringify(lefts)}`).toHaveProperty(
        'size',
        1,
      );
    }
    await context.close();
  });

  it('a reload during a call resumes its events without duplicates', async () => {
    const { context, page, errors } = await openConsole(`${gw.url}/ui`);
    await page.waitForSelector('.tool-item');
    const key = 'ui-reload';
    const steps = 4;
    await runTool(page, 'stepper', { 'arguments.key': key, 'arguments.steps': String(steps) });
    await page.waitForFunction(() => document.querySelectorAll('.call .logs li').length === 1);
    stepper.open(key, 0);
    await page.waitForFunction(() => document.querySelectorAll('.call .logs li').length === 2);

    await page.reload();
    // The page comes back on the same call and shows what it emitted so far, once.
    await page.waitForFunction(() => document.querySelectorAll('.call .logs li').length === 2);
    expect(await page.textContent('.call .status')).toBe('Running: step 1');
    stepper.open(key, 1);
    await page.waitForFunction(() => document.querySelectorAll('.call .logs li').length === 3);
    stepper.open(key, 2);
    stepper.open(key, 3);
    await page.waitForSelector('.call.ok .result .json');
    expect(await logLines(page)).toEqual(['info line 0', 'info line 1', 'info line 2', 'info line 3']);
    expect(await page.textContent('.call .artifact pre')).toBe('part 0\npart 1\npart 2\npart 3\n');
    expect(await page.$$eval('.call .logs li', (els) => els.map((el) => (el as HTMLElement).dataset.seq))).toEqual([
      '1',
      '4',
      '7',
      '10',
    ]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('with auth: asks for a token, refuses a wrong one, and an allow-listed token sees only its tools and calls', async () => {
    const { context, page, outside } = await openConsole(`${authGw.url}/ui`);
    await page.waitForSelector('form.login');
    expect(await page.textContent('form.login')).toContain('Enter your access token');

    await page.fill('form.login input', 'not-a-real-token');
    await page.click('form.login button');
    await page.waitForSelector('form.login [role="alert"]:has-text("The token was refused")');

    await page.fill('form.login input', LIMITED);
    await page.click('form.login button');
    await page.waitForSelector('.tool-item');
    expect(await toolNames(page)).toEqual(['echo']);
    expect(await page.evaluate(() => sessionStorage.getItem('a2e.token'))).toBe(LIMITED);

    // Live activity: its own call appears, the admin token's call does not.
    await page.click('#tab-activity');
    await page.waitForFunction(() => document.querySelector('.live')?.textContent === '● Live');
    // Sessions are required with auth: the admin opens one, then starts a call the limited token must not see.
    const hs = await postJson(
      `${authGw.url}/handshake`,
      { type: 'handshake/req', agent_caps: ['tools'], auth_token: ADMIN },
      { Authorization: `Bearer ${ADMIN}` },
    );
    const admin = await postJson(
      `${authGw.url}/tool/calls`,
      callBody('echo', { text: 'from admin' }, { session_id: hs.json.session_id }),
      { Authorization: `Bearer ${ADMIN}` },
    );
    expect(admin.status).toBe(202);
    await page.click('#tab-tools');
    await runTool(page, 'echo', { 'arguments.text': 'from the console' });
    await page.waitForSelector('.call.ok');
    await page.click('#tab-activity');
    await page.waitForSelector('.activity li[data-state="completed"]');
    const rows = await page.$$eval('.activity li[data-call-id]', (els) => els.map((el) => el.textContent));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain('limited');
    expect(rows.join()).not.toContain('admin');
    expect(outside).toEqual([]);
    await context.close();
  });

  it('Sources shows the A2A agents with their state and last error, and Refresh reads them again', async () => {
    // A port with nothing listening: the agent's card fetch fails, and says why.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const agentsGw = await startGateway({ config: { agents: { billing: { card: `http://127.0.0.1:${port}` } } } });
    try {
      await expect
        .poll(async () => (await (await fetch(`${agentsGw.url}/agents`)).json()).agents[0].state, { timeout: 20_000 })
        .toBe('failed');
      const { context, page } = await openConsole(`${agentsGw.url}/ui#sources`);
      await page.waitForSelector('.agent');
      expect(await page.textContent('.agent h4')).toContain('billing');
      expect(await page.textContent('.agent .pill')).toBe('failed');
      expect(await page.textContent('.agent .error')).toMatch(/^Last error: .+/);
      expect(await page.textContent('.agent')).toContain(`http://127.0.0.1:${port}`);
      const [again] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/agents')),
        page.click('button:has-text("Refresh")'),
      ]);
      expect(again.status()).toBe(200);
      await context.close();
    } finally {
      await agentsGw.close();
    }
  });

  it('Sources lists every source in one table (GET /sources): kind, health, tool count, last error', async () => {
    const gw = await startGateway({
      config: {
        tools: { http: { enabled: true } },
        openapi: { sources: { billing: { spec: 'http://127.0.0.1:1/openapi.json' } } },
      },
    });
    try {
      await expect
        .poll(
          async () =>
            (await (await fetch(`${gw.url}/sources`)).json()).sources.find((s: any) => s.id === 'billing')?.health,
          { timeout: 20_000 },
        )
        .toBe('failed');
      const { context, page } = await openConsole(`${gw.url}/ui#sources`);
      await page.waitForSelector('table.sources tr[data-source="billing"]');
      expect(await page.textContent('section[aria-labelledby="sources-all"] h3')).toBe('All sources');
      const cells = async (id: string) =>
        page.$$eval(`table.sources tr[data-source="${id}"] td`, (tds) => tds.map((td) => td.textContent));
      expect(await cells('http')).toEqual(['http', 'native', 'ok', '1', 'never', '—']);
      const billing = await cells('billing');
      expect(billing.slice(0, 4)).toEqual(['billing', 'openapi', 'failed', '0']);
      expect(billing[5]).toMatch(/^the OpenAPI document could not be loaded: .*loopback/);
      const [again] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/sources')),
        page.click('button:has-text("Refresh")'),
      ]);
      expect(again.status()).toBe(200);
      await context.close();
    } finally {
      await gw.close();
    }
  });

  it('Sources shows the MCP servers with their state and last error, and Refresh reads them again', async () => {
    // A command that does not exist: the server fails to start, and says why.
    const mcpGw = await startGateway({
      config: { mcp: { servers: { broken: { command: '/nonexistent/mcp-server', sandbox: false } } } },
    });
    try {
      await expect
        .poll(async () => (await (await fetch(`${mcpGw.url}/mcp-servers`)).json()).servers[0]?.last_error, {
          timeout: 20_000,
        })
        .toBeTruthy();
      const { state } = (await (await fetch(`${mcpGw.url}/mcp-servers`)).json()).servers[0];
      const { context, page } = await openConsole(`${mcpGw.url}/ui#sources`);
      await page.waitForSelector('.mcp-server[data-server="broken"]');
      expect(await page.textContent('section[aria-labelledby="sources-mcp"] h3')).toBe('MCP servers');
      expect(await page.textContent('.mcp-server h4')).toContain('broken');
      expect(['failed', 'restarting']).toContain(state);
      expect(await page.textContent('.mcp-server .pill')).toMatch(/^(failed|restarting)$/);
      expect(await page.textContent('.mcp-server .error')).toMatch(/^Last error: .+/);
      expect(await page.textContent('.mcp-server')).toContain('/nonexistent/mcp-server');
      expect(await page.textContent('.mcp-server')).toContain('stdio');
      // No agents configured: that list says so rather than staying empty.
      expect(await page.textContent('section[aria-labelledby="sources-agents"] [role="status"]')).toContain(
        'No A2A agents are configured',
      );
      const [agents, servers] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/agents')),
        page.waitForResponse((r) => r.url().endsWith('/mcp-servers')),
        page.click('button:has-text("Refresh")'),
      ]);
      expect(agents.status()).toBe(200);
      expect(servers.status()).toBe(200);
      await context.close();
    } finally {
      await mcpGw.close();
    }
  });

  it('axe-core finds no serious accessibility violations (tools with a form and a result, activity, 375 px)', async () => {
    const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    const { context, page } = await openConsole(`${gw.url}/ui`);
    await page.waitForSelector('.tool-item');
    // Through the DevTools protocol: the page's CSP (rightly) forbids injected script tags.
    await page.evaluate(axeSource);
    const serious = async (): Promise<string[]> =>
      page.evaluate(async () => {
        const r = await (window as any).axe.run(document, { resultTypes: ['violations'] });
        return r.violations
          .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
          .map((v: any) => `${v.id}: ${v.help} — ${v.nodes.map((n: any) => n.target.join(' ')).join(', ')}`);
      });
    expect(await serious()).toEqual([]);
    await page.click('.tool-item[data-tool="deploy"]');
    await page.fill('[name="arguments.service"]', 'web');
    await page.fill('[name="arguments.options.max_surge"]', 'x');
    await page.click('button:has-text("Run")');
    await page.waitForSelector('.field .error:not([hidden])'); // the form with the gateway's problems shown
    expect(await serious()).toEqual([]);
    await page.selectOption('[name="arguments.env"]', 'staging');
    await page.fill('[name="arguments.options.max_surge"]', '1');
    await page.click('button:has-text("Run")');
    await page.waitForSelector('.call.ok');
    expect(await serious()).toEqual([]);
    await page.click('#tab-activity');
    await page.waitForSelector('.activity li[data-call-id]');
    expect(await serious()).toEqual([]);
    await page.click('#tab-sources');
    await page.waitForSelector('#sources [role="status"]:not(:empty)');
    expect(await serious()).toEqual([]);
    await page.setViewportSize({ width: 375, height: 800 });
    await page.click('#tab-tools');
    expect(await serious()).toEqual([]);
    await context.close();
  });
});
