"""`RecrawlPlan`: a recrawl pass (`crawl --recrawl`). Every URL due again is queued with what its
last fetch found (its request is then conditional): a sitemap after recrawl.after, a page after
the interval its estimated change rate earns within its host's budget (crawler.freshness; with
recrawl.schedule uniform, after recrawl.after too). A sitemap read again in the pass may spare
one, when it lists the URL with a lastmod no later than that fetch and its host's lastmod is
trusted (crawler.crawl.freshness). A pass is durable before its first request: a run stopped or
killed in it goes on with it. A shared crawl's pass is the crawl's (crawler.crawl.shared_recrawl):
every worker decides what is due at the time it began."""

from __future__ import annotations

import logging
import time

from crawler.config import RecrawlConfig
from crawler.crawl.admission import Admission
from crawler.crawl.checkpoint import Checkpointer
from crawler.crawl.clock import CrawlClock
from crawler.crawl.coordination import HostCoordination
from crawler.crawl.decide import PASS_GAP, due_again, next_due, unchanged_by_lastmod
from crawler.crawl.freshness import FreshnessLedger
from crawler.crawl.revisits import revisit_intervals
from crawler.crawl.tallies import PageBudget
from crawler.frontier import QueuedUrl
from crawler.state.interface import CrawlState
from crawler.stats import CrawlStats
from crawler.urls import origin_of

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
        "_considered",
        "_coordination",
        "_ledger",
        "_state",
        "_stats",
        "_waiting",
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
        coordination: HostCoordination,
    ) -> None:
        self._config = config
        self._coordination = coordination
        self._ledger = ledger
        self._state = state
        self._admission = admission
        self._checkpoints = checkpoints
        self._clock = clock
        self._stats = stats
        self._budget = budget
        self.recrawling = False
        """This run makes or goes on with a recrawl pass."""
        self._considered: float | None = None
        """When this run last queued the URLs due (None: it has not): a URL due then and not
        fetched since was considered then."""
        self._waiting: dict[str, QueuedUrl] = {}
        """Pages not due in this pass whose host's sitemap lastmod is trusted: one it dates
        after the page's last fetch brings the page forward."""

    async def begin(self, pending: bool) -> int:
        """With recrawl.enabled, a recrawl pass: URLs due again are queued; unless the pass an
        earlier run began still has URLs queued (`pending`: then this run goes on with it). In a
        shared crawl, the crawl's pass: those due when it began. How many were queued again."""
        if not self._config.enabled:
            return 0
        shared = await self._coordination.recrawl_pass(self._clock.epoch0)
        if shared is not None:
            return self.begin_pass(shared)
        began = self._state.run.recrawl_began()
        if pending and began is not None:
            at, pages_before = began
            self._ledger.pass_began = at
            # limits.max_pages counts the pass's pages.
            self._budget.started = self._stats.pages - pages_before
            self.recrawling = True
            log.info("going on with the recrawl begun %s", utc(at))
            return 0
        return self.begin_pass(self._clock.epoch0)

    def begin_pass(self, now: float) -> int:
        """A new recrawl pass at `now`: every URL due is queued again; how many."""
        state, stats = self._state, self._stats
        run = state.run
        run.begin_recrawl(now, stats.pages)
        self._budget.started = 0
        stats.changes.clear()
        stats.lastmod_wrong.clear()
        state.freshness.forget_heard()  # what the last pass's sitemaps said is old news
        return self.go_on(now)

    def go_on(self, now: float) -> int:
        """The pass under way goes on at `now` (recrawl.keep_fresh, after a wait: a crawl kept
        fresh is one pass, its URLs queued as they come due): every URL due is queued again;
        how many."""
        state, stats = self._state, self._stats
        run = state.run
        self._considered = now
        self._ledger.pass_began = now  # a trusted host's sample is drawn afresh
        queued = self.queue_due(now, self._config.after)
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
                utc(now - self._config.after),
                self._config.after,
            )
        else:
            log.info(
                "recrawl: %d of %d URLs fetched before are due by their revisit schedule "
                "(recrawl.schedule adaptive): queued again",
                queued,
                len(state.fetches),
            )
        return queued

    async def refresh(self) -> None:
        """Read again what was fetched (in a shared crawl, the other workers' fetches too)."""
        await self._coordination.refresh_fetches()

    def _intervals(self) -> dict[str, float]:
        """Each page's revisit interval (none with recrawl.schedule uniform: recrawl.after)."""
        if self._config.schedule == "uniform":
            return {}
        return revisit_intervals(self._config, self._state)

    def queue_due(self, now: float, after: float) -> int:
        """A recrawl pass: queue again every URL last fetched `after` seconds or more before
        `now` (epoch seconds), with what that fetch found, sitemaps first; how many. URLs out of
        the scope the seeds give now are left. A page not due whose host's sitemap lastmod is
        trusted waits in memory: a sitemap read again in the pass may bring it forward."""
        self.recrawling = True
        admission = self._admission
        scope = admission.scope
        queued = 0
        intervals = self._intervals()
        self._waiting.clear()
        forward: dict[str, bool] = {}
        for item in self._state.fetches.latest():
            interval = after if item.sitemap else intervals.get(item.url, after)
            if due_again(item, now - interval, scope):
                queued += admission.queue_again(item)
            elif not item.sitemap and scope.reason_out(item.url) is None:
                origin = origin_of(item.url)
                if origin not in forward:
                    forward[origin] = self._ledger.brings_forward(origin)
                if forward[origin]:
                    self._waiting[item.url] = item
        return queued

    def next_due_at(self) -> float | None:
        """When the next URL fetched before comes due again (recrawl.keep_fresh): never sooner
        than PASS_GAP after the URLs due were last queued; None when nothing in scope was
        fetched."""
        began = self._state.run.recrawl_began()
        considered = self._considered or (began[0] if began is not None else None)
        intervals = self._intervals()
        after = self._config.after
        scope = self._admission.scope
        soonest: float | None = None
        for item in self._state.fetches.latest():
            assert item.earlier is not None
            out = (
                scope.reason_out_of_hosts(item.url) if item.sitemap else scope.reason_out(item.url)
            )
            if out is not None:
                continue
            interval = after if item.sitemap else intervals.get(item.url, after)
            due = next_due(item.earlier.fetched_at, interval, considered)
            soonest = due if soonest is None else min(soonest, due)
        if soonest is None or considered is None:
            return soonest
        return max(soonest, considered + PASS_GAP)

    def listed(self, url: str, lastmod: float) -> None:
        """A sitemap read again in this pass lists `url`, known before, with `lastmod`. A page
        not due whose host's lastmod is trusted, dated after its last fetch, is due now."""
        waiting = self._waiting.pop(url, None)
        if waiting is None:
            self._state.freshness.heard(url, lastmod)
            return
        assert waiting.earlier is not None
        if lastmod > waiting.earlier.fetched_at and self._admission.queue_again(waiting):
            self._ledger.brought_forward(url)
            self._stats.changes["due by lastmod"] += 1

    def hinted(self, url: str, changefreq: str | None, priority: float | None) -> None:
        """A sitemap says how often `url` changes, or how much it matters: the prior of its
        change rate and its weight in its host's schedule (crawler.freshness). Kept by a
        durable state only: no other is recrawled."""
        if self._state.durable:
            self._state.freshness.listed(url, changefreq, priority)

    def spares(self, item: QueuedUrl) -> bool:
        """Whether a sitemap read again in this pass says `item` has not changed since its last
        fetch: then it is done without a request (and not counted as met again)."""
        lastmod = self._state.freshness.lastmod_heard(item.url)
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
        return f"RecrawlPlan({state}, {len(self._waiting)} pages a lastmod may bring forward)"


def utc(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))
