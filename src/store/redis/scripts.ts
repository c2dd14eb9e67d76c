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
  run<T = unknown>(
    client: RedisClient,
    keys: string[],
    args: (string | number)[],
    options?: CommandOptions,
  ): Promise<T> {
    return this.eval<T>(client, [String(keys.length), ...keys, ...args.map(String)], options);
  }

  /** `run` with the arguments after the script already laid out: numkeys, keys, then ARGV, as strings. */
  async eval<T = unknown>(client: RedisClient, tail: string[], options?: CommandOptions): Promise<T> {
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
 * ARGV: prefix, id, ttl ms, max_sessions, max per owner, agent id, principal ("" = none), capabilities, owner,
 * credential ("" = not known).
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
redis.call('HSET', KEYS[3], 'a', ARGV[6], 'p', ARGV[7], 'c', ARGV[8], 'o', ARGV[9], 't', now, 'k', ARGV[10])
redis.call('PEXPIRE', KEYS[3], ttl)
redis.call('ZADD', KEYS[1], now, ARGV[2])
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('ZADD', KEYS[2], now, ARGV[2])
redis.call('PEXPIRE', KEYS[2], ttl)
return 1
`);

/**
 * The admissions (and session lookups) asked for in one turn of the event loop, evaluated one after
 * another in the order given, each by the same rules as if it ran alone; with the running-call slots
 * given back since the last script, removed first (so a call started right after another ended finds
 * its slot free). Within the script the session hashes, token buckets and running-call counts it has
 * read are kept in Lua and written back as they change (the buckets, and the expiry of each running-call
 * set a call joined, once, at the end): Redis runs the script atomically, so nothing else sees or changes
 * them in between.
 *
 * A session's idle timer and last-use scores are refreshed at most once a second (a tenth of the TTL
 * when that is shorter): a busy session costs Redis three commands less per call, and expires at most
 * that much early. A session whose principal does not match is not refreshed.
 *
 * ARGV: prefix, ttl ms, burst, lease ms, number of sessions with slots given back, then per such
 * session: id, count, its lease members; then per admission 6 values: session id ("" = none),
 * principal ("" = none), check principal ("1"/"0"), rate per s (0 = not limited), max_parallel (0 = no
 * count), lease member.
 * Answers Redis's clock (ms), then per admission its status: 0 = unknown session (nothing taken),
 * 1 = admitted, 2 = over the rate limit (then the wait, s, as a string), 3 = session at max_parallel;
 * when the status is not 0 and the session was not answered earlier in this reply, its agent,
 * principal, capabilities and created ms follow.
 */
export const ADMIT_CALLS = new Script(`${NOW}
local prefix = ARGV[1]
local ttl = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local lease = tonumber(ARGV[4])
local i = 6
for _ = 1, tonumber(ARGV[5]) do
  local key = prefix .. 'session-calls:' .. ARGV[i]
  local last = i + 1 + tonumber(ARGV[i + 1])
  i = i + 2
  while i <= last do
    local j = math.min(last, i + 499) -- what Lua's unpack takes at once
    redis.call('ZREM', key, unpack(ARGV, i, j))
    i = j + 1
  end
end
local refresh = math.min(1000, ttl / 10)
local sessions, answered, buckets, running, grown = {}, {}, {}, {}, {}
local out = {now}
local n = #ARGV
while i <= n do
  local sid, principal, rate, maxp = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4])
  local check, member = ARGV[i + 2] == '1', ARGV[i + 5]
  i = i + 6
  local status, wait = 1, nil
  local h = false
  if sid ~= '' then
    h = sessions[sid]
    if h == nil then
      h = redis.call('HMGET', prefix .. 'session:' .. sid, 'a', 'p', 'c', 'o', 't', 'l')
      if not h[4] then h = false end
      sessions[sid] = h
    end
    if not h or (check and h[2] ~= principal) then
      status = 0
    elseif now - (tonumber(h[6]) or 0) >= refresh then
      h[6] = now
      local key = prefix .. 'session:' .. sid
      redis.call('HSET', key, 'l', now)
      redis.call('PEXPIRE', key, ttl)
      redis.call('ZADD', prefix .. 'sessions', now, sid)
      redis.call('PEXPIRE', prefix .. 'sessions', ttl)
      local owner = prefix .. 'sessions:owner:' .. h[4]
      redis.call('ZADD', owner, now, sid)
      redis.call('PEXPIRE', owner, ttl)
    end
  end
  if status == 1 and rate > 0 then
    local b = buckets[principal]
    if not b then
      local stored = redis.call('HMGET', prefix .. 'rate:' .. principal, 'tk', 'at')
      b = {tokens = tonumber(stored[1]), at = tonumber(stored[2])}
      buckets[principal] = b
    end
    if b.tokens == nil then b.tokens = burst
    else b.tokens = math.min(burst, b.tokens + math.max(0, now - b.at) / 1000 * rate) end
    b.at, b.rate = now, rate
    if b.tokens >= 1 then b.tokens = b.tokens - 1
    else status, wait = 2, tostring((1 - b.tokens) / rate) end
  end
  if status == 1 and sid ~= '' and maxp > 0 then
    local key = prefix .. 'session-calls:' .. sid
    local count = running[sid]
    if count == nil then
      redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
      count = redis.call('ZCARD', key)
    end
    if count >= maxp then status = 3
    else
      redis.call('ZADD', key, now + lease, member)
      count = count + 1
      grown[key] = true
    end
    running[sid] = count
  end
  out[#out + 1] = status
  if wait then out[#out + 1] = wait end
  if status ~= 0 and h and not answered[sid] then
    answered[sid] = true
    out[#out + 1] = h[1]
    out[#out + 1] = h[2]
    out[#out + 1] = h[3]
    out[#out + 1] = h[5]
  end
end
for key in pairs(grown) do redis.call('PEXPIRE', key, lease) end
for principal, b in pairs(buckets) do
  local key = prefix .. 'rate:' .. principal
  redis.call('HSET', key, 'tk', tostring(b.tokens), 'at', b.at)
  redis.call('PEXPIRE', key, math.ceil(burst / b.rate * 1000) + 1000)
end
return out
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
