/**
 * Reloading the config of a running `a2e-gateway serve` (POST /admin/reload
 * and SIGHUP): real CLI processes with a config file, a real A2A peer, a
 * plugin whose call the test holds open.
 */
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, startCli } from '../helpers/cli.js';
import { startSdkPeer, type SdkPeer } from '../helpers/a2a-sdk-peer.js';
import { callBody, postJson } from '../helpers/server.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/mcp-test-server.mjs', import.meta.url));
const NATIVE_OFF =
  'tools: {fs: {enabled: false}, shell: {enabled: false}, http: {enabled: false}, eval: {enabled: false}}\n';

/** A plugin module whose `hold` tool waits for the test's gate and records when the plugin is stopped. */
const HOLD_PLUGIN = `import { appendFileSync } from 'node:fs';
export default (options) => ({
  name: 'hold',
  listTools: () => [{ name: 'hold', description: 'Waits until the test lets it finish' }],
  async executeTool() {
    const res = await fetch(options.gate);
    return { released: await res.text() };
  },
  async stop() {
    appendFileSync(options.marker, 'stopped\\n');
  },
});
`;

interface Gateway {
  url: string;
  pid: number;
  /** Log lines (JSON) written so far. */
  logs: () => any[];
  /** The first log line `match` accepts, waiting for it (bounded). */
  waitForLog: (match: (line: any) => boolean, what: string) => Promise<any>;
  stop: () => Promise<void>;
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'a2e-reload-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function serve(dir: string, env: Record<string, string> = {}): Promise<Gateway> {
  const { url, proc } = await startCli(['--config', 'gateway.yaml'], { LOG_LEVEL: 'info', ...env }, { cwd: dir });
  let text = '';
  const waiters = new Set<() => void>();
  proc.stderr!.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    for (const w of waiters) w();
  });
  const logs = () =>
    text
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
  const gateway: Gateway = {
    url,
    pid: proc.pid!,
    logs,
    waitForLog: (match, what) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = logs().find(match);
          if (!found) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no log line ${what} within 60 s; got:\n${text}`));
        }, 60_000);
        waiters.add(check);
        check();
      }),
    async stop() {
      if (proc.exitCode === null) {
        proc.kill('SIGTERM');
        await proc;
      }
    },
  };
  cleanups.push(() => gateway.stop());
  return gateway;
}

/** An HTTP gate on 127.0.0.1: requests wait until release(); `arrived` resolves at the first one. */
async function startGate() {
  const held: ServerResponse[] = [];
  let arrived!: () => void;
  const first = new Promise<void>((resolve) => (arrived = resolve));
  const server = createServer((_req: IncomingMessage, res: ServerResponse) => {
    held.push(res);
    arrived();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/gate`,
    arrived: first,
    release(text: string) {
      for (const res of held.splice(0)) res.end(text);
    },
  };
}

const reload = (gw: Gateway, headers: Record<string, string> = {}) => postJson(`${gw.url}/admin/reload`, {}, headers);

