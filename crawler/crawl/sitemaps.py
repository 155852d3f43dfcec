"""`Sitemaps`: the sitemaps an origin's robots.txt names, queued once its rules are known, and a
sitemap request's work: fetched like a page (crawler.crawl.answers), read (big ones on the worker
thread), and what it lists offered to the crawl a few hundred entries a turn at the CPU: the
sitemaps of an index one level down, the URLs of others at its depth + 1, like a page's links."""

from __future__ import annotations

import functools
import logging

from crawler.config import SitemapsConfig
from crawler.crawl.admission import Admission
from crawler.crawl.answers import Answers
from crawler.crawl.checkpoint import Checkpointer
from crawler.crawl.decide import sitemap_record, sitemaps_named
from crawler.crawl.hosts import Host, Slot
from crawler.crawl.outlet import Outlet, record_for
from crawler.crawl.recrawl import RecrawlPlan
from crawler.crawl.turns import Turns
from crawler.frontier import QueuedUrl
from crawler.http.answer import Response
from crawler.output.records import Change
from crawler.page.sitemap import SitemapRead, read_sitemap
from crawler.robots.entry import RobotsEntry
from crawler.stats import CrawlStats
from crawler.urls import host_of, origin_of

__all__ = ["SITEMAP_OFFERS_PER_TURN", "SITEMAP_OFF_LOOP_BYTES", "Sitemaps"]

log = logging.getLogger(__name__)

SITEMAP_OFF_LOOP_BYTES = 64 * 1024
"""A sitemap longer than this is read on the worker thread: expat calls back into Python for
every element, about 15 ms per thousand entries (50,000 take most of a second)."""
SITEMAP_OFFERS_PER_TURN = 500
"""Entries of a sitemap offered to the crawl in one turn at the CPU (crawler.crawl.turns): a
sitemap's 50,000 offers at once would hold the loop, and every host's pace, for about as long
as reading it."""


class Sitemaps:
    """Sitemaps named, fetched, read and taken."""

    def __init__(
        self,
        config: SitemapsConfig,
        *,
        admission: Admission,
        recrawl: RecrawlPlan,
        answers: Answers,
        outlet: Outlet,
        checkpoints: Checkpointer,
        turns: Turns,
        stats: CrawlStats,
    ) -> None:
        self._config = config
        self._admission = admission
        self._recrawl = recrawl
        self._answers = answers
        self._outlet = outlet
        self._checkpoints = checkpoints
        self._turns = turns
        self._stats = stats

    def named(self, host: Host, entry: RobotsEntry) -> None:
        """Queue the sitemaps `host`'s robots.txt names (or /sitemap.xml, if asked to try it
        when none is named): each a request to its own host, at level 1 and depth 0."""
        admission = self._admission
        if not admission.scope.host_in_scope(host_of(host.origin + "/")):
            return  # a host asked only for page requisites: what it lists is not crawled
        named = sitemaps_named(
            entry, host.origin, self._config, admission.sitemap_files[host.origin]
        )
        if named is None:
            return
        if named.room is not None:
            log.warning(
                "robots.txt of %s names %d sitemaps; the first %d are read (sitemaps.max_files)",
                host.origin,
                named.named,
                named.room,
            )
        for value, error in named.unusable:
            log.info("robots.txt of %s: Sitemap %r is no URL (%s)", host.origin, value, error)
        for url in named.urls:
            admission.offer_sitemap(url, 1, host.origin, named.robots_url)

    async def task(self, host: Host, slot: Slot, item: QueuedUrl, started_at: float) -> None:
        """A sitemap request's work: fetch `item`, read it, take what it lists, hand its
        record."""
        config = self._config
        answers = self._answers
        answer = await answers.fetch(host, slot, item, started_at, max_bytes=config.max_bytes)
        if answer is None:
            return
        sitemap = None
        ok = 200 <= answer.status < 300
        digest, change = answers.found(item, answer)
        if change == "unchanged":
            await self._turns.take()  # read before: what it lists is queued or seen
        elif ok and answer.body:
            declared_by = item.declared_by
            read = functools.partial(
                read_sitemap,
                answer.body,
                item.url,
                max_urls=config.max_urls,
                max_bytes=config.max_bytes,
                also_allowed=lambda url: origin_of(url) == declared_by,
            )
            sitemap = await answers.read(read, len(answer.body), SITEMAP_OFF_LOOP_BYTES)
        else:
            await self._turns.take()
        await self._take(item, answer, started_at, sitemap, digest, change)

    async def _take(
        self,
        item: QueuedUrl,
        answer: Response,
        started_at: float,
        sitemap: SitemapRead | None,
        digest: str | None,
        change: Change,
    ) -> None:
        """Take what a sitemap lists, a few hundred entries a turn: the sitemaps of an index,
        one level down; the URLs of others, at its depth + 1, like a page's links. Then its
        record. Called in a turn."""
        stats = self._stats
        stats.fetched += 1
        stats.changes[change] += 1
        record = record_for(item, started_at, answer, digest=digest, change=change)
        if sitemap is None:
            self._outlet.page(record, item)
            self._checkpoints.finished(item)
            return
        stats.sitemaps += 1
        admission, recrawl = self._admission, self._recrawl
        declared_by = item.declared_by or origin_of(item.url)
        depth = item.depth + 1
        entries = sitemap.entries
        for first in range(0, len(entries), SITEMAP_OFFERS_PER_TURN):
            if first:
                await self._turns.take()
            for entry in entries[first : first + SITEMAP_OFFERS_PER_TURN]:
                if sitemap.kind == "index":
                    admission.offer_sitemap(entry.url, item.sitemap + 1, declared_by, item.url)
                else:
                    if entry.changefreq is not None or entry.priority is not None:
                        recrawl.hinted(entry.url, entry.changefreq, entry.priority)
                    if (
                        not admission.offer(entry.url, depth, entry.lastmod)
                        and recrawl.recrawling
                        and entry.lastmod is not None
                    ):
                        # Known before: its recrawl may be spared (`RecrawlPlan.spares`).
                        recrawl.listed(entry.url, entry.lastmod)
        not_listable = sitemap.refused
        for first in range(0, len(not_listable), SITEMAP_OFFERS_PER_TURN):
            await self._turns.take()
            for url, rule in not_listable[first : first + SITEMAP_OFFERS_PER_TURN]:
                admission.refuse(url, f"{rule}; listed in {item.url}")
        stats.sitemap_urls += len(sitemap.entries)
        record = sitemap_record(
            record, sitemap, truncated=answer.truncated, max_bytes=self._config.max_bytes
        )
        if record.cut is not None:
            log.warning("sitemap %s: %s; the rest is not read", item.url, record.cut)
        if record.error is not None:
            log.info("sitemap %s: %s", item.url, record.error)
        self._outlet.page(record, item)
        self._checkpoints.finished(item)

    def __repr__(self) -> str:
        return f"Sitemaps({sum(self._admission.sitemap_files.values())} files queued)"
