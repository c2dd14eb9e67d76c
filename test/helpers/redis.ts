/**
 * A real redis-server for the scale-out tests: started on an ephemeral port
 * of 127.0.0.1 with its own directory, persistence off unless asked for,
 * stopped by the test. Fails with what to install when redis-server is missing.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@redis/client';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { execa, type ResultPromise } from 'execa';
import { freePort } from './nginx.js';

const CANDIDATES = ['/usr/bin/redis-server', '/usr/local/bin/redis-server', '/usr/sbin/redis-server'];

export function findRedisServer(): string {
  const found = CANDIDATES.find((p) => existsSync(p));
  if (!found) {
    throw new Error(
      'redis-server is not installed, and the scale-out tests need a real one: install the Debian package "redis-server" ' +
        '(apt-get install -y redis-server), or run .ci/run, which installs everything in .ci/apt-packages',
    );
  }
  return found;
}

const newClient = (url: string) => createClient({ url });
/** A raw client of the test's Redis, for tests that read or write its keys themselves. */
export type RedisClient = ReturnType<typeof newClient>;

export interface RedisServer {
  readonly port: number;
  /** redis://127.0.0.1:<port>/0 */
  readonly url: string;
  /** Stop it (SIGTERM, waits for exit). With `persist`, its data is saved and comes back on start(). */
  stop(): Promise<void>;
  /** Kill it (SIGKILL, waits for exit): Redis lost without a chance to save anything. */
  kill(): Promise<void>;
  /** Start it again on the same port and directory (after stop() or kill()). */
  start(): Promise<void>;
  /** A connected raw client (closed by dispose()). */
  client(): Promise<RedisClient>;
  /** Close its clients, stop it and remove its directory. */
  dispose(): Promise<void>;
}

export interface RedisServerOptions {
  /** Keep data across stop()/start() (append-only file, fsync always). Default off. */
  persist?: boolean;
}

export async function startRedis(options: RedisServerOptions = {}): Promise<RedisServer> {
  const bin = findRedisServer();
  const dir = await mkdtemp(join(tmpdir(), 'a2e-redis-'));
  const port = await freePort();
  let proc: ResultPromise | undefined;

  const start = async () => {
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--daemonize',
      'no',
      '--save',
      '',
      '--appendonly',
      options.persist ? 'yes' : 'no',
      '--appendfsync',
      'always',
      '--loglevel',
      'warning',
    ];
    // Log to stdout at "notice" only long enough to see the ready line.
    const p = execa(bin, [...args, '--loglevel', 'notice'], { reject: false, stdin: 'ignore', cleanup: true });
    proc = p;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(
        () => reject(new Error(`redis-server did not start within 10 s:\n${out.slice(-2000)}`)),
        10_000,
      );
      p.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      void p.then((r) => {
        clearTimeout(timer);
        reject(
          new Error(
            `redis-server exited (${r.exitCode ?? r.signal}) before it was ready:\n${out.slice(-2000)}${String(r.stderr ?? '')}`,
          ),
        );
      });
    });
  };
  const end = async (signal: 'SIGTERM' | 'SIGKILL') => {
    const p = proc;
    proc = undefined;
    if (!p || (p.exitCode !== undefined && p.exitCode !== null)) return;
    p.kill(signal);
    await p;
  };
  const stop = () => end('SIGTERM');
  const url = `redis://127.0.0.1:${port}/0`;
  const clients: RedisClient[] = [];
  await start();
  return {
    port,
    url,
    stop,
    kill: () => end('SIGKILL'),
    start,
    async client() {
      const client = newClient(url);
      clients.push(client);
      await client.connect();
      return client;
    },
    async dispose() {
      // destroy, not close: a client of a Redis a test left down would wait for it to come back
      for (const client of clients.splice(0)) client.destroy();
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A real redis-server for one test file: started before its tests, emptied before each, stopped after.
 * `use` gets its raw client once started: `let redis: RedisClient; redisPerFile((c) => (redis = c));`.
 */
export function redisPerFile(use: (client: RedisClient) => void): void {
  let server: RedisServer | undefined;
  let client: RedisClient;
  beforeAll(async () => {
    server = await startRedis();
    use((client = await server.client()));
  });
  afterAll(() => server?.dispose());
  beforeEach(() => client.flushAll());
}
