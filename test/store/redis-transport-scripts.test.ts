/**
 * The A2E transport's Redis scripts where an instance writes again what Redis
 * may or may not have kept, run on a real redis-server: a push retried after
 * its reply was lost is written once; a session put back by two instances
 * ends with the freshest binding and handshake either knew, whichever came
 * first; a lapsed transport call is answered once, and its owner's late answer
 * is dropped; a lease put back (found missing, or with a session put back)
 * after the call's answer was pushed is not re-created, so it cannot lapse
 * into a second answer.
 */
import { expect, it } from 'vitest';
import { ANSWER_LOST, CREATE, LEASE_CALL, PUSH, RESTORE_SESSION } from '../../src/store/redis/transport-scripts.js';
import { redisPerFile, type RedisClient } from '../helpers/redis.js';

let redis: RedisClient;
const SID = 'a'.repeat(32);
const HASH = `t:transport:s:${SID}`;
const OUTBOX = `t:transport:o:${SID}`;
const LEASES = 't:calls:leases';

redisPerFile((c) => (redis = c));

const create = () =>
  CREATE.run(
    redis as never,
    [HASH, 't:transport:all', 't:transport:owner:q'],
    [
      Date.now(),
      60_000,
      5,
      100,
      '=alice',
      'bearer',
      'q',
      '127.0.0.1',
      't:transport:s:',
      't:transport:o:',
      't:transport:owner:',
      SID,
      60_000,
    ],
  );
const push = (batch: number, ...frames: string[]) =>
  PUSH.run<number[]>(redis as never, [HASH, OUTBOX, LEASES], ['pb:i1', batch, 0, ...frames]);

it('a batch pushed again with its number (its reply was lost) is written once; the next batch is written', async () => {
  await create();
  await push(0, '', '{"type":"pong","id":"1"}', '', '{"type":"pong","id":"2"}');
  const again = await push(0, '', '{"type":"pong","id":"1"}', '', '{"type":"pong","id":"2"}');
  expect(await redis.xLen(OUTBOX)).toBe(2);
  expect(again[3]).toBe(1); // the last frame id, as written the first time
  await push(1, '', '{"type":"pong","id":"3"}');
  expect(((await redis.xRange(OUTBOX, '-', '+')) ?? []).map((e) => e.id)).toEqual(['1-0', '1-1', '1-2']);
});

it("a call answered by another instance after its lease lapsed: the lost answer is written once, the owner's late answer is dropped", async () => {
  await create();
  const member = `a2e:${SID}:call-1`;
  expect(
    await LEASE_CALL.run(redis as never, [HASH, LEASES, OUTBOX], [member, '{"r":"req-1","t":"hold","c":1}', 1, 1]),
  ).toBe(1);
  await new Promise((r) => setTimeout(r, 20)); // the 1 ms lease lapses
  expect(
    await ANSWER_LOST.run(redis as never, [LEASES, HASH, OUTBOX], [member, '{"type":"tool/call/resp","id":"lost"}']),
  ).toBe(1);
  expect(
    await ANSWER_LOST.run(redis as never, [LEASES, HASH, OUTBOX], [member, '{"type":"tool/call/resp","id":"lost2"}']),
  ).toBe(0);
  // A lease re-taken for it (its owner, back, found it missing) is refused: the call was answered.
  expect(
    await LEASE_CALL.run(redis as never, [HASH, LEASES, OUTBOX], [member, '{"r":"req-1","t":"hold","c":1}', 1000, 0]),
  ).toBe(0);
  await push(0, member, '{"type":"tool/call/resp","id":"late"}');
  const frames = ((await redis.xRange(OUTBOX, '-', '+')) ?? []).map((e) => e?.message?.d);
  expect(frames).toEqual(['{"type":"tool/call/resp","id":"lost"}']);
  expect(await redis.zScore(LEASES, member)).toBeNull();
});

it('a call whose answer comes normally: its lease ends with the push that carries the answer', async () => {
  await create();
  const member = `a2e:${SID}:call-2`;
  await LEASE_CALL.run(redis as never, [HASH, LEASES, OUTBOX], [member, '{"r":"req-2","t":"whoami","c":1}', 60_000, 1]);
  expect(await redis.hGet(HASH, 'k')).toBe('1');
  await push(0, member, '{"type":"tool/call/resp","id":"ok"}');
  expect(await redis.zScore(LEASES, member)).toBeNull();
  expect(await redis.hExists(HASH, member)).toBeFalsy();
  expect(await redis.xLen(OUTBOX)).toBe(1);
});

