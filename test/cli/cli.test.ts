import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, startCli } from '../helpers/cli.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'a2e-cli-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const run = (args: string[], env: Record<string, string> = {}) =>
  execa('node', [CLI, ...args], { reject: false, env: { LOG_LEVEL: 'silent', ...env } });

describe('a2e-gateway serve', () => {
  it('prints exactly one line with the real port, serves, and exits 0 on SIGTERM', async () => {
    const { url, proc, firstLine } = await startCli(['--port', '0']);
    expect(firstLine).toMatch(/^a2e-gateway listening on http:\/\/127\.0\.0\.1:\d+$/);
    expect(url).not.toMatch(/:0$/);
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    proc.kill('SIGTERM');
    const result = await proc;
    expect(result.exitCode).toBe(0);
    expect(String(result.stdout).trim().split('\n')).toEqual([firstLine]);
  });

  it('exits 0 on SIGINT too, and takes HOST/PORT from the environment', async () => {
    const { proc, firstLine } = await startCli([], { PORT: '0', HOST: '127.0.0.1' });
    expect(firstLine).toMatch(/^a2e-gateway listening on http:\/\/127\.0\.0\.1:\d+$/);
    proc.kill('SIGINT');
    expect((await proc).exitCode).toBe(0);
  });

  it('reads a YAML config file (and A2E_CONFIG), with flags overriding it', async () => {
    const file = join(dir, 'ok.yaml');
    await writeFile(file, 'server:\n  port: 1\n  heartbeat_s: 5\n');
    const { proc, firstLine } = await startCli(['--port', '0'], { A2E_CONFIG: file });
    expect(firstLine).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+$/);
    proc.kill('SIGTERM');
    expect((await proc).exitCode).toBe(0);
  });

  it('reports a port already in use clearly', async () => {
    const { url, proc } = await startCli(['--port', '0']);
    const port = new URL(url).port;
    const r = await run(['serve', '--port', port]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe(`a2e-gateway: port ${port} on 127.0.0.1 is already in use; pick another with --port`);
    proc.kill('SIGTERM');
    await proc;
  });
});

describe('bad configuration exits non-zero with a message naming the key and the file', () => {
  const cases: [string, string, RegExp][] = [
    [
      'unknown-key.yaml',
      'server:\n  prot: 8080\n',
      /unknown-key\.yaml: server: unknown key "prot"; did you mean "port"\?$/,
    ],
    [
      'unknown-section.yaml',
      'servers: {}\n',
      /unknown-section\.yaml: \(top level\): unknown key "servers"; did you mean "server" or mcp\.servers\?$/,
    ],
    ['no-such-key.yaml', 'zzzqqq: {}\n', /no-such-key\.yaml: \(top level\): unknown key "zzzqqq"; remove it$/],
    // JSON is parsed as JSON: YAML would accept the trailing comma (and read the file as something else).
    ['trailing-comma.json', '{"server": {"port": 0},}', /trailing-comma\.json is not valid JSON: .*position 23/],
    ['wrong-type.yaml', 'server:\n  port: "eighty"\n', /wrong-type\.yaml: server\.port: expected number, got string/],
    ['wrong-type.json', '{"server": {"max_timeout_s": -5}}', /wrong-type\.json: server\.max_timeout_s: /],
    ['not-yaml.yaml', 'server: [unclosed\n', /not-yaml\.yaml is not valid YAML or JSON/],
    ['list.yaml', '- a\n- b\n', /list\.yaml must hold a mapping of sections/],
    [
      'env.yaml',
      'server:\n  host: ${A2E_TEST_UNSET_VAR}\n',
      /env\.yaml: server\.host: environment variable A2E_TEST_UNSET_VAR is not set/,
    ],
  ];
  it.each(cases)('%s', async (name, content, message) => {
    const file = join(dir, name);
    await writeFile(file, content);
    const r = await run(['serve', '--config', file, '--port', '0']);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^a2e-gateway: invalid config in |^a2e-gateway: config file /);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('a missing file', async () => {
    const r = await run(['serve', '--config', join(dir, 'nope.yaml')]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/config file .*nope\.yaml does not exist/);
  });

  it('bad flags and commands', async () => {
    expect((await run(['serve', '--port', 'abc'])).stderr).toContain('--port must be a port number');
    expect((await run(['serve', '--bogus'])).exitCode).toBe(2);
    const r = await run(['frobnicate']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('unknown command "frobnicate"');
  });

  it('--help and --version', async () => {
    expect((await run(['--help'])).stdout).toContain('a2e-gateway <command>');
    expect((await run(['--version'])).stdout).toMatch(/^\d+\.\d+\.\d+/);
  });
});
