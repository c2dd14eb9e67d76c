/**
 * Races against the file tools, over real HTTP with the real sandbox: the
 * attacker's own run_command swaps `race/a` between a real directory and a
 * symlink to a root-owned victim directory OUTSIDE the workspace (rename +
 * symlink in a tight loop), while file tool calls go through `race/a`. Each
 * race is a loop bounded in count and time. Whatever the interleaving, the
 * victims keep their owner, mode and contents, nothing is created outside the
 * workspace (no directory, no `.tmp` file), and no listing, glob or read
 * shows anything of the victim. The gateway runs as root here (as in CI), and
 * every race runs twice: with the file tools in the privilege-separated worker
 * (the default) and in the gateway itself, as root — so the descriptor walk
 * alone must hold: a race that won there would be a root chown/mkdir/write.
 */
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';
import { SWAPPER } from '../helpers/symlink-swapper.js';
import { waitFor } from '../tools/procs.js';
import { childPids } from './helpers.js';

const SECRET = 'victim-secret-never-returned';
const MARKER = 'VICTIM-MARKER';
/** Attempts per race, and the time bound of each race. */
const ATTEMPTS = 200;
const RACE_MS = 15_000;
/** A race test's own bound: the swapper's start, the race, the calls in flight at its end (a loaded 2-core machine). */
const TEST_MS = 120_000;
/** Calls in flight at once during a race. */
const PARALLEL = 4;

let base: string;
let ws: string;
let victimDir: string;
let victimFile: string;
let gw: TestGateway;
let before: string;

/** Owner, mode, size and content of every victim path: what a won race would change. */
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
  visit(victimDir);
  visit(victimFile);
  lines.push(`top: ${readdirSync(base).sort().join(',')}`);
  return lines.join('\n');
}

beforeAll(async () => {
  if (process.getuid?.() !== 0)
    throw new Error('the race suite runs as root (like CI): a won race must be able to hurt');
  base = mkdtempSync(join(tmpdir(), 'a2e-races-'));
  chmodSync(base, 0o755); // the sandbox user must reach the workspace
  ws = join(base, 'ws');
  victimDir = join(base, 'victim');
  victimFile = join(base, 'victim-file');
  mkdirSync(victimDir, { mode: 0o755 });
  chmodSync(victimDir, 0o755);
  // Entries named like what the tools create below race/a: a won mkdir/chown race would hit them.
  for (let i = 0; i < ATTEMPTS; i++) writeFileSync(join(victimDir, `sub-${i}`), SECRET, { mode: 0o600 });
  writeFileSync(join(victimDir, 'secret.txt'), SECRET, { mode: 0o600 });
  writeFileSync(join(victimDir, MARKER), SECRET, { mode: 0o600 });
  mkdirSync(join(victimDir, 'inner'), { mode: 0o700 });
  writeFileSync(join(victimDir, 'inner', MARKER), SECRET, { mode: 0o600 });
  writeFileSync(victimFile, SECRET, { mode: 0o600 });
  mkdirSync(ws);
  before = snapshot();
});

afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});

interface Outcome {
  ok: number;
  refused: number;
  bodies: string[];
}

/**
 * Run `attempt(i)` for i < attempts (PARALLEL at a time, within RACE_MS) while
 * the swapper runs, then stop it and check that it really swapped.
 */
