"""`Answers`: a request for a page or a sitemap, and what its answer turns into. The answer is
fetched (conditionally, in a recrawl), archived, counted, and judged (crawler.crawl.decide): a
retry with backoff (429, 5xx, network), a redirect's next hop handed to admission, or the answer
to read. A page is read (on the loop in turns, in the page reader's process, or on the worker
thread when big), its requisites and links offered, and its record handed to the outlet. A page
requisite's answer goes the same way to the archive, but makes no record: its failure or redirect
is counted among the requisites (crawler.crawl.requisites reads the rest).

A bug of ours in a request's work is an internal error (`internal_error`): counted, its URL
recorded as such, and its host backed off as after a network error, never the end of the crawl.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from crawler.config import FetchConfig
from crawler.crawl.admission import Admission
from crawler.crawl.checkpoint import Checkpointer
from crawler.crawl.clock import CrawlClock
from crawler.crawl.decide import (
    AskAgain,
    Failed,
    GiveUp,
    Redirect,
    after_failure,
    after_refusal,
    change_of,
    conditional_headers,
    judge,
    page_usage,
)
from crawler.crawl.hosts import Host, Slot
from crawler.crawl.outlet import Outlet, record_for
from crawler.crawl.page_reader import PageReader, PageReaderGoneError, Read
from crawler.crawl.scheduler import Scheduler
from crawler.crawl.user_fields import UserExtract
from crawler.frontier import Frontier, QueuedUrl
from crawler.http.answer import FetchFailure, Response, is_html
from crawler.http.fetcher import Fetcher
from crawler.output.records import Change, body_digest
from crawler.output.warc import Exchange
from crawler.page.read import Page, PageRules, read_page
from crawler.politeness import Politeness
from crawler.stats import CrawlStats
from crawler.urls import InvalidUrlError, resolve_url
from crawler.usage.headers import header_signals
from crawler.usage.signals import UsageSignal, refusing_kinds

__all__ = ["OFF_LOOP_BYTES", "Answers"]

T = TypeVar("T")

log = logging.getLogger(__name__)

OFF_LOOP_BYTES = 256 * 1024
"""A page longer than this is read on the worker thread (crawler.crawl.turns): its parse may
take up to about half a second, however crawler.page.bounds cuts it (benchmarks/
bench_hostile_pages.py). Shorter pages cost at most a few tens of milliseconds and are read on the
loop, in turns: most pages are a few tens of KB, and the hop to a thread is not worth it there."""


class Answers:
    """A page or sitemap request's answer, from the fetch to the record."""

    def __init__(
        self,
        fetch: FetchConfig,
        *,
        token: str,
        purpose: str,
        page_rules: PageRules,
        reader: PageReader,
        fetcher: Fetcher,
        politeness: Politeness,
        frontier: Frontier,
        admission: Admission,
        scheduler: Scheduler,
        outlet: Outlet,
        checkpoints: Checkpointer,
        clock: CrawlClock,
        stats: CrawlStats,
        extract: UserExtract | None = None,
    ) -> None:
        """`extract`: the library's per-page callable (crawler.crawl.user_fields)."""
        self._extract = extract
        self._html_only = fetch.html_only
        self._max_retries = fetch.max_retries
        self._max_refusals = politeness.config.max_refusals
        self._token = token
        self._purpose = purpose
        self._page_rules = page_rules
        self._reader = reader
        self._fetcher = fetcher
        self._politeness = politeness
        self._frontier = frontier
        self._admission = admission
        self._scheduler = scheduler
        self._turns = scheduler.turns
        self._outlet = outlet
        self._checkpoints = checkpoints
        self._clock = clock
        self._stats = stats

    # --- the fetch -------------------------------------------------------------------------------

    async def page(self, host: Host, slot: Slot, item: QueuedUrl, started_at: float) -> None:
        """A page request's work: fetch `item`, read its answer, hand its record."""
        answer = await self.fetch(host, slot, item, started_at, html_only=self._html_only)
        if answer is None:
            return
        digest, change, page = await self._read_answer(item, answer)
        fields: tuple[dict[str, Any] | None, str | None] = (None, None)
        if self._extract is not None and page is not None and page.index:
            fields = await self._extract.run(item.url, answer)
            await self._turns.take()  # the record is made in a turn, as after a read
        self._record(host, item, answer, started_at, page, digest, change, fields)

    async def fetch(
        self,
        host: Host,
        slot: Slot,
        item: QueuedUrl,
        started_at: float,
        *,
        max_bytes: int | None = None,
        html_only: bool = False,
    ) -> Response | None:
        """Fetch `item` (conditionally, in a recrawl) and act on a failure (retry or give up) or
        a redirect (the next hop); the answer to read otherwise, its host's pace settled."""
        answer = await self._fetcher.get(
            item.url,
            max_bytes=max_bytes,
            html_only=html_only,
            headers=conditional_headers(item.earlier),
        )
        now = self._clock.now()
        answered_at = self._clock.answered_at(answer, now)
        verdict = judge(answer, now)
        if isinstance(answer, Response):
            self._politeness.on_response(host.timing, started_at, answered_at, now)
            if not isinstance(verdict, Failed):
                # Accepted: what it taught counts before the interval runs from it.
                self._politeness.on_success(host.timing, started_at, now)
        slot.release(answered_at)
        self._reader.answered(host.origin, now)
        if self._outlet.archiving and isinstance(answer, Response) and answer.raw is not None:
            self._archive(host, item, answer, started_at)
        if isinstance(answer, FetchFailure):
            self._stats.errors[answer.kind] += 1
        else:
            self._stats.statuses[answer.status] += 1
            self._stats.bytes += len(answer.body)
        if isinstance(verdict, Failed):
            self._failed(host, item, started_at, now, verdict)
            return None
        assert isinstance(answer, Response)
        # The host's pace is settled (no backoff), so it may go on while this answer waits its
        # turn at the CPU (crawler.crawl.turns).
        self._scheduler.reschedule(host, now)
        if isinstance(verdict, Redirect):
            await self._turns.take()
            self._redirect(item, answer, verdict.location, started_at)
            return None
        return answer

    def _archive(self, host: Host, item: QueuedUrl, answer: Response, started_at: float) -> None:
        """The answer to the archive (output.warc), with the robots.txt line that let it be
        asked for."""
        entry = host.robots
        robots = (
            entry.robots.explain(item.url, self._token).message
            if entry is not None and not entry.blocks
            else None
        )
        page = item.requisite_of is None  # a requisite gets no page record, nor metadata
        self._outlet.archive(Exchange(item.url, started_at, answer, robots, item.earlier, page))

    def _failed(
        self, host: Host, item: QueuedUrl, started_at: float, now: float, failed: Failed
    ) -> None:
        timing = host.timing
        host.failed(failed.status)
        fate: AskAgain | GiveUp | None = None
        if failed.refused:
            until = self._politeness.on_refusal(timing, started_at, now, failed.retry_after)
            self._checkpoints.pace_moved()  # a kill must not forget the back-off
            fate = after_refusal(item, failed, timing.pace.refusal_streak, self._max_refusals)
        else:
            until = self._politeness.on_failure(timing, now, failed.retry_after)
        if fate is None:
            fate = after_failure(item, failed, self._max_retries)
        if isinstance(fate, AskAgain):
            if fate.item is item:
                self._stats.throttled += 1
                log.info(
                    "%s: %s (throttled); asked again in %.1f s", item.url, failed.error, until - now
                )
            else:
                self._stats.retries += 1
                log.info("%s: %s; retry after %.1f s", item.url, failed.error, until - now)
            self._frontier.push_front(host.origin, fate.item)
            return
        if item.requisite_of is not None:
            self._requisite_failed(item, fate.error)
            return
        self._stats.fetched += 1
        change = change_of(item.earlier, None, None)
        self._stats.changes[change] += 1
        self._outlet.page(
            record_for(
                item, started_at, None, status=failed.status, error=fate.error, change=change
            ),
            item,
        )
        self._checkpoints.finished(item)

    def _redirect(
        self, item: QueuedUrl, answer: Response, location: str, started_at: float
    ) -> None:
        if item.requisite_of is not None:
            self._requisite_redirect(item, location)
            return
        self._stats.fetched += 1
        stop = self._admission.redirect(item, answer.status, location, started_at)
        if stop is not None:
            change = change_of(item.earlier, answer.status, None)
            self._stats.changes[change] += 1
            self._outlet.page(
                record_for(item, started_at, answer, error=stop.error, change=change), item
            )
        # Its record is handed, or its chain goes on as the next hop.
        self._checkpoints.finished(item)

    # --- page requisites -------------------------------------------------------------------------

    def _offer_requisites(self, page: Page, item: QueuedUrl) -> None:
        """A page's requisites, offered before its links (so that one linked too, say an image,
        is not met first as a link the scope skips), but for those it links to that the crawl
        takes as pages: a frame in scope stays a page, its links followed, as without
        requisites."""
        admission = self._admission
        needs: Sequence[str] = page.requisites
        if page.follow and page.links:
            links, depth = frozenset(page.links), item.depth + 1
            needs = [
                url for url in needs if url not in links or not admission.takes_as_page(url, depth)
            ]
        admission.offer_requisites(needs, item.url)

    def _requisite_failed(self, item: QueuedUrl, error: str) -> None:
        self._stats.requisites["failed"] += 1
        self._admission.requisite_settled()
        log.info("requisite %s of %s: %s", item.url, item.requisite_of, error)
        self._checkpoints.finished(item)

    def _requisite_redirect(self, item: QueuedUrl, location: str) -> None:
        """A requisite's redirect (archived: a replay follows it too): its target is a requisite
        of the same page, each URL once, so a loop ends."""
        self._stats.requisites["fetched"] += 1
        assert item.requisite_of is not None
        try:
            target = resolve_url(item.url, location)
        except InvalidUrlError as error:
            log.info("requisite %s redirects to %r: %s", item.url, location, error.reason)
        else:
            self._admission.offer_requisites((target,), item.requisite_of)
        self._admission.requisite_settled()
        self._checkpoints.finished(item)

    # --- the read --------------------------------------------------------------------------------

    async def _read_answer(
        self, item: QueuedUrl, answer: Response
    ) -> tuple[str | None, Change, Page | None]:
        """The answer's body digest, what it found against the URL's last fetch, and the page
        read from it (None: not a 2xx HTML page, or unchanged: read before, its links followed
        then). Returns in the caller's turn at the CPU (crawler.crawl.turns)."""
        turns = self._turns
        body = answer.body
        html = 200 <= answer.status < 300 and bool(body) and is_html(answer.content_type)
        if html and len(body) <= OFF_LOOP_BYTES and self._reader.takes():
            beside = await self._read_beside(item, answer)
            if beside is not None:
                await turns.take()
                return beside[0], change_of(item.earlier, answer.status, beside[0]), beside[1]
        digest, change = self.found(item, answer)
        if not html or change == "unchanged":
            await turns.take()
            return digest, change, None
        read = functools.partial(
            read_page,
            body,
            item.url,
            charset=answer.charset,
            x_robots_tag=answer.headers.getall("X-Robots-Tag", ()),
            rules=self._page_rules,
        )
        return digest, change, await self.read(read, len(body), OFF_LOOP_BYTES)

    async def _read_beside(self, item: QueuedUrl, answer: Response) -> Read | None:
        """The page's digest and, unless it is unchanged, the page, read by the page reader's
        process; None when that was given up (read it here)."""
        earlier = item.earlier
        try:
            return await self._turns.elsewhere(
                self._reader.read(
                    answer.body,
                    item.url,
                    charset=answer.charset,
                    x_robots_tag=answer.headers.getall("X-Robots-Tag", ()),
                    # Unchanged (crawler.crawl.decide.change_of) is the same status and digest.
                    unchanged_digest=(
                        earlier.digest
                        if earlier is not None and earlier.status == answer.status
                        else None
                    ),
                )
            )
        except PageReaderGoneError:
            return None

    @staticmethod
    def found(item: QueuedUrl, answer: Response) -> tuple[str | None, Change]:
        """A 2xx body's digest, and what the answer found against the URL's last fetch."""
        ok = 200 <= answer.status < 300
        digest = body_digest(answer.body) if ok and answer.body else None
        return digest, change_of(item.earlier, answer.status, digest)

    async def read(self, step: Callable[[], T], size: int, off_loop_bytes: int) -> T:
        """`step()`, which reads `size` bytes: on the worker thread past `off_loop_bytes`, else
        in a turn at the CPU (crawler.crawl.turns)."""
        turns = self._turns
        if size > off_loop_bytes:
            return await turns.off_loop(step)
        await turns.take()
        return step()

    # --- the record ------------------------------------------------------------------------------

    def _record(
        self,
        host: Host,
        item: QueuedUrl,
        answer: Response,
        started_at: float,
        page: Page | None,
        digest: str | None,
        change: Change,
        fields: tuple[dict[str, Any] | None, str | None] = (None, None),
    ) -> None:
        self._stats.changes[change] += 1
        if page is not None and page.requisites:
            self._offer_requisites(page, item)
        if page is not None and page.follow:
            depth = item.depth + 1
            offer = self._admission.offer
            for link in page.links:
                offer(link, depth)
        self._stats.fetched += 1
        usage: tuple[UsageSignal, ...] = ()
        refused = None
        if page is not None:
            said = header_signals(answer.headers)
            if said or page.usage or host.robots is not None:
                usage, refused = page_usage(
                    host.robots, item.url, self._token, self._purpose, (*said, *page.usage)
                )
            if usage:
                self._count_usage(page, usage, refused)
            self._count_rules(page, refused is None)
        record = record_for(
            item,
            started_at,
            answer,
            page=page,
            digest=digest,
            change=change,
            usage=usage,
            usage_refusal=refused,
            fields=fields[0],
            fields_error=fields[1],
        )
        self._outlet.page(record, item)
        self._checkpoints.finished(item)

    def _count_usage(self, page: Page, usage: tuple[UsageSignal, ...], refused: str | None) -> None:
        rules = self._stats.page_rules
        rules["with usage signals"] += 1
        if refused is not None and page.index:
            rules["usage refused"] += 1
            self._stats.usage_refused.update(refusing_kinds(usage, self._purpose))

    def _count_rules(self, page: Page, usable: bool) -> None:
        rules = self._stats.page_rules
        if page.index:
            # A page its owner refuses the crawl's purpose is counted under usage instead.
            rules["indexed"] += usable
        else:
            rules["noindex"] += 1
        if not page.follow:
            rules["nofollow"] += 1
        if page.sections:
            rules["with sections"] += 1
        if page.cut:
            rules["cut short"] += 1
        rules["links not followed"] += len(page.nofollow_links)

    # --- bugs of ours ----------------------------------------------------------------------------

    def internal_error(self, host: Host, item: QueuedUrl | None, error: Exception) -> None:
        """A bug of ours must not end the crawl or lose the URL's fate. The host backs off as
        after a network error: a bug that recurs on every try must not turn into requests at the
        host's full pace (with min_delay 0, a tight loop)."""
        log.exception("internal error on %s", item.url if item else host.origin, exc_info=error)
        self._stats.errors["internal"] += 1
        now = self._clock.now()
        self._politeness.on_failure(host.timing, now)
        if item is not None and item.requisite_of is not None:
            self._requisite_failed(item, f"internal error: {error!r}")
        elif item is not None:
            self._stats.fetched += 1
            change = change_of(item.earlier, None, None)
            self._stats.changes[change] += 1
            error_text = f"internal error: {error!r}"
            self._outlet.page(record_for(item, now, None, error=error_text, change=change), item)
            self._checkpoints.finished(item)

    def __repr__(self) -> str:
        return f"Answers({self._reader!r}, {len(self._turns)} waiting for a turn)"
