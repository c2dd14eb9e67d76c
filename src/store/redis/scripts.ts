/**
 * Lua scripts run atomically in Redis, by EVALSHA (falling back to EVAL when
 * Redis has not seen the script, e.g. after a restart): what must be read and
 * written in one step, without read-modify-write races between instances.
 * Time is Redis's own clock (TIME), so instances with skewed clocks agree on
 * expiry and refill. The session and admission scripts live here; the
 * transport's and the call store's next to their stores.
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from './connection.js';

type CommandOptions = Parameters<RedisClient['sendCommand']>[1];

export class Script {
  private readonly sha: string;
  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /** `options`: the client's command options (e.g. `{ timeout: 0 }` where the caller keeps its own deadline). */
  async run<T = unknown>(client: RedisClient, keys: string[], args: (string | number)[], options?: CommandOptions): Promise<T> {
    const tail = [String(keys.length), ...keys, ...args.map(String)];
    try {
      return (await client.sendCommand(['EVALSHA', this.sha, ...tail], options)) as T;
    } catch (err) {
      if (!String((err as Error)?.message).startsWith('NOSCRIPT')) throw err;
      return (await client.sendCommand(['EVAL', this.source, ...tail], options)) as T;
    }
  }
}

/** `now`: Redis's clock in ms. */
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * Open a session. KEYS: live-sessions zset, owner's zset, session hash.
 * ARGV: prefix, id, ttl ms, max_sessions, max per owner, agent id, principal ("" = none), capabilities, owner.
 * Drops expired members, closes the owner's least recently used sessions down
 * to below its quota, refuses (0) when the gateway is full, else stores (1).
 */
export const OPEN_SESSION = new Script(`${NOW}
local ttl = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ttl)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - ttl)
local quota = tonumber(ARGV[5])
if quota > 0 then
  local n = redis.call('ZCARD', KEYS[2])
  while n >= quota do
    local victim = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
    redis.call('ZREM', KEYS[2], victim)
    redis.call('ZREM', KEYS[1], victim)
    redis.call('DEL', ARGV[1] .. 'session:' .. victim)
    n = n - 1
  end
end
local max = tonumber(ARGV[4])
if max > 0 and redis.call('ZCARD', KEYS[1]) >= max then return 0 end
redis.call('HSET', KEYS[3], 'a', ARGV[6], 'p', ARGV[7], 'c', ARGV[8], 'o', ARGV[9], 't', now)
redis.call('PEXPIRE', KEYS[3], ttl)
redis.call('ZADD', KEYS[1], now, ARGV[2])
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('ZADD', KEYS[2], now, ARGV[2])
redis.call('PEXPIRE', KEYS[2], ttl)
return 1
`);

/**
 * One call's admission, or a session lookup (rate 0, max_parallel 0). The
 * session's idle timer and last-use scores are refreshed at most once a second
 * (a tenth of the TTL when that is shorter): a busy session costs Redis three
 * commands less per call, and expires at most that much early.
 * KEYS: session hash (unused without a session), live-sessions zset, the
 * token's bucket, the session's running calls.
 * ARGV: prefix, session id ("" = none), principal ("" = none), check principal ("1"/"0"), ttl ms,
 * rate per s (0 = not limited), burst, max_parallel (0 = no count), lease ms, lease member, then the
 * session's slots given back since the last flush (removed first, so a call started right after another
 * ended finds its slot free).
 * Answers {status, agent, principal, capabilities, created ms, now ms, wait s}: status 0 = unknown session
 * (nothing taken), 1 = admitted, 2 = over the rate limit (wait s), 3 = session at max_parallel.
 */
export const ADMIT_CALL = new Script(`${NOW}
if #ARGV > 10 then redis.call('ZREM', KEYS[4], unpack(ARGV, 11)) end
local sid = ARGV[2]
local h = {false, false, false, false, false}
if sid ~= '' then
  h = redis.call('HMGET', KEYS[1], 'a', 'p', 'c', 'o', 't', 'l')
  if not h[4] then return {0} end
  if ARGV[4] == '1' and h[2] ~= ARGV[3] then return {0} end
  local ttl = tonumber(ARGV[5])
  if now - (tonumber(h[6]) or 0) >= math.min(1000, ttl / 10) then
    redis.call('HSET', KEYS[1], 'l', now)
    redis.call('PEXPIRE', KEYS[1], ttl)
    redis.call('ZADD', KEYS[2], now, sid)
    redis.call('PEXPIRE', KEYS[2], ttl)
    local owner = ARGV[1] .. 'sessions:owner:' .. h[4]
    redis.call('ZADD', owner, now, sid)
    redis.call('PEXPIRE', owner, ttl)
  end
end
local rate = tonumber(ARGV[6])
if rate > 0 then
  local burst = tonumber(ARGV[7])
  local b = redis.call('HMGET', KEYS[3], 'tk', 'at')
  local tokens = tonumber(b[1])
  if tokens == nil then tokens = burst
  else tokens = math.min(burst, tokens + math.max(0, now - tonumber(b[2])) / 1000 * rate) end
  local ok = tokens >= 1
  if ok then tokens = tokens - 1 end
  redis.call('HSET', KEYS[3], 'tk', tostring(tokens), 'at', now)
  redis.call('PEXPIRE', KEYS[3], math.ceil(burst / rate * 1000) + 1000)
  if not ok then return {2, h[1], h[2], h[3], h[5], now, tostring((1 - tokens) / rate)} end
end
local maxp = tonumber(ARGV[8])
if sid ~= '' and maxp > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
  if redis.call('ZCARD', KEYS[4]) >= maxp then return {3, h[1], h[2], h[3], h[5], now} end
  local lease = tonumber(ARGV[9])
  redis.call('ZADD', KEYS[4], now + lease, ARGV[10])
  redis.call('PEXPIRE', KEYS[4], lease)
end
return {1, h[1], h[2], h[3], h[5], now}
`);

/** Renew running-call leases. KEYS: a session's running calls. ARGV: lease ms, members... */
export const RENEW_LEASES = new Script(`${NOW}
local lease = tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], now + lease, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], lease)
return 1
`);

/** Close a session: 1, or 0 when it was gone already. KEYS: session hash, live-sessions zset. ARGV: prefix, id. */
export const CLOSE_SESSION = new Script(`
local o = redis.call('HGET', KEYS[1], 'o')
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[2])
if o then redis.call('ZREM', ARGV[1] .. 'sessions:owner:' .. o, ARGV[2]) return 1 end
return 0
`);
