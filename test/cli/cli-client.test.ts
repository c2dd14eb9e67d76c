/** `a2e-gateway list` and `a2e-gateway call` as real processes against a running gateway, with and without a terminal. */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolContext } from '../../src/index.js';
import { CLI } from '../helpers/cli.js';
import { loadedModulesIn } from '../helpers/loaded-modules.js';
import { deferred, definePlugin, echoTool, failTool } from '../helpers/plugins.js';
import { startGateway, type TestGateway } from '../helpers/server.js';

let gate = deferred();

const plugin = definePlugin('cli-test', [
  echoTool,
  failTool,
  [
    {
      name: 'add',
      description: 'Adds two integers',
      input_parameters: [
        { name: 'a', type: 'integer', description: 'First', required: true },
        { name: 'b', type: 'integer', description: 'Second', required: true },
        { name: 'verbose', type: 'boolean', description: 'Say more' },
      ],
      tags: ['math'],
      kind: 'calc',
    },
    (args) =>
      args.verbose
        ? { sum: Number(args.a) + Number(args.b), note: 'verbose' }
        : { sum: Number(args.a) + Number(args.b) },
  ],
  [
    {
      name: 'work',
      description: 'Reports progress, a status, a log line and an artifact; waits for the test halfway',
      tags: ['stream'],
    },
    async (_args, ctx: ToolContext) => {
      ctx.emit('status', { message: 'warming up' });
      ctx.emit('progress', { pct: 50, message: 'halfway' });
      await gate.promise;
      ctx.emit('log', { level: 'info', message: 'second half started' });
      ctx.emit('artifact', { name: 'report.txt', mime: 'text/plain', chunk: 'hello ', final: false });
      ctx.emit('artifact', { name: 'report.txt', mime: 'text/plain', chunk: 'world', final: true });
      ctx.emit('progress', { pct: 100, message: 'done' });
      return { ok: true };
    },
  ],
]);

let gw: TestGateway;
let deadUrl: string; // nothing listens there
beforeAll(async () => {
  gw = await startGateway({ plugins: [plugin] });
  const probe = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => probe.once('listening', resolve));
  deadUrl = `http://127.0.0.1:${(probe.address() as { port: number }).port}`;
  await new Promise((resolve) => probe.close(resolve));
});
afterAll(() => gw.close());

const run = (args: string[], env: Record<string, string> = {}) =>
  execa('node', [CLI, ...args], { reject: false, env: { A2E_URL: gw.url, ...env }, extendEnv: true });

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Run the CLI on a pseudo-terminal (util-linux `script`); output is what the terminal would show. */
function runOnTerminal(args: string[]) {
  const command = ['node', CLI, ...args].map(shellQuote).join(' ');
  return execa('script', ['-qfec', command, '/dev/null'], { reject: false, env: { A2E_URL: gw.url }, buffer: true });
}

