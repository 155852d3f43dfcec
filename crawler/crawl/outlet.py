"""Where records, skips and archived answers leave the crawl: the one place each is counted,
handed to every sink (answers to the archive sinks), and noted for the checkpointer (a URL is
done only once its record, and every answer archived on its way, is stored)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from crawler.crawl.checkpoint import Checkpointer
from crawler.crawl.decide import found_by
from crawler.crawl.freshness import FreshnessLedger
from crawler.frontier import QueuedUrl
from crawler.http.answer import Response
from crawler.output.records import Change, PageRecord, Skip, Unskip, record_of
from crawler.output.sinks import ArchiveSink, PageSink
from crawler.output.warc import Exchange
from crawler.page.read import Page
from crawler.state.interface import FetchLog
from crawler.stats import CrawlStats, SkipReason
from crawler.usage.signals import UsageSignal

__all__ = ["Outlet", "record_for"]


class Outlet:
    """Page records go to the sinks and to the caller of `Crawler.crawl` (through `results`);
    skips go to the sinks. Each is counted in `stats` here and nowhere else."""

    __slots__ = (
        "_archives",
        "_checkpoints",
        "_fetches",
        "_freshness",
        "_sinks",
        "_stats",
        "archiving",
        "results",
    )

    def __init__(
        self,
        sinks: Sequence[PageSink],
        checkpoints: Checkpointer,
        stats: CrawlStats,
        fetches: FetchLog,
        freshness: FreshnessLedger | None = None,
    ) -> None:
        self._sinks = sinks
        self._archives: list[ArchiveSink] = []
        self.archiving = False
        """Whether answers are archived (output.warc): the crawl then hands each to `archive`.
        Known from `start()`."""
        self._checkpoints = checkpoints
        self._stats = stats
        self._fetches = fetches
        self._freshness = freshness
        self.results: asyncio.Queue[PageRecord | None] = asyncio.Queue()
        """Records as they are made; None once the run has ended."""

    def start(self) -> None:
        """The run begins: the sinks are all there (a crawler opens its own on entry)."""
        self._archives = [sink for sink in self._sinks if isinstance(sink, ArchiveSink)]
        self.archiving = bool(self._archives)

    def archive(self, exchange: Exchange) -> None:
        """An answer as it came, to the archive sinks."""
        for sink in self._archives:
            sink.exchange(exchange)
        self._checkpoints.archived()

    def page(self, record: PageRecord, item: QueuedUrl) -> None:
        """The record of `item`'s fetch; what it found is kept for a recrawl (crawler.state)."""
        self._stats.pages += 1
        self._fetches.add(item, found_by(record, item.earlier))
        if self._freshness is not None:
            self._freshness.fetched(item, record.change, record.fetched_at)
        for sink in self._sinks:
            sink.page(record)
        self._checkpoints.handed()
        self.results.put_nowait(record)

    def skip(self, skip: Skip) -> None:
        """A URL not fetched, kept with its reason and detail."""
        self._stats.skips[skip.reason] += 1
        for sink in self._sinks:
            sink.skip(skip)
        self._checkpoints.handed()

    def unskip(self, url: str, reason: SkipReason) -> None:
        """The skip of `url` for `reason` is withdrawn: the URL is queued after all."""
        skips = self._stats.skips
        skips[reason] -= 1
        if skips[reason] <= 0:
            del skips[reason]
        unskip = Unskip(url)
        for sink in self._sinks:
            sink.unskip(unskip)
        self._checkpoints.handed()

    def end(self) -> None:
        """The run is over: hand the sinks what they hold, and tell the caller."""
        try:
            for sink in self._sinks:
                sink.flush()
        finally:
            self.results.put_nowait(None)  # a failed flush (a full disk) must not hang the caller

    def __repr__(self) -> str:
        return f"Outlet({len(self._sinks)} sinks, {self.results.qsize()} records waiting)"


def record_for(
    item: QueuedUrl,
    fetched_at: float,
    answer: Response | None,
    *,
    status: int | None = None,
    error: str | None = None,
    page: Page | None = None,
    reached: bool = True,
    digest: str | None = None,
    change: Change = "new",
    usage: tuple[UsageSignal, ...] = (),
    usage_refusal: str | None = None,
    fields: dict[str, Any] | None = None,
    fields_error: str | None = None,
) -> PageRecord:
    """The record of `item`'s fetch. `reached=False`: the chain stopped before `item` was asked
    for (robots.txt disallowed the hop), so it ends at the hop before it."""
    if not reached:
        chain = item.redirected_from
        return record_of(
            url=chain[0],
            final_url=chain[-1],
            redirects=chain[:-1],
            depth=item.depth,
            fetched_at=fetched_at,
            status=status,
            error=error,
            lastmod=item.lastmod,
            change=change,
        )
    return record_of(
        url=item.first_url,
        final_url=item.url,
        redirects=item.redirected_from,
        depth=item.depth,
        fetched_at=fetched_at,
        status=status,
        error=error,
        answer=answer,
        page=page,
        digest=digest,
        lastmod=item.lastmod,
        change=change,
        usage=usage,
        usage_refusal=usage_refusal,
        fields=fields,
        fields_error=fields_error,
    )
