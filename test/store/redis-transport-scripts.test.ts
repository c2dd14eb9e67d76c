/**
 * The A2E transport's Redis scripts where an instance writes again what Redis
 * may or may not have kept, run on a real redis-server: a push retried after
 * its reply was lost is written once; a session put back by two instances
 * ends with the freshest binding and handshake either knew, whichever came
 * first; frames two instances pushed before Redis lost them go back at their
 * ids, in order, whichever instance puts the session back first, and no new
 * frame goes in before them; a lapsed transport call is answered once, and its owner's late answer
 * is dropped; a lease put back (found missing, or with a session put back)
 * after the call's answer was pushed is not re-created, so it cannot lapse
 * into a second answer.
 */
import { expect, it } from 'vitest';
import {
  ANSWER_LOST,
  ATTACH,
  CREATE,
  LEASE_CALL,
  PUSH,
  RESTORE_SESSION,
} from '../../src/store/redis/transport-scripts.js';
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

/** RESTORE_SESSION as an instance knowing the binding `h`/`hs`, frames up to `floor` - 1, and `frames` it pushed (id, JSON, kind, call). */
const restoreAs = (h: string, hs: string, floor: number, settleMs: number, calls: string[], ...frames: string[]) =>
  RESTORE_SESSION.run(
    redis as never,
    [HASH, OUTBOX, 't:transport:all', 't:transport:owner:q', LEASES],
    [Date.now(), 60_000, '=alice', 'bearer', 'q', '127.0.0.1', 1, h, hs, 'open', floor, '', settleMs, 60_000]
      .concat([calls.length, ...calls])
      .concat(frames),
  );

const framesOf = async () =>
  ((await redis.xRange(OUTBOX, '-', '+')) ?? []).map((e) => [e.id, e.message.d, e.message.c ?? e.message.e ?? '']);

it('frames two instances pushed before Redis lost them go back at their ids and in order, whichever puts the session back first; new frames wait for them, then follow', async () => {
  for (const first of ['a', 'b']) {
    await redis.flushAll();
    const a = () => restoreAs('1', 'hs', 13, 500, [], '10', '{"a":10}', '', '', '12', '{"a":12}', 'c', 'm x');
    const b = () => restoreAs('1', 'hs', 12, 500, [], '11', '{"b":11}', '', '');
    expect(first === 'a' ? [await a(), await b()] : [await b(), await a()]).toEqual([1, 0]);
    expect(await framesOf()).toEqual([
      ['1-10', '{"a":10}', ''],
      ['1-11', '{"b":11}', ''],
      ['1-12', '{"a":12}', 'm x'],
    ]);
    // A new frame waits while the instances push theirs again, then goes after every one of them.
    expect((await push(0, '', '{"new":1}'))[0]).toBe(-2);
    await new Promise((r) => setTimeout(r, 550));
    expect((await push(0, '', '{"new":1}'))[3]).toBe(13);
    // Pushed again too late (a stream may have gone past their place): frames before the ids issued stay out.
    await restoreAs('1', 'hs', 0, 500, [], '9', '{"late":9}', '', '');
    expect((await framesOf()).map(([id]) => id)).toEqual(['1-10', '1-11', '1-12', '1-13']);
  }
});

it('a stream resumed with a Last-Event-ID past every frame pushed again (their ids are below it: the client saw them) does not get them again; a frame pushed after them moves past its id', async () => {
  await restoreAs('1', 'hs', 11, 300, [], '10', '{"a":10}', '', '', '11', '{"b":11}', '', '');
  await new Promise((r) => setTimeout(r, 350));
  await push(0, '', '{"new":12}');
  const seen = await ATTACH.run(
    redis as never,
    [HASH, OUTBOX, 't:transport:all'],
    ['nonce', '20', Date.now(), 60_000, 60_000, 't:transport:owner:', SID],
  );
  expect(seen).toBe(20);
  expect(await framesOf()).toEqual([['1-21', '{"new":12}', '']]);
});

it("an answer pushed again with its session ends its call's lease, so the lease put back for it cannot lapse into a second answer", async () => {
  const member = `a2e:${SID}:call-9`;
  await restoreAs('1', 'hs', 5, 500, [member, '{"r":"req-9","t":"hold","c":1}']); // a watcher put its lease back
  expect(await redis.zScore(LEASES, member)).not.toBeNull();
  await restoreAs('1', 'hs', 5, 500, [], '4', '{"type":"tool/call/resp","id":"ok"}', 'e', member); // its owner pushes its answer again
  expect(await redis.zScore(LEASES, member)).toBeNull();
  expect(await redis.hExists(HASH, member)).toBeFalsy();
  expect(await redis.hGet(HASH, 'k')).toBe('0');
  expect(await framesOf()).toEqual([['1-4', '{"type":"tool/call/resp","id":"ok"}', member]]);
});

it('a session put back by two instances ends with the binding and handshake the better informed one knew, in either order', async () => {
  const restore = (h: string, hs: string, floor: number) =>
    RESTORE_SESSION.run(
      redis as never,
      [HASH, OUTBOX, 't:transport:all', 't:transport:owner:q', LEASES],
      [Date.now(), 60_000, '=alice', 'bearer', 'q', '127.0.0.1', 1, h, hs, 'open', floor, '', 0, 60_000, 0],
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
        0,
        1,
        2,
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
