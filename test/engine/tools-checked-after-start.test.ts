/**
 * Tools a plugin checks after the gateway listens (ToolPlugin.pendingTools / loading; the shell group does
 * this for run_command with tools.shell.enabled: auto): while the check runs the tool is not listed and
 * GET /readyz is 503 saying what is pending, a call to it waits for the check and then runs; when the
 * check fails the tool is dropped and a waiting call gets a clear error, later ones unknown_tool.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { PluginHost, ToolDefinitionInput, ToolPlugin } from '../../src/index.js';
import { deferred } from '../helpers/plugins.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const SLOW: ToolDefinitionInput = {
  name: 'checked_tool',
  description: 'A tool whose plugin checks something after start',
  input_parameters: [{ name: 'text', type: 'string', description: 'Text', required: true }],
  kind: 'native',
};

/** A plugin whose one tool becomes ready (or is dropped) when the test settles `check`. */
function checkedPlugin() {
  const check = deferred<boolean>();
  const entered = deferred(); // a call reached executeTool
  let pending = [SLOW];
  let listed: ToolDefinitionInput[] = [];
  let host: PluginHost | undefined;
  const checked = check.promise.then((ok) => {
    pending = [];
    if (ok) listed = [SLOW];
    host!.toolsChanged();
    return ok;
  });
  const plugin: ToolPlugin = {
    name: 'checked',
    start: (h) => void (host = h),
    listTools: () => listed,
    pendingTools: () => pending,
    loading: () => (pending.length > 0 ? 'the checked tool is being checked' : null),
    async executeTool(_name, args) {
      entered.resolve();
      if (!(await checked)) throw new Error('the check failed');
      return { text: args.text };
    },
  };
  return { plugin, check, entered };
}

const names = async (url: string) =>
  ((await postJson(`${url}/tool/list`, {})).json.tools as { name: string }[]).map((t) => t.name);

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

describe('a tool checked after the gateway listens', () => {
  it('is not listed and /readyz is 503 until the check passes; a call made meanwhile waits and runs', async () => {
    const { plugin, check, entered } = checkedPlugin();
    gw = await startGateway({ plugins: [plugin] });

    const notReady = await fetch(`${gw.url}/readyz`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toMatchObject({
      code: 'unavailable',
      retryable: true,
      message: 'not ready: the checked tool is being checked; retry shortly',
      detail: { status: 'starting', pending: ['the checked tool is being checked'] },
    });
    expect(await names(gw.url)).not.toContain('checked_tool');

    // Arguments are still validated against the tool's definition while it is pending.
    const invalid = await postJson(`${gw.url}/tool/call`, callBody('checked_tool', {}));
    expect(invalid.json.code).toBe('invalid_arguments');

    const early = postJson(`${gw.url}/tool/call`, callBody('checked_tool', { text: 'early' }));
    await entered.promise; // the call is waiting for the check
    check.resolve(true);
    const answer = await early;
    expect(answer.status).toBe(200);
    expect(answer.json.data).toMatchObject({ success: true, data: { text: 'early' } });

    expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);
    expect(await names(gw.url)).toContain('checked_tool');
  });

  it("when the check fails: a waiting call fails with the plugin's error, later calls get unknown_tool, /readyz turns 200", async () => {
    const { plugin, check, entered } = checkedPlugin();
    gw = await startGateway({ plugins: [plugin] });
    const early = postJson(`${gw.url}/tool/call`, callBody('checked_tool', { text: 'early' }));
    await entered.promise;
    check.resolve(false);
    expect((await early).json.data).toMatchObject({
      success: false,
      error_code: 'tool_error',
      error: expect.stringMatching(/the check failed/),
    });

    const later = await postJson(`${gw.url}/tool/call`, callBody('checked_tool', { text: 'later' }));
    expect(later.status).toBe(404);
    expect(later.json.code).toBe('unknown_tool');
    expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);
    expect(await names(gw.url)).not.toContain('checked_tool');
  });

  it('counts for the start-up check of policy rules: a rule naming it is no "matches no tool" warning, and it applies', async () => {
    const { plugin, check } = checkedPlugin();
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
    gw = await startGateway({
      plugins: [plugin],
      logger,
      config: { policy: { deny: ['checked_tool', 'no_such_tool'] } },
    });
    const rules = lines.map((l) => JSON.parse(l) as { rule?: string }).flatMap((l) => l.rule ?? []);
    expect(rules).toEqual(['no_such_tool']); // the check of the rules works, and knows the pending tool
    check.resolve(true);
    await expect.poll(async () => (await fetch(`${gw!.url}/readyz`)).status).toBe(200);
    const denied = await postJson(`${gw.url}/tool/call`, callBody('checked_tool', { text: 'x' }));
    expect(denied.json.code).toBe('tool_denied');
  });
});
