/**
 * Per-principal workspaces (issue 57, tools.fs.root with `{principal}`), over real HTTP with real tokens: what one
 * principal writes is invisible to another on every door (REST, call resources, A2E transport, MCP, A2A), a
 * run_command of one cannot reach the other's directory, symlinks planted by one do not lead into the other's, and
 * principal names full of path tricks (a token may be named anything) get safe, distinct directories.
 */
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig } from '../../src/index.js';
import { workspaceDirName } from '../../src/tools/fs/principal-dir.js';
import { Workspaces } from '../../src/tools/fs/workspaces.js';
import { A2eTestClient } from '../helpers/a2e-client.js';
import { postJson, startGateway, type TestGateway } from '../helpers/server.js';
import { sha256 } from '../security/helpers.js';
import { waitFor } from '../tools/procs.js';

/** Principals' names as an identity provider or a config could spell them, each its own token. */
const TRICKY = [
  '..',
  '/',
  '../alice',
  'a/../../b',
  'nul\0byte',
  'x'.repeat(5000),
  'аlice' /* Cyrillic а */,
  'alice ',
  '.hidden',
  '',
];

describe('workspace directory names', () => {
  it('are safe, short and distinct for names full of path tricks', () => {
    const names = ['alice', 'bob', ...TRICKY].map(workspaceDirName);
    for (const n of names) {
      expect(n).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]{0,57}$/);
    }
    expect(new Set(names).size).toBe(names.length);
    expect(workspaceDirName(null)).toBe('anonymous');
    expect(workspaceDirName('alice')).toMatch(/^alice-[0-9a-f]{16}$/);
  });

  it('tools.fs.root takes {principal} only as its last component', () => {
    expect(() => defineConfig({ tools: { fs: { root: '/srv/{principal}/work' } } })).toThrow(
      /must be the last path component/,
    );
    expect(() => defineConfig({ tools: { fs: { root: '/srv/{principal}/{principal}' } } })).toThrow(
      /must be the last path component/,
    );
    expect(defineConfig({ tools: { fs: { root: '/srv/ws/{principal}/' } } }).tools.fs.root).toBe(
      '/srv/ws/{principal}/',
    );
  });

  it('refuses unconfined commands (tools.shell.sandbox: none) with one workspace per principal', () => {
    expect(() => defineConfig({ tools: { fs: { root: '/srv/ws/{principal}' }, shell: { sandbox: 'none' } } })).toThrow(
      /tools\.shell\.sandbox.*commands would reach every principal's workspace/s,
    );
    expect(
      defineConfig({ tools: { fs: { root: '/srv/ws/{principal}' }, shell: { sandbox: 'none', enabled: false } } }).tools
        .shell.enabled,
    ).toBe(false);
    expect(defineConfig({ tools: { fs: { root: '/srv/ws' }, shell: { sandbox: 'none' } } }).tools.shell.sandbox).toBe(
      'none',
    );
  });
});

const ALICE = `alice-${randomUUID()}`;
const BOB = `bob-${randomUUID()}`;
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

let base: string;
let gw: TestGateway;

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'a2e-tenants-'));
  chmodSync(base, 0o755); // the sandbox user must reach the workspaces inside it
  gw = await startGateway({
    config: {
      auth: {
        tokens: [
          { name: 'alice', token_sha256: sha256(ALICE) },
          { name: 'bob', token_sha256: sha256(BOB) },
          ...TRICKY.filter((n) => n !== '').map((name, i) => ({
            name,
            token_sha256: sha256(`tricky-${i}-token-0123456789`),
          })),
        ],
      },
      sessions: { required: false },
      tools: { fs: { root: join(base, 'ws', '{principal}') }, shell: { enabled: true } },
    },
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  rmSync(base, { recursive: true, force: true });
});

/** A tool call through POST /tool/call: the answer's data (success, data, error). */
async function rest(token: string, tool: string, args: Record<string, unknown>): Promise<any> {
  const r = await postJson(
    `${gw.url}/tool/call`,
    { type: 'tool/call/req', tool_name: tool, arguments: args },
    bearer(token),
  );
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return r.json.data;
}

