/**
 * The file tools' race hardening (test/security/races.test.ts) across two principals (issue 57): the attacker's own
 * run_command swaps `race/a` in its workspace between a directory and a symlink to the victim principal's workspace,
 * while the attacker's file tool calls go through `race/a`. Both workspaces belong to the same sandbox user on a root
 * gateway (and the privilege-separated worker runs as that user), so only the descriptor walk keeps the attacker out:
 * whatever the interleaving, the victim's files keep their contents and nothing is created in or read from them.
 * Each race runs with the file tools in the worker (the default) and in the gateway itself.
 */
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workspaceDirName } from '../../src/tools/fs/principal-dir.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';
import { SWAPPER } from '../helpers/symlink-swapper.js';
import { sha256 } from '../security/helpers.js';
import { waitFor } from '../tools/procs.js';

const SECRET = 'victim-principal-secret-never-returned';
const ATTACKER = 'attacker-token-0123456789abcdef0123';
const VICTIM = 'victim-token-fedcba9876543210fedcba';
const ATTEMPTS = 150;
const RACE_MS = 10_000;
const TEST_MS = 120_000;
const PARALLEL = 4;

let base: string;
let gw: TestGateway;
const wsOf = (name: string) => join(base, 'ws', workspaceDirName(name));

/** Every path of the victim's workspace with its mode, size and content hash: what a won race would change. */
function snapshot(): string {
  const lines: string[] = [];
  const visit = (p: string) => {
    const st = lstatSync(p);
    const hash = st.isFile() ? createHash('sha256').update(readFileSync(p)).digest('hex') : '-';
    lines.push(
      `${p.slice(base.length)} ${st.uid}:${st.gid} ${(st.mode & 0o7777).toString(8)} ${st.isDirectory() ? 'dir' : st.size} ${hash}`,
    );
    if (st.isDirectory()) for (const name of readdirSync(p).sort()) visit(join(p, name));
  };
  visit(wsOf('victim'));
  return lines.join('\n');
}

const call = (token: string, tool: string, args: Record<string, unknown>, timeout = 30) =>
  postJson(`${gw.url}/tool/call`, callBody(tool, args, { timeout }), { Authorization: `Bearer ${token}` });

beforeAll(() => {
  if (process.getuid?.() !== 0)
    throw new Error('the race suite runs as root (like CI): a won race must be able to hurt');
  base = mkdtempSync(join(tmpdir(), 'a2e-tenant-races-'));
  chmodSync(base, 0o755);
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe.each([true, false])('races across principals (tools.fs.privilege_separation: %s)', (separation) => {
  let before: string;
  beforeAll(async () => {
    gw = await startGateway({
      config: {
        auth: {
          tokens: [
            { name: 'attacker', token_sha256: sha256(ATTACKER) },
            { name: 'victim', token_sha256: sha256(VICTIM) },
          ],
        },
        sessions: { required: false },
        limits: { rate_per_s: 0 }, // the attacker's calls come as fast as they can: the race, not the rate limit, is tested
        tools: {
          fs: { root: join(base, 'ws', '{principal}'), privilege_separation: separation },
          shell: { enabled: true },
        },
      },
    });
    for (let i = 0; i < 20; i++)
      expect(
        (await call(VICTIM, 'write_file', { path: `sub-${i}/secret.txt`, content: SECRET, create_dirs: true })).json
          .data.success,
      ).toBe(true);
    expect((await call(VICTIM, 'write_file', { path: 'secret.txt', content: SECRET })).json.data.success).toBe(true);
    before = snapshot();
  }, 60_000);
  afterAll(() => gw?.close());

  async function race(attempt: (i: number) => [string, Record<string, unknown>]): Promise<string[]> {
    const ws = wsOf('attacker');
    rmSync(join(ws, 'race'), { recursive: true, force: true });
    rmSync(join(ws, 'race-stop'), { force: true });
    const swapper = call(
      ATTACKER,
      'run_command',
      { argv: ['perl', '-e', SWAPPER, wsOf('victim'), String(RACE_MS / 1000 + 30)] },
      RACE_MS / 1000 + 60,
    );
    await waitFor('the swapper to start', () => existsSync(join(ws, 'race', 'started')), 30_000);
    const bodies: string[] = [];
    const end = Date.now() + RACE_MS;
    let next = 0;
    const worker = async () => {
      while (next < ATTEMPTS && Date.now() < end) {
        const [tool, args] = attempt(next++);
        const r = await call(ATTACKER, tool, args);
        expect(r.status).toBe(200);
        bodies.push(JSON.stringify(r.json));
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
    writeFileSync(join(ws, 'race-stop'), '');
    const done = await swapper;
    expect(done.json.data.success, JSON.stringify(done.json)).toBe(true);
    expect(Number(done.json.data.data.stdout.trim())).toBeGreaterThan(1000); // the attacker really raced
    expect(bodies.length).toBeGreaterThanOrEqual(40);
    return bodies;
  }

  const untouched = (bodies: string[]) => {
    expect(snapshot()).toBe(before);
    for (const b of bodies) {
      expect(b).not.toContain(SECRET);
      expect(b).not.toContain(base);
    }
  };

  it(
    "write_file (with create_dirs) and edit_file never create or change anything in the victim's workspace",
    async () => {
      const bodies = await race((i) =>
        i % 2 === 0
          ? ['write_file', { path: `race/a/sub-${i % 20}/planted-${i}.txt`, content: 'planted', create_dirs: true }]
          : ['edit_file', { path: 'race/a/secret.txt', old_string: 'copy', new_string: 'copy' + '!'.repeat(i % 3) }],
      );
      untouched(bodies);
    },
    TEST_MS,
  );

  it(
    "read_file, grep, list_dir and glob never read or list the victim's workspace",
    async () => {
      const bodies = await race((i) => {
        switch (i % 4) {
          case 0:
            return ['read_file', { path: 'race/a/secret.txt' }];
          case 1:
            return ['grep', { pattern: 'victim-principal', path: 'race' }];
          case 2:
            return ['list_dir', { path: 'race', recursive: true, sizes: true }];
          default:
            return ['glob', { pattern: 'race/**' }];
        }
      });
      untouched(bodies);
      for (const b of bodies) expect(b).not.toMatch(/sub-1[0-9]/); // the victim's directory names never listed
    },
    TEST_MS,
  );
});
