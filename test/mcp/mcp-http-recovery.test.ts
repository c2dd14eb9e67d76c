/**
 * MCP servers over Streamable HTTP that restart under the gateway (issue 51,
 * finding 5). Real peers: @modelcontextprotocol/server-everything in its
 * streamableHttp mode, SIGKILLed mid-call and started again on the same port
 * (it answers an unknown session with 400 "No valid session ID provided"), and
 * an SDK-built server that answers an unknown session with the spec's 404
 * (test/fixtures/mcp-http-session-server.mjs).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/a2a-stub.js';
import { freePort } from '../helpers/nginx.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const EVERYTHING = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);
const SESSION_SERVER = fileURLToPath(new URL('../fixtures/mcp-http-session-server.mjs', import.meta.url));

const statusOf = async (url: string, id: string) =>
  ((await (await fetch(`${url}/mcp-servers`)).json()).servers as any[]).find((s) => s.id === id);
const call = async (url: string, tool: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  (await postJson(`${url}/tool/call`, callBody(tool, args, extra))).json.data;

const children = new Set<ChildProcess>();

/** Start a server process and wait for the line that says it listens (on stdout or stderr). */
async function startServer(args: string[], port: number, ready: RegExp): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const seen = (chunk: Buffer) => {
      out += chunk.toString();
      if (ready.test(out)) resolve();
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.once('exit', (code) => reject(new Error(`server exited (${code}) before it listened: ${out.slice(-500)}`)));
  });
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await gone;
}

const RECOVERY = { start_wait_ms: 60_000, connect_timeout_ms: 30_000, restart_min_ms: 100, restart_max_ms: 1000 };

