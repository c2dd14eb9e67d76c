/** Operators' own tools: plugin modules listed under `plugins` in the config, loaded by the real CLI. */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, startCli } from '../helpers/cli.js';

const examples = fileURLToPath(new URL('../../examples/', import.meta.url));
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'a2e-plugins-'));
  // Gateways started here put their workspace in it: the shell tools' sandbox user must be able to reach it.
  await chmod(dir, 0o755);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const cli = (args: string[], env: Record<string, string> = {}) =>
  execa('node', [CLI, ...args], { reject: false, env: { LOG_LEVEL: 'silent', ...env }, cwd: dir });

describe('plugins from the config', () => {
  it('loads the README example (examples/gateway.yaml) with its options, paths relative to the config file', async () => {
    // Started from another directory: the module path is resolved against the config file's folder.
    const { url, proc } = await startCli(
      ['--config', join(examples, 'gateway.yaml'), '--port', '0'],
      { LOG_LEVEL: 'info' },
      { cwd: dir },
    );
    try {
      const list = await cli(['list', '--json', '--url', url]);
      const tools: { name: string; description: string }[] = JSON.parse(list.stdout);
      // after the built-in tools (which win name clashes)
      expect(tools.at(-1)!.name).toBe('count_words');
      expect(tools.at(-1)!.description).toBe('Count the words of at least 3 letters in a text'); // options.min_length: 3

      const ok = await cli(['call', 'count_words', '--arg', 'text=the quick brown fox is up', '--url', url]);
      expect(ok.exitCode).toBe(0);
      expect(JSON.parse(ok.stdout)).toEqual({ words: 4 });

      const failed = await cli(['call', 'count_words', '--arg', 'text=a b', '--url', url]);
      expect(failed.exitCode).toBe(1);
      expect(failed.stderr).toBe('a2e-gateway: tool failed: no words in the text; send some');

      const streamed = await cli(['call', 'count_words', '--stream', '--arg', 'text=one two three', '--url', url]);
      expect(JSON.parse(streamed.stdout.split('\n')[0]!)).toMatchObject({
        kind: 'progress',
        data: { pct: 100, message: 'counted 3 words' },
      });
    } finally {
      proc.kill('SIGTERM');
    }
    const result = await proc;
    expect(result.exitCode).toBe(0);
    // JSON log lines (stderr is not a terminal): one per call with the tool, the outcome and the request id.
    const lines = String(result.stderr)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const calls = lines.filter((l) => /^call (succeeded|failed)$/.test(l.msg));
    expect(calls.map((l) => [l.tool, l.outcome])).toEqual([
      ['count_words', 'success'],
      ['count_words', 'tool_error'],
      ['count_words', 'success'],
    ]);
    for (const l of calls) expect(l.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(calls.map((l) => l.request_id)).size).toBe(3);
  });

  it('a plugin object export and a relative path from another config folder', async () => {
    await writeFile(
      join(dir, 'static-plugin.mjs'),
      `export const plugin = { name: 'static', listTools: () => [{ name: 'ping', description: 'Answers pong' }], executeTool: () => 'pong' };\n`,
    );
    const sub = await mkdtemp(join(dir, 'conf-'));
    await writeFile(join(sub, 'gw.yaml'), `plugins:\n  - module: ${relative(sub, join(dir, 'static-plugin.mjs'))}\n`);
    const { url, proc } = await startCli(['--config', join(sub, 'gw.yaml'), '--port', '0']);
    try {
      const r = await cli(['call', 'ping', '--url', url]);
      expect(r.stdout).toBe('pong');
    } finally {
      proc.kill('SIGTERM');
      await proc;
    }
  });

  const broken: [string, string, string | null, RegExp][] = [
    [
      'missing',
      '',
      null,
      /plugins\[0\] \(module ".*missing\.mjs"\) failed to load: no such file: \/.*missing\.mjs \(a relative path is taken from the config file's folder\)$/,
    ],
    [
      'imports-gateway',
      "import { ToolError } from 'a2e-gateway';\nexport default { name: 'g', listTools: () => [], executeTool: () => { throw new ToolError('x'); } };",
      null,
      /failed to load: it imports package "a2e-gateway", which is not installed for \/.*imports-gateway\.mjs: run npm install a2e-gateway in the plugin's folder \(or import from nothing: throw an Error whose name is "ToolError"/,
    ],
    [
      'imports-missing-package',
      "import '@acme/text-utils/words.js';\nexport default {};",
      null,
      /failed to load: it imports package "@acme\/text-utils", which is not installed for \/.*imports-missing-package\.mjs: run npm install @acme\/text-utils in the plugin's folder$/,
    ],
    [
      'imports-missing-file',
      "import './helpers/words.mjs';\nexport default {};",
      null,
      /failed to load: it imports \/.*helpers\/words\.mjs, which does not exist \(imported from \/.*imports-missing-file\.mjs\)$/,
    ],
    ['syntax', 'export default {', null, /plugins\[0\] \(module ".*syntax\.mjs"\) failed to load: /],
    [
      'nothing',
      'export const x = 1;',
      null,
      /plugins\[0\] \(module ".*nothing\.mjs"\) does not provide a valid plugin \(nothing exported\); export a ToolPlugin/,
    ],
    [
      'no-execute',
      "export default { name: 'x', listTools: () => [] };",
      null,
      /does not provide a valid plugin \("executeTool" must be a function\)/,
    ],
    [
      'factory-throws',
      "export default () => { throw new Error('needs an api_key option'); };",
      null,
      /its plugin factory failed: needs an api_key option/,
    ],
    [
      'bad-tool',
      "export default { name: 'bad', listTools: () => [{ name: '' }], executeTool: () => 1 };",
      null,
      /plugin "bad" offers an invalid tool definition/,
    ],
    [
      'options-to-object',
      "export default { name: 'o', listTools: () => [], executeTool: () => 1 };",
      '{ a: 1 }',
      /has options but exports a plugin object, not a factory/,
    ],
  ];
  it.each(broken)(
    'a broken module stops start-up with a message naming it: %s',
    async (name, source, options, message) => {
      if (source) await writeFile(join(dir, `${name}.mjs`), `${source}\n`);
      const config = join(dir, `${name}.yaml`);
      await writeFile(config, `plugins:\n  - module: ./${name}.mjs\n${options ? `    options: ${options}\n` : ''}`);
      const r = await cli(['serve', '--config', config, '--port', '0']);
      expect(r.exitCode).not.toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^a2e-gateway: /);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    },
  );

  it('a plugin file with import/export that Node loads as CommonJS: the message says how to fix it', async () => {
    const sub = await mkdtemp(join(dir, 'cjs-'));
    await writeFile(join(sub, 'package.json'), '{"name": "my-tools", "type": "commonjs"}\n');
    await writeFile(
      join(sub, 'tools.js'),
      "import { readFileSync } from 'node:fs';\nexport default { name: 'c', listTools: () => [], executeTool: () => readFileSync };\n",
    );
    await writeFile(join(sub, 'gw.yaml'), 'plugins:\n  - module: ./tools.js\n');
    const r = await cli(['serve', '--config', join(sub, 'gw.yaml'), '--port', '0']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(
      /failed to load: it uses import\/export, but Node loads it as CommonJS \(Cannot use import statement outside a module\): name the file \.mjs, or add "type": "module" to the package\.json next to it/,
    );
  });

  it('a plugin that imports nothing reports expected failures with an Error named "ToolError"', async () => {
    await writeFile(
      join(dir, 'standalone.mjs'),
      [
        "class ToolError extends Error { constructor(message, data) { super(message); this.name = 'ToolError'; this.data = data; } }",
        'export default {',
        "  name: 'standalone',",
        "  listTools: () => [{ name: 'halve', description: 'Halve an even number', input_parameters: [{ name: 'n', type: 'integer', description: 'n', required: true }] }],",
        '  executeTool: (_name, { n }) => { if (n % 2) throw new ToolError(`${n} is odd; send an even number`, { n }); return { half: n / 2 }; },',
        '};',
        '',
      ].join('\n'),
    );
    const config = join(dir, 'standalone.yaml');
    await writeFile(config, 'plugins:\n  - module: ./standalone.mjs\ntools:\n  shell: {enabled: false}\n');
    const { url, proc } = await startCli(['--config', config, '--port', '0'], {}, { cwd: dir });
    try {
      expect(JSON.parse((await cli(['call', 'halve', '--arg', 'n=8', '--url', url])).stdout)).toEqual({ half: 4 });
      const odd = await cli(['call', 'halve', '--arg', 'n=7', '--json', '--url', url]);
      expect(odd.exitCode).toBe(1);
      // A ToolError: its own message and data, not "tool failed: …" with the message screened.
      expect(JSON.parse(odd.stdout)).toMatchObject({
        success: false,
        error_code: 'tool_error',
        error: '7 is odd; send an even number',
        data: { n: 7 },
      });
    } finally {
      proc.kill('SIGTERM');
      await proc;
    }
  });

  it('an unknown key in a plugins entry is a config error', async () => {
    const config = join(dir, 'typo.yaml');
    await writeFile(config, 'plugins:\n  - modul: ./x.mjs\n');
    const r = await cli(['serve', '--config', config]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/plugins\.0: unknown key "modul"/);
  });
});
