/**
 * `a2e-gateway serve --workers N`: several processes on one port sharing a
 * real Redis; both workers serve, a dead one is replaced, SIGTERM drains the
 * calls in flight, and more than one worker without Redis is refused.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, startCli } from '../helpers/cli.js';
import { SCALE_TOOLS } from '../helpers/instances.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';

/** POST /tool/call on a fresh connection (no keep-alive), so the primary hands each one to a worker in turn. */
function call(url: string, tool: string, args: Record<string, unknown> = {}): Promise<{ status: number; body: any }> {
  const body = JSON.stringify({
    type: 'tool/call/req',
    id: `w-${tool}`,
    version: '1.0',
    ts: Date.now() / 1000,
    tool_name: tool,
    arguments: args,
  });
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/tool/call`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.setTimeout(20_000, () => req.destroy(new Error(`no answer from ${url} in 20 s`)));
    req.end(body);
  });
}

const parentOf = (pid: number): number =>
  Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);

let redis: RedisServer;
let dir: string;
beforeAll(async () => {
  redis = await startRedis();
  dir = await mkdtemp(join(tmpdir(), 'a2e-workers-'));
  await writeFile(
    join(dir, 'redis.yaml'),
    `server:\n  port: 0\nstore:\n  kind: redis\n  url: ${redis.url}\nplugins:\n  - module: ${JSON.stringify(SCALE_TOOLS)}\n`,
  );
  await writeFile(join(dir, 'memory.yaml'), 'server:\n  port: 0\n  workers: 2\n');
});
afterAll(async () => {
  await redis?.dispose();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('serve --workers', () => {
  it('refuses more than one worker without a shared store, saying what to set', async () => {
    const r = await execa('node', [CLI, 'serve', '--config', join(dir, 'memory.yaml')], {
      reject: false,
      env: { LOG_LEVEL: 'silent' },
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/2 worker processes need a store they share: set store\.kind: redis/);
    const bad = await execa('node', [CLI, 'serve', '--workers', 'lots'], {
      reject: false,
      env: { LOG_LEVEL: 'silent' },
    });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/--workers must be a number of processes from 1 to 256, or "auto"/);
  }, 120_000);

  it('serves from both workers, replaces one that dies, and drains on SIGTERM', async () => {
    const { url, proc } = await startCli(['--config', join(dir, 'redis.yaml'), '--workers', '2']);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    try {
      const primary = proc.pid!;
      // Both workers answer: concurrent held calls on separate connections land on both.
      const seen = new Set<number>();
      for (let round = 0; round < 20 && seen.size < 2; round++) {
        const answers = await Promise.all(Array.from({ length: 4 }, () => call(url, 'hold', { ms: 200 })));
        for (const a of answers) {
          expect(a.body.data.success).toBe(true);
          seen.add(a.body.data.data.pid);
        }
      }
      expect(seen.size).toBe(2);
      for (const pid of seen) {
        expect(pid).not.toBe(primary);
        expect(parentOf(pid)).toBe(primary);
      }

      // A worker killed outright is replaced by a new process, and the port keeps answering meanwhile.
      const [victim] = [...seen];
      process.kill(victim!, 'SIGKILL');
      const fresh = new Set<number>();
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        const a = await call(url, 'whoami');
        expect(a.status).toBe(200);
        const pid = a.body.data.data.pid as number;
        if (!seen.has(pid)) {
          fresh.add(pid);
          break;
        }
      }
      expect(fresh.size).toBe(1);
      expect(parentOf([...fresh][0]!)).toBe(primary);

      // SIGTERM to the primary: the call in flight finishes, then everything exits cleanly.
      const inFlight = call(url, 'hold', { ms: 1500 });
      // Wait until a worker runs it (health answers come from either worker in turn).
      const running = Date.now() + 20_000;
      while (Date.now() < running) {
        const h = await new Promise<any>((resolve, reject) =>
          request(`${url}/healthz`, { agent: false }, (res) => {
            let t = '';
            res.on('data', (c: Buffer) => (t += c.toString()));
            res.on('end', () => resolve(JSON.parse(t)));
          })
            .on('error', reject)
            .end(),
        );
        if (h.running_calls >= 1) break;
      }
      proc.kill('SIGTERM');
      const answer = await inFlight;
      expect(answer.body.data.success).toBe(true);
      const exit = await proc;
      expect(exit.exitCode).toBe(0);
    } finally {
      proc.kill('SIGKILL');
    }
  }, 180_000);
});
