/**
 * The hostile-input suite against the native tools, through the whole secure
 * gateway (token, session, policy, audit): path tricks for the file tools,
 * every IP notation, internal redirects, floods and a slow-drip response for
 * http_request. For every case: the expected clear error, the gateway still
 * serving, nothing written outside the workspace, no process left behind.
 * The shell cases run in the real bubblewrap sandbox.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callBody } from '../helpers/server.js';
import { alive, processTree, waitFor } from '../tools/procs.js';
import { childPids, listing, post, sha256, startSecureGateway, type SecureGateway } from './helpers.js';

const TOKEN = 'native-hostile-token-2468ace13579bdf0';
const auth = { Authorization: `Bearer ${TOKEN}` };
const SECRET = 'outside-secret-never-returned';

let sandbox: string;
let root: string;
let peer: Server;
let peerPort: number;
let peerHits: string[] = [];
let dripClosed = Promise.resolve();

/** A local HTTP peer: redirects, a flood, and a response that drips one byte at a time. */
function startPeer(): Promise<void> {
  peer = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    peerHits.push(url.pathname);
    if (url.pathname === '/redirect') {
      res.writeHead(302, { Location: url.searchParams.get('to')! }).end();
    } else if (url.pathname === '/flood') {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 0x41);
      let sent = 0;
      const pump = () => {
        while (sent < 64 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('close', () => (sent = Infinity));
      pump();
    } else if (url.pathname === '/drip') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      const timer = setInterval(() => res.write('.'), 100);
      dripClosed = new Promise((resolve) =>
        res.on('close', () => {
          clearInterval(timer);
          resolve();
        }),
      );
    } else {
      res.end('ok');
    }
  });
  return new Promise((resolve) =>
    peer.listen(0, '127.0.0.1', () => {
      peerPort = (peer.address() as AddressInfo).port;
      resolve();
    }),
  );
}

interface NativeCase {
  name: string;
  tool: string;
  args: () => Record<string, unknown>;
  /** The tool's error (success: false) must match. */
  error: RegExp;
  /** The peer must not have been contacted on these paths (SSRF refusals happen before connecting). */
  noHits?: boolean;
  after?: () => Promise<void>;
}

const escapes = /escapes the workspace root/;
const notFound = /(no such file|does not exist|not found)/i;

const pathCases: NativeCase[] = [
  { name: '../ traversal', tool: 'read_file', args: () => ({ path: '../outside/secret.txt' }), error: escapes },
  {
    name: 'traversal through a subdirectory',
    tool: 'read_file',
    args: () => ({ path: 'sub/../../outside/secret.txt' }),
    error: escapes,
  },
  {
    name: 'percent-encoded dots (taken literally, stays inside)',
    tool: 'read_file',
    args: () => ({ path: '%2e%2e/outside/secret.txt' }),
    error: notFound,
  },
  {
    name: 'percent-encoded slash',
    tool: 'read_file',
    args: () => ({ path: '..%2foutside%2fsecret.txt' }),
    error: notFound,
  },
  {
    name: 'fullwidth dots look-alike',
    tool: 'read_file',
    args: () => ({ path: '．．/outside/secret.txt' }),
    error: notFound,
  },
  {
    name: 'two-dot-leader look-alike',
    tool: 'read_file',
    args: () => ({ path: '‥/outside/secret.txt' }),
    error: notFound,
  },
  {
    name: 'backslash separators',
    tool: 'read_file',
    args: () => ({ path: '..\\outside\\secret.txt' }),
    error: notFound,
  },
  {
    name: 'absolute path outside',
    tool: 'read_file',
    args: () => ({ path: join(sandbox, 'outside', 'secret.txt') }),
    error: escapes,
  },
  { name: '/proc/self/environ', tool: 'read_file', args: () => ({ path: '/proc/self/environ' }), error: escapes },
  {
    name: '/proc/self/cwd/…',
    tool: 'read_file',
    args: () => ({ path: '/proc/self/cwd/package.json' }),
    error: escapes,
  },
  {
    name: '/proc/self/root/… via a symlink in the workspace',
    tool: 'read_file',
    args: () => ({ path: 'proc-root/etc/hostname' }),
    error: escapes,
  },
  {
    name: 'sibling directory sharing the root name as prefix',
    tool: 'read_file',
    args: () => ({ path: `${root}-sibling/secret.txt` }),
    error: escapes,
  },
  {
    name: 'sibling prefix, relative',
    tool: 'write_file',
    args: () => ({ path: '../ws-sibling/planted.txt', content: 'x' }),
    error: escapes,
  },
  {
    name: 'write through a symlink to outside',
    tool: 'write_file',
    args: () => ({ path: 'link-out/planted.txt', content: 'x' }),
    error: escapes,
  },
  {
    name: 'write a new file through a symlinked dir, creating dirs',
    tool: 'write_file',
    args: () => ({ path: 'link-out/a/b/planted.txt', content: 'x', create_dirs: true }),
    error: escapes,
  },
  { name: 'read a FIFO (no hang)', tool: 'read_file', args: () => ({ path: 'fifo' }), error: /not a regular file/ },
  {
    name: 'write a FIFO (no hang)',
    tool: 'write_file',
    args: () => ({ path: 'fifo', content: 'x' }),
    error: /not a regular file/,
  },
  { name: 'a device via symlink (/dev/zero)', tool: 'read_file', args: () => ({ path: 'zero' }), error: escapes },
  { name: 'a device by absolute path', tool: 'read_file', args: () => ({ path: '/dev/zero' }), error: escapes },
  {
    name: 'NUL byte in the path',
    tool: 'read_file',
    args: () => ({ path: 'notes.txt\u0000../../etc/passwd' }),
    error: /contains a NUL byte/,
  },
];

