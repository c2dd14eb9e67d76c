/**
 * run_command over real HTTP, in a real bubblewrap sandbox: output, streaming,
 * exit codes, confinement (files, environment, network, identity), limits,
 * and that every process a command starts dies with the call.
 */
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BWRAP } from '../../src/tools/shell/sandbox.js';
import { CLI } from '../helpers/cli.js';
import { callBody, openSse, postJson, startGateway, type TestGateway } from '../helpers/server.js';
import { alive, processTree, waitFor } from './procs.js';

const MAX_OUTPUT = 64 * 1024;
let base: string;
let ws: string;
let gw: TestGateway;

function newBase(): string {
  const dir = mkdtempSync(join(tmpdir(), 'a2e-shell-'));
  chmodSync(dir, 0o755); // the sandbox user must be able to reach the workspace inside it
  return dir;
}

async function start(
  shell: Record<string, unknown> = {},
  server: Record<string, unknown> = {},
  root = ws,
): Promise<TestGateway> {
  return startGateway({
    // enabled: true: a sandbox that cannot be made fails these tests at start, not as a missing tool.
    config: {
      tools: {
        fs: { root },
        shell: { enabled: true, max_output_bytes: MAX_OUTPUT, ...shell },
        eval: { enabled: false },
      },
      server,
    },
  });
}

async function run(g: TestGateway, args: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const res = await postJson(`${g.url}/tool/call`, callBody('run_command', args, extra));
  expect(res.status).toBe(200);
  return res.json.data;
}

beforeAll(async () => {
  base = newBase();
  ws = join(base, 'ws');
  process.env.A2E_SHELL_TEST_SECRET = 'gateway-secret-value';
  gw = await start({ env: { FROM_CONFIG: 'config-value' } });
});

afterAll(async () => {
  delete process.env.A2E_SHELL_TEST_SECRET;
  await gw?.close();
  rmSync(base, { recursive: true, force: true });
});

