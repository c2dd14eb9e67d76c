import { describe, expect, it } from 'vitest';
import type { ToolContext } from '../../src/index.js';
import { deferred, definePlugin, echoTool } from '../helpers/plugins.js';
import { callBody, openSse, postJson, startGateway } from '../helpers/server.js';

function plugin() {
  const started = deferred<void>();
  const gate = deferred<void>();
  const stoppedBy = deferred<string>();
  const p = definePlugin('s', [
    echoTool,
    [
      { name: 'wait_gate', description: 'Waits until the test opens the gate' },
      async (_a, ctx: ToolContext) => {
        started.resolve();
        ctx.emit('status', { message: 'started' });
        await gate.promise;
        return { done: true };
      },
    ],
    [
      { name: 'forever', description: 'Runs until aborted' },
      (_a, ctx: ToolContext) =>
        new Promise((_r, reject) => {
          started.resolve();
          ctx.emit('status', { message: 'started' });
          ctx.signal.addEventListener('abort', () => {
            stoppedBy.resolve((ctx.signal.reason as Error).message);
            reject(ctx.signal.reason);
          });
        }),
    ],
  ]);
  return { p, started, gate, stoppedBy };
}

describe('graceful shutdown', () => {
  it('lets a running call finish within the grace period, refusing new work meanwhile', async () => {
    const { p, started, gate } = plugin();
    const gw = await startGateway({ plugins: [p], config: { server: { shutdown_grace_s: 30 } } });
    const running = postJson(`${gw.url}/tool/call`, callBody('wait_gate', {}));
    await started.promise;
    const closed = gw.close();
    // new calls are refused while the running one drains
    await expect
      .poll(async () => {
        try {
          return (await postJson(`${gw.url}/tool/call`, callBody('echo', { text: 'x' }))).status;
        } catch {
          return 'refused';
        }
      })
      .toBe('refused');
    gate.resolve();
    const r = await running;
    expect(r.status).toBe(200);
    expect(r.json.data).toMatchObject({ success: true, data: { done: true } });
    await closed;
  });

  it('stops calls still running after the grace period; their streams get the final response', async () => {
    const { p, started, stoppedBy } = plugin();
    const gw = await startGateway({ plugins: [p], config: { server: { shutdown_grace_s: 0.2 } } });
    const s = await openSse(`${gw.url}/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(callBody('forever', {}, { streaming: true })),
    });
    await started.promise;
    expect((await s.next())!.json.data.message).toBe('started');
    await gw.close();
    expect(await stoppedBy.promise).toContain('shutting down');
    const rest = await s.rest();
    expect(rest.map((e) => e.event)).toEqual(['tool/call/resp']);
    expect(rest[0]!.json.data).toMatchObject({ success: false, error_code: 'tool_error' });
    expect(rest[0]!.json.data.error).toContain('gateway is shutting down');
  });
});