/** Wait (bounded) until `check` holds, re-reading every 100 ms. */
async function eventually<T>(read: () => Promise<T>, check: (v: T) => boolean, what: string, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (check(v)) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms; last: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// Each test starts gateway processes, peers and MCP servers: slow on a loaded machine, so a generous bound.
describe('config reload', { timeout: 180_000 }, () => {
  let peer: SdkPeer | undefined;
  afterEach(async () => {
    await peer?.close();
    peer = undefined;
  });

  it('adds an A2A agent and removes a tool while a call of it runs: the call finishes, new calls get unknown_tool, the old plugin stops after', async () => {
    const dir = await tempDir();
    const gate = await startGate();
    const marker = join(dir, 'hold-stopped');
    await writeFile(join(dir, 'hold.mjs'), HOLD_PLUGIN);
    await writeFile(
      join(dir, 'gateway.yaml'),
      `server: {port: 0}\n${NATIVE_OFF}plugins:\n  - module: ./hold.mjs\n    options: {gate: "${gate.url}", marker: "${marker}"}\n`,
    );
    const gw = await serve(dir);

    const running = postJson(`${gw.url}/tool/call`, callBody('hold', {}));
    await gate.arrived; // the call is running inside the plugin

    peer = await startSdkPeer('strict');
    await writeFile(
      join(dir, 'gateway.yaml'),
      `server: {port: 0}\n${NATIVE_OFF}agents:\n  peer: {card: "${peer.url}", poll_ms: 50}\n`,
    );
    const answer = await reload(gw);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      status: 'reloaded',
      changed: ['agents.peer', 'plugins'],
      restart_needed: [],
      sessions_ended: 0,
    });
    await gw.waitForLog((l) => l.msg === 'config reloaded' && l.trigger === 'POST /admin/reload', '"config reloaded"');

    // New calls of the removed tool: it no longer exists.
    const refused = await postJson(`${gw.url}/tool/call`, callBody('hold', {}));
    expect(refused.status).toBe(404);
    expect(refused.json.code).toBe('unknown_tool');
    // The plugin is not stopped while its call runs.
    expect(existsSync(marker)).toBe(false);

    // The new agent's skills become tools and answer.
    const list = await eventually(
      () => postJson(`${gw.url}/tool/list`, { filter_kind: 'a2a' }),
      (r) => r.json.tools?.length > 0,
      'the agent added by the reload lists its skills',
    );
    expect(list.json.tools.map((t: any) => t.name)).toContain('SDK_Agent_complete');
    const viaAgent = await postJson(`${gw.url}/tool/call`, callBody('SDK_Agent_complete', { task: 'after reload' }));
    expect(viaAgent.json.data).toMatchObject({
      success: true,
      data: { output: 'done: after reload', state: 'completed' },
    });

    // The call that started before the reload finishes under the old config, successfully.
    gate.release('let go');
    const finished = await running;
    expect(finished.status).toBe(200);
    expect(finished.json.data).toMatchObject({ success: true, tool_name: 'hold', data: { released: 'let go' } });
    // …and then the removed plugin is stopped.
    await eventually(
      async () => existsSync(marker),
      (v) => v,
      'the removed plugin is stopped once its call finished',
    );
    expect(await readFile(marker, 'utf8')).toBe('stopped\n');
  });

  it('a broken file is refused as a whole with the start-up message, by POST and by SIGHUP; the old config keeps serving; a port change needs a restart', async () => {
    const dir = await tempDir();
    const good = `server: {port: 0}\ntools: {fs: {enabled: true, root: "."}, shell: {enabled: false}, http: {enabled: false}, eval: {enabled: false}}\n`;
    await writeFile(join(dir, 'gateway.yaml'), good);
    const gw = await serve(dir);
    const toolNames = async () => (await postJson(`${gw.url}/tool/list`, {})).json.tools.map((t: any) => t.name).sort();
    const before = await toolNames();
    expect(before).toContain('read_file');

    const broken = `${good}policy: {deny: [7]}\nlimits: {max_json_depth: 1}\n`;
    await writeFile(join(dir, 'gateway.yaml'), broken);
    // What start-up says about this file (config check runs the same start-up short of listening).
    const check = await execa('node', [CLI, 'config', 'check', '--config', 'gateway.yaml'], {
      cwd: dir,
      reject: false,
    });
    expect(check.exitCode).toBe(2);
    const startupMessage = check.stderr.trim().replace(/^a2e-gateway: /, '');
    expect(startupMessage).toMatch(/^invalid config in gateway\.yaml: /);

    const refused = await reload(gw);
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ type: 'error', code: 'invalid_request', detail: { error: startupMessage } });
    expect(refused.json.message).toBe(`config not reloaded, the running config keeps serving: ${startupMessage}`);
    const logged = await gw.waitForLog(
      (l) => l.trigger === 'POST /admin/reload' && l.level === 50,
      'of the refused reload',
    );
    expect(logged.error).toBe(startupMessage);
    expect(await toolNames()).toEqual(before);

    process.kill(gw.pid, 'SIGHUP');
    const hup = await gw.waitForLog((l) => l.trigger === 'SIGHUP' && l.level === 50, 'of the refused SIGHUP reload');
    expect(hup.error).toBe(startupMessage);
    expect(await toolNames()).toEqual(before);

    // A valid file: the file tools go (live), the port change is reported and kept.
    await writeFile(
      join(dir, 'gateway.yaml'),
      good.replace('port: 0', 'port: 1').replace('fs: {enabled: true, root: "."}', 'fs: {enabled: false}'),
    );
    process.kill(gw.pid, 'SIGHUP');
    const applied = await gw.waitForLog(
      (l) => l.trigger === 'SIGHUP' && l.msg === 'config reloaded',
      'of the SIGHUP reload',
    );
    expect(applied.changed).toEqual(['tools.fs.enabled', 'tools.fs.root']);
    expect(applied.restart_needed).toEqual(['server.port']);
    expect(await toolNames()).toEqual([]);
    // Still on the port it started on; asked again, the port is still the one change not in force.
    const again = await reload(gw);
    expect(again.json).toEqual({ status: 'reloaded', changed: [], restart_needed: ['server.port'], sessions_ended: 0 });
  });

  it('a token removed by a reload ends its sessions (401 after); other sessions stay; only admin tokens may reload', async () => {
    const dir = await tempDir();
    const tokens = (withUser: boolean) =>
      `auth:\n  tokens:\n    - {name: ops, token_env: OPS_TOKEN, admin: true}\n${withUser ? '    - {name: user, token_env: USER_TOKEN}\n' : ''}`;
    await writeFile(join(dir, 'gateway.yaml'), `server: {port: 0}\n${NATIVE_OFF}${tokens(true)}`);
    const env = { OPS_TOKEN: 'ops-secret-token-0123456789', USER_TOKEN: 'user-secret-token-0123456789' };
    const gw = await serve(dir, env);
    const as = (token: string) => ({ Authorization: `Bearer ${token}` });
    const open = async (token: string) => {
      const r = await postJson(
        `${gw.url}/handshake`,
        { type: 'handshake/req', agent_id: 't', agent_caps: ['tools'] },
        as(token),
      );
      expect(r.status).toBe(200);
      return r.json.session_id as string;
    };
    const list = (token: string, session: string) =>
      postJson(`${gw.url}/tool/list`, { session_id: session }, as(token));
    const userSession = await open(env.USER_TOKEN);
    const opsSession = await open(env.OPS_TOKEN);
    expect((await list(env.USER_TOKEN, userSession)).status).toBe(200);

    const notAdmin = await reload(gw, as(env.USER_TOKEN));
    expect(notAdmin.status).toBe(403);
    expect(notAdmin.json.message).toContain('admin: true');
    expect((await reload(gw)).status).toBe(401);

    await writeFile(join(dir, 'gateway.yaml'), `server: {port: 0}\n${NATIVE_OFF}${tokens(false)}`);
    const answer = await reload(gw, as(env.OPS_TOKEN));
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      status: 'reloaded',
      changed: ['auth.tokens'],
      restart_needed: [],
      sessions_ended: 1,
    });

    const after = await list(env.USER_TOKEN, userSession);
    expect(after.status).toBe(401);
    expect(after.json.code).toBe('unauthorized');
    expect((await list(env.OPS_TOKEN, opsSession)).status).toBe(200);
  });

  it('MCP stdio servers: an unchanged section keeps its processes across a reload; a changed one replaces them and the old ones exit', async () => {
    const dir = await tempDir();
    const server = (id: string) =>
      `    ${id}: {command: "${process.execPath}", args: ["${FIXTURE}", "normal"], sandbox: false}\n`;
    const config = (servers: string[], extra = '') =>
      `server: {port: 0}\n${NATIVE_OFF}mcp:\n  servers:\n${servers.map(server).join('')}${extra}`;
    await writeFile(join(dir, 'gateway.yaml'), config(['one']));
    const gw = await serve(dir);
    const pids = async () => {
      const body = await (await fetch(`${gw.url}/mcp-servers`)).json();
      return Object.fromEntries(body.servers.map((s: any) => [s.id, s.state === 'ready' ? s.pid : null]));
    };
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const first = await eventually(pids, (p) => typeof p.one === 'number', 'server "one" is ready');
    expect(alive(first.one)).toBe(true);

    // Only the policy changes: the MCP servers are carried over, same process.
    await writeFile(join(dir, 'gateway.yaml'), config(['one'], 'policy: {deny: ["one_crash"]}\n'));
    expect((await reload(gw)).json).toMatchObject({ status: 'reloaded', changed: ['policy.deny'] });
    expect(await pids()).toEqual(first);
    const denied = await postJson(`${gw.url}/tool/call`, callBody('one_crash', {}));
    expect(denied.json.code).toBe('tool_denied');

    // A server is added: the MCP servers are started anew and the old process ends.
    await writeFile(join(dir, 'gateway.yaml'), config(['one', 'two'], 'policy: {deny: ["one_crash"]}\n'));
    expect((await reload(gw)).json).toMatchObject({ status: 'reloaded', changed: ['mcp.servers.two'] });
    const second = await eventually(
      pids,
      (p) => typeof p.one === 'number' && typeof p.two === 'number',
      'both servers are ready',
    );
    expect(second.one).not.toBe(first.one);
    await eventually(
      async () => alive(first.one),
      (a) => !a,
      'the replaced server process exits',
    );
    const viaNew = await postJson(`${gw.url}/tool/call`, callBody('two_pid', {}));
    expect(viaNew.json.data).toMatchObject({ success: true });

    // Shutdown ends the servers of the running config too.
    await gw.stop();
    await eventually(
      async () => [second.one, second.two].some(alive),
      (a) => !a,
      'the servers exit with the gateway',
    );
  });
});
