/**
 * docs/mcp.md's recipes for the reference MCP servers on npm work as written (issue 53, item 9): each block is the
 * whole config of a real gateway (dist/cli.js, started from a directory holding the checkout's node_modules, as an
 * operator who ran `npm install @modelcontextprotocol/server-…` there has it), under the default sandbox, and its
 * tools are called through POST /tool/call, writes included. server-memory's graph lands in its data directory and
 * survives a restart; server-filesystem writes in its data directory and in a host directory mounted `rw: true`, and
 * a read-only mount refuses its writes. The `PATH` form (`npm install -g`) runs too, and so does the memory
 * recipe unconfined with the host path the docs say to give instead of /workspace.
 */
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli } from '../helpers/cli.js';
import { callBody, postJson } from '../helpers/server.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DOC = readFileSync(join(ROOT, 'docs/mcp.md'), 'utf8');
const isRoot = process.getuid?.() === 0;

function recipe(name: string): string {
  const m = new RegExp(
    `<!-- mcp-recipe-${name}:start -->\\s*\`\`\`yaml\\n([\\s\\S]*?)\`\`\`\\s*<!-- mcp-recipe-${name}:end -->`,
  ).exec(DOC);
  if (!m) throw new Error(`docs/mcp.md has no recipe block "${name}"`);
  return m[1]!;
}

let dir: string;

