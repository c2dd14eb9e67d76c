/**
 * The README as a front door and docs/ as the reference, kept true: the README stays short, every relative link in
 * it and in docs/ leads to a file (and heading) that exists, docs/index.md reaches every page, the two public-route
 * lists say the same as the gateway does, and the README's commands run as written against a real gateway (started
 * as `npm start` would, from a directory with the checkout's node_modules, so its MCP example finds the server).
 */
import { createHash } from 'node:crypto';
import { chmod, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli } from '../helpers/cli.js';
import { startGateway } from '../helpers/server.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const README = read('README.md');

/** GitHub's anchor for a heading. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replaceAll(' ', '-');

/** The headings of a Markdown text (outside code fences), as anchors. */
function anchors(text: string): Set<string> {
  const out = new Set<string>();
  let fence = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fence = !fence;
    const m = /^#{1,6} (.*)$/.exec(line);
    if (!fence && m) out.add(slug(m[1]!));
  }
  return out;
}

/** The fenced block between `<!-- NAME:start -->` and `<!-- NAME:end -->` in `text`. */
function block(text: string, name: string): string {
  const m = new RegExp(`<!-- ${name}:start -->\\s*\`\`\`\\w+\\n([\\s\\S]*?)\`\`\`\\s*<!-- ${name}:end -->`).exec(text);
  if (!m) throw new Error(`no fenced block between <!-- ${name}:start --> and <!-- ${name}:end -->`);
  return m[1]!;
}

