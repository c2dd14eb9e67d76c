/**
 * Config mistakes a newcomer makes, through the real `a2e-gateway serve`:
 * `${NAME}` filling numbers and booleans, values that must be one of a few,
 * policy rules that could never match, a token variable that is not set.
 * Each either works or stops the gateway with exit 2 and a message naming
 * the key, the variable and the fix.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, startCli } from '../helpers/cli.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'a2e-config-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Tools off unless a case needs them: start-up stays fast and the case is only about its own keys. */
const QUIET_TOOLS = 'tools:\n  fs: {enabled: false}\n  shell: {enabled: false}\n  http: {enabled: false}\n';

async function configFile(name: string, text: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, text);
  return file;
}

const serve = (file: string, env: Record<string, string> = {}) =>
  execa('node', [CLI, 'serve', '--config', file], {
    reject: false,
    cwd: dir,
    env: { LOG_LEVEL: 'silent', ...env },
    timeout: 30_000,
  });

describe('${NAME} where the schema wants a number or a boolean', () => {
  it('fills server.port, server.trust_proxy and heartbeat_s from the environment', async () => {
    const file = await configFile(
      'env-typed.yaml',
      `server:\n  port: \${MY_PORT}\n  trust_proxy: \${BEHIND_PROXY}\n  heartbeat_s: \${HB:-0.5}\n${QUIET_TOOLS}`,
    );
    const { url, proc } = await startCli(['--config', file], { MY_PORT: '0', BEHIND_PROXY: 'true' }, { cwd: dir });
    try {
      // trust_proxy: true is in effect when the returned URLs follow X-Forwarded-Host.
      const res = await fetch(`${url}/tool/calls`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Forwarded-Host': 'localhost:9999' },
        body: JSON.stringify({ tool_name: 'eval_js', arguments: { code: '1' } }),
      });
      expect(res.status).toBe(202);
      expect(((await res.json()) as { result_url: string }).result_url).toMatch(
        /^http:\/\/localhost:9999\/tool\/calls\//,
      );
    } finally {
      proc.kill('SIGTERM');
      await proc;
    }
  });

  it.each([
    [
      'MY_PORT=eighty',
      'server:\n  port: ${MY_PORT}\n',
      { MY_PORT: 'eighty' },
      'server.port: expected number, got string (the value "eighty" comes from environment variable MY_PORT)',
    ],
    [
      'MY_PORT=80.5',
      'server:\n  port: ${MY_PORT}\n',
      { MY_PORT: '80.5' },
      'server.port: expected integer, got number (the value 80.5 comes from environment variable MY_PORT)',
    ],
    [
      'BEHIND_PROXY=yes',
      'server:\n  trust_proxy: ${BEHIND_PROXY}\n',
      { BEHIND_PROXY: 'yes' },
      'server.trust_proxy: must be true | false | a number | a list, got string (the value "yes" comes from environment variable BEHIND_PROXY)',
    ],
  ])('%s: exit 2 naming the key and the variable', async (_name, text, env, message) => {
    const r = await serve(await configFile('env-bad.yaml', text), env);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(message);
  });

  it('a string key keeps a number-looking value as a string', async () => {
    const file = await configFile(
      'env-string.yaml',
      `server:\n  port: 0\n  allowed_hosts: ["\${NAME_HOST}"]\n${QUIET_TOOLS}`,
    );
    const { proc } = await startCli(['--config', file], { NAME_HOST: '12345' }, { cwd: dir });
    proc.kill('SIGTERM');
    expect((await proc).exitCode).toBe(0);
  });
});

describe('values that must be one of a few', () => {
  it('tools.shell.enabled: yes lists auto | true | false', async () => {
    const r = await serve(await configFile('shell-yes.yaml', 'tools:\n  shell:\n    enabled: yes\n'));
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('tools.shell.enabled: must be auto | true | false, got string');
  });
});

describe('policy rules', () => {
  it('an unknown kind (kind:shel) stops the gateway, listing the kinds', async () => {
    const r = await serve(await configFile('kind-typo.yaml', 'policy:\n  deny: ["kind:shel"]\n'));
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(
      /^a2e-gateway: policy\.deny\[0\]: "kind:shel" names no tool kind, so it would match nothing; the kinds are native, a2a/,
    );
  });

  it('an unknown rule prefix (tags:) stops the gateway with a suggestion', async () => {
    const r = await serve(await configFile('prefix-typo.yaml', 'policy:\n  deny: ["tags:write"]\n'));
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      'policy.deny[0]: "tags:write" is not a rule: write a tool-name glob (read_*), tag:NAME or kind:NAME (did you mean "tag:write"?)',
    );
  });

  it('a rule matching no tool at start-up is a warning; the gateway starts and the rules that do match apply', async () => {
    const file = await configFile(
      'no-match.yaml',
      `server:\n  port: 0\npolicy:\n  deny: ["red_file", "eval_js"]\n${QUIET_TOOLS}`,
    );
    const { url, proc } = await startCli(['--config', file], { LOG_LEVEL: 'warn', LOG_FORMAT: 'json' }, { cwd: dir });
    const list = (await (await fetch(`${url}/tool/list`, { method: 'POST', body: '{}' })).json()) as {
      tools: unknown[];
    };
    expect(list.tools).toEqual([]);
    proc.kill('SIGTERM');
    const result = await proc;
    expect(result.exitCode).toBe(0);
    const warnings = String(result.stderr)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { level: number; msg: string; rule?: string });
    expect(warnings.filter((w) => w.rule !== undefined).map((w) => [w.level, w.rule])).toEqual([[40, 'red_file']]);
    expect(warnings.find((w) => w.rule === 'red_file')!.msg).toContain(
      'policy.deny[0]: "red_file" matches no tool at start-up',
    );
  });
});

describe('auth tokens', () => {
  it('a token_env variable that is not set exits 2 like every other config error', async () => {
    const r = await serve(
      await configFile(
        'token-env.yaml',
        `auth:\n  tokens:\n    - name: alice\n      token_env: A2E_TEST_MISSING_TOKEN\n${QUIET_TOOLS}`,
      ),
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe(
      'a2e-gateway: auth.tokens "alice": environment variable A2E_TEST_MISSING_TOKEN is not set or empty; set it to the token',
    );
  });
});

describe('an unknown key gets "did you mean", as CLI options do', () => {
  it('a key in the wrong section names where it belongs; a typo names the key of that section', async () => {
    const misplaced = await serve(await configFile('misplaced.yaml', `port: 9000\n${QUIET_TOOLS}`));
    expect(misplaced.exitCode).toBe(2);
    expect(misplaced.stderr).toContain('(top level): unknown key "port"; did you mean server.port? (move it there)');
    const typo = await serve(await configFile('typo.yaml', `server:\n  prot: 9000\n${QUIET_TOOLS}`));
    expect(typo.stderr).toContain('server: unknown key "prot"; did you mean "port"?');
    const nested = await serve(
      await configFile('nested.yaml', `mcp:\n  servers:\n    a: {command: x, netwrok: true}\n${QUIET_TOOLS}`),
    );
    expect(nested.stderr).toContain('mcp.servers.a: unknown key "netwrok"; did you mean "network"?');
    const nothing = await serve(await configFile('nothing.yaml', `zzzqqq: 1\n${QUIET_TOOLS}`));
    expect(nothing.stderr).toContain('(top level): unknown key "zzzqqq"; remove it');
  });
});