beforeAll(() => {
  if (!existsSync('/usr/bin/bwrap'))
    throw new Error('this test needs bubblewrap (the default sandbox): apt-get install bubblewrap');
  if (!existsSync(join(ROOT, 'dist/cli.js'))) throw new Error('this test starts dist/cli.js: run npm run build');
  dir = mkdtempSync(join(tmpdir(), 'a2e-recipes-'));
  chmodSync(dir, 0o755); // a root gateway's sandbox user (uid 65534) must reach the data directories in it
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Start a gateway with `config` as its whole config file, wait for its MCP server, run `fn`, stop it. */
async function withGateway<T>(
  config: string,
  fn: (call: (tool: string, args: Record<string, unknown>) => Promise<any>) => Promise<T>,
  env: Record<string, string> = {},
): Promise<T> {
  writeFileSync(join(dir, 'gateway.yaml'), config);
  const gateway = await startCli(['--config', 'gateway.yaml', '--port', '0'], env, { cwd: dir });
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { servers } = (await (await fetch(`${gateway.url}/mcp-servers`)).json()) as {
        servers: Array<{ state: string; last_error: string | null }>;
      };
      if (servers[0]?.state === 'ready') break;
      if (Date.now() > deadline) throw new Error(`the recipe's MCP server did not come up: ${JSON.stringify(servers)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    return await fn(async (tool, args) => (await postJson(`${gateway.url}/tool/call`, callBody(tool, args))).json.data);
  } finally {
    gateway.proc.kill('SIGTERM');
    await gateway.proc;
  }
}

const text = (r: any): string => r.data?.text ?? '';

describe("docs/mcp.md's reference server recipes, as written", () => {
  it('everything: echo', async () => {
    const r = await withGateway(recipe('everything'), (call) => call('everything_echo', { message: 'hi' }));
    expect(r).toMatchObject({ success: true, data: { content: [{ type: 'text', text: 'Echo: hi' }] } });
  }, 120_000);

  it('memory: writes its graph to its data directory, which survives a restart', async () => {
    const config = recipe('memory');
    await withGateway(config, async (call) => {
      const made = await call('memory_create_entities', {
        entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote the first program'] }],
      });
      expect(made.success, JSON.stringify(made)).toBe(true);
      expect(text(made)).not.toMatch(/EROFS|error/i);
    });
    const file = join(dir, 'state/mcp/memory/memory.jsonl');
    expect(readFileSync(file, 'utf8')).toContain('"name":"Ada"');
    const graph = await withGateway(config, (call) => call('memory_read_graph', {}));
    expect(graph.success).toBe(true);
    expect(text(graph)).toContain('wrote the first program');
  }, 180_000);

  it('memory without MEMORY_FILE_PATH: every write fails with EROFS (beside its package, mounted read-only), as the docs say', async () => {
    expect(DOC).toContain('which the\nsandbox mounts read-only (every write would fail with `EROFS`)');
    const config = recipe('memory').replace(/\n\s*env: .*\n/, '\n');
    expect(config).not.toContain('MEMORY_FILE_PATH');
    const made = await withGateway(config, (call) =>
      call('memory_create_entities', { entities: [{ name: 'Cy', entityType: 'x', observations: [] }] }),
    );
    expect(made.success).toBe(false);
    expect(made.error).toMatch(/EROFS/);
  }, 120_000);

  it('memory, installed globally: the same recipe with the program found on PATH', async () => {
    const config = recipe('memory').replace('node_modules/.bin/mcp-server-memory', 'mcp-server-memory');
    expect(config).toContain('command: mcp-server-memory');
    const found = await withGateway(config, (call) => call('memory_search_nodes', { query: 'Ada' }), {
      PATH: `${join(dir, 'node_modules/.bin')}:${process.env.PATH}`,
    });
    expect(found.success).toBe(true);
    expect(text(found)).toContain('wrote the first program'); // the graph the test above kept
  }, 120_000);

  it('memory, unconfined: the host path the docs say to give instead of /workspace', async () => {
    const file = join(dir, 'unconfined/memory.jsonl');
    expect(DOC).toMatch(
      /is given a host path instead, in a directory that exists \(the server does not make it\), e\.g\.\s+`MEMORY_FILE_PATH: \/var\/lib\/a2e-gateway\/memory\.jsonl`/,
    );
    mkdirSync(join(dir, 'unconfined'));
    const config = recipe('memory')
      .replace('/workspace/memory.jsonl', file)
      .replace('env:', 'sandbox: false\n      env:');
    const made = await withGateway(config, (call) =>
      call('memory_create_entities', { entities: [{ name: 'Bo', entityType: 'cat', observations: ['naps'] }] }),
    );
    expect(made.success, JSON.stringify(made)).toBe(true);
    expect(readFileSync(file, 'utf8')).toContain('"name":"Bo"');
  }, 120_000);

  it('filesystem: writes and reads in its own data directory', async () => {
    await withGateway(recipe('filesystem'), async (call) => {
      expect((await call('files_create_directory', { path: '/workspace/notes' })).success).toBe(true);
      const wrote = await call('files_write_file', { path: '/workspace/notes/todo.txt', content: 'buy milk\n' });
      expect(wrote.success, JSON.stringify(wrote)).toBe(true);
      const read = await call('files_read_text_file', { path: '/workspace/notes/todo.txt' });
      expect(text(read)).toBe('buy milk\n');
    });
    expect(readFileSync(join(dir, 'state/mcp/files/notes/todo.txt'), 'utf8')).toBe('buy milk\n');
  }, 120_000);

  it('filesystem on a host directory: writable with rw: true, read-only without', async () => {
    const shared = join(dir, 'shared');
    mkdirSync(shared);
    writeFileSync(join(shared, 'hello.txt'), 'from the host\n');
    if (isRoot) chownSync(shared, 65534, 65534); // what the recipe tells a root gateway's operator to do
    const config = recipe('filesystem-host');
    expect(config).toContain('/srv/shared');
    await withGateway(config.replaceAll('/srv/shared', shared), async (call) => {
      expect(text(await call('shared_read_text_file', { path: `${shared}/hello.txt` }))).toBe('from the host\n');
      const wrote = await call('shared_write_file', { path: `${shared}/reply.txt`, content: 'from the server\n' });
      expect(wrote.success, JSON.stringify(wrote)).toBe(true);
    });
    expect(readFileSync(join(shared, 'reply.txt'), 'utf8')).toBe('from the server\n');

    const readOnly = config.replaceAll('/srv/shared', shared).replace('{ path: ' + shared + ', rw: true }', shared);
    expect(readOnly).toContain(`mounts: [${shared}]`);
    await withGateway(readOnly, async (call) => {
      expect(text(await call('shared_read_text_file', { path: `${shared}/reply.txt` }))).toBe('from the server\n');
      const refused = await call('shared_write_file', { path: `${shared}/other.txt`, content: 'x' });
      expect(refused.success).toBe(false);
      expect(refused.error).toMatch(/EROFS|read-only/i);
    });
    expect(existsSync(join(shared, 'other.txt'))).toBe(false);
  }, 180_000);

  it('sequential-thinking: one thought', async () => {
    const r = await withGateway(recipe('sequential-thinking'), (call) =>
      call('thinking_sequentialthinking', {
        thought: 'Start with the data.',
        thoughtNumber: 1,
        totalThoughts: 1,
        nextThoughtNeeded: false,
      }),
    );
    expect(r.success, JSON.stringify(r)).toBe(true);
    expect(JSON.parse(text(r))).toMatchObject({ thoughtNumber: 1, totalThoughts: 1, nextThoughtNeeded: false });
  }, 120_000);
});