/** The same call through each door, as the raw answer text (each door shapes answers its own way). */
const DOORS: Record<string, (token: string, tool: string, args: Record<string, unknown>) => Promise<string>> = {
  'POST /tool/call': async (token, tool, args) => JSON.stringify(await rest(token, tool, args)),
  'POST /tool/calls (a call resource), then its events_url': async (token, tool, args) => {
    const r = await postJson(
      `${gw.url}/tool/calls`,
      { type: 'tool/call/req', tool_name: tool, arguments: args },
      bearer(token),
    );
    expect(r.status, JSON.stringify(r.json)).toBe(202);
    const events = await fetch(new URL(r.json.events_url as string, gw.url), {
      headers: { Accept: 'text/event-stream', ...bearer(token) },
    });
    return events.text();
  },
  'A2E transport': async (token, tool, args) => {
    const client = await A2eTestClient.open(`${gw.url}/a2e/v1`, bearer(token));
    await client.openStream();
    try {
      const ex = await client.request({ type: 'tool/call/req', tool_name: tool, arguments: args });
      return JSON.stringify(ex.response);
    } finally {
      await client.dropStream();
    }
  },
  'MCP (POST /mcp tools/call)': async (token, tool, args) => {
    const r = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2025-06-18',
        ...bearer(token),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: args } }),
    });
    return r.text();
  },
  'A2A (POST /a2a message/send)': async (token, tool, args) => {
    const message = {
      kind: 'message',
      messageId: randomUUID(),
      role: 'user',
      parts: [{ kind: 'data', data: args }],
      metadata: { skillId: tool },
    };
    const r = await postJson(
      `${gw.url}/a2a`,
      { jsonrpc: '2.0', id: 1, method: 'message/send', params: { message } },
      bearer(token),
    );
    return JSON.stringify(r.json);
  },
};

describe('two principals, one gateway', () => {
  const secret = `alice-only-${randomUUID()}`;
  const aliceDir = () => join(base, 'ws', workspaceDirName('alice'));

  beforeAll(async () => {
    const w = await rest(ALICE, 'write_file', { path: 'private/secret.txt', content: secret, create_dirs: true });
    expect(w.success, JSON.stringify(w)).toBe(true);
  });

  it('each principal gets its own 0700 directory, made on its first call', async () => {
    expect(existsSync(join(aliceDir(), 'private', 'secret.txt'))).toBe(true);
    expect(statSync(aliceDir()).mode & 0o777).toBe(0o700);
    expect(existsSync(join(base, 'ws', workspaceDirName('bob')))).toBe(false);
    const listed = await rest(BOB, 'list_dir', { path: '.' });
    expect(listed.success, JSON.stringify(listed)).toBe(true);
    expect(existsSync(join(base, 'ws', workspaceDirName('bob')))).toBe(true);
  });

  it.each(Object.keys(DOORS))(
    '%s: the owner reads its file; the other principal neither reads nor lists it',
    async (door) => {
      const via = DOORS[door]!;
      expect(await via(ALICE, 'read_file', { path: 'private/secret.txt' })).toContain(secret);
      const read = await via(BOB, 'read_file', { path: 'private/secret.txt' });
      expect(read).not.toContain(secret);
      expect(read).toMatch(/does not exist in the workspace/);
      const listed = await via(BOB, 'list_dir', { path: '.', recursive: true });
      expect(listed).not.toContain('secret.txt');
      const grep = await via(BOB, 'grep', { pattern: 'alice-only', path: '.' });
      expect(grep).not.toContain(secret);
    },
  );

  it("paths that climb out of the workspace toward the other principal's are refused", async () => {
    for (const path of [
      `../${workspaceDirName('alice')}/private/secret.txt`,
      join(aliceDir(), 'private', 'secret.txt'),
    ]) {
      const r = await rest(BOB, 'read_file', { path });
      expect(r.success).toBe(false);
      expect(r.error).toMatch(/escapes the workspace root/);
      expect(JSON.stringify(r)).not.toContain(base);
    }
  });

  it("a symlink one principal plants toward the other's workspace is not followed, by path or by descriptor", async () => {
    // Planted by a command (its own workspace is writable to it): absolute, and relative from inside.
    const plant = await rest(BOB, 'run_command', {
      argv: ['sh', '-c', `ln -s ${aliceDir()} abs && ln -s ../${workspaceDirName('alice')} rel && ls -l`],
    });
    expect(plant.success, JSON.stringify(plant)).toBe(true);
    for (const link of ['abs', 'rel']) {
      const r = await rest(BOB, 'read_file', { path: `${link}/private/secret.txt` });
      expect(r.success, `${link}: ${JSON.stringify(r)}`).toBe(false);
      expect(JSON.stringify(r)).not.toContain(secret);
      const w = await rest(BOB, 'write_file', { path: `${link}/private/planted.txt`, content: 'x' });
      expect(w.success).toBe(false);
    }
    expect(existsSync(join(aliceDir(), 'private', 'planted.txt'))).toBe(false);
  });

  it('a run_command of one principal sees only its own workspace', async () => {
    const r = await rest(BOB, 'run_command', {
      argv: [
        'sh',
        '-c',
        `rm -f abs rel; ls -la /workspace /workspace/..; ls ${join(base, 'ws')} 2>/dev/null; echo ls=$?; ` +
          `cat ${join(aliceDir(), 'private', 'secret.txt')} 2>/dev/null; echo cat=$?; find / -name secret.txt 2>/dev/null; true`,
      ],
    });
    expect(r.success, JSON.stringify(r)).toBe(true);
    expect(r.data.stdout).toContain('ls=2');
    expect(r.data.stdout).toContain('cat=1');
    expect(r.data.stdout).not.toContain(secret);
    expect(r.data.stdout).not.toContain('secret.txt');
    expect(r.data.stdout).not.toContain(workspaceDirName('alice'));
    // The positive control: alice's own command finds her file.
    const own = await rest(ALICE, 'run_command', { argv: ['cat', 'private/secret.txt'] });
    expect(own.data.stdout).toBe(secret);
  });

  it('principals named with path tricks each land in their own directory below the workspaces', async () => {
    const tricky = TRICKY.filter((n) => n !== '');
    for (const [i, name] of tricky.entries()) {
      const w = await rest(`tricky-${i}-token-0123456789`, 'write_file', { path: 'who.txt', content: `I am #${i}` });
      expect(w.success, `${JSON.stringify(name).slice(0, 40)}: ${JSON.stringify(w)}`).toBe(true);
    }
    const dirs = readdirSync(join(base, 'ws'));
    for (const [i, name] of tricky.entries()) {
      expect(dirs).toContain(workspaceDirName(name));
      const r = await rest(`tricky-${i}-token-0123456789`, 'read_file', { path: 'who.txt' });
      expect(r.data.content).toBe(`I am #${i}`);
    }
    // Nothing was made outside the directory holding the workspaces, and every entry is a workspace.
    expect(readdirSync(base)).toEqual(['ws']);
    for (const d of dirs) expect(d).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]*-[0-9a-f]{16}$/);
  });
});

