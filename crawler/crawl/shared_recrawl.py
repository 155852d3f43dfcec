"""`SharedRecrawls`: one worker's side of a shared crawl's recrawl passes (`crawl --recrawl`,
`--keep-fresh` with `--state URL`).

What is due is decided as in one process (crawler.crawl.recrawl's `RecrawlPlan`, on the fetch log
and histories crawler.state.shared.fresh reads from the server); only three things differ:
- The pass is the crawl's: every worker decides what is due at the time the pass began, so each
  finds the same pages due, and a page another worker fetched again since is not due twice.
- Each worker queues all it finds due; the server queues each revisit once per fetch, whoever
  offers it first (fresh.lua), in its host's queue, claimed and paced as any URL. A worker killed
  mid-pass loses nothing: its leased revisits go back to their queues, as every lease does.
- The pass is over when the whole crawl has nothing left (crawler.crawl.shared's end); the next
  `--recrawl` begins another. A crawl kept fresh is one pass, never over.
"""

from __future__ import annotations

import logging

from crawler.crawl.recrawl import utc
from crawler.frontier import SeenSet
from crawler.state.shared.fresh import SharedFreshness
from crawler.state.shared.schedule import SharedSchedule

__all__ = ["SharedRecrawls"]

log = logging.getLogger(__name__)


class SharedRecrawls:
    """The recrawl pass this worker takes part in, and what it reads for it."""

    __slots__ = ("_began", "_fresh", "_keep_fresh", "_schedule", "_seen")

    def __init__(
        self, schedule: SharedSchedule, fresh: SharedFreshness, seen: SeenSet, keep_fresh: bool
    ) -> None:
        self._schedule = schedule
        self._fresh = fresh
        self._seen = seen
        self._keep_fresh = keep_fresh
        self._began: float | None = None

    async def begin(self) -> float:
        """Take part in the crawl's recrawl pass (begun now, or under way): when it began."""
        await self.refresh()
        began, new = await self._fresh.begin_pass(self._schedule.crawl)
        self._began = began
        if not new:
            log.info("going on with the shared crawl's recrawl pass begun %s", utc(began))
        return began

    async def refresh(self) -> None:
        """Read the crawl's fetch log and histories again, this worker's buffers sent first."""
        if self._schedule.buffered:
            await self._schedule.tick(0)
        await self._fresh.load(self._schedule.crawl)
        # Known before, as in one process: what a sitemap lists of them may spare a revisit
        # (crawler.crawl.sitemaps), and links to them are not offered in vain.
        for url in self._fresh.fetches.rows:
            self._seen.add(url)

    async def over(self) -> None:
        """The whole crawl has nothing left: the pass is over, unless it is kept fresh."""
        if self._began is not None and not self._keep_fresh:
            await self._fresh.pass_over(self._schedule.crawl)
            self._began = None

    def __repr__(self) -> str:
        began = "no pass" if self._began is None else f"the pass begun {utc(self._began)}"
        return f"SharedRecrawls({began})"