describe('an MCP server over HTTP that restarts', () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
    await Promise.all([...children].map(kill));
  });
  afterAll(async () => {
    await Promise.all([...children].map(kill));
  });

  it('server-everything SIGKILLed mid-call: the call fails at once saying so, the state says so, and it works again once the server is back', async () => {
    const port = await freePort();
    const everythingArgs = [EVERYTHING, 'streamableHttp'];
    let server = await startServer(everythingArgs, port, /listening on port/);
    gw = await startGateway({
      config: { mcp: { servers: { ev: { url: `http://127.0.0.1:${port}/mcp` } }, ...RECOVERY } },
    });
    expect((await statusOf(gw.url, 'ev')).state).toBe('ready');
    expect(await call(gw.url, 'ev_echo', { message: 'before' })).toMatchObject({
      success: true,
      data: { text: 'Echo: before' },
    });

    // A call that would run 60 s, within a 60 s call timeout: it must not wait for either once the server is gone.
    const running = call(gw.url, 'ev_trigger-long-running-operation', { duration: 60, steps: 60 }, { timeout: 60 });
    await new Promise((r) => setTimeout(r, 1000)); // the call is in flight on the server
    const killedAt = Date.now();
    await kill(server);
    const failed = await running;
    expect(Date.now() - killedAt).toBeLessThan(10_000);
    expect(failed).toMatchObject({ success: false, error_code: 'tool_error' });
    expect(failed.error).toMatch(
      /^MCP server "ev" was lost while the call ran \(the connection was lost: .+\); it is being reconnected, retry the call$/,
    );

    // While it is down: not "ready", and the error says why.
    const down = await waitFor('ev reported down', async () => {
      const s = await statusOf(gw!.url, 'ev');
      return s.state !== 'ready' && s.last_error ? s : undefined;
    });
    expect(down.state).toBe('restarting');
    const refused = await call(gw.url, 'ev_echo', { message: 'while down' });
    expect(refused).toMatchObject({ success: false, error_code: 'tool_error' });
    expect(refused.error).toMatch(/retry/);

    // Back on the same port, a new process with none of the old sessions.
    server = await startServer(everythingArgs, port, /listening on port/);
    const back = await waitFor(
      'ev ready again',
      async () => {
        const s = await statusOf(gw!.url, 'ev');
        return s.state === 'ready' ? s : undefined;
      },
      30_000,
    );
    expect(back.last_error).toBeNull();
    expect(back.restarts).toBeGreaterThanOrEqual(1);
    expect(await call(gw.url, 'ev_echo', { message: 'after' })).toMatchObject({
      success: true,
      data: { text: 'Echo: after' },
    });
  }, 120_000);

  it('server-everything restarted between calls: the next call gets a new session, not "No valid session ID provided"', async () => {
    const port = await freePort();
    const everythingArgs = [EVERYTHING, 'streamableHttp'];
    let server = await startServer(everythingArgs, port, /listening on port/);
    gw = await startGateway({
      config: { mcp: { servers: { ev: { url: `http://127.0.0.1:${port}/mcp` } }, ...RECOVERY } },
    });
    expect(await call(gw.url, 'ev_echo', { message: 'one' })).toMatchObject({ success: true });
    await kill(server);
    server = await startServer(everythingArgs, port, /listening on port/);
    // Whatever the gateway noticed in between, calls work again within a short while and none says the session was invalid.
    const answers: any[] = [];
    const ok = await waitFor(
      'a call through the restarted server',
      async () => {
        const r = await call(gw!.url, 'ev_echo', { message: 'two' });
        answers.push(r);
        return r.success ? r : undefined;
      },
      30_000,
      200,
    );
    expect(ok.data.text).toBe('Echo: two');
    for (const r of answers) expect(r.error ?? '').not.toMatch(/No valid session ID/);
  }, 120_000);

  it('a server that answers 404 for a forgotten session: the gateway initializes again and the call succeeds', async () => {
    const port = await freePort();
    await startServer([SESSION_SERVER], port, /listening \d+/);
    const base = `http://127.0.0.1:${port}`;
    gw = await startGateway({ config: { mcp: { servers: { s: { url: `${base}/mcp` } }, ...RECOVERY } } });
    expect(await call(gw.url, 's_echo', { text: 'first' })).toMatchObject({ success: true, data: { text: 'first' } });
    expect(await (await fetch(`${base}/stats`)).json()).toMatchObject({ initialized: 1, calls: 1 });

    await fetch(`${base}/forget`, { method: 'POST' });
    // The 404 (-32001 Session not found) means: initialize again. The call was refused, not run, so it is sent again.
    expect(await call(gw.url, 's_echo', { text: 'second' })).toMatchObject({ success: true, data: { text: 'second' } });
    expect(await (await fetch(`${base}/stats`)).json()).toMatchObject({ initialized: 2, calls: 2 });
    const status = await statusOf(gw.url, 's');
    expect(status).toMatchObject({ state: 'ready', last_error: null, restarts: 1 });

    // Many calls at once when the session is forgotten: each is refused with a 404 and sent again, none fails.
    await fetch(`${base}/forget`, { method: 'POST' });
    const burst = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call(gw!.url, 's_echo', { text: `burst ${i}` })),
    );
    expect(burst.filter((r) => !r.success).map((r) => r.error)).toEqual([]);
    expect(burst.map((r) => r.data.text)).toEqual(Array.from({ length: 20 }, (_, i) => `burst ${i}`));

    // A call the server was running when it dropped the session never gets its answer: it fails soon after the
    // next request learns the session is gone, not at the end of its 60 s.
    const hanging = call(gw.url, 's_hang', {}, { timeout: 60 });
    await waitFor(
      'the hang call running',
      async () => (await (await fetch(`${base}/stats`)).json()).hanging === 1,
      10_000,
      50,
    );
    await fetch(`${base}/forget`, { method: 'POST' });
    const forgotAt = Date.now();
    expect(await call(gw.url, 's_echo', { text: 'after hang' })).toMatchObject({ success: true });
    const lost = await hanging;
    expect(Date.now() - forgotAt).toBeLessThan(15_000);
    expect(lost).toMatchObject({ success: false, error_code: 'tool_error' });
    expect(lost.error).toBe(
      'MCP server "s" was lost while the call ran (the server no longer knew the session (HTTP 404), and it never answered the call); retry the call',
    );
  }, 90_000);
});