describe('without auth', () => {
  it('there is one caller, whose workspace is "anonymous" in the directory holding them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'a2e-anon-'));
    const open = await startGateway({ config: { tools: { fs: { root: join(dir, '{principal}') } } } });
    try {
      const r = await postJson(`${open.url}/tool/call`, {
        type: 'tool/call/req',
        tool_name: 'write_file',
        arguments: { path: 'x.txt', content: 'x' },
      });
      expect(r.json.data.success, JSON.stringify(r.json)).toBe(true);
      expect(readdirSync(dir)).toEqual(['anonymous']);
      expect(existsSync(join(dir, 'anonymous', 'x.txt'))).toBe(true);
    } finally {
      await open.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('open workspaces follow the active principals', () => {
  it('a workspace no call uses is closed after closeIdleMs, never while a call uses it, and reopened on use', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'a2e-idle-close-'));
    const ws = new Workspaces(join(dir, '{principal}'), () => null, null, 1000);
    await ws.init();
    try {
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      const busy = ws.use('busy', async (w) => {
        await held;
        return w.files.real;
      });
      await ws.use('idle', (w) => w.quota.measure());
      await waitFor('both open', () => (ws.openCount === 2 ? true : undefined));
      await ws.closeIdle(Date.now() + 60_000);
      expect(ws.openCount).toBe(1); // the idle one closed; the one a call holds stays
      release();
      expect(existsSync(await busy)).toBe(true);
      await ws.closeIdle(Date.now() + 60_000);
      expect(ws.openCount).toBe(0);
      // Used again: opened again, with what it held.
      writeFileSync(join(dir, workspaceDirName('idle'), 'kept.txt'), 'kept');
      expect(await ws.use('idle', (w) => w.files.existing('kept.txt').then((p) => p.shown))).toBe('kept.txt');
      expect(ws.openCount).toBe(1);
    } finally {
      await ws.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