const loopbackForms = [
  '127.0.0.1',
  '2130706433',
  '0177.0.0.1',
  '0x7f.1',
  '0x7f000001',
  '127.1',
  '127.0.0.01',
  '[::1]',
  '[::ffff:127.0.0.1]',
  '[::ffff:7f00:1]',
  '[64:ff9b::7f00:1]',
  'localhost',
];
const linkLocalForms = [
  '169.254.169.254',
  '169.254.43518',
  '2852039166',
  '0251.0376.0251.0376',
  '0xa9fea9fe',
  '[::ffff:169.254.169.254]',
  '[::ffff:a9fe:a9fe]',
  '[64:ff9b::a9fe:a9fe]',
  '[fe80::1]',
];

const urlCases: NativeCase[] = [
  ...loopbackForms.map((host) => ({
    name: `loopback as ${host}`,
    tool: 'http_request',
    args: () => ({ url: `http://${host}:${peerPort}/secret`, timeout: 5 }),
    error: /(a loopback|a NAT64) address; add it to tools\.http\.allow_hosts/,
    noHits: true,
  })),
  ...linkLocalForms.map((host) => ({
    name: `link-local as ${host}`,
    tool: 'http_request',
    args: () => ({ url: `http://${host}/latest/meta-data/`, timeout: 5 }),
    error: /(a link-local|a NAT64) address.*; add it to tools\.http\.allow_hosts/,
    noHits: true,
  })),
  {
    name: 'a file: URL',
    tool: 'http_request',
    args: () => ({ url: 'file:///etc/passwd' }),
    error: /only http and https/,
  },
];

const META =
  '$(touch /tmp/pwned-sub); `touch /tmp/pwned-tick`; echo x > ../outside/planted.txt | cat && rm -rf ~ ; ${IFS}*';

const shellCases: NativeCase[] = [
  {
    name: 'a program name that is an option',
    tool: 'run_command',
    args: () => ({ argv: ['-rf', '/'] }),
    error: /program "-rf" was not found/,
  },
  {
    name: 'a program name with a leading double dash',
    tool: 'run_command',
    args: () => ({ argv: ['--help'] }),
    error: /program "--help" was not found/,
  },
  {
    name: 'a program name with metacharacters (no shell parses it)',
    tool: 'run_command',
    args: () => ({ argv: ['ls;id'] }),
    error: /program "ls;id" was not found/,
  },
  {
    name: 'a program path out of the workspace',
    tool: 'run_command',
    args: () => ({ argv: ['../outside/secret.txt'] }),
    error: /program "\.\.\/outside\/secret\.txt" was not found/,
  },
  {
    name: 'cwd outside the workspace',
    tool: 'run_command',
    args: () => ({ argv: ['cat', 'secret.txt'], cwd: '../outside' }),
    error: /outside the workspace/,
  },
  {
    name: 'cwd through /proc/self',
    tool: 'run_command',
    args: () => ({ argv: ['pwd'], cwd: '/proc/self/cwd' }),
    error: /outside the workspace/,
  },
  {
    name: 'cwd through a symlink to outside',
    tool: 'run_command',
    args: () => ({ argv: ['pwd'], cwd: 'link-out' }),
    error: /"link-out" is not a directory in the workspace/,
  },
  {
    name: 'reading outside the workspace from inside the sandbox',
    tool: 'run_command',
    args: () => ({ argv: ['cat', join(sandbox, 'outside', 'secret.txt')] }),
    error: /command "cat" exited with code 1/,
  },
  {
    name: 'writing outside the workspace from inside the sandbox',
    tool: 'run_command',
    args: () => ({ argv: ['sh', '-c', `echo x > ${join(sandbox, 'outside', 'planted.txt')}`] }),
    error: /exited with code/,
  },
  { name: 'an output flood', tool: 'run_command', args: () => ({ argv: ['yes', 'flood'] }), error: /max_output_bytes/ },
  {
    name: 'an endless evaluation',
    tool: 'eval_js',
    args: () => ({ code: 'for (;;) {}' }),
    error: /ran past its deadline/,
  },
  {
    name: 'a memory bomb in evaluation',
    tool: 'eval_js',
    args: () => ({ code: 'const a = []; for (;;) a.push("x".repeat(1 << 20));' }),
    error: /ran out of memory/,
  },
];