async function race(target: string, attempt: (i: number) => Attempt, attempts = ATTEMPTS): Promise<Outcome> {
  rmSync(join(ws, 'race'), { recursive: true, force: true });
  rmSync(join(ws, 'race-stop'), { force: true });
  const swapper = postJson(
    `${gw.url}/tool/call`,
    callBody(
      'run_command',
      { argv: ['perl', '-e', SWAPPER, target, String(RACE_MS / 1000 + 30)] },
      { timeout: RACE_MS / 1000 + 60 },
    ),
  );
  await waitFor('the swapper to start', () => existsSync(join(ws, 'race', 'started')), 30_000);
  const outcome: Outcome = { ok: 0, refused: 0, bodies: [] };
  const end = Date.now() + RACE_MS;
  let next = 0;
  const worker = async () => {
    while (next < attempts && Date.now() < end) {
      const [tool, args] = attempt(next++);
      const r = await postJson(`${gw.url}/tool/call`, callBody(tool, args, { timeout: 30 }));
      expect(r.status).toBe(200);
      if (r.json.data.success) outcome.ok++;
      else outcome.refused++;
      outcome.bodies.push(JSON.stringify(r.json));
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  writeFileSync(join(ws, 'race-stop'), '');
  const done = await swapper;
  expect(done.json.data.success).toBe(true);
  const swaps = Number(done.json.data.data.stdout.trim());
  expect(swaps).toBeGreaterThan(1000); // the attacker really raced
  expect(outcome.ok + outcome.refused).toBeGreaterThanOrEqual(Math.min(attempts, 50));
  return outcome;
}

/** One call of a race: tool and arguments. */
type Attempt = [tool: string, args: Record<string, unknown>];
const body = (tool: string, args: Record<string, unknown>): Attempt => [tool, args];

function expectVictimsUntouched(o: Outcome) {
  expect(snapshot()).toBe(before);
  for (const b of o.bodies) {
    expect(b).not.toContain(SECRET);
    expect(b).not.toContain(MARKER);
    expect(b).not.toContain(base); // no host path either
  }
}

describe.each([true, false])(
  'races (tools.fs.privilege_separation: %s): a run_command swaps race/a for a symlink to a root-owned directory outside',
  (separation) => {
    beforeAll(async () => {
      gw = await startGateway({
        config: {
          tools: {
            fs: { root: ws, privilege_separation: separation },
            shell: { enabled: true },
            eval: { enabled: false },
            http: { enabled: false },
          },
        },
      });
    });
    afterAll(async () => {
      await gw?.close();
    });

    it(
      'write_file with create_dirs never creates, writes or chowns outside the workspace',
      async () => {
        const o = await race(victimDir, (i) =>
          body('write_file', { path: `race/a/sub-${i}/d/x.txt`, content: 'x', create_dirs: true }),
        );
        expectVictimsUntouched(o);
        expect(o.refused).toBeGreaterThan(0); // the swap was seen, and refused
        for (const b of o.bodies.filter((x) => x.includes('"success":false'))) {
          expect(b).toMatch(/escapes the workspace root|symlink, or changed while|not a directory|does not exist/);
        }
      },
      TEST_MS,
    );

    it(
      'write_file and edit_file leave no file (and no .tmp) in the victim directory',
      async () => {
        const o = await race(victimDir, (i) =>
          i % 2 === 0
            ? body('write_file', { path: `race/a/f-${i}.txt`, content: 'planted' })
            : body('edit_file', {
                path: 'race/a/secret.txt',
                old_string: 'copy',
                new_string: 'copy' + '!'.repeat(i % 3),
              }),
        );
        expectVictimsUntouched(o);
        expect(readdirSync(victimDir).filter((n) => n.endsWith('.tmp') || n.startsWith('f-'))).toEqual([]);
      },
      TEST_MS,
    );

    it(
      'list_dir recursive and glob never list the victim directory',
      async () => {
        const o = await race(victimDir, (i) =>
          // list_dir with and without sizes (the sizes come from an lstat per file, through the directory's descriptor).
          i % 2 === 0
            ? body('list_dir', { path: 'race', recursive: true, sizes: i % 4 === 0 })
            : body('glob', { pattern: 'race/**' }),
        );
        expectVictimsUntouched(o);
        expect(o.ok).toBeGreaterThan(0);
        // What was listed is the workspace's own race/a.
        expect(
          o.bodies.some(
            (b) =>
              b.includes('race/a/secret.txt') || b.includes('race/l/secret.txt') || b.includes('race/d/secret.txt'),
          ),
        ).toBe(true);
      },
      TEST_MS,
    );

    it(
      'read_file and grep never read the victim',
      async () => {
        const o = await race(
          victimDir,
          (i) =>
            i % 2 === 0
              ? body('read_file', { path: 'race/a/secret.txt' })
              : body('grep', { pattern: '.', path: 'race' }),
          200,
        );
        expectVictimsUntouched(o);
        expect(o.ok).toBeGreaterThan(0);
      },
      TEST_MS,
    );

    it(
      'a victim file: writing race/a while it is a symlink to a root-owned file never changes that file',
      async () => {
        const o = await race(victimFile, (i) =>
          i % 2 === 0
            ? body('write_file', { path: 'race/a', content: 'planted' })
            : body('write_file', { path: 'race/a/x', content: 'planted', create_dirs: true }),
        );
        expectVictimsUntouched(o);
      },
      TEST_MS,
    );

    const where = separation
      ? "defence in depth: a root gateway runs the file tools in a worker with the workspace owner's uid and gid"
      : 'without privilege separation the file tools run in the gateway (no worker)';
    it(where, async () => {
      if (!separation) {
        expect((await postJson(`${gw.url}/tool/call`, callBody('list_dir', { path: '.' }))).json.data.success).toBe(
          true,
        );
        expect(
          childPids().filter((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('worker-main.js')),
        ).toEqual([]);
        return;
      }
      const rootOnly = join(ws, 'root-only.txt');
      writeFileSync(rootOnly, SECRET, { mode: 0o600 }); // put there by root, outside any tool
      try {
        const r = await postJson(`${gw.url}/tool/call`, callBody('read_file', { path: 'root-only.txt' }));
        expect(r.json.data.success).toBe(false);
        expect(r.json.data.error).toBe('permission denied for "root-only.txt"');
        const workers = childPids().filter((pid) =>
          readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('worker-main.js'),
        );
        expect(workers).toHaveLength(1);
        const status = readFileSync(`/proc/${workers[0]}/status`, 'utf8');
        expect(status).toMatch(/^Uid:\t65534\t65534\t65534\t65534$/m);
        expect(status).toMatch(/^Gid:\t65534\t65534\t65534\t65534$/m);
        expect(status).toMatch(/^Groups:\s*$/m); // no supplementary groups (root's included)
        expect(status).toMatch(/^CapEff:\t0+$/m);
        expect(status).toMatch(/^CapPrm:\t0+$/m); // it dropped from root itself: nothing left to take back
        // A worker that dies is replaced at the next call.
        process.kill(workers[0]!, 'SIGKILL');
        await waitFor('the worker to exit', () => !childPids().includes(workers[0]!));
        expect((await postJson(`${gw.url}/tool/call`, callBody('list_dir', { path: '.' }))).json.data.success).toBe(
          true,
        );
        expect(
          childPids().filter((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('worker-main.js')),
        ).toHaveLength(1);
      } finally {
        rmSync(rootOnly);
      }
    });
  },
);
