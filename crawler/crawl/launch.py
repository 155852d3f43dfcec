"""`HostLauncher`: what a due host starts next, within the crawl's page budgets; the scheduler's
`Launcher` (crawler.crawl.scheduler).

A host without a fresh robots.txt starts its robots.txt request (crawler.crawl.robots_requests);
one whose robots.txt allows nothing for now waits until its entry expires. Otherwise its queued
URLs are taken in order, each decided by crawler.crawl.decide's `next_request`: past the host's
page budget the URL goes back and the host's URLs stay queued; one robots.txt disallows (the rules
may be newer than when it was queued) is a skip; a sitemap, a page requisite or a page starts its
request, in the host's slot, as a task the scheduler watches (unless a sitemap read again in a
recrawl spares it).
"""

from __future__ import annotations

import logging

from crawler.crawl.admission import Admission
from crawler.crawl.answers import Answers
from crawler.crawl.checkpoint import Checkpointer
from crawler.crawl.clock import CrawlClock
from crawler.crawl.decide import OVER_BUDGET, PAGE_BUDGET, REQUISITE, SITEMAP, next_request
from crawler.crawl.hosts import Host, HostTable
from crawler.crawl.recrawl import RecrawlPlan
from crawler.crawl.requisites import Requisites
from crawler.crawl.robots_requests import RobotsRequests
from crawler.crawl.scheduler import Scheduler
from crawler.crawl.sitemaps import Sitemaps
from crawler.crawl.tallies import PageBudget, TrapTally
from crawler.frontier import Frontier, QueuedUrl
from crawler.output.records import Skip

__all__ = ["HostLauncher"]

log = logging.getLogger(__name__)


class HostLauncher:
    """A due host's next request."""

    def __init__(
        self,
        *,
        max_pages_per_host: int | None,
        token: str,
        robots: RobotsRequests,
        answers: Answers,
        sitemaps: Sitemaps,
        requisites: Requisites,
        recrawl: RecrawlPlan,
        admission: Admission,
        frontier: Frontier,
        hosts: HostTable,
        scheduler: Scheduler,
        checkpoints: Checkpointer,
        clock: CrawlClock,
        budget: PageBudget,
        traps: TrapTally,
    ) -> None:
        self._max_pages_per_host = max_pages_per_host
        self._token = token
        self._robots = robots
        self._cached = robots.cache.cached
        self._answers = answers
        self._sitemaps = sitemaps
        self._requisites = requisites
        self._recrawl = recrawl
        self._admission = admission
        self._frontier = frontier
        self._hosts = hosts
        self._scheduler = scheduler
        self._checkpoints = checkpoints
        self._clock = clock
        self._budget = budget
        self._traps = traps

    def resume(self) -> None:
        """Schedule every origin the state holds URLs of (left by an earlier run)."""
        for origin in self._frontier.origins():
            if origin not in self._hosts:
                self._scheduler.reschedule(self._hosts.get(origin), self._clock.epoch0)

    def at_page_limit(self) -> bool:
        budget = self._budget  # PageBudget.spent, inline: asked at every launch
        if budget.limit is None or budget.started < budget.limit:
            return False
        # With page requisites, the last pages' are fetched first: the pages in flight may
        # still name some, and those named wait (no page starts meanwhile: `launch`).
        return not self._requisites.enabled or (
            not self._admission.requisites_waiting and not self._scheduler.working
        )

    def launch(self, host: Host, now: float) -> None:
        """Start `host`'s next request: its robots.txt when none is fresh, else its next URL
        that robots.txt and the limits allow."""
        entry = self._cached(host.origin, now)
        if entry is None:
            self._robots.start(host, now)
            return
        if host.robots is None:
            # Known from an earlier run: its rules apply as if just fetched.
            host.robots = entry
            self._robots.obey(host, entry)
            if host.retired is not None:
                return
        host.robots = entry
        scheduler = self._scheduler
        if entry.blocks:
            scheduler.wait_until(host, max(entry.expires_at, now))
            return
        origin, frontier = host.origin, self._frontier
        limit, timing = self._max_pages_per_host, host.timing
        while (item := frontier.pop(origin)) is not None:
            kind = next_request(item, entry, timing.pages, limit, self._token)
            if isinstance(kind, Skip):  # disallowed by robots.txt (newer rules, say)
                self._admission.skip(item, kind, now)
                self._checkpoints.finished(item, skipped=kind.reason)
                continue
            if kind is OVER_BUDGET:
                frontier.push_front(origin, item)
                self._over_budget(host)
                return
            if kind is not REQUISITE and self._budget.spent():
                # Only the requisites of the pages started may still start (at_page_limit
                # waits for them), and a host's come before its other URLs: it has none.
                frontier.push_front(origin, item)
                return
            if kind is SITEMAP:
                slot = scheduler.start(host, now)
                scheduler.watch(host, slot, self._sitemaps.task(host, slot, item, now), item)
                break
            if kind is REQUISITE:
                slot = scheduler.start(host, now)
                scheduler.watch(host, slot, self._requisites.task(host, slot, item, now), item)
                break
            if item.earlier is not None and self._recrawl.spares(item):
                continue
            if not item.redirected_from and not item.attempts:
                # A page counts against the budgets when its first request starts (not its
                # retries, nor its redirect hops); restored on resume and recrawl.
                self._budget.started += 1
                timing.pages += 1
            slot = scheduler.start(host, now)
            scheduler.watch(host, slot, self._answers.page(host, slot, item, now), item)
            break
        scheduler.reschedule(host, now)

    def _over_budget(self, host: Host) -> None:
        limit = self._max_pages_per_host
        host.retired = f"over limits.max_pages_per_host ({limit})"
        host.over_budget = True
        self._traps.count(host.origin, PAGE_BUDGET)
        log.warning(
            "%s reached limits.max_pages_per_host (%d): its other URLs stay queued",
            host.origin,
            limit,
        )

    def internal_error(self, host: Host, item: QueuedUrl | None, error: Exception) -> None:
        self._answers.internal_error(host, item, error)

    def __repr__(self) -> str:
        return f"HostLauncher({self._budget!r})"
