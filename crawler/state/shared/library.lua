#!lua name=crawler
--[[
The shared crawl's schedule, frontier and seen set, decided inside the server (Valkey or Redis
7+), where one clock rules: every time below is the server's TIME in microseconds, and workers
send only durations. crawler/state/shared/library.py loads it and calls it; the README of that
package names the keys. Every function takes the crawl's key prefix first (several crawls may
share a database).

The rules it keeps:
- A host is claimable when its score in `due` is at most TIME and no worker holds it. A claim
  holds the host for `lease` (its score moves to TIME + lease): no other worker starts a request
  to it meanwhile. Only the holder's release, or the reaper once the holder is dead, lets it go.
- A release sets the host's next start to TIME + the delay the holder sends, a duration counted
  by the holder from its host's answer: so no two requests to a host start closer than that,
  whichever workers sent them and whatever their clocks say.
- A URL popped by a claim is leased to the worker until `done` (its page stored) or until it is
  given back; a dead worker's leases go back to the head of their hosts' queues, and the hosts it
  held wait a full interval from the reaping.
- A URL enters a queue at most once per crawl: the seen set holds 64-bit digests, in buckets
  small enough to stay intsets (about 9 bytes a URL).
Only commands that Redis 7.0 and Valkey share are used.
]]

local FORMAT = '1'
-- This code's version, written in by crawler/state/shared/library.py as it loads it (the format
-- and a digest of the code): workers running other code are refused.
local LIBRARY = 'unversioned'

local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

local function num(value)
  -- Scores and times as exact decimal strings: Lua's tostring would write 1.7e+15.
  return string.format('%.0f', value)
end

local function worker_alive(p, wid)
  return redis.call('EXISTS', p .. 'hb:' .. wid) == 1
end

-- crawler_open(prefix, format, buckets, run_id): the crawl's run record, made if new, with the
-- server's run_id (crawler_recover tells a restart by it). Returns {format, buckets}; an error
-- when the record was written by another format.
local function open(keys, args)
  local p, format, buckets, run_id = args[1], args[2], args[3], args[4]
  if format ~= FORMAT then
    return redis.error_reply('FORMAT this server\'s crawler library speaks format ' .. FORMAT ..
      ', the worker format ' .. format)
  end
  local run = p .. 'run'
  local found = redis.call('HGET', run, 'format')
  if found and found ~= FORMAT then
    return redis.error_reply('FORMAT the crawl state was written in format ' .. found ..
      ', this worker speaks format ' .. FORMAT)
  end
  if not found then
    redis.call('HSET', run, 'format', FORMAT, 'buckets', buckets, 'created', num(now_us()),
      'run_id', run_id)
  end
  return {FORMAT, redis.call('HGET', run, 'buckets')}
end

-- crawler_heartbeat(prefix, wid, ttl_ms, info): the worker is alive for ttl_ms more. Returns
-- the server's TIME in microseconds.
local function heartbeat(keys, args)
  local p, wid, ttl, info = args[1], args[2], args[3], args[4]
  redis.call('SET', p .. 'hb:' .. wid, info, 'PX', ttl)
  redis.call('HSET', p .. 'workers', wid, info)
  return num(now_us())
end

