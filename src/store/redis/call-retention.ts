/**
 * How many finished call resources Redis keeps: each principal's share
 * (`calls.max_retained_per_principal`, its own oldest dropped first) and the
 * backstop of all principals together (`calls.max_retained`, the oldest of
 * all dropped first), next to `calls.retain_s` (the keys' TTL). Run once for
 * each call when it is finished in Redis (by its owner, or by the sweeper
 * that failed it), so the shared copy is held to the same shares as each
 * instance's memory.
 *
 * Keys: <prefix>calls:finished (sorted set of all finished calls: id → when,
 * Redis time in µs) and <prefix>calls:finished:t:<principal> (one principal's;
 * `calls:finished:-` for anonymous callers). Both expire `retain_s` after
 * their last call finished, and entries older than that are pruned as they
 * are used, so neither outlives the calls it lists.
 */
import { RedisScript } from './script.js';

/**
 * KEYS: the principal's set, the set of all. ARGV: id, call key prefix ("<prefix>call:"), per-principal max,
 * max of all, retain ms, principal set prefix ("<prefix>calls:finished:"). Returns how many calls it dropped.
 */
const RETAIN = new RedisScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local cutoff = now - tonumber(ARGV[5]) * 1000
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZADD', KEYS[2], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', cutoff)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', cutoff)
local dropped = 0
local function forget(id)
  redis.call('DEL', ARGV[2] .. id, ARGV[2] .. id .. ':events')
  dropped = dropped + 1
end
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
if over > 0 then
  for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, over - 1)) do
    forget(id)
    redis.call('ZREM', KEYS[2], id)
  end
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, over - 1)
end
over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
if over > 0 then
  for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, over - 1)) do
    local p = redis.call('HGET', ARGV[2] .. id, 'principal')
    redis.call('ZREM', p and (ARGV[6] .. 't:' .. p) or (ARGV[6] .. '-'), id)
    forget(id)
  end
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, over - 1)
end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return dropped`);

export interface CallRetentionShares {
  /** calls.retain_s */
  retainS: number;
  /** calls.max_retained: finished calls of all principals together. */
  maxRetained: number;
  /** calls.max_retained_per_principal */
  maxRetainedPerPrincipal: number;
}

/** The arguments of one RETAIN run for the call `id` of `principal`; `key` is the connection's key maker. */
export function retainRun(
  key: (...parts: string[]) => string,
  shares: CallRetentionShares,
  id: string,
  principal: string | null,
) {
  const setPrefix = key('calls', 'finished', '');
  return {
    script: RETAIN,
    keys: [principal === null ? `${setPrefix}-` : `${setPrefix}t:${principal}`, key('calls', 'finished')],
    args: [
      id,
      key('call', ''),
      shares.maxRetainedPerPrincipal,
      shares.maxRetained,
      Math.ceil(shares.retainS * 1000),
      setPrefix,
    ],
  };
}