describe('run_command', () => {
  it('is listed as a native, streaming, non-idempotent tool', async () => {
    const res = await postJson(`${gw.url}/tool/list`, { query: 'run command shell', include_deferred: true });
    const tool = res.json.tools.find((t: { name: string }) => t.name === 'run_command');
    expect(tool).toMatchObject({ kind: 'native', streaming: true, idempotent: false });
    expect(tool.input_parameters.map((p: { name: string }) => p.name)).toEqual([
      'argv',
      'cwd',
      'stdin',
      'env',
      'timeout',
    ]);
  });

  it('runs a program without a shell and returns its output and exit code', async () => {
    const r = await run(gw, { argv: ['echo', 'hello', '$HOME', '; rm -rf /'] });
    expect(r).toMatchObject({ success: true, exit_code: 0, truncated: false });
    expect(r.data).toEqual({ exit_code: 0, stdout: 'hello $HOME ; rm -rf /\n', stderr: '', truncated: false });
  });

  it('fails on a non-zero exit, keeping stdout, stderr and the exit code', async () => {
    const r = await run(gw, { argv: ['sh', '-c', 'echo out; echo err >&2; exit 3'] });
    expect(r).toMatchObject({ success: false, error_code: 'tool_error', exit_code: 3 });
    expect(r.error).toContain('exited with code 3');
    expect(r.data).toMatchObject({ exit_code: 3, stdout: 'out\n', stderr: 'err\n' });
  });

  it('says clearly when the program does not exist', async () => {
    const r = await run(gw, { argv: ['no-such-program-xyz'] });
    expect(r.success).toBe(false);
    expect(r.error).toContain('program "no-such-program-xyz" was not found');
  });

  it('feeds stdin when given and closes it otherwise', async () => {
    expect((await run(gw, { argv: ['cat'], stdin: 'from stdin\n' })).data.stdout).toBe('from stdin\n');
    const closed = await run(gw, { argv: ['cat'] }, { timeout: 20 });
    expect(closed).toMatchObject({ success: true, data: { stdout: '' } });
  });

  it('runs in the workspace, or a directory inside it, and refuses one outside', async () => {
    mkdirSync(join(ws, 'sub'), { recursive: true });
    expect((await run(gw, { argv: ['pwd'] })).data.stdout).toBe('/workspace\n');
    expect((await run(gw, { argv: ['pwd'], cwd: 'sub' })).data.stdout).toBe('/workspace/sub\n');
    const out = await run(gw, { argv: ['pwd'], cwd: '../' });
    expect(out).toMatchObject({ success: false, error_code: 'tool_error' });
    expect(out.error).toContain('outside the workspace');
    expect((await run(gw, { argv: ['pwd'], cwd: 'missing' })).error).toContain('is not a directory in the workspace');
  });

  it('streams stdout as info and stderr as warn log events while the command runs', async () => {
    const script =
      'echo first; i=0; while [ ! -e go ]; do sleep 0.05; i=$((i+1)); [ $i -gt 600 ] && exit 9; done; echo second; echo problem >&2';
    const sse = await openSse(`${gw.url}/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(callBody('run_command', { argv: ['sh', '-c', script] }, { streaming: true })),
    });
    expect(sse.status).toBe(200);
    const first = await sse.next();
    expect(first?.event).toBe('tool/event');
    expect(first?.json).toMatchObject({ kind: 'log', data: { level: 'info', message: 'first' } });
    // The command is still waiting for us: this proves the event was streamed, not replayed at the end.
    writeFileSync(join(ws, 'go'), '');
    const rest = await sse.rest();
    const logs = rest.filter((e) => e.event === 'tool/event').map((e) => e.json.data);
    expect(logs).toEqual([
      { level: 'info', message: 'second', stream: 'stdout' },
      { level: 'warn', message: 'problem', stream: 'stderr' },
    ]);
    const resp = rest.at(-1)!;
    expect(resp.event).toBe('tool/call/resp');
    expect(resp.json.data).toMatchObject({
      success: true,
      exit_code: 0,
      data: { stdout: 'first\nsecond\n', stderr: 'problem\n' },
    });
    rmSync(join(ws, 'go'));
  });

  it('collects the log events in a JSON answer to a streaming call', async () => {
    const r = await run(gw, { argv: ['sh', '-c', 'echo a; echo b >&2'] }, { streaming: true });
    expect(r.success).toBe(true);
    expect(r.events.map((e: { data: { level: string; message: string } }) => [e.data.level, e.data.message])).toEqual(
      expect.arrayContaining([
        ['info', 'a'],
        ['warn', 'b'],
      ]),
    );
  });

  it('runs as an unprivileged user with only the system, the workspace and a private /tmp visible', async () => {
    const r = await run(gw, { argv: ['sh', '-c', 'id -u; id -g; ls /; hostname'] });
    const [uid, gid, ...rest] = r.data.stdout.trim().split('\n');
    expect(uid).not.toBe('0');
    expect(gid).not.toBe('0');
    expect(rest.slice(0, -1).sort()).toEqual(expect.arrayContaining(['usr', 'workspace', 'tmp', 'etc', 'proc', 'dev']));
    expect(rest).not.toContain('root');
    expect(rest).not.toContain('home');
    expect(rest).not.toContain('work');
  });

  it('can change files and directories the file tools created (they belong to the workspace owner)', async () => {
    const w = await postJson(
      `${gw.url}/tool/call`,
      callBody('write_file', { path: 'shared/notes.txt', content: 'one\n', create_dirs: true }),
    );
    expect(w.json.data.success).toBe(true);
    const r = await run(gw, {
      argv: ['sh', '-c', 'echo two >> shared/notes.txt && touch shared/made-by-command && cat shared/notes.txt'],
    });
    expect(r).toMatchObject({ success: true, exit_code: 0 });
    expect(r.data.stdout).toBe('one\ntwo\n');
    // and a file the command changed can be replaced by the file tools again
    const again = await postJson(
      `${gw.url}/tool/call`,
      callBody('write_file', { path: 'shared/notes.txt', content: 'three\n', overwrite: true }),
    );
    expect(again.json.data.success).toBe(true);
    expect(
      (await run(gw, { argv: ['sh', '-c', 'echo four >> shared/notes.txt && cat shared/notes.txt'] })).data.stdout,
    ).toBe('three\nfour\n');
  });

  it('cannot read files outside the workspace or /etc/shadow, nor write outside it', async () => {
    const secret = join(base, 'secret.txt');
    writeFileSync(secret, 'top secret next to the workspace', { mode: 0o644 });
    const outside = join(base, 'written-from-sandbox.txt');
    const hostDir = process.cwd(); // the gateway's own directory (repository, config)
    const script = [
      `for f in "${secret}" /etc/shadow "${hostDir}/package.json" /root; do`,
      '  if cat "$f" >/dev/null 2>&1 || ls "$f" >/dev/null 2>&1; then echo "READ $f"; else echo "DENIED $f"; fi',
      'done',
      `for f in "${outside}" /etc/evil /usr/evil /evil "${hostDir}/evil"; do`,
      '  if (echo x > "$f") 2>/dev/null; then echo "WROTE $f"; else echo "DENIED $f"; fi',
      'done',
      'echo x > inside.txt && echo "WROTE inside"',
      'cat /etc/shadow',
    ].join('\n');
    const r = await run(gw, { argv: ['sh', '-c', script] });
    const lines = r.data.stdout.trim().split('\n');
    expect(lines).toEqual([
      `DENIED ${secret}`,
      'DENIED /etc/shadow',
      `DENIED ${hostDir}/package.json`,
      'DENIED /root',
      `DENIED ${outside}`,
      'DENIED /etc/evil',
      'DENIED /usr/evil',
      'DENIED /evil',
      `DENIED ${hostDir}/evil`,
      'WROTE inside',
    ]);
    expect(r.success).toBe(false); // the final `cat /etc/shadow` fails
    expect(r.data.stdout + r.data.stderr).not.toContain('top secret');
    expect(existsSync(outside)).toBe(false);
    expect(existsSync(join(hostDir, 'evil'))).toBe(false);
    expect(existsSync(join(ws, 'inside.txt'))).toBe(true);
    if (existsSync('/etc/shadow')) expect(r.data.stdout).not.toMatch(/^root:/m);
  });

  it("does not pass on the gateway's own environment, only PATH, HOME, LANG and configured extras", async () => {
    expect(process.env.A2E_SHELL_TEST_SECRET).toBe('gateway-secret-value'); // set in the gateway's process
    const r = await run(gw, { argv: ['env'], env: { FROM_CALL: 'call-value' } });
    const vars = Object.fromEntries(
      r.data.stdout
        .trim()
        .split('\n')
        .map((l: string) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    expect(r.data.stdout).not.toContain('gateway-secret-value');
    expect(vars).toMatchObject({ HOME: '/tmp', LANG: 'C.UTF-8', FROM_CONFIG: 'config-value', FROM_CALL: 'call-value' });
    expect(vars.PATH).toMatch(/^\/usr\/local\/bin:/);
    expect(Object.keys(vars).sort()).toEqual(['FROM_CALL', 'FROM_CONFIG', 'HOME', 'LANG', 'PATH', 'PWD']);
  });

  it('cuts output at max_output_bytes and kills a command that keeps writing', async () => {
    const flood = await run(gw, { argv: ['yes', 'flood'] });
    expect(flood).toMatchObject({ success: false, error_code: 'tool_error' });
    expect(flood.error).toContain('max_output_bytes');
    expect(flood.data.truncated).toBe(true);
    expect(flood.truncated).toBe(true);
    expect(flood.data.stdout.length).toBe(MAX_OUTPUT);
    expect(flood.data.stdout.startsWith('flood\nflood\n')).toBe(true);

    // A little over the cap: cut, but the command finishes normally.
    const over = await run(gw, { argv: ['sh', '-c', `head -c ${MAX_OUTPUT + 1000} /dev/zero | tr '\\0' a`] });
    expect(over).toMatchObject({ success: true, truncated: true, exit_code: 0 });
    expect(over.data.stdout).toBe('a'.repeat(MAX_OUTPUT));
  });

  it('applies the process-count and file-size limits', async () => {
    const g = await start({ limits: { processes: 8, file_size_mb: 1 } });
    try {
      const forks = await run(g, { argv: ['sh', '-c', 'for i in $(seq 20); do sleep 5 & done; wait'] });
      expect(forks.success).toBe(false);
      expect(forks.data.stderr).toMatch(/fork|resource/i);
      const big = await run(g, { argv: ['sh', '-c', 'head -c 2000000 /dev/zero > big.bin'] });
      expect(big.success).toBe(false);
      expect(big.exit_code).not.toBe(0);
    } finally {
      await g.close();
      rmSync(join(ws, 'big.bin'), { force: true });
    }
  });
});

describe('run_command process cleanup', () => {
  // The command starts a setsid'd child and a background child, all ignoring SIGTERM.
  const treeScript = (marker: string) =>
    [
      'trap "" TERM',
      `setsid sh -c 'trap "" TERM; while :; do sleep 1; done' ${marker}-setsid &`,
      `sh -c 'trap "" TERM; while :; do sleep 1; done' ${marker}-background &`,
      'while :; do sleep 1; done',
    ].join('\n');

  /** Wait until both children run, and return every host process of the command. */
  async function startedTree(marker: string): Promise<Set<number>> {
    return waitFor('the command and its children to start', () => {
      const tree = processTree(marker);
      // The last argument of each child's command line is its marker (the sandbox's own command line mentions both).
      const lastArgs = [...tree].map((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).at(-1);
        } catch {
          return undefined;
        }
      });
      const both = lastArgs.includes(`${marker}-setsid`) && lastArgs.includes(`${marker}-background`);
      return both ? tree : undefined;
    });
  }

  async function expectAllGone(pids: Set<number>): Promise<void> {
    expect(pids.size).toBeGreaterThanOrEqual(5); // sandbox, its init, the shell, two children (+ sleeps)
    await waitFor('every process of the command to exit', () => [...pids].every((p) => !alive(p)), 10_000);
  }

  it('kills the command and every descendant at its timeout', async () => {
    const marker = `a2e-tree-${randomUUID()}`;
    const pending = run(gw, { argv: ['sh', '-c', treeScript(marker), marker], timeout: 2 }, { timeout: 60 });
    const pids = await startedTree(marker);
    const r = await pending;
    expect(r).toMatchObject({ success: false, error_code: 'tool_error' });
    expect(r.error).toContain('timed out after 2 s');
    await expectAllGone(pids);
  });

  it('kills them when the client disconnects', async () => {
    const marker = `a2e-tree-${randomUUID()}`;
    const sse = await openSse(`${gw.url}/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(
        callBody('run_command', { argv: ['sh', '-c', treeScript(marker), marker] }, { streaming: true, timeout: 60 }),
      ),
    });
    const pids = await startedTree(marker);
    sse.abort();
    await expectAllGone(pids);
  });

  it('leaves nothing behind when calls are stopped just as their sandbox starts', async () => {
    // Disconnecting within a few ms lands in every phase of the sandbox's set-up.
    const marker = `a2e-early-${randomUUID()}`;
    for (let i = 0; i < 30; i++) {
      const controller = new AbortController();
      const request = fetch(`${gw.url}/tool/call`, {
        method: 'POST',
        signal: controller.signal,
        headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
        body: JSON.stringify(callBody('run_command', { argv: ['sleep', '300', marker] }, { streaming: true })),
      }).catch(() => undefined);
      await new Promise((r) => setTimeout(r, i % 10));
      controller.abort();
      await request;
    }
    await waitFor('every early-stopped sandbox to exit', () => processTree(marker).size === 0, 10_000);
  });

  it('kills them when the gateway shuts down', async () => {
    const g = await start({}, { shutdown_grace_s: 0 });
    const marker = `a2e-tree-${randomUUID()}`;
    const pending = run(g, { argv: ['sh', '-c', treeScript(marker), marker] }, { timeout: 60 });
    const pids = await startedTree(marker);
    await g.close();
    expect((await pending).error).toContain('shutting down');
    await expectAllGone(pids);
  });
});