it('a session put back by two instances ends with the binding and handshake the better informed one knew, in either order', async () => {
  const restore = (h: string, hs: string, floor: number) =>
    RESTORE_SESSION.run(
      redis as never,
      [HASH, OUTBOX, 't:transport:all', 't:transport:owner:q', LEASES],
      [
        Date.now(),
        60_000,
        '=alice',
        'bearer',
        'q',
        '127.0.0.1',
        1,
        h,
        hs,
        'open',
        floor,
        '',
        '{"type":"error","id":"notice"}',
        60_000,
      ],
    );
  for (const order of [
    ['stale', 'fresh'],
    ['fresh', 'stale'],
  ]) {
    await redis.flushAll();
    const results = [];
    for (const who of order) results.push(who === 'stale' ? await restore('0', '', 7) : await restore('1', 'hs-1', 12));
    expect(results).toEqual([1, 0]);
    expect(await redis.hmGet(HASH, ['h', 'hs', 'p'])).toEqual(['1', 'hs-1', '=alice']);
    expect(Number(await redis.hGet(HASH, 'n'))).toBeGreaterThanOrEqual(12);
    expect(((await redis.xRange(OUTBOX, '-', '+')) ?? []).map((e) => e?.message?.d)).toEqual([
      '{"type":"error","id":"notice"}',
    ]);
  }
});

/** Answers of `member` in the outbox. */
const answersOf = async (member: string) =>
  ((await redis.xRange(OUTBOX, '-', '+')) ?? []).filter((e) => e?.message?.e === member).map((e) => e.message.d);

it("a lease found missing and taken again after the call's answer was pushed (a renewal racing the answer after Redis came back empty) is not re-created: the call is answered once", async () => {
  await create();
  const member = `a2e:${SID}:call-3`;
  await LEASE_CALL.run(redis as never, [HASH, LEASES, OUTBOX], [member, '{"r":"req-3","t":"hold","c":1}', 60_000, 1]);
  await push(0, member, '{"type":"tool/call/resp","id":"ok"}');
  // The owner's renewal found the lease missing a moment before the push and re-takes it now (1 ms: it would lapse).
  expect(
    await LEASE_CALL.run(redis as never, [HASH, LEASES, OUTBOX], [member, '{"r":"req-3","t":"hold","c":1}', 1, 0]),
  ).toBe(2);
  expect(await redis.zScore(LEASES, member)).toBeNull();
  await new Promise((r) => setTimeout(r, 20));
  expect(
    await ANSWER_LOST.run(redis as never, [LEASES, HASH, OUTBOX], [member, '{"type":"tool/call/resp","id":"lost"}']),
  ).toBe(0);
  expect(await answersOf(member)).toEqual(['{"type":"tool/call/resp","id":"ok"}']);
});

it("a session put back with a call whose answer was pushed since (after Redis came back, before the restore ran) does not get that call's lease back: answered once", async () => {
  await create();
  const member = `a2e:${SID}:call-4`;
  await LEASE_CALL.run(redis as never, [HASH, LEASES, OUTBOX], [member, '{"r":"req-4","t":"hold","c":1}', 60_000, 1]);
  await push(0, member, '{"type":"tool/call/resp","id":"ok"}');
  expect(
    await RESTORE_SESSION.run(
      redis as never,
      [HASH, OUTBOX, 't:transport:all', 't:transport:owner:q', LEASES],
      [
        Date.now(),
        60_000,
        '=alice',
        'bearer',
        'q',
        '127.0.0.1',
        1,
        '1',
        '',
        'open',
        0,
        '',
        '{}',
        1,
        member,
        '{"r":"req-4","t":"hold","c":1}',
      ],
    ),
  ).toBe(0);
  expect(await redis.zScore(LEASES, member)).toBeNull();
  await new Promise((r) => setTimeout(r, 20));
  expect(
    await ANSWER_LOST.run(redis as never, [LEASES, HASH, OUTBOX], [member, '{"type":"tool/call/resp","id":"lost"}']),
  ).toBe(0);
  expect(await answersOf(member)).toEqual(['{"type":"tool/call/resp","id":"ok"}']);
});
