"""A crawl state shared by workers on several machines, in Valkey or Redis (`--state URL`).

    resp.py       a lean RESP client on the crawl's event loop
    library.lua   the schedule, frontier, seen set and reaper, as server-side functions
    library.py    loading the library, and its functions as typed calls
    schedule.py   one worker's side: buffers, the tick, the heartbeat, recovery
    cookies.py    the cookie jar the workers share, sent and read at each tick

The design, and why the schedule lives in the server: ../shared/design/distributed.md
(section 0); library.lua states the rules it keeps. Keys, under the crawl's prefix:

    run               HASH    format, seen-set bucket count, created, the server's run_id
    seeds             SET     every worker's seeds, and where seeds redirected (the scope)
    due               ZSET    origin -> next allowed start (server microseconds); a held host
                              sits at the end of its lease
    q:<origin>        LIST    the host's queued URLs (queue items, crawler.state.codec)
    h:<origin>        HASH    holder, claimed, last (its last holder, who may claim it
                              ahead), not_before, interval, pages, timing, robots (its
                              robots.txt entry) and robots_at (its version)
    seen:<bucket>     SET     64-bit URL digests (intsets)
    leases:<worker>   HASH    leased queue item -> origin
    claims:<worker>   SET     origins the worker holds
    hb:<worker>       STRING  the worker's heartbeat, expiring
    workers           HASH    registered workers
    pending, leased, pages_started   counters
    cookies           HASH    the crawl's cookie jar (fetch.cookies): a cookie's key -> the
                              worker that wrote it and its row (crawler.state.shared.cookies)
    cookies_at        ZSET    each cookie's key -> its change number (run's cookies_seq)
"""
