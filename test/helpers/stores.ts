/**
 * The stores a suite runs against, for one parameterised describe over both:
 * `memory` (the default) and `redis` (a real redis-server, started on first
 * use and stopped after the file). Each gateway gets a key prefix of its own,
 * so gateways of one file never see each other's sessions or limits.
 */
import { afterAll } from 'vitest';
import type { GatewayConfigInput } from '../../src/index.js';
import { startRedis, type RedisServer } from './redis.js';

export const STORE_KINDS = ['memory', 'redis'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

/** Call at the top of a test file: returns the config part that selects a store of `kind`. */
export function storeConfigs(): (kind: StoreKind) => Promise<Pick<GatewayConfigInput, 'store'>> {
  let redis: Promise<RedisServer> | undefined;
  let n = 0;
  afterAll(async () => {
    if (redis) await (await redis).dispose();
  });
  return async (kind) => {
    if (kind === 'memory') return {};
    const server = await (redis ??= startRedis());
    return { store: { kind: 'redis', url: server.url, prefix: `t${++n}:` } };
  };
}
