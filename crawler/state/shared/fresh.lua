--[[
Recrawls of a shared crawl (crawler/state/shared/fresh.py): what the last fetch of each URL
found, and the revisits it makes due, exactly once across the workers. Loaded after library.lua,
in the same library (its helpers are in scope).

The rules it keeps:
- `fetched` maps a URL (a page record's first URL) to the version of its last fetch (that
  fetch's time, as the worker wrote it), a newline, and the URL's queue item as a recrawl queues
  it (what that fetch found in its `earlier`): written at each tick by the worker that fetched.
- A revisit enters its host's queue, the seen set notwithstanding, only against the fetch it was
  decided on (the version the worker read is still the URL's last) and only once per fetch:
  `revisits` holds the version it was queued against until its lease ends (its page stored, or
  spared, or skipped: the worker sends the end). Every worker may decide the same pass from what
  it read; whichever comes first queues each URL, the others' offers are refused.
- A recrawl pass is the crawl's, not a worker's: its time (`run`'s recrawl_at) is the one every
  worker decides what is due at, so that a page another worker fetched again since is not due
  twice. A worker joining goes on with the pass under way while anything of it is queued or
  leased or another worker is alive; else it begins one.
]]

-- crawler_revisit(prefix, url1, origin1, version1, item1, ...): queue each URL fetched before
-- whose last fetch is still `version` and which is not queued against it already. Returns a
-- string of '1' (queued) and '0', one per URL.
local function revisit(keys, args)
  local p = args[1]
  local now = now_us()
  local answers = {}
  local queued = 0
  for i = 2, #args, 4 do
    local url, origin, version, item = args[i], args[i + 1], args[i + 2], args[i + 3]
    local found = redis.call('HGET', p .. 'fetched', url)
    if found and string.sub(found, 1, #version + 1) == version .. '\n'
        and redis.call('HSETNX', p .. 'revisits', url, version) == 1 then
      redis.call('RPUSH', p .. 'q:' .. origin, item)
      queued = queued + 1
      local not_before = tonumber(redis.call('HGET', p .. 'h:' .. origin, 'not_before') or '0')
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

-- crawler_changes(prefix, url1, changed1, interval1, ...): what each revisit found (changed 1
-- or 0, `interval` seconds after the fetch before), added to the URL's change history in
-- `changes`: "visits changes observed observed_changed" (crawler.freshness.ChangeHistory).
local function changes(keys, args)
  local key = args[1] .. 'changes'
  for i = 2, #args, 3 do
    local url, changed, interval = args[i], tonumber(args[i + 1]), tonumber(args[i + 2])
    local visits, seen, observed, observed_changed = 0, 0, 0, 0
    local found = redis.call('HGET', key, url)
    if found then
      local a, b, c, d = string.match(found, '(%S+) (%S+) (%S+) (%S+)')
      visits, seen, observed, observed_changed = tonumber(a), tonumber(b), tonumber(c), tonumber(d)
    end
    visits, seen, observed = visits + 1, seen + changed, observed + interval
    if changed == 1 then
      observed_changed = observed_changed + interval
    end
    redis.call('HSET', key, url,
      string.format('%d %d %.17g %.17g', visits, seen, observed, observed_changed))
  end
  return 1
end

-- crawler_pass(prefix, wid): the recrawl pass this worker takes part in. Returns {its time
-- (the server's, microseconds), '1' when begun now, '0' when under way}. Begun, the crawl's
-- pages_started counts the pass's pages (limits.max_pages).
local function recrawl_pass(keys, args)
  local p, wid = args[1], args[2]
  local run = p .. 'run'
  local at, open = unpack(redis.call('HMGET', run, 'recrawl_at', 'recrawl_open'))
  if at and open == '1' then
    local busy = tonumber(redis.call('GET', p .. 'pending') or '0') > 0
      or tonumber(redis.call('GET', p .. 'leased') or '0') > 0
    if not busy then
      for _, other in ipairs(redis.call('HKEYS', p .. 'workers')) do
        if other ~= wid and worker_alive(p, other) then
          busy = true
          break
        end
      end
    end
    if busy then
      return {at, '0'}
    end
  end
  at = num(now_us())
  redis.call('HSET', run, 'recrawl_at', at, 'recrawl_open', '1')
  redis.call('SET', p .. 'pages_started', 0)
  redis.call('DEL', p .. 'lastmods', p .. 'lastmods_at')
  return {at, '1'}
end

-- crawler_pass_over(prefix, at): the pass begun at `at` is over (nothing of the crawl is left);
-- the next worker to recrawl begins another. Returns 1, or 0 when another pass had begun.
local function pass_over(keys, args)
  local run = args[1] .. 'run'
  if redis.call('HGET', run, 'recrawl_at') ~= args[2] then
    return 0
  end
  redis.call('HSET', run, 'recrawl_open', '0')
  return 1
end

-- The lastmods the sitemaps read again in the pass give URLs fetched before, heard by every
-- worker (whichever reads a page may be spared its request): `lastmods` maps a URL to its
-- lastmod, `lastmods_at` scores it with its change number (run's lastmods_seq), as the cookies.

-- crawler_heard(prefix, wid, url1, lastmod1, ...): `lastmods` keeps the worker that heard it, a
-- newline, and the lastmod (library.lua's shared_put).
local function heard(keys, args)
  return shared_put('lastmods', args)
end

-- crawler_heard_since(prefix, seq): {the last change number, url1, lastmod1, ...}: those heard
-- after change `seq` (a URL forgotten since is left out).
local function heard_since(keys, args)
  return shared_since('lastmods', args, nil)
end

redis.register_function('crawler_heard', heard)
redis.register_function{
  function_name = 'crawler_heard_since', callback = heard_since, flags = {'no-writes'}
}
redis.register_function('crawler_revisit', revisit)
redis.register_function('crawler_changes', changes)
redis.register_function('crawler_pass', recrawl_pass)
redis.register_function('crawler_pass_over', pass_over)
