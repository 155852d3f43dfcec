"""`FreshKeeper`: a crawl kept fresh (recrawl.keep_fresh, `crawl --keep-fresh`) never ends by
itself. It is one recrawl pass whose URLs are queued as they come due: it runs the launch loop
(crawler.crawl.scheduler) until nothing due is left to ask for, waits until the next URL comes
due by its revisit interval (crawler.crawl.recrawl's `next_due_at`), queues what is due then,
runs the loop again; and so on until stopped.

The rules it keeps:
- What was fetched is committed as a wait begins, and the last URLs are marked done as their
  records are stored (a checkpoint every state.commit_interval while some wait); then nothing is
  written until the next URL is due: a crawl kept fresh may wait for days, and meanwhile only its
  figures' clock moves, every few seconds, in memory.
- A stop (SIGINT, SIGTERM, a full disk) ends a wait at once, and the run ends as a stopped crawl
  does; the same command goes on. Nothing is in hand in a wait: a kill then loses nothing.
- Without recrawl.keep_fresh it runs the launch loop once, as any crawl.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from crawler.crawl.checkpoint import Checkpointer
from crawler.crawl.clock import CrawlClock
from crawler.crawl.recrawl import RecrawlPlan, utc
from crawler.crawl.scheduler import Launcher, Scheduler
from crawler.stats import CrawlStats

__all__ = ["FIGURES_REFRESH", "FreshKeeper"]

log = logging.getLogger(__name__)

FIGURES_REFRESH = 5.0
"""Seconds between updates of the figures (their clock) while a crawl kept fresh waits."""


class FreshKeeper:
    """The launch loop again each time URLs come due, waiting in between, until stopped."""

    __slots__ = ("_checkpoints", "_clock", "_keep", "_recrawl", "_scheduler", "_stats", "_stop")

    def __init__(
        self,
        keep: bool,
        *,
        scheduler: Scheduler,
        recrawl: RecrawlPlan,
        checkpoints: Checkpointer,
        clock: CrawlClock,
        stats: CrawlStats,
    ) -> None:
        self._keep = keep
        self._scheduler = scheduler
        self._recrawl = recrawl
        self._checkpoints = checkpoints
        self._clock = clock
        self._stats = stats
        self._stop = asyncio.Event()

    async def run(self, launcher: Launcher) -> None:
        scheduler, stats = self._scheduler, self._stats
        while True:
            await scheduler.run(launcher)
            if not self._keep or scheduler.stopping or stats.outcome != "finished":
                return  # stopped, or at limits.max_pages
            await self._recrawl.refresh()  # what the other workers of a shared crawl fetched
            at = self._recrawl.next_due_at()
            if at is None:
                log.warning("--keep-fresh: no page was fetched: nothing to keep fresh")
                return
            stats.outcome = "running"  # a crawl kept fresh goes on while it waits
            if not await self._wait_until(at):
                return
            await self._recrawl.refresh()
            self._recrawl.go_on(self._clock.now())

    async def _wait_until(self, at: float) -> bool:
        """Wait until `at` (epoch seconds): True then, False when stopped first."""
        clock, checkpoints, stats = self._clock, self._checkpoints, self._stats
        now = clock.now()
        log.info("--keep-fresh: the next URL is due %s (in %s)", utc(at), _span(at - now))
        stats.next_due_at = at
        # What was fetched is committed now; the last records' URLs are marked done as they
        # are stored, at the checkpoints, as in a pass. Then only the figures' clock moves.
        checkpoints.next_at = min(checkpoints.next_at, now)
        settling = True
        try:
            while not self._stop.is_set():
                now = clock.now()
                self._scheduler.update_stats(now)
                if settling:
                    checkpoints.tick(now, stats)
                    settling = checkpoints.unsettled > 0
                if now >= at:
                    return True
                refresh = checkpoints.next_at if settling else now + FIGURES_REFRESH
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), max(0.0, min(at, refresh) - now))
            return False
        finally:
            stats.next_due_at = None

    def stop(self) -> None:
        """Stop the launch loop gracefully (crawler.crawl.scheduler), or a wait at once."""
        self._scheduler.stop()
        self._stop.set()

    def __repr__(self) -> str:
        if not self._keep:
            return "FreshKeeper(one pass)"
        at = self._stats.next_due_at
        return f"FreshKeeper(waiting until {utc(at)})" if at is not None else "FreshKeeper(busy)"


def _span(seconds: float) -> str:
    whole = int(max(seconds, 0.0))
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"
