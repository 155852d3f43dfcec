"""A request's work and acting on its answer: robots.txt before any other URL of an origin, then
its pages, each answer taken where crawler.crawl.decide says it leads. URLs come in here too
(seeds, links, redirect hops), each admitted or skipped with its reason.

- Before any other URL of an origin, its robots.txt is fetched, in the origin's own politeness
  slot (it counts as a request to the host). A URL is checked against robots.txt when it is
  queued, if the rules are known, and again just before it is fetched.
- A page request's task fetches, then acts on the answer: a retry with backoff (429, 5xx,
  network), a redirect hop queued like any other URL (so robots.txt, scope and politeness apply
  to it), or a page record with the links it queued.
- A bug of ours in a request's work is an internal error: counted, its URL recorded as such,
  and its host backed off as after a network error, never the end of the crawl.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TypeVar

from crawler.config import Config
from crawler.crawl.checkpoint import Checkpointer
from crawler.crawl.clock import CrawlClock
from crawler.crawl.decide import (
    HOST_GIVEN_UP,
    HOST_SKIPPED,
    OVER_MAX_DEPTH,
    PAGE_BUDGET,
    PATH_REPEATS,
    PATH_TOO_DEEP,
    TRAP_REASONS,
    URL_TOO_LONG,
    AskAgain,
    Failed,
    Hop,
    Redirect,
    after_failure,
    change_of,
    conditional_headers,
    gives_up,
    judge,
    long_url_name,
    out_of_bounds,
    redirect_hop,
    robots_skip,
    trap_detail,
)
from crawler.crawl.hosts import Host, HostTable, Slot
from crawler.crawl.outlet import Outlet, record_for
from crawler.crawl.page_reader import PageReader, PageReaderGoneError, Read
from crawler.crawl.robots_cache import RobotsCache
from crawler.crawl.scheduler import Scheduler
from crawler.crawl.scope import Scope
from crawler.frontier import ONLY_BY_LINK, QueuedUrl
from crawler.http.answer import FetchFailure, Response, is_html
from crawler.http.fetcher import Fetcher
from crawler.output.records import Change, Skip, body_digest
from crawler.output.warc import Exchange
from crawler.page.read import Page, PageRules, read_page
from crawler.page.sitemap import SitemapRead, read_sitemap
from crawler.politeness import HostRules, Politeness
from crawler.robots.entry import RobotsEntry
from crawler.state.interface import CrawlState
from crawler.stats import CrawlStats, SkipReason
from crawler.urls import InvalidUrlError, normalize_url, origin_of, resolve_url

__all__ = ["HostWork"]

T = TypeVar("T")

log = logging.getLogger(__name__)

OFF_LOOP_BYTES = 256 * 1024
"""A page longer than this is read on the worker thread (crawler.crawl.turns): its parse may
take up to about half a second, however crawler.page.bounds cuts it (benchmarks/
bench_hostile_pages.py). Shorter pages cost at most a few tens of milliseconds and are read on the
loop, in turns: most pages are a few tens of KB, and the hop to a thread is not worth it there."""
SITEMAP_OFF_LOOP_BYTES = 64 * 1024
"""A sitemap longer than this is read on the worker thread: expat calls back into Python for
every element, about 15 ms per thousand entries (50,000 take most of a second)."""
SITEMAP_OFFERS_PER_TURN = 500
"""Entries of a sitemap offered to the crawl in one turn at the CPU (crawler.crawl.turns): a
sitemap's 50,000 offers at once would hold the loop, and every host's pace, for about as long
as reading it."""
OUTSIDE_SITEMAP: SkipReason = "outside the sitemap's location"
OVER_SITEMAP_DEPTH: SkipReason = "over sitemaps.max_depth"
OVER_SITEMAP_FILES: SkipReason = "over sitemaps.max_files"


class HostWork:
    """What a crawl does with a due host, and with each URL it meets."""

    def __init__(
        self,
        config: Config,
        *,
        state: CrawlState,
        fetcher: Fetcher,
        robots: RobotsCache,
        politeness: Politeness,
        hosts: HostTable,
        scheduler: Scheduler,
        outlet: Outlet,
        checkpoints: Checkpointer,
        clock: CrawlClock,
        stats: CrawlStats,
    ) -> None:
        self._config = config
        self._token = config.product_token
        self._page_rules = PageRules(self._token, config.page.follow_rel_nofollow)
        self.reader = PageReader(self._page_rules, config.page.reader)
        """Pages read beside the loop (crawler.crawl.page_reader); the crawler closes it."""
        self._run = state.run
        self._frontier = state.frontier
        self._seen = state.seen
        self._held = state.held
        self._fetcher = fetcher
        self._robots = robots
        self._politeness = politeness
        self._hosts = hosts
        self._scheduler = scheduler
        self._outlet = outlet
        self._checkpoints = checkpoints
        self._clock = clock
        self._stats = stats
        self._limits = config.limits
        self._sitemaps = config.sitemaps
        self._sitemap_files: Counter[str] = Counter()
        """Sitemap files queued in this run, by the origin whose robots.txt led to them."""
        self._fetches = state.fetches
        self._recrawling = False
        self._fresh_lastmods: dict[str, float] = {}
        """In a recrawl: the lastmod of each URL fetched before, as the sitemaps read again in
        this run give it."""
        self._max_depth = config.limits.max_depth
        self._max_pages = config.limits.max_pages
        self.scope = Scope()
        self._seeds: set[str] = set()
        self.traps: dict[str, Counter[str]] = {}
        """Origins where the crawl met the shape of a trap: URLs skipped by a trap rule (by
        reason), or PAGE_BUDGET once the host reached limits.max_pages_per_host."""
        self.given_up: dict[str, str] = {}
        """Origins given up in this run (their robots.txt could not be had), and why."""
        self.page_starts = stats.pages
        """Pages started, this run's and the runs' before: what limits.max_pages counts."""
        self.scope_widened: Callable[[str], None] = lambda url: None
        """Told of each URL a seed's redirects led to (its host joined the scope): a shared
        crawl's worker passes it on, so that every worker's scope is the same."""

    # --- URLs in ---------------------------------------------------------------------------------

    def add_seeds(self, seeds: Iterable[str]) -> None:
        """Queue the seeds new to the crawl; the seeds of every run so far set the scope."""
        normal: list[str] = []
        for seed in seeds:
            try:
                normal.append(normalize_url(seed))
            except InvalidUrlError as error:
                self._stats.met += 1
                self._outlet.skip(Skip(seed, "invalid seed", error.reason))
        self._run.add_seeds(normal)
        self._seeds = set(self._run.seeds())
        self.scope = self._scope()
        for url in normal:
            self.offer(url, 0)

    def widen_scope(self, seeds: Sequence[str]) -> None:
        """Seeds another worker of a shared crawl gave: the scope is theirs too (their URLs are
        that worker's to queue)."""
        self._run.add_seeds(seeds)
        self._seeds = set(self._run.seeds())
        self.scope = self._scope()

    def _scope(self) -> Scope:
        """The scope of every seed given so far, and of every host their redirects led to."""
        scope = self._config.scope
        moved = tuple(target for _seed, target in self._run.seed_moves())
        return Scope.for_seeds(
            self._run.seeds() + moved,
            seed_hosts=scope.seed_hosts,
            include_subdomains=scope.include_subdomains,
            allow_domains=scope.allow_domains,
            allow=scope.allow,
            deny=scope.deny,
            skip_extensions=scope.skip_extensions,
        )

    def resume(self) -> None:
        """Schedule every origin the state holds URLs of (left by an earlier run)."""
        for origin in self._frontier.origins():
            if origin not in self._hosts:
                self._scheduler.reschedule(self._hosts.get(origin), self._clock.epoch0)

    def offer(self, url: str, depth: int, lastmod: float | None = None) -> bool:
        """Queue a normal URL found at `depth` (with its sitemap `lastmod`, if a sitemap listed
        it), unless a rule says no (then it is a skip, once per URL); True when queued."""
        if len(url) > self._limits.max_url_length:
            return self._too_long(url)
        if not self._seen.add(url):
            if self._held and (held := self._held.depth(url)) is not None and depth < held:
                return self._reconsider(url, depth, held)
            return False
        self._stats.met += 1
        reason = out_of_bounds(url, depth, scope=self.scope, limits=self._limits)
        if reason is not None:
            if reason == OVER_MAX_DEPTH:
                self._held.hold(url, depth)
            elif reason in TRAP_REASONS:
                self._count_trap(url, reason)
            self._outlet.skip(Skip(url, reason, self._why_out(url, reason, depth)))
            return False
        return self._admit(url, depth, lastmod)

    def _met_first(self, url: str) -> bool:
        """Whether `url` is met for the first time (then counted as met); a URL too long is a
        skip instead."""
        if len(url) > self._limits.max_url_length:
            return self._too_long(url)
        if not self._seen.add(url):
            return False
        self._stats.met += 1
        return True

    def _too_long(self, url: str) -> bool:
        name = long_url_name(url)
        if self._seen.add(name):
            self._count_trap(url, URL_TOO_LONG)
            self._stats.met += 1
            detail = trap_detail(url, URL_TOO_LONG, self._limits)
            self._outlet.skip(Skip(name, URL_TOO_LONG, detail))
        return False

    def _count_trap(self, url: str, reason: str) -> None:
        try:
            origin = origin_of(url)
        except ValueError:
            return
        self.traps.setdefault(origin, Counter())[reason] += 1

    def _why_out(self, url: str, reason: SkipReason, depth: int) -> str:
        if reason == OVER_MAX_DEPTH:
            return f"found at depth {depth}; limits.max_depth is {self._max_depth}"
        if reason in (PATH_REPEATS, PATH_TOO_DEEP):
            return trap_detail(url, reason, self._limits)
        return self.scope.explain(url, reason)

    def _reconsider(self, url: str, depth: int, held: int) -> bool:
        """A URL held (past limits.max_depth at depth `held`, or listed where a sitemap could
        not list it), found again at `depth`, less than before."""
        reason = out_of_bounds(url, depth, scope=self.scope, limits=self._limits)
        if reason == OVER_MAX_DEPTH:
            self._held.hold(url, depth)
            if held == ONLY_BY_LINK:
                self._outlet.unskip(url, OUTSIDE_SITEMAP)
                self._outlet.skip(Skip(url, reason, self._why_out(url, reason, depth)))
            return False
        self._held.release(url)
        self._outlet.unskip(url, OUTSIDE_SITEMAP if held == ONLY_BY_LINK else OVER_MAX_DEPTH)
        if reason is not None:
            self._outlet.skip(Skip(url, reason, self._why_out(url, reason, depth)))
            return False
        return self._admit(url, depth)

    def recrawl(self, now: float, after: float) -> int:
        """A recrawl pass: queue again every URL last fetched `after` seconds or more before
        `now` (epoch seconds), with what that fetch found, sitemaps first; how many. URLs out of
        the scope the seeds give now are left."""
        self._recrawling = True
        due_before = now - after
        queued = 0
        for item in self._fetches.latest():
            assert item.earlier is not None
            if item.earlier.fetched_at > due_before:
                continue
            scope = self.scope
            out = (
                scope.reason_out_of_hosts(item.url) if item.sitemap else scope.reason_out(item.url)
            )
            if out is not None:
                continue
            if item.sitemap:
                self._sitemap_files[item.declared_by or origin_of(item.url)] += 1
            # Met again, counted as such: `met` stays fetched + skipped + queued.
            self._stats.met += 1
            queued += self._queue(item)
        return queued

    def resume_recrawl(self) -> None:
        """This run goes on with a recrawl pass an earlier one began."""
        self._recrawling = True

    def release_held(self) -> int:
        """Queue the URLs an earlier run held past limits.max_depth that the depth now allows
        (it was raised); how many."""
        released = 0
        for url, depth in self._held.within(self._max_depth):
            released += self._reconsider(url, depth, depth)
        return released

    def _admit(self, url: str, depth: int, lastmod: float | None = None) -> bool:
        """Queue `url`, met for the first time (or held till now) and in bounds, unless its host
        is retired or robots.txt disallows it."""
        return self._queue(QueuedUrl(url, depth, lastmod=lastmod))

    def _queue(self, item: QueuedUrl) -> bool:
        url = item.url
        origin = origin_of(url)
        host = self._hosts.get(origin)
        if host.retired is not None:
            if host.over_budget:
                # Kept for a run with a greater limits.max_pages_per_host.
                self._frontier.push(origin, item)
                return True
            self._outlet.skip(Skip(url, host.retired_as, host.retired))
            return False
        skip = robots_skip(host.robots, url, self._token)
        if skip is not None:
            self._disallowed(item, skip, None)
            return False
        self._frontier.push(origin, item)
        self._scheduler.reschedule(host, None)
        return True

    # --- a due host ------------------------------------------------------------------------------

    def at_page_limit(self) -> bool:
        limit = self._max_pages
        return limit is not None and self.page_starts >= limit

    def launch(self, host: Host, now: float) -> None:
        """Start `host`'s next request: its robots.txt when none is fresh, else its next URL
        that robots.txt and the limits allow."""
        entry = self._robots.cached(host.origin, now)
        if entry is None:
            host.robots_busy = True
            slot = self._scheduler.start(host, now)
            self._checkpoints.robots_moved()
            self._scheduler.watch(host, slot, self._robots_task(host, slot), None)
            return
        if host.robots is None:
            # Known from an earlier run: its rules apply as if just fetched.
            host.robots = entry
            self._robots_known(host, entry)
            if host.retired is not None:
                return
        host.robots = entry
        if entry.blocks:
            self._scheduler.wait_until(host, max(entry.expires_at, now))
            return
        limit = self._config.limits.max_pages_per_host
        while (item := self._frontier.pop(host.origin)) is not None:
            if limit is not None and host.timing.pages >= limit:
                self._frontier.push_front(host.origin, item)
                host.retired = f"over limits.max_pages_per_host ({limit})"
                host.over_budget = True
                self.traps.setdefault(host.origin, Counter())[PAGE_BUDGET] += 1
                log.warning(
                    "%s reached limits.max_pages_per_host (%d): its other URLs stay queued",
                    host.origin,
                    limit,
                )
                return
            skip = robots_skip(entry, item.url, self._token)
            if skip is not None:
                self._disallowed(item, skip, now)
                self._checkpoints.finished(item)
                continue
            if item.sitemap:
                slot = self._scheduler.start(host, now)
                self._scheduler.watch(host, slot, self._sitemap_task(host, slot, item, now), item)
                break
            if item.earlier is not None and self._not_due_by_lastmod(item):
                continue
            if not item.redirected_from and not item.attempts:
                self.page_starts += 1
                host.timing.pages += 1
            slot = self._scheduler.start(host, now)
            self._scheduler.watch(host, slot, self._page_task(host, slot, item, now), item)
            break
        self._scheduler.reschedule(host, now)

    def _not_due_by_lastmod(self, item: QueuedUrl) -> bool:
        """Whether a sitemap read again in this recrawl says `item` has not changed since its
        last fetch: then it is done without a request (and not counted as met again)."""
        lastmod = self._fresh_lastmods.pop(item.url, None)
        assert item.earlier is not None
        if lastmod is None or lastmod > item.earlier.fetched_at:
            return False
        self._stats.met -= 1
        self._stats.changes["not due by lastmod"] += 1
        self._checkpoints.finished(item)
        return True

    # --- robots.txt ------------------------------------------------------------------------------

    async def _robots_task(self, host: Host, slot: Slot) -> None:
        try:
            entry = await self._robots.get(host.origin, self._pace_hop(host))
            now = self._clock.now()
            answered = self._clock.at(entry.answered_at) if entry.answered_at is not None else now
            slot.release(min(now, answered))
            self.reader.answered(host.origin, now)
            self._checkpoints.robots_moved()
            host.robots_busy = False
            host.robots = entry
            self._stats.robots_fetches += 1
            self._stats.requests += len(entry.hops) - 1
            if entry.unreachable:
                self._politeness.on_failure(host.timing, now)
                self._stats.errors[entry.error or "unreachable"] += 1
                if host.unreachable_since is None:
                    host.unreachable_since = now
            else:
                host.unreachable_since = None
            if entry.blocks and host.unreachable_since is not None:
                give_up_after = self._config.robots.give_up_after
                if gives_up(entry, host.unreachable_since, give_up_after):
                    self._give_up(host, entry)
                    return
            if entry.blocks:
                # The later of robots.retry_* and the host's own backoff after a failure.
                host.timing.backoff_until = max(host.timing.backoff_until, entry.expires_at)
                log.info(
                    "robots.txt of %s: %s; next try in %.1f s",
                    host.origin,
                    entry.reason,
                    host.timing.backoff_until - now,
                )
                return
            self._robots_known(host, entry)
        except Exception as error:
            self._internal_error(host, None, error)

    def _pace_hop(self, host: Host) -> Callable[[str], Awaitable[None]]:
        """A robots.txt redirect to the same origin is one more request to it: it waits the
        host's interval (or backoff, or visit window) like any other, and counts as a start."""

        async def pace(url: str) -> None:
            if origin_of(url) != host.origin:
                return  # another host's first request: its own robots.txt comes later
            politeness = self._politeness
            # The hop before has just answered: from here the interval runs, as after any
            # answer (with one request at a time per host).
            politeness.on_answer(host.timing, self._clock.now())
            wait = politeness.ready_at(host.timing, self._clock.now()) - self._clock.now()
            if wait > 0:
                await asyncio.sleep(wait)
            politeness.on_start(host.timing, self._clock.now())

        return pace

    def _robots_known(self, host: Host, entry: RobotsEntry) -> None:
        """Apply the pace robots.txt asks for; retire the host if it asks too much."""
        if entry.blocks:
            return
        rules = HostRules.from_robots(entry.robots, self._token)
        self._politeness.rules_changed(host.timing, rules)
        if self._politeness.crawl_delay_over_cap(rules):
            cap = self._config.politeness.max_crawl_delay
            skip = self._config.politeness.over_max_crawl_delay == "skip"
            log.warning(
                "%s asks for Crawl-delay %g s, over politeness.max_crawl_delay %g s: %s",
                host.origin,
                rules.crawl_delay,
                cap,
                "skipping it" if skip else "crawling at the cap",
            )
            if skip:
                self._retire(host, f"Crawl-delay {rules.crawl_delay:g} s over the cap {cap:g} s")
                return
        self._queue_sitemaps(host, entry)

    def _give_up(self, host: Host, entry: RobotsEntry) -> None:
        """No rules to crawl by, and no more tries: the origin's URLs become skips."""
        tries = "try" if entry.failures == 1 else "tries"
        why = f"robots.txt {entry.reason} ({entry.failures} {tries})"
        log.warning("giving %s up: %s", host.origin, why)
        self.given_up[host.origin] = why
        self._retire(host, why, HOST_GIVEN_UP)

    def _retire(self, host: Host, reason: str, kind: SkipReason = HOST_SKIPPED) -> None:
        host.retired = reason
        host.retired_as = kind
        while (item := self._frontier.pop(host.origin)) is not None:
            self._outlet.skip(Skip(item.url, kind, reason))
            self._checkpoints.finished(item)

    def _disallowed(self, item: QueuedUrl, skip: Skip, now: float | None) -> None:
        self._outlet.skip(skip)
        if item.redirected_from:
            error = f"redirect to {item.url} not followed: {skip.reason} ({skip.detail})"
            at = now if now is not None else self._clock.now()
            record = record_for(
                item, at, None, status=item.redirect_status, error=error, reached=False
            )
            self._outlet.page(record, item)

    # --- pages -----------------------------------------------------------------------------------

    async def _answer(
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
        slot.release(self._clock.answered_at(answer, now))
        self.reader.answered(host.origin, now)
        if self._outlet.archiving and isinstance(answer, Response) and answer.raw is not None:
            self._archive(host, item, answer, started_at)
        if isinstance(answer, FetchFailure):
            self._stats.errors[answer.kind] += 1
        else:
            self._stats.statuses[answer.status] += 1
            self._stats.bytes += len(answer.body)
        verdict = judge(answer, now)
        if isinstance(verdict, Failed):
            self._failed(host, item, started_at, now, verdict)
            return None
        assert isinstance(answer, Response)
        self._politeness.on_success(host.timing)
        # The host's pace is settled (no backoff), so it may go on while this answer waits its
        # turn at the CPU (crawler.crawl.turns).
        self._scheduler.reschedule(host, now)
        if isinstance(verdict, Redirect):
            await self._scheduler.turns.take()
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
        self._outlet.archive(Exchange(item.url, started_at, answer, robots, item.earlier))

    async def _page_task(self, host: Host, slot: Slot, item: QueuedUrl, started_at: float) -> None:
        try:
            answer = await self._answer(
                host, slot, item, started_at, html_only=self._config.fetch.html_only
            )
            if answer is None:
                return
            digest, change, page = await self._read_answer(item, answer)
            self._page(item, answer, started_at, page, digest, change)
        except Exception as error:
            self._internal_error(host, item, error)

    async def _read_answer(
        self, item: QueuedUrl, answer: Response
    ) -> tuple[str | None, Change, Page | None]:
        """The answer's body digest, what it found against the URL's last fetch, and the page
        read from it (None: not a 2xx HTML page, or unchanged: read before, its links followed
        then). Returns in the caller's turn at the CPU (crawler.crawl.turns)."""
        turns = self._scheduler.turns
        body = answer.body
        html = 200 <= answer.status < 300 and bool(body) and is_html(answer.content_type)
        if html and len(body) <= OFF_LOOP_BYTES and self.reader.takes():
            beside = await self._read_beside(item, answer)
            if beside is not None:
                await turns.take()
                return beside[0], change_of(item.earlier, answer.status, beside[0]), beside[1]
        digest, change = self._found(item, answer)
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
        return digest, change, await self._read(read, len(body), OFF_LOOP_BYTES)

    async def _read_beside(self, item: QueuedUrl, answer: Response) -> Read | None:
        """The page's digest and, unless it is unchanged, the page, read by the page reader's
        process; None when that was given up (read it here)."""
        earlier = item.earlier
        try:
            return await self._scheduler.turns.elsewhere(
                self.reader.read(
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
    def _found(item: QueuedUrl, answer: Response) -> tuple[str | None, Change]:
        """A 2xx body's digest, and what the answer found against the URL's last fetch."""
        ok = 200 <= answer.status < 300
        digest = body_digest(answer.body) if ok and answer.body else None
        return digest, change_of(item.earlier, answer.status, digest)

    async def _read(self, step: Callable[[], T], size: int, off_loop_bytes: int) -> T:
        """`step()`, which reads `size` bytes: on the worker thread past `off_loop_bytes`, else
        in a turn at the CPU (crawler.crawl.turns)."""
        turns = self._scheduler.turns
        if size > off_loop_bytes:
            return await turns.off_loop(step)
        await turns.take()
        return step()

    def _failed(
        self, host: Host, item: QueuedUrl, started_at: float, now: float, failed: Failed
    ) -> None:
        until = self._politeness.on_failure(host.timing, now, failed.retry_after)
        fate = after_failure(item, failed, self._config.fetch.max_retries)
        if isinstance(fate, AskAgain):
            self._stats.retries += 1
            log.info("%s: %s; retry after %.1f s", item.url, failed.error, until - now)
            self._frontier.push_front(host.origin, fate.item)
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
        fate = redirect_hop(
            item,
            answer.status,
            location,
            scope=self.scope,
            seen=self._seen,
            max_redirects=self._config.fetch.max_redirects,
            limits=self._limits,
            from_seed=item.first_url in self._seeds,
        )
        self._stats.fetched += 1
        if not isinstance(fate, Hop):
            if fate.skip is not None:
                # Met here for the first time (redirect_hop stops at a URL seen before).
                self._seen.add(fate.skip.url)
                self._stats.met += 1
                if fate.skip.reason in TRAP_REASONS:
                    self._count_trap(item.url, fate.skip.reason)
                self._outlet.skip(fate.skip)
            change = change_of(item.earlier, answer.status, None)
            self._stats.changes[change] += 1
            self._outlet.page(
                record_for(item, started_at, answer, error=fate.error, change=change), item
            )
            self._checkpoints.finished(item)
            return
        hop = fate.item
        if fate.seed_moved:
            self._run.add_seed_move(item.first_url, hop.url)
            self.scope = self._scope()
            self.scope_widened(hop.url)
            log.info("seed %s redirected to %s: its host joins the scope", item.first_url, hop.url)
        self._seen.add(hop.url)
        self._stats.met += 1
        origin = origin_of(hop.url)
        host = self._hosts.get(origin)
        skip = robots_skip(host.robots, hop.url, self._token)
        if skip is not None:
            self._disallowed(hop, skip, started_at)
            self._checkpoints.finished(item)
            return
        self._frontier.push(origin, hop)
        self._checkpoints.finished(item)  # its chain goes on as `hop`
        self._scheduler.reschedule(host, None)

    def _page(
        self,
        item: QueuedUrl,
        answer: Response,
        started_at: float,
        page: Page | None,
        digest: str | None,
        change: Change,
    ) -> None:
        self._stats.changes[change] += 1
        if page is not None:
            self._count_rules(page)
            if page.follow:
                depth = item.depth + 1
                for link in page.links:
                    self.offer(link, depth)
        self._stats.fetched += 1
        record = record_for(item, started_at, answer, page=page, digest=digest, change=change)
        self._outlet.page(record, item)
        self._checkpoints.finished(item)

    def _count_rules(self, page: Page) -> None:
        rules = self._stats.page_rules
        rules["indexed" if page.index else "noindex"] += 1
        if not page.follow:
            rules["nofollow"] += 1
        if page.sections:
            rules["with sections"] += 1
        if page.cut:
            rules["cut short"] += 1
        rules["links not followed"] += len(page.nofollow_links)

    # --- sitemaps --------------------------------------------------------------------------------

    def _queue_sitemaps(self, host: Host, entry: RobotsEntry) -> None:
        """Queue the sitemaps `host`'s robots.txt names (or /sitemap.xml, if asked to try it
        when none is named): each a request to its own host, at level 1 and depth 0."""
        config = self._sitemaps
        if not config.enabled or entry.blocks:
            return
        robots_url = host.origin + "/robots.txt"
        named = entry.robots.sitemaps
        if not named and config.try_default:
            named = ("/sitemap.xml",)
        room = max(0, config.max_files - self._sitemap_files[host.origin])
        if len(named) > room:
            # 100,000 Sitemap lines would be as many offers on the loop, and as many skips.
            log.warning(
                "robots.txt of %s names %d sitemaps; the first %d are read (sitemaps.max_files)",
                host.origin,
                len(named),
                room,
            )
            named = named[:room]
        for value in named:
            try:
                url = resolve_url(robots_url, value)
            except InvalidUrlError as error:
                log.info("robots.txt of %s: Sitemap %r is no URL (%s)", host.origin, value, error)
                continue
            self._offer_sitemap(url, 1, host.origin, robots_url)

    def _offer_sitemap(self, url: str, level: int, declared_by: str, named_in: str) -> None:
        """Queue a sitemap at `level`, named in `named_in`, unless a rule says no (a skip)."""
        if not self._met_first(url):
            return
        config = self._sitemaps
        reason = self.scope.reason_out_of_hosts(url)
        if reason is not None:
            detail = f"a sitemap named in {named_in}: {self.scope.explain(url, reason)}"
            self._outlet.skip(Skip(url, reason, detail))
        elif level > config.max_depth:
            detail = f"a sitemap at level {level}, named in {named_in}; sitemaps.max_depth is "
            self._outlet.skip(Skip(url, OVER_SITEMAP_DEPTH, f"{detail}{config.max_depth}"))
        elif self._sitemap_files[declared_by] >= config.max_files:
            detail = (
                f"a sitemap named in {named_in}: {declared_by} has led to "
                f"sitemaps.max_files ({config.max_files}) sitemaps in this run"
            )
            self._outlet.skip(Skip(url, OVER_SITEMAP_FILES, detail))
        else:
            self._sitemap_files[declared_by] += 1
            self._queue(QueuedUrl(url, 0, sitemap=level, declared_by=declared_by))

    async def _sitemap_task(
        self, host: Host, slot: Slot, item: QueuedUrl, started_at: float
    ) -> None:
        try:
            config = self._sitemaps
            answer = await self._answer(host, slot, item, started_at, max_bytes=config.max_bytes)
            if answer is None:
                return
            turns = self._scheduler.turns
            sitemap = None
            ok = 200 <= answer.status < 300
            digest, change = self._found(item, answer)
            if change == "unchanged":
                await turns.take()  # read before: what it lists is queued or seen
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
                sitemap = await self._read(read, len(answer.body), SITEMAP_OFF_LOOP_BYTES)
            else:
                await turns.take()
            await self._sitemap(item, answer, started_at, sitemap, digest, change)
        except Exception as error:
            self._internal_error(host, item, error)

    async def _sitemap(
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
        self._stats.fetched += 1
        self._stats.changes[change] += 1
        record = record_for(item, started_at, answer, digest=digest, change=change)
        if sitemap is None:
            self._outlet.page(record, item)
            self._checkpoints.finished(item)
            return
        self._stats.sitemaps += 1
        cut, error = sitemap.cut, sitemap.error
        if answer.truncated:
            # Cut by the download's cap: whatever broke at the cut is the cut.
            cut = cut or f"more than sitemaps.max_bytes ({self._sitemaps.max_bytes} bytes)"
            error = None
        declared_by = item.declared_by or origin_of(item.url)
        depth = item.depth + 1
        entries = sitemap.entries
        for first in range(0, len(entries), SITEMAP_OFFERS_PER_TURN):
            if first:
                await self._scheduler.turns.take()
            for entry in entries[first : first + SITEMAP_OFFERS_PER_TURN]:
                if sitemap.kind == "index":
                    self._offer_sitemap(entry.url, item.sitemap + 1, declared_by, item.url)
                elif (
                    not self.offer(entry.url, depth, entry.lastmod)
                    and self._recrawling
                    and entry.lastmod is not None
                ):
                    # Known before: its recrawl may be spared (`_not_due_by_lastmod`).
                    self._fresh_lastmods[entry.url] = entry.lastmod
        not_listable = sitemap.refused
        for first in range(0, len(not_listable), SITEMAP_OFFERS_PER_TURN):
            await self._scheduler.turns.take()
            for url, rule in not_listable[first : first + SITEMAP_OFFERS_PER_TURN]:
                self._refuse(url, f"{rule}; listed in {item.url}")
        self._stats.sitemap_urls += len(sitemap.entries)
        if cut is not None:
            log.warning("sitemap %s: %s; the rest is not read", item.url, cut)
        if error is not None:
            log.info("sitemap %s: %s", item.url, error)
        kind = {"index": "a sitemap index", "urlset": "a sitemap", "text": "a text sitemap"}
        described = kind[sitemap.kind] if sitemap.kind is not None else "no sitemap"
        unusable = f", {len(sitemap.skipped)} unusable" if sitemap.skipped else ""
        refused = f", {len(sitemap.refused)} refused" if sitemap.refused else ""
        self._outlet.page(
            dataclasses.replace(
                record,
                index_reason=f"{described}: {len(sitemap.entries)} entries{refused}{unusable}",
                follow=sitemap.kind is not None,
                follow_reason=None if sitemap.kind is not None else error,
                links=tuple(entry.url for entry in sitemap.entries),
                cut=cut,
                error=error,
            ),
            item,
        )
        self._checkpoints.finished(item)

    def _refuse(self, url: str, detail: str) -> None:
        """A URL a sitemap may not list: a skip, held so that a page's link can still queue
        it."""
        if not self._met_first(url):
            return
        self._held.hold(url, ONLY_BY_LINK)
        self._outlet.skip(Skip(url, OUTSIDE_SITEMAP, detail))

    # --- bugs of ours ----------------------------------------------------------------------------

    def _internal_error(self, host: Host, item: QueuedUrl | None, error: Exception) -> None:
        """A bug of ours must not end the crawl or lose the URL's fate. The host backs off as
        after a network error: a bug that recurs on every try must not turn into requests at the
        host's full pace (with min_delay 0, a tight loop)."""
        log.exception("internal error on %s", item.url if item else host.origin, exc_info=error)
        self._stats.errors["internal"] += 1
        now = self._clock.now()
        self._politeness.on_failure(host.timing, now)
        if item is not None:
            self._stats.fetched += 1
            change = change_of(item.earlier, None, None)
            self._stats.changes[change] += 1
            error_text = f"internal error: {error!r}"
            self._outlet.page(record_for(item, now, None, error=error_text, change=change), item)
            self._checkpoints.finished(item)

    def __repr__(self) -> str:
        return f"HostWork({self.page_starts} pages started, {self.scope!r})"
