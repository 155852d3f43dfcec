"""`RecrawlPlan`: a recrawl pass (`crawl --recrawl`). Every URL due again is queued with what its
last fetch found (its request is then conditional): a sitemap after recrawl.after, a page after
the interval its estimated change rate earns within its host's budget (crawler.freshness; with
recrawl.schedule uniform, after recrawl.after too). A sitemap read again in the pass may spare
one, when it lists the URL with a lastmod no later than that fetch and its host's lastmod is
trusted (crawler.crawl.freshness). A pass is durable before its first request: a run stopped or
killed in it goes on with it."""

from __future__ import annotations

import logging
import time

from crawler.config import RecrawlConfig
from crawler.crawl.admission import Admission
from crawler.crawl.checkpoint import Checkpointer
from crawler.crawl.clock import CrawlClock
from crawler.crawl.decide import due_again, unchanged_by_lastmod
from crawler.crawl.freshness import FreshnessLedger
from crawler.crawl.revisits import revisit_intervals
from crawler.crawl.tallies import PageBudget
from crawler.frontier import QueuedUrl
from crawler.state.interface import CrawlState
from crawler.stats import CrawlStats

__all__ = ["RecrawlPlan", "utc"]

log = logging.getLogger(__name__)


class RecrawlPlan:
    """Which fetched URLs are due again, and which a sitemap spares."""

    __slots__ = (
        "_admission",
        "_budget",
        "_checkpoints",
        "_clock",
        "_config",
        "_fresh_lastmods",
        "_ledger",
        "_state",
        "_stats",
        "recrawling",
    )

    def __init__(
        self,
        config: RecrawlConfig,
        *,
        state: CrawlState,
        admission: Admission,
        checkpoints: Checkpointer,
        clock: CrawlClock,
        stats: CrawlStats,
        budget: PageBudget,
        ledger: FreshnessLedger,
    ) -> None:
        self._config = config
        self._ledger = ledger
        self._state = state
        self._admission = admission
        self._checkpoints = checkpoints
        self._clock = clock
        self._stats = stats
        self._budget = budget
        self.recrawling = False
        """This run makes or goes on with a recrawl pass."""
        self._fresh_lastmods: dict[str, float] = {}
        """In a recrawl: the lastmod of each URL fetched before, as the sitemaps read again in
        this run give it."""

    def begin(self, pending: bool) -> int:
        """With recrawl.enabled, a recrawl pass: URLs fetched longer ago than recrawl.after are
        queued again; unless the pass an earlier run began still has URLs queued (`pending`:
        then this run goes on with it). How many were queued again."""
        if not self._config.enabled:
            return 0
        state, stats = self._state, self._stats
        run = state.run
        began = run.recrawl_began()
        if pending and began is not None:
            at, pages_before = began
            self._ledger.pass_began = at
            # limits.max_pages counts the pass's pages.
            self._budget.started = stats.pages - pages_before
            self.recrawling = True
            log.info("going on with the recrawl begun %s", utc(at))
            return 0
        now = self._clock.epoch0
        after = self._config.after
        run.begin_recrawl(now, stats.pages)
        self._ledger.pass_began = now
        self._budget.started = 0
        stats.changes.clear()
        stats.lastmod_wrong.clear()
        queued = self.queue_due(now, after)
        stats.queued = len(state.frontier)
        # Durable before its first request, its figures too: a kill from here on goes on with
        # this pass.
        run.save_stats(stats)
        state.commit()
        if self._config.schedule == "uniform":
            log.info(
                "recrawl: %d of %d URLs fetched before were last fetched before %s "
                "(recrawl.after %g s): queued again",
                queued,
                len(state.fetches),
                utc(now - after),
                after,
            )
        else:
            log.info(
                "recrawl: %d of %d URLs fetched before are due by their revisit schedule "
                "(recrawl.schedule adaptive): queued again",
                queued,
                len(state.fetches),
            )
        return queued

    def queue_due(self, now: float, after: float) -> int:
        """A recrawl pass: queue again every URL last fetched `after` seconds or more before
        `now` (epoch seconds), with what that fetch found, sitemaps first; how many. URLs out of
        the scope the seeds give now are left."""
        self.recrawling = True
        admission = self._admission
        scope = admission.scope
        queued = 0
        if self._config.schedule == "uniform":
            intervals: dict[str, float] = {}
        else:
            intervals = revisit_intervals(self._config, self._state)
        for item in self._state.fetches.latest():
            interval = after if item.sitemap else intervals.get(item.url, after)
            if due_again(item, now - interval, scope):
                queued += admission.queue_again(item)
        return queued

    def listed(self, url: str, lastmod: float) -> None:
        """A sitemap read again in this pass lists `url`, known before, with `lastmod`."""
        self._fresh_lastmods[url] = lastmod

    def hinted(self, url: str, changefreq: str | None, priority: float | None) -> None:
        """A sitemap says how often `url` changes, or how much it matters: the prior of its
        change rate and its weight in its host's schedule (crawler.freshness). Kept by a
        durable state only: no other is recrawled."""
        if self._state.durable:
            self._state.freshness.listed(url, changefreq, priority)

    def spares(self, item: QueuedUrl) -> bool:
        """Whether a sitemap read again in this pass says `item` has not changed since its last
        fetch: then it is done without a request (and not counted as met again)."""
        lastmod = self._fresh_lastmods.pop(item.url, None)
        assert item.earlier is not None
        if lastmod is None or not unchanged_by_lastmod(lastmod, item.earlier):
            return False
        if not self._ledger.spares(item, lastmod):
            return False  # asked for conditionally: the answer is evidence for its lastmod
        self._stats.met -= 1
        self._stats.changes["not due by lastmod"] += 1
        self._checkpoints.finished(item)
        return True

    def __repr__(self) -> str:
        state = "recrawling" if self.recrawling else "not recrawling"
        return f"RecrawlPlan({state}, {len(self._fresh_lastmods)} lastmods heard)"


def utc(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))