describe('hostile inputs against the native tools', () => {
  let gw: SecureGateway;
  let open: SecureGateway; // allows the local peer, to test redirects, floods and drips
  let session: string;
  let openSession: string;
  let pidsBefore: number[];
  let outsideBefore: string[];

  beforeAll(async () => {
    sandbox = mkdtempSync(join(tmpdir(), 'a2e-native-hostile-'));
    chmodSync(sandbox, 0o755); // the shell sandbox's user must reach the workspace
    root = join(sandbox, 'ws');
    mkdirSync(join(root, 'sub'), { recursive: true });
    mkdirSync(join(sandbox, 'outside'));
    mkdirSync(`${root}-sibling`);
    writeFileSync(join(sandbox, 'outside', 'secret.txt'), SECRET);
    writeFileSync(`${root}-sibling/secret.txt`, SECRET);
    writeFileSync(join(root, 'notes.txt'), 'notes');
    symlinkSync(join(sandbox, 'outside'), join(root, 'link-out'));
    symlinkSync('/proc/self/root', join(root, 'proc-root'));
    symlinkSync('/dev/zero', join(root, 'zero'));
    execFileSync('mkfifo', [join(root, 'fifo')]);
    await startPeer();
    const config = (allowPeer: boolean) => ({
      auth: { tokens: [{ name: 'agent', token_sha256: sha256(TOKEN) }] },
      tools: {
        fs: { root },
        shell: { max_output_bytes: 64 * 1024 },
        eval: { timeout_s: 2 },
        http: { ...(allowPeer ? { allow_hosts: ['127.0.0.1'], max_response_bytes: 256 * 1024 } : {}) },
      },
    });
    gw = await startSecureGateway({ config: config(false) });
    open = await startSecureGateway({ config: config(true) });
    session = (await post(`${gw.url}/handshake`, { agent_caps: ['tools'] }, auth)).json.session_id;
    openSession = (await post(`${open.url}/handshake`, { agent_caps: ['tools'] }, auth)).json.session_id;
    // A root gateway runs the file tools in one long-lived worker process, started at the first file tool call:
    // start both gateways' now, so that the cases below must leave exactly these children.
    for (const [g, s] of [
      [gw, session],
      [open, openSession],
    ] as const) {
      await post(`${g.url}/tool/call`, callBody('list_dir', { path: '.' }, { session_id: s }), auth);
    }
    pidsBefore = childPids();
    outsideBefore = [...listing(join(sandbox, 'outside')), ...listing(`${root}-sibling`)];
  });
  afterAll(async () => {
    await gw?.close();
    await open?.close();
    peer?.closeAllConnections();
    await new Promise((resolve) => peer?.close(resolve));
    rmSync(sandbox, { recursive: true, force: true });
  });

  async function invariants(target: SecureGateway, s: string) {
    const ok = await post(
      `${target.url}/tool/call`,
      callBody('read_file', { path: 'notes.txt' }, { session_id: s }),
      auth,
    );
    expect(ok.status).toBe(200);
    expect(ok.json.data.data.content).toBe('notes');
    expect([...listing(join(sandbox, 'outside')), ...listing(`${root}-sibling`)]).toEqual(outsideBefore);
    expect(readdirSync(sandbox).sort()).toEqual(['outside', 'ws', 'ws-sibling']);
    expect(childPids()).toEqual(pidsBefore);
    expect(target.gateway.engine.running).toBe(0);
  }

  it.each([...pathCases, ...urlCases, ...shellCases].map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    peerHits = [];
    const started = performance.now();
    const r = await post(`${gw.url}/tool/call`, callBody(c.tool, c.args(), { session_id: session, timeout: 10 }), auth);
    expect(r.status).toBe(200);
    const d = r.json.data;
    expect(d.success).toBe(false);
    expect(d.error_code).toBe('tool_error');
    expect(d.error).toMatch(c.error);
    expect(JSON.stringify(r.json)).not.toContain(SECRET);
    expect(d.error).not.toMatch(/\n\s+at /);
    expect(performance.now() - started).toBeLessThan(5_000); // refused, not hung
    if (c.noHits) expect(peerHits).toEqual([]);
    await invariants(gw, session);
  });

  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.5/',
    'http://0xa000005/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://[fe80::1]/',
    'http://[64:ff9b::a9fe:a9fe]/',
  ])('a redirect from an allowed host to %s is refused', async (to) => {
    peerHits = [];
    const url = `http://127.0.0.1:${peerPort}/redirect?to=${encodeURIComponent(to)}`;
    const r = await post(
      `${open.url}/tool/call`,
      callBody('http_request', { url, timeout: 5 }, { session_id: openSession }),
      auth,
    );
    expect(r.json.data.success).toBe(false);
    expect(r.json.data.error).toMatch(/allow_hosts/);
    expect(peerHits).toEqual(['/redirect']);
    await invariants(open, openSession);
  });

  it('shell metacharacters and leading dashes in arguments reach the program verbatim, not a shell', async () => {
    for (const args of [[META], ['-n', '--', '-e', META], ['--help; id']]) {
      const r = await post(
        `${gw.url}/tool/call`,
        callBody('run_command', { argv: ['printf', '%s|', ...args] }, { session_id: session }),
        auth,
      );
      expect(r.json.data.success).toBe(true);
      expect(r.json.data.data.stdout).toBe(args.map((a) => `${a}|`).join(''));
    }
    expect(existsSync('/tmp/pwned-sub') || existsSync('/tmp/pwned-tick')).toBe(false);
    await invariants(gw, session);
  });

  it('a process tree that ignores SIGTERM and outlives the timeout is killed, every descendant', async () => {
    const marker = `a2e-hostile-tree-${randomUUID()}`;
    const script = [
      'trap "" TERM',
      `setsid sh -c 'trap "" TERM; while :; do sleep 1; done' ${marker}-setsid &`,
      `sh -c 'trap "" TERM; while :; do sleep 1; done' ${marker}-bg &`,
      'while :; do sleep 1; done',
    ].join('\n');
    const pending = post(
      `${gw.url}/tool/call`,
      callBody('run_command', { argv: ['sh', '-c', script, marker], timeout: 2 }, { session_id: session, timeout: 60 }),
      auth,
    );
    const tree = await waitFor('the command tree to start', () => {
      const t = processTree(marker);
      return t.size >= 4 ? t : undefined;
    });
    const r = await pending;
    expect(r.json.data.success).toBe(false);
    expect(r.json.data.error).toContain('timed out after 2 s');
    await waitFor('every process of the tree to exit', () => [...tree].every((p) => !alive(p)), 10_000);
    await invariants(gw, session);
  });

  it('an output flood (64 MiB response) is cut at max_response_bytes and the connection dropped', async () => {
    const r = await post(
      `${open.url}/tool/call`,
      callBody(
        'http_request',
        { url: `http://127.0.0.1:${peerPort}/flood`, timeout: 20 },
        { session_id: openSession, timeout: 30 },
      ),
      auth,
    );
    expect(r.json.data.success).toBe(true);
    expect(r.json.data.truncated).toBe(true);
    expect(r.json.data.data.bytes).toBe(256 * 1024);
    await invariants(open, openSession);
  });

  it('a slow-drip response is abandoned at its timeout, and the connection closed', async () => {
    const started = performance.now();
    const r = await post(
      `${open.url}/tool/call`,
      callBody(
        'http_request',
        { url: `http://127.0.0.1:${peerPort}/drip`, timeout: 1 },
        { session_id: openSession, timeout: 30 },
      ),
      auth,
    );
    expect(r.json.data.success).toBe(false);
    expect(r.json.data.error).toMatch(/timed out|timeout/i);
    expect(performance.now() - started).toBeLessThan(10_000);
    await dripClosed; // the peer saw the connection close (bounded by the test timeout)
    await invariants(open, openSession);
  });

  it('the call timeout also stops a drip when the tool timeout is longer', async () => {
    const r = await post(
      `${open.url}/tool/call`,
      callBody(
        'http_request',
        { url: `http://127.0.0.1:${peerPort}/drip`, timeout: 60 },
        { session_id: openSession, timeout: 1 },
      ),
      auth,
    );
    expect(r.json.data.success).toBe(false);
    expect(r.json.data.error).toMatch(/time/i);
    await dripClosed;
    await invariants(open, openSession);
  });
});
