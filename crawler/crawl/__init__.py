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
"""

from crawler.crawl.crawler import Crawler

__all__ = ["Crawler"]
