/**
 * The A2E transport's session records in Redis, changed only by these
 * scripts. Per session:
 *   <prefix>transport:s:<id>  hash: who it belongs to and its handshake
 *       (p principal as "=name" or "", b bound by, q quota key, a address,
 *       c created ms, h handshook, hs handshake id, st state, v version,
 *       k calls running), its outbox bookkeeping (n next frame id, w last
 *       frame written to a stream, f first frame kept, by bytes kept, wb bytes
 *       of written frames kept), pb:<instance> the last batch of frames each
 *       instance pushed into it, s, the nonce of the stream holding it, rs
 *       (a session put back after Redis lost its data: until when, Redis ms,
 *       its instances push again what they had pushed before any new frame),
 *       rh (the highest frame id pushed again so), and
 *       one field per call running for it that holds a lease (leases.ts),
 *       named by the lease member "a2e:<session id>:<call id>": what the
 *       answer of a lost call needs (JSON: r request id, t tool, c created s),
 *       or "x" once another instance answered it so.
 *   <prefix>transport:o:<id>  stream: the outbox. Frame N is entry 1-N with
 *       field d (the message JSON), or e (the end marker of a closed session).
 * and two indexes: <prefix>transport:all (zset: id → when it expires) and
 * <prefix>transport:owner:<quota key> (zset: id → last activity).
 * The hash lives session_idle_s (until a handshake: what is left of
 * handshake_timeout_s), renewed on use and by the instance holding its
 * stream; the outbox a minute longer; a closed session a minute.
 */
import { TAKE_LAPSED } from './leases.js';
import { Script } from './scripts.js';

/** Bytes a frame counts for besides its JSON (the SSE "id:" and "data:" lines). */
export const FRAME_OVERHEAD = 16;

/** How long a closed session's records stay, so its stream can read up to the end marker, ms. */
export const CLOSED_KEEP_MS = 60_000;

/** A Last-Event-ID at or past this is not taken for frames the client saw (Lua prints larger numbers inexactly). */
const RENUMBER_BELOW = 1e12;

/** Latest frames read at most to find the answers a lease that is put back must not outlive (they came a moment ago). */
const ANSWER_SCAN = 2048;

/**
 * \`answered(o)\`: the lease members whose answers are among the outbox's latest frames. A lease put back (found
 * missing after Redis lost it, or with a session put back) for a call answered meanwhile would lapse into a second,
 * "instance lost" answer: PUSH removes the lease and the hash's field, so only the outbox shows the answer.
 */
const ANSWERED_FN = `
local function answered(o)
  local found = {}
  for _, e in ipairs(redis.call('XREVRANGE', o, '+', '-', 'COUNT', ${ANSWER_SCAN})) do
    if e[2][3] == 'e' then found[e[2][4]] = true end
  end
  return found
end
`;

/** `now`: Redis's clock in ms. */
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

const CLOSE_FN = `
local function close(h, o, all, ownerPrefix, sid, keep)
  local st = redis.call('HGET', h, 'st')
  if (not st) or st == 'closed' then return 0 end
  local n = tonumber(redis.call('HGET', h, 'n'))
  redis.call('HSET', h, 'st', 'closed', 'n', n + 1)
  redis.call('XADD', o, '1-' .. n, 'e', '1')
  redis.call('PEXPIRE', h, keep)
  redis.call('PEXPIRE', o, keep)
  redis.call('ZREM', all, sid)
  redis.call('ZREM', ownerPrefix .. redis.call('HGET', h, 'q'), sid)
  return 1
end
`;

const TTL_FN = `
local function ttl(h, now, idle, hsTimeout)
  if redis.call('HGET', h, 'h') == '1' then return idle end
  local left = tonumber(redis.call('HGET', h, 'c')) + hsTimeout - now
  if left < 1 then return 1 end
  return left
end
local function touch(h, o, all, ownerPrefix, sid, now, idle, hsTimeout)
  local t = ttl(h, now, idle, hsTimeout)
  redis.call('PEXPIRE', h, t)
  redis.call('PEXPIRE', o, t + ${CLOSED_KEEP_MS})
  redis.call('ZADD', all, 'XX', now + t, sid)
  redis.call('ZADD', ownerPrefix .. redis.call('HGET', h, 'q'), 'XX', now, sid)
end
`;