let docs: string[];
beforeAll(async () => {
  docs = (await readdir(join(ROOT, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
});

describe('the README is a front door', () => {
  it('is at most 300 lines', () => {
    expect(README.split('\n').length).toBeLessThanOrEqual(300);
  });

  it('every relative link in the README and docs/ leads to a file that exists, and to a heading of it that exists', () => {
    const broken: string[] = [];
    for (const file of ['README.md', ...docs]) {
      const text = read(file).replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [path, anchor] = target!.split('#') as [string, string | undefined];
        const full = path ? resolve(dirname(join(ROOT, file)), path) : join(ROOT, file);
        if (!existsSync(full)) broken.push(`${file}: ${target} (no such file)`);
        else if (anchor && full.endsWith('.md') && !anchors(readFileSync(full, 'utf8')).has(anchor))
          broken.push(`${file}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('docs/index.md reaches every page of docs/', () => {
    const index = read('docs/index.md');
    const linked = new Set([...index.matchAll(/\]\(([^)#\s]+\.md)/g)].map((m) => `docs/${m[1]}`));
    expect(docs.filter((d) => d !== 'docs/index.md' && !linked.has(d))).toEqual([]);
  });
});

describe('the public routes', () => {
  /** The routes a page lists in its "every route except … needs" sentence. */
  const listed = (file: string) => {
    const m = /every route except (.*?) needs/s.exec(read(file).replace(/\s+/g, ' '));
    if (!m) throw new Error(`${file} has no "every route except … needs" sentence`);
    return [...m[1]!.matchAll(/`(?:GET )?([^`]+)`/g)].map((r) => r[1]!).sort();
  };

  it('docs/authentication.md and docs/security-overview.md list the same routes, and each answers without a token', async () => {
    const routes = listed('docs/authentication.md');
    expect(listed('docs/security-overview.md')).toEqual(routes);
    const gw = await startGateway({
      config: { auth: { tokens: [{ name: 'a', token_sha256: createHash('sha256').update('secret').digest('hex') }] } },
    });
    try {
      for (const route of routes)
        expect([route, (await fetch(`${gw.url}${route}`, { redirect: 'manual' })).status]).not.toEqual([route, 401]);
      // Anything else needs the token.
      for (const route of ['/metrics', '/agents', '/mcp-servers', '/sources'])
        expect([route, (await fetch(`${gw.url}${route}`)).status]).toEqual([route, 401]);
    } finally {
      await gw.close();
    }
  });
});

describe("the README's commands, run as written", () => {
  let dir: string;
  let gateway: Awaited<ReturnType<typeof startCli>>;
  beforeAll(async () => {
    // The checkout as a newcomer has it: node_modules in the directory the gateway starts in.
    dir = await mkdtemp(join(tmpdir(), 'a2e-readme-'));
    // Traversable like a checkout a root gateway can run its sandboxed MCP servers from (their data directories are in ./state).
    await chmod(dir, 0o755);
    await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    await writeFile(join(dir, 'mcp.yaml'), block(README, 'readme-mcp-config'));
    gateway = await startCli(['--config', 'mcp.yaml', '--port', '0'], {}, { cwd: dir });
    // The MCP server starts after the gateway listens: wait for it to be ready.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { servers } = (await (await fetch(`${gateway.url}/mcp-servers`)).json()) as {
        servers: Array<{ state: string; last_error: string | null }>;
      };
      if (servers[0]?.state === 'ready') break;
      if (Date.now() > deadline) throw new Error(`the README's MCP server did not come up: ${JSON.stringify(servers)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }, 90_000);
  afterAll(async () => {
    gateway?.proc.kill('SIGTERM');
    await gateway?.proc;
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** A block of the README run by sh, against this test's gateway instead of :8080. */
  const run = async (script: string) => {
    const r = await execa('sh', ['-ec', script.replaceAll('http://127.0.0.1:8080', gateway.url)], {
      cwd: dir,
      reject: false,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    return r.stdout;
  };

  it('"Using it with curl": list, search, write and read a file, an error that says what to fix', async () => {
    const blocks = [
      ...README.split('## Using it with curl')[1]!
        .split('\n## ')[0]!
        .matchAll(/```sh\n([\s\S]*?)```/g),
    ].map((m) => m[1]!);
    expect(blocks).toHaveLength(4);
    expect(JSON.parse(await run(blocks[0]!)).tools.map((t: { name: string }) => t.name)).toContain('read_file');
    expect(JSON.parse(await run(blocks[1]!)).tools[0].name).toBe('read_file');
    const [written, readBack] = (await run(blocks[2]!))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(written.data.success).toBe(true);
    expect(readBack.data.data).toMatchObject({ path: 'notes/hello.txt', content: 'hello\nworld\n', size: 12 });
    expect(JSON.parse(await run(blocks[3]!))).toMatchObject({
      code: 'unknown_tool',
      message: expect.stringContaining('POST /tool/list'),
    });
  });

  it('MCP in: the server-everything tools are gateway tools', async () => {
    const [status, call] = (await run(block(README, 'readme-mcp-calls')))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(status.servers[0]).toMatchObject({ id: 'everything', state: 'ready', last_error: null });
    expect(call.data).toMatchObject({
      success: true,
      tool_name: 'everything_echo',
      data: { content: [{ type: 'text', text: 'Echo: hello from MCP' }] },
    });
  });

  it('MCP out: POST /mcp calls a gateway tool', async () => {
    const answer = JSON.parse(await run(block(README, 'readme-mcp-out')));
    expect(answer).toMatchObject({ jsonrpc: '2.0', id: 1, result: { structuredContent: { path: '.' } } });
  });

  it("A2A: the example agent's skill is a gateway tool", async () => {
    // The README's start block as written, the agent on a free port instead of 9000 and the gateway started here
    // (the block's last line is `npm start` in the foreground, which is what startCli runs).
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = probe.address() as { port: number };
        probe.close(() => resolve(p));
      });
    });
    const [agentLine, configLine, startLine] = block(README, 'readme-a2a-start')
      .trim()
      .split('\n')
      .map((l) => l.replace(/\s+#.*$/, '').replaceAll('9000', String(port)));
    expect(startLine).toBe('npm start -- --config a2a-gateway.yaml');
    const agent = execa('sh', ['-c', `exec ${agentLine!.replace(/ &$/, '')}`], { cwd: ROOT, reject: false });
    await execa('sh', ['-ec', configLine!], { cwd: dir });
    const a2a = await startCli(['--config', 'a2a-gateway.yaml', '--port', '0'], {}, { cwd: dir });
    try {
      const deadline = Date.now() + 30_000;
      while (
        !((await (await fetch(`${a2a.url}/agents`)).json()) as { agents: Array<{ state: string }> }).agents.every(
          (x) => x.state === 'ok',
        )
      ) {
        if (Date.now() > deadline) throw new Error('the example agent did not load');
        await new Promise((r) => setTimeout(r, 200));
      }
      const script = block(README, 'readme-a2a-calls').replaceAll('http://127.0.0.1:8080', a2a.url);
      const r = await execa('sh', ['-ec', script], { cwd: dir });
      const [agents, call] = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(agents.agents[0]).toMatchObject({ name: 'shouter', state: 'ok', tools: ['shouter_shout'] });
      expect(call.data).toMatchObject({
        success: true,
        tool_name: 'shouter_shout',
        data: { output: 'SHIP THE RELEASE', state: 'completed' },
      });
    } finally {
      a2a.proc.kill('SIGTERM');
      agent.kill('SIGTERM');
      await Promise.all([a2a.proc, agent]);
    }
  });
});
