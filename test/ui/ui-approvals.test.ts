/**
 * The console's Approvals tab in Chromium against a real gateway: a call that must wait appears without a reload
 * (through /admin/events), with its arguments; an edit and Approve run the tool with the edited arguments and the
 * caller gets the result; Deny with a reason reaches the caller; a token that is no approver never sees the tab.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { definePlugin, echoTool } from '../helpers/plugins.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const env = { AGENT_TOKEN: 'agent-token-5c1e9a', LEAD_TOKEN: 'lead-token-7b2d4f' };
let gw: TestGateway;
let browser: Browser;
beforeAll(async () => {
  gw = await startGateway({
    plugins: [definePlugin('t', [echoTool])],
    env,
    config: {
      sessions: { required: false },
      auth: {
        tokens: [
          { name: 'agent', token_env: 'AGENT_TOKEN' },
          { name: 'lead', token_env: 'LEAD_TOKEN' },
        ],
      },
      approvals: { require: ['echo'], approvers: { names: ['lead'] } },
    },
  });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

async function consoleAs(token: string, hash = '#approvals') {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // The console keeps its token in sessionStorage: set it before the page's scripts run.
  await context.addInitScript((t) => sessionStorage.setItem('a2e.token', t), token);
  await page.goto(`${gw.url}/ui${hash}`);
  return { context, page, errors };
}

const agent = { Authorization: `Bearer ${env.AGENT_TOKEN}` };

describe('console: Approvals', () => {
  it('a pending call appears live; approve with edited arguments runs it, deny reaches the caller', async () => {
    const { context, page, errors } = await consoleAs(env.LEAD_TOKEN);
    await page.waitForSelector('#tab-approvals:not([hidden])');
    await page.click('#tab-approvals');
    await page.waitForSelector('.approvals .empty');

    const call = postJson(`${gw.url}/tool/call`, callBody('echo', { text: 'from the agent' }), agent);
    const card = page.locator('.approval');
    await card.waitFor({ timeout: 10_000 });
    expect(await card.locator('.name').textContent()).toBe('echo');
    expect(await card.locator('.caller').textContent()).toBe('agent');
    expect(await card.locator('.json').textContent()).toContain('from the agent');
    await card.locator('textarea').fill(JSON.stringify({ text: 'edited by the lead' }));
    await card.locator('button.approve').click();
    expect((await call).json.data).toMatchObject({ success: true, data: { text: 'edited by the lead' } });
    await page.waitForSelector('.approvals .empty');

    const denied = postJson(`${gw.url}/tool/call`, callBody('echo', { text: 'again' }), agent);
    await card.waitFor();
    await card.locator('input[type="text"]').fill('not today');
    await card.locator('button.deny').click();
    expect((await denied).json.data).toMatchObject({ error_code: 'tool_denied', error: 'denied by lead: not today' });
    expect(errors).toEqual([]);
    await context.close();
  });

  it('a token that is no approver has no Approvals tab, and sees its own waiting call in flight', async () => {
    const { context, page } = await consoleAs(env.AGENT_TOKEN, '');
    await page.waitForSelector('.tool-item');
    // The tab's fate is decided by GET /admin/approvals: wait for its 403.
    await page.waitForFunction(() =>
      performance.getEntriesByType('resource').some((e) => e.name.endsWith('/admin/approvals')),
    );
    expect(await page.locator('#tab-approvals').isHidden()).toBe(true);
    // Its own waiting call is in flight in Live activity (not among the finished ones) until someone decides.
    const call = postJson(
      `${gw.url}/tool/call`,
      callBody('echo', { text: 'mine' }, { correlation_id: 'ui-own' }),
      agent,
    );
    await page.click('#tab-activity');
    const row = page.locator('ul[aria-label="Running calls"] li[data-state="awaiting_approval"]');
    await row.waitFor({ timeout: 10_000 });
    expect(await row.locator('.name').textContent()).toBe('echo');
    const lead = { Authorization: `Bearer ${env.LEAD_TOKEN}` };
    const list = (await fetch(`${gw.url}/admin/approvals?correlation_id=ui-own`, { headers: lead }).then((r) =>
      r.json(),
    )) as any;
    await postJson(`${gw.url}/admin/approvals/${list.approvals[0].id}`, { decision: 'deny' }, lead);
    expect((await call).json.data.error_code).toBe('tool_denied');
    await row.waitFor({ state: 'detached' }); // finished: out of the in-flight list
    await context.close();
  });
});