/**
 * KEYS: hash, all, owner zset. ARGV: now, handshake timeout ms, quota, max
 * sessions, p, b, q, a, hash prefix, outbox prefix, owner prefix, id, idle ms.
 * → {outcome, evicted id or ""}; outcome ok | quota_in_use | too_many_sessions.
 */
export const CREATE = new Script(`${CLOSE_FN}
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local own = redis.call('ZRANGE', KEYS[3], 0, -1, 'WITHSCORES')
local live, oldest, oldestAt = 0, nil, nil
for i = 1, #own, 2 do
  local sid = own[i]
  local h = ARGV[9] .. sid
  local st = redis.call('HGET', h, 'st')
  if (not st) or st == 'closed' then
    redis.call('ZREM', KEYS[3], sid)
  else
    live = live + 1
    local at = tonumber(own[i + 1])
    if st == 'open' and redis.call('HGET', h, 's') == '' and tonumber(redis.call('HGET', h, 'k')) <= 0 and (oldestAt == nil or at < oldestAt) then
      oldest, oldestAt = sid, at
    end
  end
end
local evicted = ''
if live >= tonumber(ARGV[3]) then
  if not oldest then return {'quota_in_use', ''} end
  close(ARGV[9] .. oldest, ARGV[10] .. oldest, KEYS[2], ARGV[11], oldest, ${CLOSED_KEEP_MS})
  evicted = oldest
end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return {'too_many_sessions', evicted} end
local t = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'p', ARGV[5], 'b', ARGV[6], 'q', ARGV[7], 'a', ARGV[8], 'c', now, 'h', 0, 'hs', '', 'st', 'open',
  'v', 0, 'k', 0, 'n', 0, 'w', -1, 'f', 0, 'by', 0, 'wb', 0, 's', '')
redis.call('PEXPIRE', KEYS[1], t)
redis.call('ZADD', KEYS[2], now + t, ARGV[12])
redis.call('ZADD', KEYS[3], now, ARGV[12])
redis.call('PEXPIRE', KEYS[3], tonumber(ARGV[13]) + t)
return {'ok', evicted}
`);

/**
 * KEYS: hash, outbox, all. ARGV: now, idle ms, handshake timeout ms, touch
 * (1: renew its life), owner prefix, id. → HGETALL of the session, or nil.
 */
export const USE = new Script(`${TTL_FN}
local f = redis.call('HGETALL', KEYS[1])
if #f == 0 then return nil end
if ARGV[4] == '1' and redis.call('HGET', KEYS[1], 'st') ~= 'closed' then
  touch(KEYS[1], KEYS[2], KEYS[3], ARGV[5], ARGV[6], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]))
end
return f
`);

/**
 * KEYS: hash, outbox, leases. ARGV: the pusher's field ("pb:<instance>") and
 * the batch's number (growing per instance; a batch already written, whose
 * reply was lost, is not written again), field count, then field/value pairs,
 * then per frame: the lease member it ends ("" none: the frame is no call's
 * final answer; "+<member> <info>": an event of that running call) and its
 * JSON. A call's answer ends its lease; it is dropped when another instance
 * answered the call already (its lease had lapsed). Entries name the call
 * they belong to (field `c`: "<member> <info>" on an event, `e`: the member
 * on an answer), so whoever streams the session knows which calls run
 * unanswered, and can put their leases back if Redis loses them.
 * → {frames not yet written, bytes kept, version, last frame id, id of the
 * batch's first frame, per frame "1" written or "0" dropped} (the last two
 * missing when the batch was written already), {-1} when the session is gone
 * or closed (the frames are dropped), or {-2} while a session put back after
 * Redis lost its data waits for what was pushed before to be pushed again
 * (REPLAY_FN: push again shortly).
 */
