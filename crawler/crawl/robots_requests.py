"""`RobotsRequests`: an origin's robots.txt request, before any other URL of it, and what its
answer makes of the host.

- The request runs in the origin's own politeness slot (it counts as a request to the host), and
  each redirect hop to the same origin waits the host's interval like any other request.
- Its answer is archived before it waits for its turn at the CPU (its parse and rules), as a
  page's is. Its facts are committed before the next request to the host (crawler.crawl.
  checkpoint, `robots_moved`).
- Rules that let the crawl in are followed by the origin's tdmrep.json (usage.tdmrep), in the
  same slot, after the host's interval (crawler.crawl.robots_cache).
- Then, by crawler.crawl.decide's `robots_fate`: its rules are obeyed (their pace, and the
  sitemaps they name), or the host waits (nothing allowed for now), or it is given up and its
  URLs become skips. A host whose Crawl-delay is over the cap is crawled at the cap, or retired.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from crawler.config import PolitenessConfig, RobotsConfig
from crawler.crawl.admission import Admission
from crawler.crawl.checkpoint import Checkpointer
from crawler.crawl.clock import CrawlClock
from crawler.crawl.decide import (
    ADDRESS_REFUSED,
    BLOCKED,
    GIVE_UP,
    HOST_GIVEN_UP,
    HOST_SKIPPED,
    PERMANENT_FAILURES,
    REFUSAL_STATUSES,
    robots_fate,
    usage_problems,
)
from crawler.crawl.hosts import Host, Slot
from crawler.crawl.outlet import Outlet
from crawler.crawl.page_reader import PageReader
from crawler.crawl.robots_cache import RobotsCache
from crawler.crawl.scheduler import Scheduler
from crawler.crawl.sitemaps import Sitemaps
from crawler.frontier import Frontier
from crawler.http.answer import FetchFailure, Response
from crawler.http.fetcher import Fetcher
from crawler.output.records import Skip
from crawler.output.warc import Exchange
from crawler.politeness import HostRules, Politeness
from crawler.robots.entry import RobotsEntry, RobotsStore
from crawler.robots.txt import RobotsTxt
from crawler.stats import CrawlStats, SkipReason, UnreachableHost
from crawler.urls import origin_of
from crawler.usage.tdmrep import TDMREP_PATH

__all__ = ["RobotsRequests"]

log = logging.getLogger(__name__)


class RobotsRequests:
    """robots.txt requests, and the rules each host is crawled by."""

    def __init__(
        self,
        robots: RobotsConfig,
        politeness_config: PolitenessConfig,
        *,
        token: str,
        tdmrep: bool,
        store: RobotsStore,
        fetcher: Fetcher,
        reader: PageReader,
        politeness: Politeness,
        frontier: Frontier,
        admission: Admission,
        sitemaps: Sitemaps,
        scheduler: Scheduler,
        outlet: Outlet,
        checkpoints: Checkpointer,
        clock: CrawlClock,
        stats: CrawlStats,
    ) -> None:
        self._give_up_after = robots.give_up_after
        self._max_crawl_delay = politeness_config.max_crawl_delay
        self._skip_over_cap = politeness_config.over_max_crawl_delay == "skip"
        self._token = token
        self._fetcher = fetcher
        self._reader = reader
        self._politeness = politeness
        self._frontier = frontier
        self._admission = admission
        self._sitemaps = sitemaps
        self._scheduler = scheduler
        self._outlet = outlet
        self._checkpoints = checkpoints
        self._clock = clock
        self._stats = stats
        self.cache = RobotsCache(
            robots,
            self._get,
            store=store,
            clock=clock.now,
            tdmrep_token=token if tdmrep else None,
        )
        """Each origin's entry, fetched once at a time and kept (crawler.crawl.robots_cache)."""
        self.given_up: dict[str, str] = {}
        """Origins given up in this run (their robots.txt could not be had), and why."""
        self.unreachable: dict[str, UnreachableHost] = {}
        """Origins whose robots.txt fails now, tried again until it comes or they are given up."""
        self._answers: dict[str, tuple[float, float | None, float, int]] = {}
        """Per origin, its robots.txt request's last answer: started, first byte and whole (on
        the crawl's clock), and status; its host's pace takes it in (crawler.pace)."""

    def start(self, host: Host, now: float) -> None:
        """`host` has no fresh robots.txt: fetch it, in the host's slot; nothing else of the host
        starts meanwhile."""
        host.robots_busy = True
        slot = self._scheduler.start(host, now)
        self._checkpoints.robots_moved()
        self._scheduler.watch(host, slot, self._task(host, slot), None)

    async def _get(self, url: str, max_bytes: int) -> Response | FetchFailure:
        """One request of a robots.txt fetch (the cache follows its redirects)."""
        started_at = self._clock.now()
        if url.endswith(TDMREP_PATH):
            # The origin's TDMRep file, after its robots.txt: a request like any other.
            self._stats.tdmrep_fetches += 1
            self._stats.requests += 1
        answer = await self._fetcher.get(url, max_bytes=max_bytes, public=True)
        if isinstance(answer, Response):
            now = self._clock.now()
            first_byte = self._clock.answered_at(answer, now)
            self._answers[origin_of(url)] = (started_at, first_byte, now, answer.status)
        if self._outlet.archiving and isinstance(answer, Response) and answer.raw is not None:
            self._outlet.archive(Exchange(url, started_at, answer, page=False))
        # Its parse and rules in a turn of their own (crawler.crawl.turns): a wave of answers
        # read in one iteration would stamp the answers behind it late, and each host's next
        # request counts from its answer's stamp. Archived first, as a page's answer is: a
        # crawl stopped meanwhile still has it in its WARC files.
        await self._scheduler.turns.take()
        return answer

    async def _task(self, host: Host, slot: Slot) -> None:
        entry = await self.cache.get(host.origin, self._pace_hop(host))
        clock = self._clock
        now = clock.now()
        answered = clock.at(entry.answered_at) if entry.answered_at is not None else now
        times = self._answers.pop(host.origin, None)
        if times is not None:
            # The robots.txt answer is the host's first: how long it took counts, and a refusal
            # is not an accepted request (the robots.txt cache has its own retry for it).
            started, first_byte, ended, status = times
            self._politeness.on_response(host.timing, started, first_byte, ended)
            if status not in REFUSAL_STATUSES:
                self._politeness.on_success(host.timing, started, ended)
        slot.release(min(now, answered))
        self._reader.answered(host.origin, now)
        self._checkpoints.robots_moved()
        host.robots_busy = False
        host.robots = entry
        self._stats.robots_fetches += 1
        self._stats.requests += len(entry.hops) - 1
        if entry.unreachable:
            self._politeness.on_failure(host.timing, now)
            self._stats.errors[entry.error or "unreachable"] += 1
            host.failed(None)
            if host.unreachable_since is None:
                host.unreachable_since = now
        else:
            host.unreachable_since = None
        fate = robots_fate(entry, host.unreachable_since, self._give_up_after)
        if fate is not BLOCKED:
            self.unreachable.pop(host.origin, None)
        if fate is GIVE_UP:
            self._give_up(host, entry)
        elif fate is BLOCKED:
            # The later of robots.retry_* and the host's own backoff after a failure.
            host.timing.backoff_until = max(host.timing.backoff_until, entry.expires_at)
            self._unreachable(host, entry)
            log.info(
                "robots.txt of %s: %s; next try in %.1f s",
                host.origin,
                entry.reason,
                host.timing.backoff_until - now,
            )
        else:
            for problem in usage_problems(entry, self._token):
                log.info("%s: %s", host.origin, problem)
            self.obey(host, entry)

    def _unreachable(self, host: Host, entry: RobotsEntry) -> None:
        since = host.unreachable_since if host.unreachable_since is not None else entry.fetched_at
        retry_at = host.timing.backoff_until
        self.unreachable[host.origin] = UnreachableHost(
            host.origin,
            entry.reason,
            since,
            retry_at,
            retry_at if entry.error in PERMANENT_FAILURES else since + self._give_up_after,
            entry.failures,
        )

    def _pace_hop(self, host: Host) -> Callable[[str, RobotsTxt | None], Awaitable[bool]]:
        """A robots.txt redirect to the same origin is one more request to it: it waits the
        host's interval (or backoff, or visit window) like any other, and counts as a start. So
        does the tdmrep.json request after it, by the rules the robots.txt just gave (`robots`);
        unless those rules retire the host (a Crawl-delay over the cap, with `skip`): False."""

        async def pace(url: str, robots: RobotsTxt | None) -> bool:
            if origin_of(url) != host.origin:
                return True  # another host's first request: its own robots.txt comes later
            politeness = self._politeness
            if robots is not None:
                rules = HostRules.from_robots(robots, self._token)
                if self._skip_over_cap and politeness.crawl_delay_over_cap(rules):
                    return False
                politeness.rules_changed(host.timing, rules)
            # The hop before has just answered: from here the interval runs, as after any
            # answer (with one request at a time per host).
            politeness.on_answer(host.timing, self._clock.now())
            wait = politeness.ready_at(host.timing, self._clock.now()) - self._clock.now()
            if wait > 0:
                await asyncio.sleep(wait)
            politeness.on_start(host.timing, self._clock.now())
            return True

        return pace

    def obey(self, host: Host, entry: RobotsEntry) -> None:
        """Apply the pace robots.txt asks for, retiring the host if it asks too much; then queue
        the sitemaps it names."""
        if entry.blocks:
            return
        rules = HostRules.from_robots(entry.robots, self._token)
        self._politeness.rules_changed(host.timing, rules)
        if self._politeness.crawl_delay_over_cap(rules):
            cap = self._max_crawl_delay
            skip = self._skip_over_cap
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
        self._sitemaps.named(host, entry)

    def _give_up(self, host: Host, entry: RobotsEntry) -> None:
        """No rules to crawl by, and no more tries: the origin's URLs become skips."""
        if entry.error == "blocked":
            # Its address (or that of its robots.txt's redirect) is one the crawl does not
            # connect to: not a failure of the host's, a refusal of ours.
            why = entry.reason.removeprefix("unreachable: ").removeprefix("blocked: ")
            if len(entry.hops) > 1:
                why = f"its robots.txt redirects to {entry.hops[-1]}, and {why}"
            log.warning("not crawling %s: %s", host.origin, why)
            self._retire(host, why, ADDRESS_REFUSED)
            return
        tries = "try" if entry.failures == 1 else "tries"
        why = f"robots.txt {entry.reason} ({entry.failures} {tries})"
        log.warning("giving %s up: %s", host.origin, why)
        self.given_up[host.origin] = why
        self._retire(host, why, HOST_GIVEN_UP)

    def _retire(self, host: Host, reason: str, kind: SkipReason = HOST_SKIPPED) -> None:
        host.retired = reason
        host.retired_as = kind
        now = self._clock.now()
        while (item := self._frontier.pop(host.origin)) is not None:
            self._admission.skip(item, Skip(item.url, kind, reason), now)
            self._checkpoints.finished(item, skipped=kind)

    def __repr__(self) -> str:
        return f"RobotsRequests({self.cache!r}, {len(self.given_up)} given up)"