describe('a2e-gateway list', () => {
  it('prints a table of name, kind, tags and description', async () => {
    const r = await run(['list']);
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^NAME\s+KIND\s+TAGS\s+DESCRIPTION$/);
    expect(lines).toContainEqual(expect.stringMatching(/^add\s+calc\s+math\s+Adds two integers$/));
    expect(lines).toContainEqual(expect.stringMatching(/^echo\s+native\s+test,text\s+Echo the given text back$/));
    expect(lines).toHaveLength(5);
  });

  it('--json, --tag, --kind, --query', async () => {
    const json = await run(['list', '--json', '--tag', 'test']);
    expect(JSON.parse(json.stdout).map((t: { name: string }) => t.name)).toEqual(['echo', 'fail']);
    expect((await run(['list', '--tag', 'test', '--tag', 'text'])).stdout).toMatch(/^NAME.*\necho /);
    expect((await run(['list', '--kind', 'calc', '--json'])).stdout).toContain('"name": "add"');
    const search = await run(['list', '--query', 'integers', '--json']);
    expect(JSON.parse(search.stdout)[0].name).toBe('add');
    expect((await run(['list', '--query', 'zzzqqq'])).stdout).toBe('no tools');
  });

  it('on a terminal, too', async () => {
    const r = await runOnTerminal(['list']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/NAME\s+KIND\s+TAGS\s+DESCRIPTION/);
    expect(r.stdout).toMatch(/add\s+calc\s+math\s+Adds two integers/);
  });

  it('--url beats A2E_URL; an unreachable gateway is one line and exit 2', async () => {
    const r = await run(['list', '--url', deadUrl]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe(
      `a2e-gateway: cannot reach the gateway at ${deadUrl} (ECONNREFUSED); check that it is running, or pass --url (or set A2E_URL)`,
    );
    const bad = await run(['list', '--url', 'ftp://x']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toBe('a2e-gateway: --url must be an http(s) URL such as http://127.0.0.1:8080, got "ftp://x"');
  });
});

describe('--token / A2E_TOKEN', () => {
  it('works against a gateway with auth (and its required sessions); a wrong token is a one-line error, exit 2', async () => {
    const sha256 = (t: string) => createHash('sha256').update(t).digest('hex');
    const secured = await startGateway({
      plugins: [plugin],
      config: { auth: { tokens: [{ name: 'cli', token_sha256: sha256('cli-secret') }] } },
    });
    try {
      const list = await run(['list', '--url', secured.url, '--json'], { A2E_TOKEN: 'cli-secret' });
      expect(list.exitCode).toBe(0);
      expect(JSON.parse(String(list.stdout)).map((t: { name: string }) => t.name)).toContain('echo');
      const call = await run([
        'call',
        'add',
        '--arg',
        'a=2',
        '--arg',
        'b=3',
        '--url',
        secured.url,
        '--token',
        'cli-secret',
      ]);
      expect(call.exitCode).toBe(0);
      expect(String(call.stdout)).toContain('5');
      const wrong = await run(['list', '--url', secured.url, '--token', 'nope']);
      expect(wrong.exitCode).toBe(2);
      expect(String(wrong.stderr).trim().split('\n')).toHaveLength(1);
      expect(String(wrong.stderr)).toContain('token');
    } finally {
      await secured.close();
    }
  });

  it('is sent as a bearer token', async () => {
    // A stand-in that records the Authorization header the CLI sends with each command.
    const seen: (string | undefined)[] = [];
    const server = createHttpServer((req, res) => {
      if (req.url === '/handshake') {
        // An older gateway without sessions: the CLI goes on without one.
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', code: 'not_found', message: 'no route POST /handshake' }));
        return;
      }
      seen.push(req.headers.authorization);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ type: 'tool/list/resp', id: 'x', version: '1.0', ts: 1, req_id: '', tools: [] }));
    }).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      expect((await run(['list', '--url', url, '--token', 'tok-flag'])).stdout).toBe('no tools');
      expect((await run(['list', '--url', url], { A2E_TOKEN: 'tok-env' })).exitCode).toBe(0);
      expect((await run(['list', '--url', url, '--token', 'tok-flag'], { A2E_TOKEN: 'tok-env' })).exitCode).toBe(0);
      expect((await run(['list', '--url', url])).exitCode).toBe(0);
      expect(seen).toEqual(['Bearer tok-flag', 'Bearer tok-env', 'Bearer tok-flag', undefined]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('a2e-gateway call', () => {
  it("prints the result; --arg values are typed by the tool's parameters; --args-json merges", async () => {
    const r = await run(['call', 'add', '--arg', 'a=2', '--arg', 'b=40']);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ sum: 42 });
    const merged = await run([
      'call',
      'add',
      '--args-json',
      '{"a": 1, "b": 1}',
      '--arg',
      'b=5',
      '--arg',
      'verbose=true',
    ]);
    expect(JSON.parse(merged.stdout)).toEqual({ sum: 6, note: 'verbose' });
    expect(JSON.parse((await run(['call', 'echo', '--arg', 'text=007'])).stdout)).toEqual({ text: '007' });
  });

  it('exit 1 on a tool failure, with a one-line message', async () => {
    const r = await run(['call', 'fail', '--arg', 'message=disk full']);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('a2e-gateway: tool failed: disk full');
  });

  it('exit 2 on usage errors and refused calls, with a one-line message', async () => {
    const cases: [string[], string][] = [
      [['call'], 'a2e-gateway: call needs a tool name: a2e-gateway call TOOL [--arg key=value]…'],
      [['call', 'add', '--arg', 'a=two', '--arg', 'b=1'], 'a2e-gateway: --arg a must be an integer, got "two"'],
      [['call', 'add', '--arg', 'novalue'], 'a2e-gateway: --arg must look like key=value, got "novalue"'],
      [
        ['call', 'add', '--args-json', '[1]'],
        'a2e-gateway: --args-json must be a JSON object, e.g. \'{"path": "README.md"}\'',
      ],
      [['call', 'add', '--timeout', '0'], 'a2e-gateway: --timeout must be a positive number of seconds, got "0"'],
      [
        ['call', 'nope'],
        'a2e-gateway: call refused (unknown_tool): no tool named "nope". POST /tool/list to see the available tools.',
      ],
      [
        ['call', 'add', '--arg', 'a=1'],
        'a2e-gateway: call refused (invalid_arguments): invalid arguments for tool "add": arguments.b: required integer is missing',
      ],
    ];
    for (const [args, message] of cases) {
      const r = await run(args);
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toBe(message);
    }
    const conn = await run(['call', 'echo', '--arg', 'text=x'], { A2E_URL: deadUrl });
    expect(conn.exitCode).toBe(2);
    expect(conn.stderr.split('\n')).toHaveLength(1);
    const flag = await run(['call', 'echo', '--bogus']);
    expect(flag.exitCode).toBe(2);
    expect(flag.stderr).toBe('a2e-gateway: call: unknown option --bogus (run a2e-gateway call --help for its options)');
    expect(flag.stderr.split('\n')).toHaveLength(1);
  });

  it('--stream without a terminal: one JSON event per line, the result last', async () => {
    gate = deferred();
    gate.resolve();
    const r = await run(['call', 'work', '--stream']);
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.split('\n').map((l) => JSON.parse(l));
    expect(lines.slice(0, -1).map((e) => `${e.type}:${e.kind}:${e.seq}`)).toEqual([
      'tool/event:status:0',
      'tool/event:progress:1',
      'tool/event:log:2',
      'tool/event:artifact:3',
      'tool/event:artifact:4',
      'tool/event:progress:5',
    ]);
    expect(lines.at(-1)).toMatchObject({ success: true, tool_name: 'work', data: { ok: true } });
  });

  it('--stream on a terminal: live progress bar and status, log lines as they come, the artifact assembled', async () => {
    gate = deferred();
    const proc = runOnTerminal(['call', 'work', '--stream']);
    let screen = '';
    const halfway = new Promise<void>((resolve) => {
      proc.stdout!.on('data', (chunk: Buffer) => {
        screen += chunk.toString();
        if (screen.includes('halfway') && screen.includes('status: warming up')) resolve();
      });
    });
    // The bar is drawn while the tool is still running: it waits on the gate until we have seen it.
    await halfway;
    expect(screen).toMatch(/\[#{15}-{15}\]\s+50% halfway/);
    expect(screen).not.toContain('second half started');
    gate.resolve();
    const r = await proc;
    expect(r.exitCode).toBe(0);
    const out = r.stdout;
    expect(out).toContain('[info] second half started');
    expect(out).toMatch(/--- artifact report\.txt \(text\/plain, 11 chars\) ---\r?\nhello world/);
    expect(out).toMatch(/\[#{30}\]\s+100% done/);
    expect(out).toContain('\x1b[2K'); // the live area is redrawn in place
    expect(out).not.toContain('"type":"tool/event"');
    expect(out.trimEnd()).toMatch(/\{\r?\n\s+"ok": true\r?\n\}$/);
  });

  it('a tool failure on a terminal is exit 1 too', async () => {
    const r = await runOnTerminal(['call', 'fail', '--stream']);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toContain('a2e-gateway: tool failed: it failed on purpose');
  });
});

describe('the client commands load only the client', () => {
  const RECORD_IMPORTS = fileURLToPath(new URL('../fixtures/record-imports.mjs', import.meta.url));
  const NO_GLOBAL_FETCH = fileURLToPath(new URL('../fixtures/no-global-fetch.mjs', import.meta.url));
  /** The CLI's own modules a client command may load: the command line (and its compile cache), the client and its output. */
  const CLIENT_MODULE =
    /\/src\/(cli\.ts|cli\/(client|usage|live|http-fetch|json-request)\.ts|client\/[\w-]+\.ts|utils\/similar\.ts|version\.ts|package-root\.ts|compile-cache\.ts)$/;
  const CLIENT_PACKAGES = ['openapi-fetch', 'eventsource-parser'];
  const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

  it("list and call --stream: no server module, no package but the client's, and not the global fetch", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'a2e-cli-imports-'));
    try {
      for (const [name, args] of [
        ['list', ['list']],
        ['call', ['call', 'add', '--arg', 'a=2', '--arg', 'b=40', '--stream']],
      ] as const) {
        const log = join(dir, `${name}.imports`);
        const r = await run([...args], {
          NODE_OPTIONS: `--import=${RECORD_IMPORTS} --import=${NO_GLOBAL_FETCH}`,
          A2E_IMPORTS_LOG: log,
        });
        expect(r.stderr, name).toBe('');
        expect(r.exitCode, name).toBe(0);
        expect(r.stdout, name).toContain(name === 'list' ? 'Adds two integers' : '"sum":42');
        // Each chunk of the bundle counted as the modules it holds.
        const imports = loadedModulesIn(log);
        // The recorder works: it saw the client.
        expect(
          imports.some((u) => u.endsWith('/src/cli/client.ts')),
          name,
        ).toBe(true);
        const own = imports.filter((u) => u.startsWith(SRC));
        expect(
          own.filter((u) => !CLIENT_MODULE.test(u)),
          `${name} loaded these gateway modules`,
        ).toEqual([]);
        const packages = new Set(imports.flatMap((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1] ?? []));
        expect(
          [...packages].filter((p) => !CLIENT_PACKAGES.includes(p)),
          `${name} loaded these packages`,
        ).toEqual([]);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("list does not use the web Request, Response or Headers (their first use loads Node's undici)", async () => {
    const NO_WEB_GLOBALS = fileURLToPath(new URL('../fixtures/no-web-globals.mjs', import.meta.url));
    const r = await run(['list'], { NODE_OPTIONS: `--import=${NO_WEB_GLOBALS}` });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^add\s+calc\s+math\s+Adds two integers$/m);
    // The fixture works: a command that does use them fails.
    const call = await run(['call', 'add', '--arg', 'a=1', '--arg', 'b=2'], {
      NODE_OPTIONS: `--import=${NO_WEB_GLOBALS}`,
    });
    expect(call.stderr).toMatch(/the global (Request|Response|Headers) was used/);
  });

  it('call --stream interrupted (SIGINT): the call is stopped, one line, exit 130', async () => {
    gate = deferred();
    const proc = run(['call', 'work', '--stream']);
    await new Promise<void>((resolve) => {
      let out = '';
      proc.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('"kind":"progress"')) resolve();
      });
    });
    proc.kill('SIGINT');
    const r = await proc;
    gate.resolve();
    expect(r.exitCode).toBe(130);
    expect(r.stderr).toBe('a2e-gateway: interrupted; the call was stopped');
  });
});