export const PUSH = new Script(`
local st = redis.call('HGET', KEYS[1], 'st')
if (not st) or st == 'closed' then
  for i = 4 + tonumber(ARGV[3]), #ARGV, 2 do
    if ARGV[i] ~= '' and string.sub(ARGV[i], 1, 1) ~= '+' then redis.call('ZREM', KEYS[3], ARGV[i]) end
  end
  return {-1}
end
local rs = redis.call('HGET', KEYS[1], 'rs')
if rs then
  local t = redis.call('TIME')
  if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) < tonumber(rs) then return {-2} end
end
local function state(n, by, first, kept)
  return {n - 1 - tonumber(redis.call('HGET', KEYS[1], 'w')), by, tonumber(redis.call('HGET', KEYS[1], 'v')), n - 1, first, kept}
end
if tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '-1') >= tonumber(ARGV[2]) then
  return state(tonumber(redis.call('HGET', KEYS[1], 'n')), tonumber(redis.call('HGET', KEYS[1], 'by')))
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local nf = tonumber(ARGV[3])
if nf > 0 then
  local set = {}
  for i = 4, 3 + nf do set[#set + 1] = ARGV[i] end
  redis.call('HSET', KEYS[1], unpack(set))
  redis.call('HINCRBY', KEYS[1], 'v', 1)
end
local n = tonumber(redis.call('HGET', KEYS[1], 'n'))
local first = n
local kept = {}
local by = tonumber(redis.call('HGET', KEYS[1], 'by'))
for i = 4 + nf, #ARGV, 2 do
  local member, keep = ARGV[i], true
  local tag = nil
  if string.sub(member, 1, 1) == '+' then
    tag = string.sub(member, 2)
    member = ''
  end
  if member ~= '' then
    redis.call('ZREM', KEYS[3], member)
    keep = redis.call('HGET', KEYS[1], member) ~= 'x'
    redis.call('HDEL', KEYS[1], member)
  end
  if keep then
    if tag then redis.call('XADD', KEYS[2], '1-' .. n, 'd', ARGV[i + 1], 'c', tag)
    elseif member ~= '' then redis.call('XADD', KEYS[2], '1-' .. n, 'd', ARGV[i + 1], 'e', member)
    else redis.call('XADD', KEYS[2], '1-' .. n, 'd', ARGV[i + 1]) end
    n = n + 1
    by = by + #ARGV[i + 1] + ${FRAME_OVERHEAD}
  end
  kept[#kept + 1] = keep and '1' or '0'
end
redis.call('HSET', KEYS[1], 'n', n, 'by', by)
redis.call('PEXPIRE', KEYS[2], redis.call('PTTL', KEYS[1]) + ${CLOSED_KEEP_MS})
return state(n, by, first, table.concat(kept))
`);

const ENTRY_BYTES_FN = `
local function entryBytes(e)
  if e[2][1] == 'd' then return #e[2][2] + ${FRAME_OVERHEAD} end
  return 0
end
`;

/**
 * The stream holding the session (nonce) wrote frames up to `upTo` (their
 * bytes): trim what resumption need not keep (resume_frames, half the bytes).
 * KEYS: hash, outbox. ARGV: nonce, upTo, bytes, resume frames, max written bytes.
 */
