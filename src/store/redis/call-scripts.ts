/**
 * The Lua scripts of the Redis call store. Each is one atomic step, so two
 * instances never both settle a call, and an owner that lost its lease cannot
 * write over the failure another instance recorded.
 *
 * Keys per call:  <prefix>call:<id> (hash: owner, req, tool, principal,
 * created, state, events, response) and <prefix>call:<id>:events (stream:
 * entry id "<seq>-1", field `e` = the event's JSON; the final entry "<events>-1"
 * has field `r` = the tool/call/resp JSON and `s` = the final state). Per gateway: <prefix>calls:leases
 * (sorted set: call id → lease expiry, Redis time in ms).
 */
import { TAKE_LAPSED } from './leases.js';
import { RedisScript } from './script.js';

const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/** KEYS: hash, leases. ARGV: id, lease ms, field, value, … */
export const REGISTER = new RedisScript(`${NOW}
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
return 1`);

/**
 * The owner's writes, one call per batch of events (and the final response).
 * KEYS: hash, stream, leases. ARGV: id, max events, retain s, final state ('' while running),
 * response JSON, events emitted after this batch, then seq, event JSON, seq, event JSON, …
 * Returns 0 when the call is no longer running in Redis (another instance failed it after its lease lapsed),
 * -1 when Redis has no such call (it lost its data: the owner re-creates it with RESTORE, then writes again).
 * Events already written (a retry after a reply was lost) are skipped, and a retried final write is answered 1.
 */
export const APPEND = new RedisScript(`
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return -1 end
if state ~= 'running' then
  -- The owner's own final write again (its reply was lost, or a deadline gave up on it): already done.
  if ARGV[4] ~= '' and state == ARGV[4] and redis.call('HGET', KEYS[1], 'response') == ARGV[5] then return 1 end
  return 0
end
local have = tonumber(redis.call('HGET', KEYS[1], 'events') or '0')
local added = 0
for i = 7, #ARGV, 2 do
  if tonumber(ARGV[i]) >= have then
    redis.call('XADD', KEYS[2], ARGV[i] .. '-1', 'e', ARGV[i + 1])
    added = added + 1
  end
end
if added > 0 then redis.call('XTRIM', KEYS[2], 'MAXLEN', ARGV[2]) end
local count = math.max(tonumber(ARGV[6]), have)
redis.call('HSET', KEYS[1], 'events', count)
if ARGV[4] ~= '' then
  redis.call('XADD', KEYS[2], count .. '-1', 'r', ARGV[5], 's', ARGV[4])
  redis.call('HSET', KEYS[1], 'state', ARGV[4], 'response', ARGV[5])
  redis.call('EXPIRE', KEYS[1], ARGV[3])
  redis.call('EXPIRE', KEYS[2], ARGV[3])
  redis.call('ZREM', KEYS[3], ARGV[1])
end
return 1`);

/**
 * Fail a call whose lease lapsed, exactly once. KEYS: hash, stream, leases. ARGV: id, response JSON, retain s.
 * Returns 1 when this run failed it.
 */
export const FAIL_LAPSED = new RedisScript(`${TAKE_LAPSED}
if not lapsed(KEYS[3], ARGV[1]) then return 0 end
if redis.call('HGET', KEYS[1], 'state') ~= 'running' then return 0 end
local n = redis.call('HGET', KEYS[1], 'events') or '0'
redis.call('XADD', KEYS[2], n .. '-1', 'r', ARGV[2], 's', 'failed')
redis.call('HSET', KEYS[1], 'state', 'failed', 'response', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return 1`);

/**
 * The owner re-creates a call Redis lost (restarted without persistence): its hash, the events the owner still
 * keeps (a reader gets a gap notice for the ones it no longer has), and its lease while it runs, or its final
 * response and retention once it has finished.
 * KEYS: hash, stream, leases. ARGV: lease member, lease ms, retain s, events emitted (the count written),
 * final state ('' while running), response JSON, number of hash fields, the fields (name, value, …), then seq,
 * event JSON, seq, event JSON, … (ascending).
 * Returns 1 when re-created; when Redis has the call: 2 if it is running there (its lease is put back), 0 if it is
 * not (another instance failed it).
 */
export const RESTORE = new RedisScript(`${NOW}
local state = redis.call('HGET', KEYS[1], 'state')
if state == 'running' then
  redis.call('ZADD', KEYS[3], now + tonumber(ARGV[2]), ARGV[1])
  return 2
end
if state then return 0 end
redis.call('DEL', KEYS[2])
local nf = tonumber(ARGV[7])
redis.call('HSET', KEYS[1], unpack(ARGV, 8, 7 + nf))
for i = 8 + nf, #ARGV, 2 do
  redis.call('XADD', KEYS[2], ARGV[i] .. '-1', 'e', ARGV[i + 1])
end
redis.call('HSET', KEYS[1], 'events', ARGV[4])
if ARGV[5] == '' then
  redis.call('HSET', KEYS[1], 'state', 'running')
  redis.call('ZADD', KEYS[3], now + tonumber(ARGV[2]), ARGV[1])
else
  redis.call('XADD', KEYS[2], ARGV[4] .. '-1', 'r', ARGV[6], 's', ARGV[5])
  redis.call('HSET', KEYS[1], 'state', ARGV[5], 'response', ARGV[6])
  redis.call('EXPIRE', KEYS[1], ARGV[3])
  redis.call('EXPIRE', KEYS[2], ARGV[3])
end
return 1`);
