"""`Requisites`: a page requisite's request (fetch.page_requisites). What a page needs to be shown
is queued at its own host by admission (`Admission.offer_requisites`), whatever the scope, and
fetched like any URL of that host: after its robots.txt, at its pace, counted in its figures.
Its answer is archived (crawler.output.warc, no page record, no metadata record) and never read
as a page: a stylesheet's imports and `url()`s, and a frame's own requisites, are requisites of
the same page; no link of theirs is followed. Failures and redirects are settled by
crawler.crawl.answers (a redirect's target is a requisite too)."""

from __future__ import annotations

import functools
from collections.abc import Callable

from crawler.config import FetchConfig
from crawler.crawl.admission import Admission
from crawler.crawl.answers import Answers
from crawler.crawl.checkpoint import Checkpointer
from crawler.crawl.hosts import Host, Slot
from crawler.crawl.turns import Turns
from crawler.frontier import QueuedUrl
from crawler.http.answer import Response, is_html
from crawler.page.requisites import css_requisites, html_requisites
from crawler.stats import CrawlStats

__all__ = ["REQUISITE_OFF_LOOP_BYTES", "Requisites", "needs_of"]

REQUISITE_OFF_LOOP_BYTES = 256 * 1024
"""A stylesheet or frame longer than this is read on the worker thread, as a page is."""


def needs_of(
    answer: Response, url: str, *, media: bool, limit: int
) -> Callable[[], tuple[str, ...]] | None:
    """How to read what the requisite `answer` (from `url`) needs in turn: a stylesheet's
    imports and `url()`s, a frame's requisites; None for anything else (an image, a script, a
    failure)."""
    if not 200 <= answer.status < 300 or not answer.body:
        return None
    if answer.content_type == "text/css":
        return functools.partial(
            css_requisites, answer.body, url, charset=answer.charset, limit=limit
        )
    if is_html(answer.content_type):
        return functools.partial(
            html_requisites, answer.body, url, charset=answer.charset, media=media, limit=limit
        )
    return None


class Requisites:
    """Page requisites fetched, archived, and what they need in turn queued."""

    def __init__(
        self,
        fetch: FetchConfig,
        *,
        admission: Admission,
        answers: Answers,
        checkpoints: Checkpointer,
        turns: Turns,
        stats: CrawlStats,
    ) -> None:
        self.enabled = fetch.page_requisites
        self._max_bytes = fetch.max_requisite_bytes
        self._media = fetch.requisite_media
        self._limit = fetch.max_requisites_per_page
        self._admission = admission
        self._answers = answers
        self._checkpoints = checkpoints
        self._turns = turns
        self._stats = stats

    async def task(self, host: Host, slot: Slot, item: QueuedUrl, started_at: float) -> None:
        """A requisite request's work: fetch `item` (archived on the way), queue what it needs
        in turn."""
        answers = self._answers
        answer = await answers.fetch(host, slot, item, started_at, max_bytes=self._max_bytes)
        if answer is None:
            return  # failed for good, asked again later, or redirected: answers settled it
        read = needs_of(answer, item.url, media=self._media, limit=self._limit)
        if read is None:
            await self._turns.take()
            needs: tuple[str, ...] = ()
        else:
            needs = await answers.read(read, len(answer.body), REQUISITE_OFF_LOOP_BYTES)
        self._stats.requisites["fetched"] += 1
        admission = self._admission
        admission.offer_requisites(needs, item.url)
        admission.requisite_settled()
        self._checkpoints.finished(item)

    def __repr__(self) -> str:
        fates = ", ".join(f"{count} {fate}" for fate, count in self._stats.requisites.items())
        return f"Requisites({fates or 'none yet'})"