export const WRITTEN = new Script(`${ENTRY_BYTES_FN}
if redis.call('HGET', KEYS[1], 's') ~= ARGV[1] then return 0 end
local w = tonumber(redis.call('HGET', KEYS[1], 'w'))
local wb = tonumber(redis.call('HGET', KEYS[1], 'wb'))
local up = tonumber(ARGV[2])
if up > w then
  w = up
  wb = wb + tonumber(ARGV[3])
end
local f = tonumber(redis.call('HGET', KEYS[1], 'f'))
local by = tonumber(redis.call('HGET', KEYS[1], 'by'))
local keep, maxb = tonumber(ARGV[4]), tonumber(ARGV[5])
while f <= w and (w - f + 1 > keep or wb > maxb) do
  local e = redis.call('XRANGE', KEYS[2], '1-' .. f, '1-' .. f)
  if e[1] then
    local b = entryBytes(e[1])
    by = by - b
    wb = wb - b
    redis.call('XDEL', KEYS[2], '1-' .. f)
  end
  f = f + 1
end
redis.call('HSET', KEYS[1], 'w', w, 'wb', wb, 'f', f, 'by', by)
return 1
`);

/**
 * A stream attaches (nonce), having seen frames up to Last-Event-ID (or ""):
 * it is read from the frame after the returned one.
 * KEYS: hash, outbox, all. ARGV: nonce, last event id, now, idle ms,
 * handshake timeout ms, owner prefix, id. → last frame seen, or nil.
 */
export const ATTACH = new Script(`${TTL_FN}${ENTRY_BYTES_FN}
local st = redis.call('HGET', KEYS[1], 's')
if (not st) or redis.call('HGET', KEYS[1], 'st') == 'closed' then return nil end
redis.call('HSET', KEYS[1], 's', ARGV[1])
local w = tonumber(redis.call('HGET', KEYS[1], 'w'))
local seen = tonumber(ARGV[2])
local n = tonumber(redis.call('HGET', KEYS[1], 'n'))
if ARGV[2] ~= '' and seen >= n and seen < ${RENUMBER_BELOW} then
  -- The client saw frames past every id this record issued: Redis lost them and an instance put the session back
  -- knowing fewer. The frames not yet written to a stream move after the client's id, so it never takes them for
  -- frames it saw already; those written are behind the client, and so are those pushed again at their own ids
  -- (up to rh, REPLAY_FN: the client saw them, their ids are below its own).
  local from = math.max(w, tonumber(redis.call('HGET', KEYS[1], 'rh') or '-1')) + 1
  local moving = redis.call('XRANGE', KEYS[2], '1-' .. string.format('%d', from), '+')
  redis.call('DEL', KEYS[2])
  local id, by = seen + 1, 0
  for _, e in ipairs(moving) do
    redis.call('XADD', KEYS[2], '1-' .. string.format('%d', id), unpack(e[2]))
    by = by + entryBytes(e)
    id = id + 1
  end
  w = seen
  redis.call('HSET', KEYS[1], 'n', string.format('%d', id), 'w', string.format('%d', seen), 'f', string.format('%d', seen + 1), 'wb', 0, 'by', by)
elseif ARGV[2] ~= '' then
  local f = tonumber(redis.call('HGET', KEYS[1], 'f'))
  local last = math.max(f - 1, math.min(seen, n - 1))
  if last ~= w then
    local wb = 0
    if last >= f then
      for _, e in ipairs(redis.call('XRANGE', KEYS[2], '1-' .. f, '1-' .. last)) do wb = wb + entryBytes(e) end
    end
    w = last
    redis.call('HSET', KEYS[1], 'w', w, 'wb', wb)
  end
end
touch(KEYS[1], KEYS[2], KEYS[3], ARGV[6], ARGV[7], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]))
return w
`);

/** The stream (nonce) went away. KEYS: hash, outbox, all. ARGV: nonce, now, idle ms, handshake timeout ms, owner prefix, id. */
export const DETACH = new Script(`${TTL_FN}
if redis.call('HGET', KEYS[1], 's') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 's', '')
touch(KEYS[1], KEYS[2], KEYS[3], ARGV[5], ARGV[6], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]))
return 1
`);

/** Close: end marker, a minute to live, out of the indexes. KEYS: hash, outbox, all. ARGV: owner prefix, id. → 1 when closed now. */
export const CLOSE = new Script(`${CLOSE_FN}
return close(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ${CLOSED_KEEP_MS})
`);

