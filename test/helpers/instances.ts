/**
 * Several real gateway processes (dist/cli.js serve) sharing one real
 * redis-server: what the scale-out tests run against. Each instance gets the
 * same config (YAML text; `store` pointing at the Redis is added) plus the
 * scale-out fixture tools (test/fixtures/scale-tools.mjs: whoami, ticker, hold),
 * and can be stopped, killed (SIGKILL: an instance lost) or restarted.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ResultPromise } from 'execa';
import { startCli } from './cli.js';
import { startRedis, type RedisServer } from './redis.js';

export const SCALE_TOOLS = fileURLToPath(new URL('../fixtures/scale-tools.mjs', import.meta.url));

export interface Instance {
  /** Base URL, e.g. http://127.0.0.1:34567 */
  url: string;
  pid: number;
  proc: ResultPromise;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
  /** SIGKILL and wait: the instance is lost mid-whatever. */
  kill(): Promise<void>;
}

export interface Cluster {
  redis: RedisServer;
  instances: Instance[];
  /** Start one more instance with the same config (e.g. to replace a killed one; `port` to take its place behind a proxy). */
  add(options?: { port?: number }): Promise<Instance>;
  /** The config file every instance runs. */
  configPath: string;
  /** A directory for the test's own files (removed on dispose). */
  dir: string;
  dispose(): Promise<void>;
}

export interface ClusterOptions {
  /** Instances to start (default 2). */
  count?: number;
  /** Extra YAML appended to the config (top-level keys other than `store` and `plugins`). */
  config?: string;
  /** Redis to use (default: a new one, disposed with the cluster). */
  redis?: RedisServer;
  /** Key prefix (default "a2e-test:"). */
  prefix?: string;
  /** Extra environment for every instance (LOG_LEVEL defaults to silent). */
  env?: Record<string, string>;
  /**
   * The `store:` section to use as written (e.g. docs/scale-out-guide.md's), instead of the generated one; its
   * `${REDIS_URL…}` is set to this cluster's Redis through the environment.
   */
  storeSection?: string;
}

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const redis = options.redis ?? (await startRedis());
  const dir = await mkdtemp(join(tmpdir(), 'a2e-cluster-'));
  const configPath = join(dir, 'gateway.yaml');
  await writeFile(
    configPath,
    [
      'server:\n  port: 0',
      options.storeSection ??
        `store:\n  kind: redis\n  url: ${redis.url}\n  prefix: "${options.prefix ?? 'a2e-test:'}"`,
      `plugins:\n  - module: ${JSON.stringify(SCALE_TOOLS)}`,
      options.config ?? '',
    ].join('\n') + '\n',
  );
  const instances: Instance[] = [];
  const add = async (addOptions: { port?: number } = {}): Promise<Instance> => {
    const portArgs = addOptions.port === undefined ? [] : ['--port', String(addOptions.port)];
    const { url, proc } = await startCli(
      ['--config', configPath, ...portArgs],
      { REDIS_URL: redis.url, ...options.env },
      { cwd: dir },
    );
    const wait = () =>
      proc.then(
        () => undefined,
        () => undefined,
      );
    const instance: Instance = {
      url,
      pid: proc.pid!,
      proc,
      async stop() {
        proc.kill('SIGTERM');
        await wait();
      },
      async kill() {
        proc.kill('SIGKILL');
        await wait();
      },
    };
    instances.push(instance);
    return instance;
  };
  for (let i = 0; i < (options.count ?? 2); i++) await add();
  return {
    redis,
    instances,
    add,
    configPath,
    dir,
    async dispose() {
      await Promise.allSettled(instances.map((i) => i.stop()));
      if (!options.redis) await redis.dispose();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