-- crawler_offer(prefix, bucket1, digest1, origin1, item1, ...): queue each URL never met
-- before at the back of its host's queue; an idle host becomes due at its next allowed start.
-- Returns a string of '1' (new) and '0' (seen before), one per URL.
local function offer(keys, args)
  local p = args[1]
  local now = now_us()
  local answers = {}
  local queued = 0
  for i = 2, #args, 4 do
    local bucket, digest, origin, item = args[i], args[i + 1], args[i + 2], args[i + 3]
    if redis.call('SADD', p .. 'seen:' .. bucket, digest) == 1 then
      redis.call('RPUSH', p .. 'q:' .. origin, item)
      queued = queued + 1
      local not_before = tonumber(redis.call('HGET', p .. 'h:' .. origin, 'not_before') or '0')
      -- NX: a host already due, or held (its score is its lease's end), keeps its score.
      redis.call('ZADD', p .. 'due', 'NX', num(math.max(now, not_before)), origin)
      answers[#answers + 1] = '1'
    else
      answers[#answers + 1] = '0'
    end
  end
  if queued > 0 then
    redis.call('INCRBY', p .. 'pending', queued)
  end
  return table.concat(answers)
end

-- crawler_claim(prefix, wid, lease_us, most, max_pages, max_pages_per_host, ahead_us, per_host):
-- hold up to `most` hosts due within `ahead_us` from now, and lease the next `per_host` URLs of
-- each. Returns {now, next_due, seeds, pending, scheduled, origin1, items1, timing1, robots_at1,
-- wait1, ...} (items: an array of queue items, in queue order):
-- next_due is the earliest score left in `due` ('' when none), seeds how many seeds the crawl
-- has (a worker that knows fewer reads them: they set the scope), pending and scheduled the
-- crawl's URLs queued and hosts scheduled after it, timing the host's opaque timing record (''
-- when new), robots_at the version of its robots.txt entry ('' when none is stored;
-- crawler_robots gives it), wait the microseconds from now until the host's next allowed start
-- (0 when due): the holder counts that duration from when it hears the answer, so it never
-- starts early, whatever its clock says. Claiming ahead lets a worker start a host on time by
-- its own timer instead of polling for it.
local function claim(keys, args)
  local p, wid = args[1], args[2]
  local lease, most = tonumber(args[3]), tonumber(args[4])
  local max_pages, max_per_host = tonumber(args[5]), tonumber(args[6])
  local ahead = tonumber(args[7] or '0')
  local per_host = tonumber(args[8] or '1')
  if not worker_alive(p, wid) then
    return redis.error_reply('NOWORKER worker ' .. wid .. ' has no heartbeat: it was reaped')
  end
  local now = now_us()
  local due = p .. 'due'
  local out = {num(now), '', redis.call('SCARD', p .. 'seeds'), 0, 0}
  -- A fair share of the scheduled hosts (and a little over, so a worker that leaves is made
  -- up for): the first worker to start does not take them all and leave the others idle.
  local workers = math.max(1, redis.call('HLEN', p .. 'workers'))
  -- ceil(scheduled * 1.25 / workers), in integers
  local share = math.floor((redis.call('ZCARD', due) * 5 + workers * 4 - 1) / (workers * 4))
  most = math.min(most, share - redis.call('SCARD', p .. 'claims:' .. wid))
  local hosts = {}
  if most > 0 then
    -- Others' hosts are passed over (below): look further than `most`.
    hosts = redis.call('ZRANGE', due, '-inf', num(now + ahead), 'BYSCORE', 'LIMIT', 0,
      most * workers, 'WITHSCORES')
  end
  local started = tonumber(redis.call('GET', p .. 'pages_started') or '0')
  local taken = 0
  for i = 1, #hosts, 2 do
    local origin = hosts[i]
    local h = p .. 'h:' .. origin
    local score = tonumber(hosts[i + 1])
    local holder, last = unpack(redis.call('HMGET', h, 'holder', 'last'))
    if taken >= most then
      break
    elseif holder then
      if score <= now then
        -- Held past its lease: its holder is slow or dead; the reaper decides, not us.
        redis.call('ZADD', due, num(now + 1000000), origin)
      end
    elseif last and last ~= wid and score > now then
      -- Not due yet: claiming it ahead is for the worker that last held it, which knows it
      -- (its robots.txt parsed, its connection open). Once due, anyone may.
    elseif max_pages > 0 and started >= max_pages then
      break
    elseif max_per_host > 0 and tonumber(redis.call('HGET', h, 'pages') or '0') >= max_per_host then
      -- Its URLs stay queued, for a run with a greater limit.
      redis.call('ZREM', due, origin)
    else
      -- Up to per_host URLs, for as many requests in flight at once: only the holder sends
      -- any, so per_host_concurrency holds for the crawl.
      local count = per_host
      if max_pages > 0 then
        count = math.min(count, max_pages - started)
      end
      if max_per_host > 0 then
        count = math.min(count, max_per_host - tonumber(redis.call('HGET', h, 'pages') or '0'))
      end
      local items = redis.call('LPOP', p .. 'q:' .. origin, count)
      if not items then
        redis.call('ZREM', due, origin)
      else
        local not_before = tonumber(redis.call('HGET', h, 'not_before') or '0')
        started = started + #items
        taken = taken + 1
        redis.call('HSET', h, 'holder', wid, 'claimed', num(now))
        redis.call('HINCRBY', h, 'pages', #items)
        redis.call('ZADD', due, num(now + lease), origin)
        redis.call('SADD', p .. 'claims:' .. wid, origin)
        for _, item in ipairs(items) do
          redis.call('HSET', p .. 'leases:' .. wid, item, origin)
        end
        redis.call('DECRBY', p .. 'pending', #items)
        redis.call('INCRBY', p .. 'leased', #items)
        out[#out + 1] = origin
        out[#out + 1] = items
        out[#out + 1] = redis.call('HGET', h, 'timing') or ''
        out[#out + 1] = redis.call('HGET', h, 'robots_at') or ''
        out[#out + 1] = num(math.max(0, not_before - now))
      end
    end
  end
  redis.call('SET', p .. 'pages_started', started)
  local first = redis.call('ZRANGE', due, 0, 0, 'WITHSCORES')
  if first[2] then
    out[2] = first[2]
  end
  out[4] = tonumber(redis.call('GET', p .. 'pending') or '0')
  out[5] = redis.call('ZCARD', due)
  return out
end

-- crawler_release(prefix, wid, origin, delay_us, interval_us, timing, robots, robots_at,
-- unused, requeued...): the holder lets the host go; its next start is TIME + delay_us.
-- `interval_us` is the host's interval, which a reaping waits; `timing` the host's record for
-- the next claimer; `robots` its robots.txt entry as just fetched, version `robots_at` ('' when
-- unchanged). `unused` (newline-separated; '' for none) are the leases of claimed URLs that
-- were not fetched (the slot went to robots.txt, or the host cannot be asked now, or a URL is to
-- be tried again): they end. The `requeued` URLs (those, attempts counted, and any the worker
-- queued for the host meanwhile) go back to the head of the queue, in order. Returns 1, or 0
-- when the worker no longer held the host (reaped: it must not have started a request since).
local function release(keys, args)
  local p, wid, origin = args[1], args[2], args[3]
  local delay, interval, timing = tonumber(args[4]), args[5], args[6]
  local robots, robots_at, unused = args[7], args[8], args[9]
  local h = p .. 'h:' .. origin
  if redis.call('HGET', h, 'holder') ~= wid then
    return 0
  end
  local next_start = now_us() + delay
  redis.call('HSET', h, 'not_before', num(next_start), 'interval', interval, 'timing', timing)
  if robots ~= '' then
    redis.call('HSET', h, 'robots', robots, 'robots_at', robots_at)
  end
  redis.call('HDEL', h, 'holder', 'claimed')
  redis.call('HSET', h, 'last', wid)
  redis.call('SREM', p .. 'claims:' .. wid, origin)
  local queue = p .. 'q:' .. origin
  for item in string.gmatch(unused, '[^\n]+') do
    if redis.call('HDEL', p .. 'leases:' .. wid, item) == 1 then
      redis.call('HINCRBY', h, 'pages', -1)
      redis.call('DECR', p .. 'pages_started')
      redis.call('DECR', p .. 'leased')
    end
  end
  if #args > 9 then
    for i = #args, 10, -1 do
      redis.call('LPUSH', queue, args[i])
    end
    redis.call('INCRBY', p .. 'pending', #args - 9)
  end
  if redis.call('LLEN', queue) > 0 then
    redis.call('ZADD', p .. 'due', num(next_start), origin)
  else
    redis.call('ZREM', p .. 'due', origin)
  end
  return 1
end

-- crawler_hold(prefix, wid, origin1, interval_us1, timing1, robots1, robots_at1, ...): the
-- holder keeps each host (it will time its next start itself) and says what it learned
-- meanwhile: its interval, which a reaping waits; its timing record (its rules among them) and
-- its robots.txt entry ('' when unchanged), which the next holder reads instead of fetching it
-- again. A host no longer held by the worker is left alone. Returns how many were held.
local function hold(keys, args)
  local p, wid = args[1], args[2]
  local held = 0
  for i = 3, #args, 5 do
    local h = p .. 'h:' .. args[i]
    if redis.call('HGET', h, 'holder') == wid then
      held = held + 1
      redis.call('HSET', h, 'interval', args[i + 1], 'timing', args[i + 2])
      if args[i + 3] ~= '' then
        redis.call('HSET', h, 'robots', args[i + 3], 'robots_at', args[i + 4])
      end
    end
  end
  return held
end

-- crawler_robots(prefix, origin1, ...): each host's stored robots.txt entry ('' when none).
local function robots(keys, args)
  local out = {}
  for i = 2, #args do
    out[#out + 1] = redis.call('HGET', args[1] .. 'h:' .. args[i], 'robots') or ''
  end
  return out
end

-- crawler_done(prefix, wid, item1, ...): the leased URLs' work is over (pages stored). Returns
-- how many were leased to the worker.
local function done(keys, args)
  local p, wid = args[1], args[2]
  local ended = 0
  for i = 3, #args do
    ended = ended + redis.call('HDEL', p .. 'leases:' .. wid, args[i])
  end
  if ended > 0 then
    redis.call('DECRBY', p .. 'leased', ended)
  end
  return ended
end

-- A worker gone (dead, or leaving): the hosts it held wait their interval from now
-- (default_interval when unknown), its leased URLs go back to the head of their queues.
local function reap_worker(p, wid, now, default_interval)
  local due = p .. 'due'
  for _, origin in ipairs(redis.call('SMEMBERS', p .. 'claims:' .. wid)) do
    local h = p .. 'h:' .. origin
    if redis.call('HGET', h, 'holder') == wid then
      local interval = tonumber(redis.call('HGET', h, 'interval') or '') or default_interval
      local not_before = tonumber(redis.call('HGET', h, 'not_before') or '0')
      local next_start = math.max(not_before, now + interval)
      redis.call('HSET', h, 'not_before', num(next_start))
      redis.call('HDEL', h, 'holder', 'claimed')
      redis.call('ZADD', due, num(next_start), origin)
    end
  end
  local leases = redis.call('HGETALL', p .. 'leases:' .. wid)
  for i = 1, #leases, 2 do
    local item, origin = leases[i], leases[i + 1]
    local h = p .. 'h:' .. origin
    redis.call('LPUSH', p .. 'q:' .. origin, item)
    redis.call('HINCRBY', h, 'pages', -1)
    redis.call('DECR', p .. 'pages_started')
    local not_before = tonumber(redis.call('HGET', h, 'not_before') or '0')
    redis.call('ZADD', due, 'NX', num(math.max(now, not_before)), origin)
  end
  local count = #leases / 2
  if count > 0 then
    redis.call('DECRBY', p .. 'leased', count)
    redis.call('INCRBY', p .. 'pending', count)
  end
  redis.call('DEL', p .. 'claims:' .. wid, p .. 'leases:' .. wid, p .. 'hb:' .. wid)
  redis.call('HDEL', p .. 'workers', wid)
  return count
end

-- crawler_reap(prefix, default_interval_us): every registered worker without a heartbeat is
-- dead, and reaped. Returns how many workers were.
local function reap(keys, args)
  local p, default_interval = args[1], tonumber(args[2])
  local now = now_us()
  local reaped = 0
  for _, wid in ipairs(redis.call('HKEYS', p .. 'workers')) do
    if not worker_alive(p, wid) then
      reaped = reaped + 1
      reap_worker(p, wid, now, default_interval)
    end
  end
  return reaped
end

-- crawler_leave(prefix, wid, default_interval_us): the worker leaves the crawl, as a dead one
-- would be reaped (what it released is released; what it still holds waits an interval).
-- Returns how many of its URLs went back to their queues.
local function leave(keys, args)
  return reap_worker(args[1], args[2], now_us(), tonumber(args[3]))
end

-- crawler_recover(prefix, run_id, default_interval_us): the server restarted (its run_id is new)
-- and may have lost its last second of writes, claims among them: so every worker is reaped,
-- as if dead (they join again), and every host scheduled waits a full interval from now
-- (default_interval_us when its interval is unknown: a host that looks never asked may have
-- been, in the writes lost). Once per restart, whichever worker comes first. Returns 1 when it
-- recovered, 0 when another had.
local function recover(keys, args)
  local p, run_id, default_interval = args[1], args[2], tonumber(args[3])
  local run = p .. 'run'
  if redis.call('HGET', run, 'run_id') == run_id then
    return 0
  end
  redis.call('HSET', run, 'run_id', run_id)
  local now = now_us()
  for _, wid in ipairs(redis.call('HKEYS', p .. 'workers')) do
    reap_worker(p, wid, now, default_interval)
  end
  local due = p .. 'due'
  local hosts = redis.call('ZRANGE', due, 0, -1)
  for _, origin in ipairs(hosts) do
    -- Every host, even one the server thinks never asked: its first claim may be among the
    -- writes lost, and its first request made.
    local h = p .. 'h:' .. origin
    local interval = tonumber(redis.call('HGET', h, 'interval') or '') or default_interval
    local not_before = tonumber(redis.call('HGET', h, 'not_before') or '0')
    local next_start = math.max(not_before, now + interval)
    redis.call('HSET', h, 'not_before', num(next_start))
    redis.call('ZADD', due, num(next_start), origin)
  end
  return 1
end

-- crawler_status(prefix): {now, pending, leased, hosts scheduled, hosts due now, hosts held,
-- live workers, registered workers, next due ('' when none), pages started}.
local function status(keys, args)
  local p = args[1]
  local now = now_us()
  local held, live = 0, 0
  local workers = redis.call('HKEYS', p .. 'workers')
  for _, wid in ipairs(workers) do
    held = held + redis.call('SCARD', p .. 'claims:' .. wid)
    if worker_alive(p, wid) then
      live = live + 1
    end
  end
  local first = redis.call('ZRANGE', p .. 'due', 0, 0, 'WITHSCORES')
  return {
    num(now),
    tonumber(redis.call('GET', p .. 'pending') or '0'),
    tonumber(redis.call('GET', p .. 'leased') or '0'),
    redis.call('ZCARD', p .. 'due'),
    redis.call('ZCOUNT', p .. 'due', '-inf', num(now)),
    held,
    live,
    #workers,
    first[2] or '',
    tonumber(redis.call('GET', p .. 'pages_started') or '0'),
  }
end

-- Values the workers share, each written with a change number: `<name>` maps a key to the worker
-- that last wrote it, a newline, and its value; `<name>_at` scores each key with its change
-- number, counted in the run record's `<name>_seq`. The server's order decides: the last write
-- of a key wins, for every worker. A worker sends what it wrote and reads what changed since the
-- change number it read last (the cookie jar below; fresh.lua's lastmods heard).

-- args: prefix, wid, key1, value1, ...
local function shared_put(name, args)
  local p, wid = args[1], args[2]
  for i = 3, #args - 1, 2 do
    local seq = redis.call('HINCRBY', p .. 'run', name .. '_seq', 1)
    redis.call('HSET', p .. name, args[i], wid .. '\n' .. args[i + 1])
    redis.call('ZADD', p .. name .. '_at', seq, args[i])
  end
  return 1
end

-- args: prefix, seq. {the last change number, key1, value1, ...}: the keys changed after change
-- `seq`; a key whose value is gone is `missing` ('' for a cookie; nil: left out).
local function shared_since(name, args, missing)
  local p, since = args[1], tonumber(args[2])
  local last = tonumber(redis.call('HGET', p .. 'run', name .. '_seq') or '0')
  local out = {last}
  if last <= since then
    return out
  end
  for _, key in ipairs(redis.call('ZRANGE', p .. name .. '_at', '(' .. since, '+inf', 'BYSCORE')) do
    local value = redis.call('HGET', p .. name, key) or missing
    if value then
      out[#out + 1] = key
      out[#out + 1] = value
    end
  end
  return out
end

-- The crawl's cookie jar (fetch.cookies): `cookies` maps a cookie's key (its domain, path and
-- name, as JSON) to the worker that last wrote it and its row (crawler/http/cookies.py; ''
-- when it was deleted).

-- crawler_cookies_put(prefix, wid, key1, row1, ...): the cookies answers set ('' row: deleted).
local function cookies_put(keys, args)
  return shared_put('cookies', args)
end

-- crawler_cookies_since(prefix, seq): {the last change number, key1, value1, ...}: the keys
-- changed after change `seq`, with their writer and row.
local function cookies_since(keys, args)
  return shared_since('cookies', args, '')
end

redis.register_function('crawler_format', function() return LIBRARY end)
redis.register_function('crawler_open', open)
redis.register_function('crawler_heartbeat', heartbeat)
redis.register_function('crawler_offer', offer)
redis.register_function('crawler_claim', claim)
redis.register_function('crawler_release', release)
redis.register_function('crawler_hold', hold)
redis.register_function('crawler_done', done)
redis.register_function{function_name = 'crawler_robots', callback = robots, flags = {'no-writes'}}
redis.register_function('crawler_reap', reap)
redis.register_function('crawler_leave', leave)
redis.register_function('crawler_recover', recover)
redis.register_function{function_name = 'crawler_status', callback = status, flags = {'no-writes'}}
redis.register_function('crawler_cookies_put', cookies_put)
redis.register_function{
  function_name = 'crawler_cookies_since', callback = cookies_since, flags = {'no-writes'}
}