/** Calls running on the session changed by ARGV[1]. KEYS: hash. */
export const CALLS = new Script(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if tonumber(ARGV[1]) < 0 and tonumber(redis.call('HGET', KEYS[1], 'k') or '0') <= 0 then return 0 end
return redis.call('HINCRBY', KEYS[1], 'k', ARGV[1])
`);

/**
 * A call started for the session ("1": it counts as running), its lease was found missing ("0"), or it takes its
 * first lease late ("2": counts; Redis was down when it started): its lease and what its lost answer needs.
 * KEYS: hash, leases, outbox. ARGV: member, answer JSON, lease ms, "1" | "0" | "2".
 * → 1 leased; 0 another instance answered it already (lapsed lease); 2 its own answer is in the outbox already
 * (pushed while the renewal that found the lease missing was on its way); -1 the session is gone or closed.
 */
export const LEASE_CALL = new Script(`${NOW}${ANSWERED_FN}
local st = redis.call('HGET', KEYS[1], 'st')
if (not st) or st == 'closed' then return -1 end
local f = redis.call('HGET', KEYS[1], ARGV[1])
if f == 'x' then return 0 end
if ARGV[4] ~= '1' and not f and answered(KEYS[3])[ARGV[1]] then return 2 end
if ARGV[4] ~= '0' and not f then redis.call('HINCRBY', KEYS[1], 'k', 1) end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[1])
return 1
`);

/**
 * A call whose instance was lost (its lease lapsed): its final answer goes into the session's outbox, once.
 * KEYS: leases, hash, outbox. ARGV: member, the answer's JSON. → 1 answered now.
 */
export const ANSWER_LOST = new Script(`${TAKE_LAPSED}
if not lapsed(KEYS[1], ARGV[1]) then return 0 end
local st = redis.call('HGET', KEYS[2], 'st')
if (not st) or st == 'closed' then return 0 end
local f = redis.call('HGET', KEYS[2], ARGV[1])
if (not f) or f == 'x' then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], 'x')
if tonumber(redis.call('HGET', KEYS[2], 'k') or '0') > 0 then redis.call('HINCRBY', KEYS[2], 'k', -1) end
local n = tonumber(redis.call('HGET', KEYS[2], 'n'))
redis.call('XADD', KEYS[3], '1-' .. n, 'd', ARGV[2], 'e', ARGV[1])
redis.call('HSET', KEYS[2], 'n', n + 1, 'by', tonumber(redis.call('HGET', KEYS[2], 'by')) + #ARGV[2] + ${FRAME_OVERHEAD})
redis.call('PEXPIRE', KEYS[3], redis.call('PTTL', KEYS[2]) + ${CLOSED_KEEP_MS})
return 1
`);

/**
 * `replay(hash, outbox, leases, now, from)`: frames an instance pushed before Redis lost its data, pushed again by
 * it with their own frame ids (ARGV from `from` on, per frame: id, JSON, then "" / "c" / "e" and the call it
 * names, as PUSH writes them), so a stream that had not read them still gets them, once, in order. While the
 * session put back waits for them (its `rs`), any frame not there goes in at its place (the outbox is rebuilt when
 * it is not the last); after, only frames past every id issued (older ones a stream may have gone past already).
 * A call's answer ends its lease as in PUSH (dropped when another instance answered the call as lost meanwhile).
 * Frame ids go on after the highest. → how many went in.
 */
const REPLAY_FN = `
local function replay(hash, outbox, leases, now, from)
  local settling = now < tonumber(redis.call('HGET', hash, 'rs') or '0')
  local n = tonumber(redis.call('HGET', hash, 'n'))
  local top = -1
  local last = redis.call('XREVRANGE', outbox, '+', '-', 'COUNT', 1)
  if last[1] then top = tonumber(string.sub(last[1][1], 3)) end
  local add, bytes = {}, 0
  for i = from, #ARGV, 4 do
    local id = tonumber(ARGV[i])
    local keep = settling or id >= n
    if keep and id <= top then keep = #redis.call('XRANGE', outbox, '1-' .. ARGV[i], '1-' .. ARGV[i]) == 0 end
    local kind, value = ARGV[i + 2], ARGV[i + 3]
    if keep and kind == 'e' then
      local f = redis.call('HGET', hash, value)
      keep = f ~= 'x'
      if keep and f then
        redis.call('HDEL', hash, value)
        if tonumber(redis.call('HGET', hash, 'k') or '0') > 0 then redis.call('HINCRBY', hash, 'k', -1) end
      end
      if keep then redis.call('ZREM', leases, value) end
    end
    if keep then
      local fields = {'d', ARGV[i + 1]}
      if kind ~= '' then fields[3], fields[4] = kind, value end
      add[#add + 1] = {id, fields}
      bytes = bytes + #ARGV[i + 1] + ${FRAME_OVERHEAD}
    end
  end
  if #add == 0 then return 0 end
  local byId = function(a, b) return a[1] < b[1] end
  table.sort(add, byId)
  if add[1][1] <= top then
    for _, e in ipairs(redis.call('XRANGE', outbox, '-', '+')) do add[#add + 1] = {tonumber(string.sub(e[1], 3)), e[2]} end
    table.sort(add, byId)
    redis.call('DEL', outbox)
  end
  for _, e in ipairs(add) do redis.call('XADD', outbox, '1-' .. string.format('%d', e[1]), unpack(e[2])) end
  local low, high = add[1][1], add[#add][1]
  local f, w = tonumber(redis.call('HGET', hash, 'f')), tonumber(redis.call('HGET', hash, 'w'))
  local rh = math.max(high, tonumber(redis.call('HGET', hash, 'rh') or '-1'))
  redis.call('HSET', hash, 'n', string.format('%d', math.max(n, high + 1)), 'rh', string.format('%d', rh), 'by', tonumber(redis.call('HGET', hash, 'by')) + bytes,
    'f', string.format('%d', math.min(f, low)), 'w', string.format('%d', math.min(w, low - 1)))
  return #add
end
`;

/**
 * Put back a session Redis lost (restarted without persistence), as an instance that serves it knows it: its
 * binding and handshake, frame ids going on after the last one this instance wrote or pushed (never reused, so
 * a client's Last-Event-ID stays valid), the stream this instance holds, the calls running here (count and
 * leases), and the frames this instance pushed lately (REPLAY_FN). The instance that re-creates it gives every
 * instance `settle` ms to push theirs again before any new frame goes in (PUSH waits); another one raises the
 * frame ids to its floor, fills in a binding or handshake left empty, and adds what it holds. A call whose answer
 * is in the outbox already (pushed since Redis came back, or pushed again here) gets no lease back.
 * KEYS: hash, outbox, all, owner zset, leases. ARGV: now, idle ms, p, b, q, a, c, h, hs, st, first frame id,
 * nonce of the stream held here (""), settle ms, lease ms, how many values follow for calls, then per call:
 * member, answer JSON; then the frames pushed lately (REPLAY_FN).
 * → 1 re-created, 0 it was there.
 */
export const RESTORE_SESSION = new Script(`${ANSWERED_FN}${REPLAY_FN}
local now, idle, floor = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[11])
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local created = 0
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[1], 'p', ARGV[3], 'b', ARGV[4], 'q', ARGV[5], 'a', ARGV[6], 'c', ARGV[7], 'h', ARGV[8], 'hs', ARGV[9],
    'st', ARGV[10], 'v', 0, 'k', 0, 'n', floor, 'w', floor - 1, 'f', floor, 'by', 0, 'wb', 0, 's', '',
    'rs', ms + tonumber(ARGV[13]))
  local sid = string.sub(KEYS[1], #KEYS[1] - 31)
  redis.call('ZADD', KEYS[3], now + idle, sid)
  redis.call('ZADD', KEYS[4], now, sid)
  redis.call('PEXPIRE', KEYS[4], idle)
  created = 1
else
  if tonumber(redis.call('HGET', KEYS[1], 'n')) < floor then redis.call('HSET', KEYS[1], 'n', floor) end
  -- What another instance put back may be older than what this one knows: a binding and a handshake only get set.
  if ARGV[3] ~= '' and redis.call('HGET', KEYS[1], 'p') == '' then redis.call('HSET', KEYS[1], 'p', ARGV[3], 'b', ARGV[4]) end
  if ARGV[8] == '1' then redis.call('HSET', KEYS[1], 'h', '1') end
  if ARGV[9] ~= '' and redis.call('HGET', KEYS[1], 'hs') == '' then redis.call('HSET', KEYS[1], 'hs', ARGV[9]) end
end
if ARGV[12] ~= '' and redis.call('HGET', KEYS[1], 's') == '' then redis.call('HSET', KEYS[1], 's', ARGV[12]) end
local callsEnd = 15 + tonumber(ARGV[15])
replay(KEYS[1], KEYS[2], KEYS[5], ms, callsEnd + 1)
local done = {}
if callsEnd > 15 then done = answered(KEYS[2]) end
for i = 16, callsEnd, 2 do
  local f = redis.call('HGET', KEYS[1], ARGV[i])
  if f ~= 'x' and (f or not done[ARGV[i]]) then
    if not f then redis.call('HINCRBY', KEYS[1], 'k', 1) end
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
    redis.call('ZADD', KEYS[5], ms + tonumber(ARGV[14]), ARGV[i])
  end
end
redis.call('PEXPIRE', KEYS[1], idle)
redis.call('PEXPIRE', KEYS[2], idle + ${CLOSED_KEEP_MS})
return created
`);

/**
 * A stream found frame ids skipped: → -1 when its session was never put back after Redis lost its data (frames a
 * late resume is too far behind for), else how many ms are left until its instances have pushed again what they
 * had pushed before (0: what is missing now stays missing). KEYS: hash.
 */
export const SETTLE_LEFT = new Script(`${NOW}
local rs = redis.call('HGET', KEYS[1], 'rs')
if not rs then return -1 end
return math.max(0, tonumber(rs) - now)
`);

/**
 * A call whose lease a watcher put back (RESTORE_SESSION, from the events it streamed) was answered after all
 * (its answer was pushed before the lease was put back): the lease goes, so it cannot lapse into a second answer.
 * KEYS: hash, leases. ARGV: member.
 */
export const FORGET_CALL = new Script(`
if redis.call('HGET', KEYS[1], ARGV[1]) ~= 'x' then redis.call('HDEL', KEYS[1], ARGV[1]) end
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
`);

/**
 * Put back the leases of calls running on other instances, as announced when they were accepted, after Redis
 * lost them with the session (which an instance serving it put back): a live owner renews its lease; a dead
 * one's lapses and the sweep answers the call as lost. A call answered since (its answer is in the outbox) or
 * put back already is left alone. KEYS: hash, outbox, leases. ARGV: lease ms, then per call: member, answer JSON.
 * → how many were put back; -1 when the session is not there (yet).
 */
export const PUT_BACK_CALLS = new Script(`${NOW}${ANSWERED_FN}
local st = redis.call('HGET', KEYS[1], 'st')
if (not st) or st == 'closed' then return -1 end
local done = answered(KEYS[2])
local put = 0
for i = 2, #ARGV, 2 do
  if not done[ARGV[i]] and not redis.call('HGET', KEYS[1], ARGV[i]) then
    redis.call('HINCRBY', KEYS[1], 'k', 1)
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
    redis.call('ZADD', KEYS[3], now + tonumber(ARGV[1]), ARGV[i])
    put = put + 1
  end
end
return put
`);
