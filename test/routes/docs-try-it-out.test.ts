/**
 * /docs "Try it out" works as a newcomer uses it (issue 21, item 3): on a
 * gateway started with the defaults (`a2e-gateway serve`, no config, an empty
 * ./workspace), a real Chromium opens /docs and, for each operation, clicks
 * "Try it out" then "Execute" with the default example unchanged; the status
 * Swagger UI shows is 2xx, and no request carries a fixed X-Request-Id.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { startCli } from '../helpers/cli.js';

/**
 * `tag-operationId` as Swagger UI names each operation's block. Left out, because they cannot run from their
 * default example alone: /tool/calls/{id} (GET, DELETE, /events) need the id of a call made first; /a2e/v1/send and
 * /a2e/v1/stream need the X-Session-Id of a session opened first; /admin/events is an endless SSE stream.
 */
const OPERATIONS = [
  'meta-health',
  'meta-ready',
  'tools-listTools',
  'tools-callTool',
  'tools-startCall',
  'sessions-handshake',
  'mcp-mcp',
  'agents-listAgents',
  'mcp-listMcpServers',
  'meta-metrics',
  'meta-openapi',
  'a2e-transport-a2eOpenSession',
  'a2e-transport-a2eHealth',
];

let dir: string;
let gateway: { url: string; proc: ResultPromise };
let browser: Browser;
let page: Page;
const requestIdsSent: string[] = [];

beforeAll(async () => {
  // A fresh directory, as for `npm start` in a new clone: the default ./workspace is created there, empty.
  dir = await mkdtemp(join(tmpdir(), 'a2e-try-it-out-'));
  gateway = await startCli(['--port', '0'], {}, { cwd: dir });
  browser = await launchChromium();
  page = await browser.newPage();
  page.on('request', (r) => {
    const id = r.headers()['x-request-id'];
    if (r.url().startsWith(gateway.url) && id !== undefined) requestIdsSent.push(`${r.method()} ${r.url()}: ${id}`);
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  gateway?.proc.kill('SIGTERM');
  await gateway?.proc;
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('/docs "Try it out" on a default gateway', () => {
  it('every operation runnable from its default example answers 2xx', async () => {
    await page.goto(`${gateway.url}/docs`);
    await page.waitForSelector('.opblock', { timeout: 30_000 });
    // Every operation clicked below is on the page: none is silently skipped.
    for (const op of OPERATIONS) expect(await page.$(`#operations-${op}`), `#operations-${op} on /docs`).not.toBeNull();

    const statuses: Record<string, string> = {};
    const bodies: Record<string, string> = {};
    for (const op of OPERATIONS) {
      const block = `#operations-${op}`;
      await page.click(`${block} .opblock-summary`);
      await page.click(`${block} .try-out__btn`, { timeout: 15_000 });
      await page.click(`${block} .execute`, { timeout: 15_000 });
      const status = page.locator(`${block} .live-responses-table tbody td.response-col_status`).first();
      await status.waitFor({ timeout: 30_000 });
      statuses[op] = (await status.textContent())?.trim() ?? '';
      bodies[op] = (await page.locator(`${block} .live-responses-table`).first().textContent()) ?? '';
      // Collapse it again: keeps the page small and the next operation's selectors unambiguous.
      await page.click(`${block} .opblock-summary`);
    }
    const failed = OPERATIONS.filter((op) => !/^2\d\d$/.test(statuses[op] ?? '')).map(
      (op) => `${op} answered ${statuses[op]}: ${(bodies[op] ?? '').slice(0, 400)}`,
    );
    expect(failed).toEqual([]);

    // The tool call did run the tool successfully (a tool failure would be a 200 with success: false).
    expect(bodies['tools-callTool']).toMatch(/"success":\s*true/);
    expect(bodies['tools-callTool']).toContain('"tool_name": "list_dir"');
    expect(bodies['mcp-mcp']).toMatch(/"isError":\s*false|"structuredContent"/);
    expect(bodies['mcp-mcp']).not.toMatch(/"isError":\s*true/);
    // Swagger UI sends no X-Request-Id of its own: the gateway generates a fresh one per request.
    expect(requestIdsSent).toEqual([]);
  }, 240_000);
});
