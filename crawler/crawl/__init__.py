"""The crawl: the I/O shell that wires the pure core to the network, the state and the sinks.

crawler.py       Crawler: lifetime (enter, crawl, stop, exit) and the wiring of the parts
scheduler.py     the launch loop: hosts by next allowed start, one timer, tasks in flight
answers.py       a due host's next request, and acting on its answer; URLs coming in
decide.py        pure: admit a URL; an answer's fate; a retry; a redirect hop
outlet.py        where records and skips leave the crawl, counted once
clock.py         the crawl's clock; when a host answered
hosts.py         Host, HostTable, Slot; host reports
robots_cache.py  one robots.txt fetch per origin, cached
checkpoint.py    when the crawl's work becomes durable
scope.py         pure: which URLs belong to the crawl
turns.py         CPU-heavy steps take turns, one per loop iteration
page_reader.py   pages read in a process of the crawl's own, beside the loop
shared.py        a crawl shared by several workers through a Valkey/Redis server
"""

import typing

if typing.TYPE_CHECKING:
    from crawler.crawl.crawler import Crawler

__all__ = ["Crawler"]


def __getattr__(name: str) -> object:
    # Imported when first used: the page reader's process (crawler.crawl.page_reader) needs
    # none of the Crawler's parts.
    if name != "Crawler":
        raise AttributeError(f"module 'crawler.crawl' has no attribute {name!r}")
    from crawler.crawl.crawler import Crawler

    globals()["Crawler"] = Crawler
    return Crawler