describe('run_command network', () => {
  let server: Server;
  let port: number;
  let connections = 0;
  beforeAll(async () => {
    server = createServer((s) => {
      connections++;
      s.end('hello from the host\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  const connect = (p: number) => ['bash', '-c', `exec 3<>/dev/tcp/127.0.0.1/${p} && cat <&3`];

  it('has no network by default', async () => {
    const r = await run(gw, { argv: connect(port) });
    expect(r.success).toBe(false);
    expect(r.data.stdout).toBe('');
    expect(connections).toBe(0);
  });

  it('reaches the network with network: true', async () => {
    const g = await start({ network: true });
    try {
      const r = await run(g, { argv: connect(port) });
      expect(r).toMatchObject({ success: true, data: { stdout: 'hello from the host\n' } });
      expect(connections).toBe(1);
    } finally {
      await g.close();
    }
  });
});

describe('run_command configuration', () => {
  it('enforces the allow list on argv[0]', async () => {
    const g = await start({ allow: ['echo'] });
    try {
      expect(await run(g, { argv: ['echo', 'ok'] })).toMatchObject({ success: true, data: { stdout: 'ok\n' } });
      for (const argv of [['ls'], ['/bin/ls'], ['sh', '-c', 'echo sneaky']]) {
        const r = await run(g, { argv });
        expect(r).toMatchObject({ success: false, error_code: 'tool_error' });
        expect(r.error).toContain('is not allowed; tools.shell.allow permits: echo');
      }
      // PATH from the call cannot swap the allowed program for another one.
      writeFileSync(join(ws, 'echo'), '#!/bin/sh\necho impostor\n', { mode: 0o755 });
      const r = await run(g, { argv: ['echo', 'real'], env: { PATH: '/workspace' } });
      expect(r.data.stdout).toBe('real\n');
    } finally {
      await g.close();
      rmSync(join(ws, 'echo'), { force: true });
    }
  });

  it('refuses to start with a mount that does not exist', async () => {
    await expect(start({ mounts: ['/no/such/dir-a2e'] })).rejects.toThrow(
      /tools\.shell\.mounts: "\/no\/such\/dir-a2e" does not exist/,
    );
  });

  it.runIf(process.getuid?.() === 0)('refuses to start when the sandbox user cannot reach the workspace', async () => {
    const hidden = mkdtempSync(join(tmpdir(), 'a2e-shell-hidden-')); // mode 0700, owned by root
    try {
      await expect(start({}, {}, join(hidden, 'ws'))).rejects.toThrow(
        /cannot reach .* is not searchable by others; run "chmod o\+x/,
      );
    } finally {
      rmSync(hidden, { recursive: true, force: true });
    }
  });

  it('shows extra mounts read-only', async () => {
    const extra = join(base, 'extra');
    mkdirSync(extra, { recursive: true, mode: 0o755 });
    writeFileSync(join(extra, 'data.txt'), 'shared data', { mode: 0o644 });
    const g = await start({ mounts: [extra] });
    try {
      const r = await run(g, { argv: ['sh', '-c', `cat ${extra}/data.txt; echo; echo x > ${extra}/new.txt`] });
      expect(r.data.stdout).toBe('shared data\n');
      expect(r.success).toBe(false);
      expect(r.data.stderr).toMatch(/Read-only file system/);
      expect(existsSync(join(extra, 'new.txt'))).toBe(false);
    } finally {
      await g.close();
    }
  });

  it('runs unconfined only with sandbox: none, still with a clean environment', async () => {
    const g = await start({ sandbox: 'none' });
    try {
      const r = await run(g, { argv: ['sh', '-c', 'pwd; env'] });
      expect(r.success).toBe(true);
      expect(r.data.stdout.split('\n')[0]).toBe(ws);
      expect(r.data.stdout).not.toContain('gateway-secret-value');
    } finally {
      await g.close();
    }
  });
});

describe('run_command with tools.shell.enabled: auto (the default)', () => {
  // The sandbox is checked after the gateway listens (it takes a few hundred ms), not before.
  it('with a working sandbox: a call made at once waits for the check and runs; run_command is listed once /readyz is 200', async () => {
    const config = join(base, 'auto-works.yaml');
    writeFileSync(
      config,
      `tools:\n  fs: { root: ${JSON.stringify(ws)} }\n  http: { enabled: false }\n  eval: { enabled: false }\n`,
    );
    const proc = execa('node', [CLI, 'serve', '--port', '0', '--config', config], {
      env: { LOG_LEVEL: 'warn' },
      reject: false,
      cwd: base,
    });
    try {
      const url = await listeningUrl(proc);
      const r = await postJson(`${url}/tool/call`, callBody('run_command', { argv: ['echo', 'at once'] }));
      expect(r.json.data, JSON.stringify(r.json)).toMatchObject({
        success: true,
        data: { exit_code: 0, stdout: 'at once\n' },
      });
      await expect.poll(async () => (await fetch(`${url}/readyz`)).status, { timeout: 15_000 }).toBe(200);
      const list = await postJson(`${url}/tool/list`, {});
      expect(list.json.tools.map((t: { name: string }) => t.name)).toContain('run_command');
    } finally {
      proc.kill('SIGTERM');
      await proc;
    }
  });
});

describe('where no sandbox can be made', () => {
  // The gateway runs inside an outer bwrap that puts an empty file over /usr/bin/bwrap: the real failure
  // (bubblewrap present on the PATH but unable to run) on a machine where everything else works.
  const serveWithoutBwrap = (config: string) =>
    execa(
      'bwrap',
      [
        '--dev-bind',
        '/',
        '/',
        '--ro-bind',
        '/dev/null',
        BWRAP,
        '--die-with-parent',
        'node',
        CLI,
        'serve',
        '--port',
        '0',
        '--config',
        config,
      ],
      {
        env: { LOG_LEVEL: 'warn', LOG_FORMAT: 'json' },
        reject: false,
        cwd: base,
      },
    );

  it('by default the gateway starts without run_command and says why; the other tools work', async () => {
    const config = join(base, 'auto.yaml');
    writeFileSync(config, `tools:\n  fs: { root: ${JSON.stringify(ws)} }\n`);
    const proc = serveWithoutBwrap(config);
    let stderr = '';
    try {
      const url = await listeningUrl(proc);
      // The sandbox is checked after the gateway listens; /readyz is 200 once that check has ended.
      await expect.poll(async () => (await fetch(`${url}/readyz`)).status, { timeout: 15_000 }).toBe(200);
      const list = await postJson(`${url}/tool/list`, {});
      const names = list.json.tools.map((t: { name: string }) => t.name);
      expect(names).toContain('read_file');
      expect(names).not.toContain('run_command');
      const r = await postJson(`${url}/tool/call`, callBody('run_command', { argv: ['true'] }));
      expect(r.status).toBe(404);
      expect(r.json.code).toBe('unknown_tool');
      // The caller is told why, not only that no tool has that name; /healthz and /readyz say so too.
      expect(r.json.message).toMatch(
        /^no tool named "run_command" here: the gateway cannot sandbox commands on this host \(bubblewrap could not create a sandbox/,
      );
      expect(r.json.message).toMatch(/tools\.shell\.enabled: false$/);
      const health = (await (await fetch(`${url}/healthz`)).json()) as {
        unavailable_tools?: Array<{ name: string; reason: string }>;
      };
      expect(health.unavailable_tools).toEqual([
        { name: 'run_command', reason: expect.stringMatching(/bubblewrap could not create a sandbox/) },
      ]);
      const ready = (await (await fetch(`${url}/readyz`)).json()) as { status: string; unavailable_tools?: unknown };
      expect(ready).toEqual({ status: 'ready', unavailable_tools: health.unavailable_tools });
    } finally {
      proc.kill('SIGTERM');
      stderr = String((await proc).stderr);
    }
    const warning = stderr
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { msg: string })
      .find((l) => l.msg.includes('run_command is not offered'));
    expect(warning?.msg).toMatch(/cannot sandbox commands here: bubblewrap could not create a sandbox/);
    expect(warning?.msg).toMatch(/tools\.shell\.enabled: false/);
  });

  it.runIf(process.getuid?.() === 0)(
    'a root gateway whose workspace is under a 0700 directory: run_command is unavailable and every door says why, without the path',
    async () => {
      const hidden = mkdtempSync(join(tmpdir(), 'a2e-shell-hidden-')); // mode 0700, owned by root
      const g = await startGateway({
        config: { tools: { fs: { root: join(hidden, 'ws') }, shell: { enabled: 'auto' } } },
      });
      try {
        await expect.poll(async () => (await fetch(`${g.url}/readyz`)).status, { timeout: 15_000 }).toBe(200);
        const r = await postJson(`${g.url}/tool/call`, callBody('run_command', { argv: ['true'] }));
        expect(r.status).toBe(404);
        expect(r.json).toMatchObject({ code: 'unknown_tool', detail: { tool_name: 'run_command' } });
        expect(r.json.message).toBe(
          'no tool named "run_command" here: the gateway cannot sandbox commands on this host (the sandbox user (uid 65534) ' +
            'cannot reach the workspace (tools.fs.root) or a tools.shell.mounts path: a directory above it is not searchable ' +
            "by others). Its operator can fix that and restart (the gateway's start-up warning says how), or set tools.shell.enabled: false",
        );
        const health = await (await fetch(`${g.url}/healthz`)).text();
        expect(health).toContain(
          '"unavailable_tools":[{"name":"run_command","reason":"the gateway cannot sandbox commands on this host',
        );
        expect(health + JSON.stringify(r.json)).not.toContain(hidden);
      } finally {
        await g.close();
        rmSync(hidden, { recursive: true, force: true });
      }
    },
  );

  it('with tools.shell.enabled: true the gateway refuses to start, saying what is missing', async () => {
    const config = join(base, 'required.yaml');
    writeFileSync(config, `tools:\n  fs: { root: ${JSON.stringify(ws)} }\n  shell: { enabled: true }\n`);
    const r = await serveWithoutBwrap(config);
    expect(r.exitCode).toBe(1);
    expect(String(r.stderr)).toMatch(/tools\.shell cannot sandbox commands: bubblewrap could not create a sandbox/);
    expect(String(r.stdout)).not.toContain('listening');
  });
});

/** The URL from the gateway's listening line on stdout. */
function listeningUrl(proc: ReturnType<typeof execa>): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    proc.once('exit', (code) =>
      reject(new Error(`gateway exited with ${code} before listening: ${String(proc.stderr ?? '')}`)),
    );
  });
}
