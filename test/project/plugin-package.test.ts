/**
 * A plugin author's path outside this repository: the gateway packed with
 * `npm pack`, installed from the tarball into a project of its own in a temp
 * folder, a TypeScript plugin written there against `a2e-gateway/plugin`'s
 * types and compiled with tsc, and served with `npx a2e-gateway serve`.
 * (npm resolves the gateway's dependencies from its cache when it can:
 * --prefer-offline.)
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');

const PLUGIN_TS = `import { ToolError, ToolOutput, type PluginFactory, type ToolPlugin } from 'a2e-gateway/plugin';

interface Options {
  min_length?: number;
}

const wordTools: PluginFactory = (options) => {
  const minLength = (options as Options).min_length ?? 1;
  const plugin: ToolPlugin = {
    name: 'word-tools',
    listTools: () => [
      {
        name: 'count_words',
        description: \`Count the words of at least \${minLength} letters in a text\`,
        input_parameters: [{ name: 'text', type: 'string', description: 'The text', required: true }],
        tags: ['text'],
      },
      {
        name: 'longest_word',
        description: 'The longest word of a text, with a summary',
        input_parameters: [{ name: 'text', type: 'string', description: 'The text', required: true }],
      },
    ],
    async executeTool(name, args, ctx) {
      if (name === 'longest_word') {
        const longest = String(args.text).split(/\\s+/).reduce((a, b) => (b.length > a.length ? b : a), '');
        return new ToolOutput({ data: { word: longest }, summary: \`the longest word has \${longest.length} letters\` });
      }
      const words = String(args.text).split(/\\s+/).filter((w) => w.length >= minLength);
      if (words.length === 0) throw new ToolError('no words in the text; send some', { data: { min_length: minLength } });
      ctx.emit('progress', { pct: 100, message: \`counted \${words.length} words\` });
      return { words: words.length };
    },
  };
  return plugin;
};
export default wordTools;
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    outDir: 'dist',
    rootDir: 'src',
    skipLibCheck: false,
  },
  include: ['src'],
};

let dir: string;
let project: string;
let serve: ResultPromise | undefined;
let url: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'a2e-plugin-project-'));
  // The package as npm would publish it (dist is built by `npm test` before the tests run).
  const packed = await execa('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', dir], { cwd: repo });
  const tarball = join(dir, packed.stdout.trim().split('\n').at(-1)!);
  expect(existsSync(tarball)).toBe(true);

  project = join(dir, 'my-tools');
  await mkdir(join(project, 'src'), { recursive: true });
  await writeFile(
    join(project, 'package.json'),
    JSON.stringify({ name: 'my-tools', version: '1.0.0', private: true, type: 'module' }, null, 2),
  );
  await execa('npm', ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund'], {
    cwd: project,
    timeout: 300_000,
  });

  await writeFile(join(project, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
  await writeFile(join(project, 'src', 'word-tools.ts'), PLUGIN_TS);
  await writeFile(
    join(project, 'gateway.yaml'),
    'plugins:\n  - module: ./dist/word-tools.js\n    options:\n      min_length: 3\ntools:\n  shell: {enabled: false}\n',
  );
}, 420_000);
afterAll(async () => {
  // npx runs the gateway as its child: stop the whole process group it leads.
  if (serve?.pid !== undefined && serve.exitCode === null) process.kill(-serve.pid, 'SIGTERM');
  await serve;
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

describe('a plugin project outside the repo', () => {
  it('the packed gateway installs with its bin, both entries and telemetry off', async () => {
    const installed = join(project, 'node_modules', 'a2e-gateway');
    const pkg = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8'));
    expect(pkg.scarfSettings).toEqual({ enabled: false }); // read by @scarf/scarf (swagger-ui-dist's dependency) down the chain
    for (const file of ['dist/cli.js', 'dist/index.js', 'dist/plugin.js', 'dist/plugin.d.ts'])
      expect(existsSync(join(installed, file)), file).toBe(true);
    // The plugin entry has no dependency at run time: it loads with nothing but itself, imported (dist/ is CommonJS:
    // an ES module sees its exports by name, and the whole as the default) or required.
    const entry = await execa(
      'node',
      [
        '--input-type=module',
        '-e',
        "import('a2e-gateway/plugin').then((m) => console.log(Object.keys(m).sort().join()))",
      ],
      { cwd: project },
    );
    expect(entry.stdout).toBe('ToolError,ToolOutput,default');
    const required = await execa(
      'node',
      ['-e', "console.log(Object.keys(require('a2e-gateway/plugin')).sort().join())"],
      { cwd: project },
    );
    expect(required.stdout).toBe('ToolError,ToolOutput');
  });

  it('compiles a typed TypeScript plugin with tsc, and a type error is caught', async () => {
    const ok = await execa('node', [tsc, '-p', 'tsconfig.json'], { cwd: project, reject: false });
    expect(ok.stdout + ok.stderr).toBe('');
    expect(ok.exitCode).toBe(0);
    // The types are real: a wrong event payload does not compile.
    await writeFile(
      join(project, 'src', 'wrong.ts'),
      PLUGIN_TS.replace('{ pct: 100, message:', '{ percent: 100, message:'),
    );
    const wrong = await execa('node', [tsc, '-p', 'tsconfig.json', '--noEmit'], { cwd: project, reject: false });
    await rm(join(project, 'src', 'wrong.ts'));
    expect(wrong.exitCode).not.toBe(0);
    expect(wrong.stdout).toContain('wrong.ts');
  }, 300_000);

  it('npx a2e-gateway serve loads it; npx a2e-gateway call runs it', async () => {
    serve = execa('npx', ['a2e-gateway', 'serve', '--config', 'gateway.yaml', '--port', '0'], {
      cwd: project,
      reject: false,
      detached: true,
      env: { LOG_LEVEL: 'warn' },
    });
    url = await new Promise<string>((resolve, reject) => {
      let out = '';
      serve!.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const m = /a2e-gateway listening on (\S+)\n/.exec(out);
        if (m) resolve(m[1]!);
      });
      void serve!.then((r) => reject(new Error(`the gateway exited (${r.exitCode}) before listening: ${r.stderr}`)));
    });
    const npx = (args: string[]) =>
      execa('npx', ['a2e-gateway', ...args, '--url', url], { cwd: project, reject: false });
    const ok = await npx(['call', 'count_words', '--arg', 'text=the quick brown fox is up']);
    expect(ok.stderr).toBe('');
    expect(JSON.parse(ok.stdout)).toEqual({ words: 4 });
    const failed = await npx(['call', 'count_words', '--arg', 'text=a b', '--json']);
    expect(failed.exitCode).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({
      success: false,
      error: 'no words in the text; send some',
      data: { min_length: 3 },
    });
    // The plugin's ToolOutput (from a2e-gateway/plugin) is the class the CLI's engine checks with instanceof (one
    // copy across the package's entries): its data and summary are the result's, not an object in its data.
    const output = await npx(['call', 'longest_word', '--arg', 'text=a quick fox', '--json']);
    expect(output.stderr).toBe('');
    expect(JSON.parse(output.stdout)).toMatchObject({
      success: true,
      data: { word: 'quick' },
      summary: 'the longest word has 5 letters',
    });
  }, 300_000);
});
