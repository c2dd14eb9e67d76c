/**
 * The call store's Redis scripts where the owner writes again what Redis may
 * already hold, run on a real redis-server: a final write retried after its
 * reply was lost is answered as written (not as another instance's failure),
 * while a call another instance failed still answers 0 to its owner.
 */
import { expect, it } from 'vitest';
import { APPEND, FAIL_LAPSED, REGISTER } from '../../src/store/redis/call-scripts.js';
import { redisPerFile, type RedisClient } from '../helpers/redis.js';

let redis: RedisClient;
const ID = '0b1f2f95-551e-423a-9c8a-046a1936cf98';
const HASH = `t:call:${ID}`;
const STREAM = `t:call:${ID}:events`;
const LEASES = 't:calls:leases';

redisPerFile((c) => (redis = c));

const register = () =>
  REGISTER.run(
    redis as never,
    [HASH, LEASES],
    [ID, 60_000, 'owner', 'i1', 'req', 'r1', 'tool', 'echo', 'state', 'running'],
  );
const append = (state: string, response: string, count: number, ...events: (string | number)[]) =>
  APPEND.run(redis as never, [HASH, STREAM, LEASES], [ID, 100, 60, state, response, count, ...events]).then(Number);

it('a final write sent again (its reply was lost) answers 1 and writes nothing twice', async () => {
  await register();
  expect(await append('', '', 1, 0, '{"seq":0}')).toBe(1);
  const final = '{"type":"tool/call/resp","data":{"success":true}}';
  expect(await append('completed', final, 1)).toBe(1);
  expect(await redis.zScore(LEASES, ID)).toBeNull(); // the final write took the lease away
  expect(await append('completed', final, 1)).toBe(1);
  expect(await redis.xLen(STREAM)).toBe(2);
  expect(await redis.hGet(HASH, 'state')).toBe('completed');
});

it('a call another instance failed answers 0 to its owner, for events and for its final write', async () => {
  await register();
  await redis.zAdd(LEASES, { score: 1, value: ID }); // lapsed long ago
  expect(await FAIL_LAPSED.run(redis as never, [HASH, STREAM, LEASES], [ID, '{"lost":true}', 60])).toBe(1);
  expect(await append('', '', 1, 0, '{"seq":0}')).toBe(0);
  expect(await append('completed', '{"type":"tool/call/resp"}', 0)).toBe(0);
  expect(await redis.hGet(HASH, 'state')).toBe('failed');
});

it('Redis without the call answers -1 (the owner re-creates it)', async () => {
  expect(await append('', '', 1, 0, '{"seq":0}')).toBe(-1);
});
