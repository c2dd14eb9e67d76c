/**
 * The console's Approvals tab in Chromium against a real gateway: a call that must wait appears without a reload
 * (through /admin/events), with its arguments as formatted JSON and its time left counting down; the approver edits
 * an argument in the generated form (the Tools tab's Run form, filled with the call's arguments), and Approve runs
 * the tool with it, the caller getting the result; an edit the tool refuses is shown under its field and the call
 * keeps waiting; the JSON editor is the fallback (a tool this token does not list, or a switch by hand); Deny with a
 * reason reaches the caller; a token that is no approver never sees the tab.
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
    plugins: [definePlugin('t', [echoTool, countTool, labelTool])],
    env,
    config: {
      sessions: { required: false },
      auth: {
        tokens: [
          { name: 'agent', token_env: 'AGENT_TOKEN' },
          // The lead decides calls of count, a tool it may not call (nor list) itself.
          { name: 'lead', token_env: 'LEAD_TOKEN', deny: ['count'] },
        ],
      },
      approvals: { require: ['echo', 'count', 'label'], approvers: { names: ['lead'] } },
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

/** A tool with a typed argument, for the JSON fallback. */
const countTool: typeof echoTool = [
  {
    name: 'count',
    description: 'Counts to n',
    input_parameters: [{ name: 'n', type: 'integer', description: 'How far', required: true }],
  },
  (args) => ({ n: args.n }),
];

/** A tool whose own schema takes more than its fields: arguments the form has no field for. */
const labelTool: typeof echoTool = [
  {
    name: 'label',
    description: 'Labels a text',
    input_parameters: [{ name: 'text', type: 'string', description: 'The text', required: true }],
    input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
  (args) => args,
];

describe('console: Approvals', () => {
  it('a pending call appears live; approve with edited arguments runs it, deny reaches the caller', async () => {
    const { context, page, errors } = await consoleAs(env.LEAD_TOKEN);
    await page.waitForSelector('#tab-approvals:not([hidden])');
    await page.click('#tab-approvals');
    await page.waitForSelector('.approvals .empty');

    let settled = false;
    const call = postJson(`${gw.url}/tool/call`, callBody('echo', { text: 'from the agent' }), agent).finally(
      () => (settled = true),
    );
    const card = page.locator('.approval');
    await card.waitFor({ timeout: 10_000 });
    expect(await card.locator('.approval-head .name').textContent()).toBe('echo');
    expect(await card.locator('.caller').textContent()).toBe('agent');
    expect(await card.locator('.json').textContent()).toContain('from the agent');
    // The time left counts down (approvals.timeout_s 900: "14 m 59 s left", then less).
    const left = card.locator('.left');
    const firstLeft = await left.textContent();
    expect(firstLeft).toMatch(/^1[45] m \d\d s left$/);
    await page.waitForFunction(
      ([el, first]) => el !== null && el.textContent !== first,
      [await left.elementHandle(), firstLeft] as const,
      { timeout: 5_000 },
    );
    // The editor is the generated form (the same as Run's), filled with the call's arguments; the JSON one hidden.
    const field = card.locator('[name="arguments.text"]');
    await field.waitFor();
    expect(await field.inputValue()).toBe('from the agent');
    expect(await card.locator('textarea.args-editor').isHidden()).toBe(true);
    await field.fill('');
    await card.locator('button.approve').click();
    // A required argument left empty: the gateway's 422 under the field, and the call still waits.
    await card.locator('[name="arguments.text"][aria-invalid="true"]').waitFor();
    expect(await card.locator('.field .error').first().textContent()).toMatch(/required/i);
    expect(settled).toBe(false);
    await field.fill('edited by the lead');
    await card.getByLabel('Reason').fill('shortened');
    await card.locator('button.approve').click();
    expect((await call).json.data).toMatchObject({ success: true, data: { text: 'edited by the lead' } });
    await page.waitForSelector('.approvals .empty');

    // The JSON editor by hand: switch, edit, approve.
    const viaJson = postJson(`${gw.url}/tool/call`, callBody('echo', { text: 'json' }), agent);
    await card.locator('[name="arguments.text"]').waitFor();
    await card.locator('button.toggle').click();
    await card.locator('textarea.args-editor').fill(JSON.stringify({ text: 'edited as JSON' }));
    await card.locator('button.approve').click();
    expect((await viaJson).json.data).toMatchObject({ success: true, data: { text: 'edited as JSON' } });
    await page.waitForSelector('.approvals .empty');

    // A tool the lead does not list: the JSON editor, saying why.
    const count = postJson(`${gw.url}/tool/call`, callBody('count', { n: 3 }), agent);
    await card.waitFor();
    await card.getByText('not listed for your token').waitFor();
    expect(await card.locator('textarea.args-editor').inputValue()).toBe(JSON.stringify({ n: 3 }, null, 2));
    await card.locator('textarea.args-editor').fill('{"n": 4}');
    await card.locator('button.approve').click();
    expect((await count).json.data).toMatchObject({ success: true, data: { n: 4 } });
    await page.waitForSelector('.approvals .empty');

    // Arguments the form has no field for: the JSON editor, saying why, and the form refused by the toggle.
    const label = postJson(`${gw.url}/tool/call`, callBody('label', { text: 'a', color: 'red' }), agent);
    await card.waitFor();
    await card.getByText('no field for some of these arguments').waitFor();
    expect(await card.locator('.args-form').isHidden()).toBe(true);
    await card.locator('button.toggle').click();
    expect(await card.locator('p.error').textContent()).toMatch(/do not fit the form/);
    await card.locator('button.approve').click();
    expect((await label).json.data).toMatchObject({ success: true, data: { text: 'a', color: 'red' } });
    await page.waitForSelector('.approvals .empty');

    const denied = postJson(`${gw.url}/tool/call`, callBody('echo', { text: 'again' }), agent);
    await card.waitFor();
    await card.getByLabel('Reason').fill('not today');
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
