"""A crawl state shared by workers on several machines, in Valkey or Redis (`--state URL`).

    resp.py       a lean RESP client on the crawl's event loop
    library.lua   the schedule, frontier, seen set and reaper, as server-side functions
    fresh.lua     recrawls: revisits queued once per fetch, the crawl's pass (same library)
    library.py    loading the library, and its functions as typed calls
    schedule.py   one worker's side: buffers, the tick, the heartbeat, recovery
    cookies.py    the cookie jar the workers share, sent and read at each tick
    fresh.py      what a recrawl reads and learns (fetch log, histories, trust), at each tick

The design, and why the schedule lives in the server: ../shared/design/distributed.md
(section 0); library.lua states the rules it keeps. Keys, under the crawl's prefix:

    run               HASH    format, seen-set bucket count, created, the server's run_id;
                              cookies_seq; recrawl_at (the recrawl pass's time, server
                              microseconds), recrawl_open, lastmods_seq
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
    fetched           HASH    URL -> the version of its last fetch (its time), a newline, and
                              its queue item as a recrawl queues it (that fetch's validators,
                              time and digest in `earlier`)
    revisits          HASH    URL -> the version its revisit was queued against, until the
                              revisit's lease ends
    changes           HASH    URL -> "visits changes observed observed_changed" (its revisits)
    hints             HASH    URL -> [changefreq, priority] from its sitemap (JSON)
    trust             HASH    origin -> its lastmod trust [level, right, since, reason] (JSON)
    lastmods          HASH    URL -> the worker that heard it, a newline, and the lastmod the
                              sitemaps read again in this pass give it
    lastmods_at       ZSET    each such URL -> its change number (run's lastmods_seq)
"""
