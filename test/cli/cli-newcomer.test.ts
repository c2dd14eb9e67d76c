/**
 * The CLI as a newcomer meets it: typos in options get a suggestion and a
 * pointer to the right --help, `serve --help` is about serve, `--version`,
 * `config check`, and `call` showing a failed command's output (and the
 * whole result with --json), against a real gateway with the real shell tool.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { CLI, startShellCli } from '../helpers/cli.js';

const run = (args: string[], env: Record<string, string> = {}, cwd?: string) =>
  execa('node', [CLI, ...args], {
    reject: false,
    env: { LOG_LEVEL: 'silent', ...env },
    timeout: 60_000,
    ...(cwd ? { cwd } : {}),
  });

let gateway: Awaited<ReturnType<typeof startShellCli>>;
let dir: string;
beforeAll(async () => {
  gateway = await startShellCli('a2e-cli-newcomer-');
  dir = gateway.dir;
});
afterAll(() => gateway?.stop());

describe('options', () => {
  it('an unknown option names the command, suggests the closest one and points at its --help', async () => {
    const r = await run(['serve', '--prot', '9000']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe(
      'a2e-gateway: serve: unknown option --prot; did you mean --port? (run a2e-gateway serve --help for its options)',
    );
    const c = await run(['call', 'echo', '--jsno']);
    expect(c.exitCode).toBe(2);
    expect(c.stderr).toBe(
      'a2e-gateway: call: unknown option --jsno; did you mean --json? (run a2e-gateway call --help for its options)',
    );
    const l = await run(['list', '--querry', 'x']);
    expect(l.stderr).toBe(
      'a2e-gateway: list: unknown option --querry; did you mean --query? (run a2e-gateway list --help for its options)',
    );
    const v = await run(['serve', '--port']);
    expect(v.stderr).toBe('a2e-gateway: serve: --port needs a value (run a2e-gateway serve --help for its options)');
    const stdioPort = await run(['mcp-stdio', '--port', 'any']);
    expect(stdioPort.exitCode).toBe(2);
    expect(stdioPort.stderr).toBe('a2e-gateway: --port must be a port number from 0 to 65535, got "any"');
    const taken = new URL(gateway.url).port;
    const stdioTaken = await run(['mcp-stdio', '--port', taken]);
    expect(stdioTaken.exitCode).toBe(1);
    expect(stdioTaken.stderr).toBe(
      `a2e-gateway: port ${taken} on 127.0.0.1 is already in use; pick another with --port`,
    );
    const stdioHelp = await run(['mcp-stdio', '--help']);
    expect(stdioHelp.stdout).toMatch(/^Usage: a2e-gateway mcp-stdio \[options\]/);
    expect(stdioHelp.stdout).toContain('/admin/approvals');
    const cmd = await run(['serv']);
    expect(cmd.exitCode).toBe(2);
    expect(cmd.stderr).toBe(
      'a2e-gateway: unknown command "serv"; did you mean "serve"? (run a2e-gateway --help for the commands)',
    );
  });

  it("serve --help prints serve's own options", async () => {
    const r = await run(['serve', '--help']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^Usage: a2e-gateway serve \[options\]/);
    for (const option of ['--config FILE', '--host HOST', '--port PORT', 'LOG_LEVEL'])
      expect(r.stdout).toContain(option);
    expect(r.stdout).not.toContain('Client commands');
  });

  it('--version prints the package version', async () => {
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    for (const flag of ['--version', '-v']) {
      const r = await run([flag]);
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toBe(version);
    }
  });
});

describe('the serve process', () => {
  it('is named a2e-gateway, so docs/reload.md\'s `kill -HUP "$(pidof a2e-gateway)"` finds it', async () => {
    const r = await execa('pidof', ['a2e-gateway'], { reject: false });
    expect(r.stdout.split(' ')).toContain(String(gateway.proc.pid));
  });
});

describe('call', () => {
  const url = () => ['--url', gateway.url];
  const failing = [
    '--args-json',
    JSON.stringify({ argv: ['sh', '-c', 'echo built 3 of 4; echo step 4 failed: no disk >&2; exit 3'] }),
  ];

  it('a command that exits non-zero: its stdout and stderr are shown, then the error; exit 1', async () => {
    const r = await run(['call', 'run_command', ...failing, ...url()]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('built 3 of 4');
    expect(r.stderr.split('\n')).toEqual([
      'step 4 failed: no disk',
      expect.stringMatching(/^a2e-gateway: tool failed: command "sh" exited with code 3/),
    ]);
  });

  it('--json prints the whole result, failed or not', async () => {
    const failed = await run(['call', 'run_command', ...failing, '--json', ...url()]);
    expect(failed.exitCode).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({
      success: false,
      tool_name: 'run_command',
      error_code: 'tool_error',
      exit_code: 3,
      data: { stdout: 'built 3 of 4\n', stderr: 'step 4 failed: no disk\n' },
    });
    const ok = await run(['call', 'list_dir', '--arg', 'path=.', '--json', ...url()]);
    expect(ok.exitCode).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({
      success: true,
      tool_name: 'list_dir',
      data: { entries: expect.any(Array) },
    });
  });
});

describe('config check', () => {
  it('validates a config and prints the effective one with secrets masked', async () => {
    const file = join(dir, 'check.yaml');
    await writeFile(
      file,
      [
        'server:',
        '  port: ${CHECK_PORT}',
        'agents:',
        '  reviewer:',
        '    card: http://127.0.0.1:9/.well-known/agent-card.json',
        '    headers: {Authorization: "Bearer ${REVIEWER_TOKEN}"}',
        '    enabled: false',
        'auth:',
        '  tokens:',
        '    - {name: alice, token_env: ALICE_TOKEN}',
        'tools:',
        '  shell: {enabled: false, env: {PIP_INDEX_URL: "https://user:pw@pypi.example.com"}}',
        '',
      ].join('\n'),
    );
    const env = { CHECK_PORT: '9123', REVIEWER_TOKEN: 'reviewer-secret-42', ALICE_TOKEN: 'alice-secret-43' };
    const r = await run(['config', 'check', '--config', file], env, dir);
    expect(r.stderr).toMatch(/^a2e-gateway: config OK \(.*check\.yaml\): the gateway would start with \d+ tools$/);
    expect(r.exitCode).toBe(0);
    for (const secret of ['reviewer-secret-42', 'alice-secret-43', 'user:pw']) expect(r.stdout).not.toContain(secret);
    const effective = parseYaml(r.stdout) as Record<string, any>;
    expect(effective.server).toMatchObject({ port: 9123, host: '127.0.0.1', heartbeat_s: 15 }); // ${NAME} filled, defaults in
    expect(effective.agents.reviewer.headers).toEqual({ Authorization: '***' });
    expect(effective.tools.shell.env).toEqual({ PIP_INDEX_URL: '***' });
    expect(effective.auth.tokens[0]).toMatchObject({ name: 'alice', token_env: 'ALICE_TOKEN' });
  });

  it('a config the gateway would refuse: exit 2 with the reason, nothing on stdout', async () => {
    const file = join(dir, 'check-bad.yaml');
    await writeFile(file, 'policy:\n  deny: ["kind:shel"]\ntools:\n  shell: {enabled: false}\n');
    const r = await run(['config', 'check', '--config', file], {}, dir);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('policy.deny[0]: "kind:shel" names no tool kind');
    const missing = await run(['config', 'check', '--config', join(dir, 'nope.yaml')]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toMatch(/config file .*nope\.yaml does not exist/);
  });
});
