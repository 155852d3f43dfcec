"""The crawl: the I/O shell that wires the pure core to the network, the state and the sinks.

crawler.py          Crawler: lifetime (enter, crawl, stop, exit); the one choice of mode
parts.py            the crawl's parts built on its state; how a request goes through them
scheduler.py        the launch loop: hosts by next allowed start, one timer, tasks in flight
coordination.py     who else has a say in a host and in the crawl's end: nobody, or shared
launch.py           a due host's next request, within the page budgets
robots_requests.py  an origin's robots.txt request, and what its answer makes of the host
answers.py          a page, sitemap or requisite request's answer, from the fetch to the record
user_fields.py      the library's per-page `extract` callable, run off the loop
sitemaps.py         the sitemaps robots.txt names; a sitemap read and taken
requisites.py       a page requisite fetched, archived, and what it needs in turn queued
admission.py        each URL coming in: queued at its host, or skipped with its reason
recrawl.py          a recrawl pass: which fetched URLs are due again
decide/             pure: a URL in; an answer's fate; a host's next request; sitemaps
outlet.py           where records and skips leave the crawl, counted once
clock.py            the crawl's clock; when a host answered
hosts.py            Host, HostTable, Slot; host reports
tallies.py          pages started (limits.max_pages) and traps met, per origin
servers.py          politeness.per_server in the launch loop
robots_cache.py     one robots.txt fetch per origin, cached
checkpoint.py       when the crawl's work becomes durable
scope.py            pure: which URLs belong to the crawl
turns.py            CPU-heavy steps take turns, one per loop iteration
page_reader.py      pages read in a process of the crawl's own, beside the loop
reader_process.py   that process
shared.py           one worker of a crawl shared through a Valkey/Redis server
claimed.py          what such a worker holds: claimed URLs, leases, host records
"""

import typing

from crawler._faces import lazy_names as _lazy_names

if typing.TYPE_CHECKING:
    from crawler.crawl.crawler import Crawler

__all__ = ["Crawler"]

# Imported when first used: the page reader's process (crawler.crawl.reader_process) needs none
# of the Crawler's parts.
__getattr__, __dir__ = _lazy_names(__name__, {"Crawler": "crawler.crawl.crawler"})
