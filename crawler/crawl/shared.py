"""The crawl's side of a shared state (crawler.state.shared): one worker of a crawl whose
schedule, frontier and seen set live in Valkey or Redis. `SharedHosts` is the crawl's host
coordination (crawler.crawl.coordination) for such a worker, chosen when the crawler is built
(`join_shared_crawl`).

The single-process crawl is unchanged; a worker differs in three places:
- Its local schedule only ever holds hosts it has *claimed*: `SharedHosts.claim_loop` asks the
  server for hosts due within `CLAIM_AHEAD` (with per_host_concurrency URLs leased with each),
  restores each host's timing and robots.txt entry from what the last holder left, and puts it
  in the scheduler at its next allowed start: now plus the wait the server counted, a duration,
  so the worker's timer starts it on time and never early. Claiming ahead is for the worker that
  last held a host (it knows it); once due, anyone may take it. The launch path is today's:
  robots.txt first when none is fresh, then the URLs, in the host's slot.
- Where the single process would put a host back in its heap (`Scheduler.reschedule`), a worker
  *releases* it once nothing of it is in flight: the server sets its next start to the server's
  TIME plus the delay the worker measured (`Politeness.ready_at` - now, from the answer), so no
  clock but the server's decides a gap between two holders. What the worker did not fetch goes
  back to the head of the host's queue. A host whose claimed URLs are not all started yet (after
  its robots.txt, say) is *kept* instead, and the server told its interval, rules and robots.txt
  entry (`SharedHosts.holds`).
- `ClaimedFrontier` stands where the frontier was: the URLs a worker admits are offered to the
  shared queues (the server's seen set keeps each URL once across the crawl), the claimed URL
  waits locally until it is started, and `done` ends its lease once its page is stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import time
from collections.abc import Callable, Coroutine, Iterable, Sequence
from typing import Any

from crawler.config import Config
from crawler.crawl.claimed import (
    ClaimedFrontier,
    entry_version,
    host_record,
    restore_host,
    robots_entry,
    robots_text,
)
from crawler.crawl.clock import CrawlClock
from crawler.crawl.hosts import Host, HostTable
from crawler.crawl.shared_recrawl import SharedRecrawls
from crawler.errors import SharedStateError
from crawler.http.cookies import CookieJar
from crawler.politeness import Politeness
from crawler.robots.entry import RobotsStore
from crawler.state.shared.cookies import SharedCookies
from crawler.state.shared.fresh import SharedFreshness, SharedWorkerState
from crawler.state.shared.library import Claim, ClusterStatus, Release
from crawler.state.shared.schedule import SharedSchedule, WorkerLapsedError
from crawler.stats import Outcome
from crawler.urls import InvalidUrlError, normalize_url

__all__ = ["ClaimedFrontier", "SharedHosts", "cluster_end", "join_shared_crawl"]

log = logging.getLogger(__name__)

IDLE_POLL = 0.2
"""Longest wait between two claims when nothing local wakes the worker: hosts other workers
make due (their offers) are seen this late at most."""
CLAIM_AHEAD = 0.5
"""Seconds before a host's next allowed start that a worker may claim it, to start it then by
its own timer: a host claimed only once due would start a poll interval and a round trip late,
at every request (at 1,000 hosts, 2 workers: 0.05 s late a gap, 0.17 s after robots.txt). The
wait comes from the server as a duration, so it is never shorter than the server decided."""
KEEP_FOR = 10.0
"""Longest wait before its next start a worker keeps a host through (`SharedHosts.keep`); a
longer one (a backoff) hands the host back to the schedule, where any worker may take it then."""
EMPTY_CLAIM_WAIT = 0.02
"""Least wait after a claim that found nothing to take, though a host is due soon."""
CLAIM_BATCH = 1024
"""Most hosts one claim takes (one round trip, one script run holding the server)."""
FINISHED_CHECKS = 2
"""Times in a row the cluster must look finished (nothing queued, leased or held, nothing
buffered here) before a worker ends: another worker's page step may be about to offer more."""
WORKER_PACING = os.environ.get("CRAWLER_SHARED_PACING") == "worker"
"""A control for benchmarks/bench_shared.py, and nothing else: each worker paces the hosts it
takes by its own clock and memory, and the server lets any worker take a host as soon as it is
released, as scrapy-redis does. Its short gaps show that the benchmark can see them."""


async def join_shared_crawl(
    config: Config, clock: CrawlClock, politeness: Politeness, jar: CookieJar | None = None
) -> tuple[SharedWorkerState, Callable[[HostTable], SharedHosts]]:
    """Become one worker of the shared crawl `state.url` names: the local state (in memory) holds
    only what this worker has claimed (its frontier, fetch log and freshness are the server's:
    crawler.state.shared.fresh), and the coordination to build on the crawl's hosts.
    `jar` (fetch.cookies) becomes the crawl's, shared with the other workers through the server
    (crawler.state.shared.cookies), filled with what it holds already."""
    polite = config.politeness
    schedule = await SharedSchedule.open(
        config.state.url,
        prefix=config.state.key_prefix,
        heartbeat_ttl=config.state.heartbeat,
        lease=config.state.claim_lease,
        default_interval=max(polite.min_delay, polite.max_crawl_delay),
    )
    # One clock for the windows of Visit-time and Request-rate: the server's.
    clock.align(*schedule.server_time)
    if jar is not None:
        schedule.cookies = SharedCookies(jar, schedule.crawl.worker)
        try:
            await schedule.read_cookies()
        except BaseException:
            await schedule.close()
            raise
    fresh = schedule.fresh = SharedFreshness(schedule.crawl.worker)
    frontier = ClaimedFrontier(schedule)
    state = SharedWorkerState(frontier=frontier, fetches=fresh.fetches, freshness=fresh.store)
    recrawls = SharedRecrawls(schedule, fresh, state.seen, config.recrawl.keep_fresh)

    def coordinate(hosts: HostTable) -> SharedHosts:
        return SharedHosts(
            schedule,
            frontier,
            config=config,
            politeness=politeness,
            hosts=hosts,
            robots_store=state.robots,
            clock=clock,
            recrawls=recrawls,
        )

    return state, coordinate


class SharedHosts:
    """Claims, releases and the end of a worker's crawl (see the module doc)."""

    def __init__(
        self,
        schedule: SharedSchedule,
        frontier: ClaimedFrontier,
        *,
        config: Config,
        politeness: Politeness,
        hosts: HostTable,
        robots_store: RobotsStore,
        clock: CrawlClock,
        recrawls: SharedRecrawls | None = None,
    ) -> None:
        self.schedule = schedule
        self._recrawls = recrawls
        # A crawl kept fresh defers no host: it waits as long as it takes.
        self._max_wait = math.inf if config.recrawl.keep_fresh else config.politeness.max_wait
        self._frontier = frontier
        self._config = config
        self._politeness = politeness
        self._hosts = hosts
        self._robots_store = robots_store
        self._robots_options = config.robots.options()
        self._clock = clock
        self._claimed: dict[str, str] = {}
        """Origins this worker holds -> the robots.txt version it had when claiming."""
        self._poke = asyncio.Event()
        self._seeds_known = 0
        self.pending = 0
        """The crawl's URLs queued, as the last claim said (the progress line's "queued")."""
        self.scheduled = 0
        """The crawl's hosts scheduled, as the last claim said (its "waiting")."""
        self._widen_scope: Callable[[Sequence[str]], None] = lambda seeds: None
        self.finished = False
        self.outcome: Outcome = "finished"

    # --- the coordination (crawler.crawl.coordination) -------------------------------------------

    async def join(
        self, seeds: Sequence[str], widen: Callable[[Sequence[str]], None]
    ) -> Sequence[str]:
        """The crawl's seeds, this worker's added: its scope is every worker's seeds, those
        known now and, through `widen`, those added later."""
        known = await self.schedule.seeds(_normal(seeds))
        self._seeds_known = len(known)
        self._widen_scope = widen
        return known

    def scope_widened(self, url: str) -> None:
        self.schedule.add_seed(url)

    async def recrawl_pass(self, now: float) -> float | None:
        """The crawl's recrawl pass: every worker's begins when the first one's did."""
        return await self._recrawls.begin() if self._recrawls is not None else None

    async def refresh_fetches(self) -> None:
        if self._recrawls is not None:
            await self._recrawls.refresh()

    def background(
        self,
        room: Callable[[], int],
        claimed: Callable[[Host, float], None],
        drop: Callable[[str], None],
    ) -> Coroutine[Any, Any, None]:
        self.finished, self.outcome = False, "finished"  # a crawl kept fresh runs again
        return self.claim_loop(room, claimed, drop)

    def keep(self, host: Host, now: float | None) -> bool:
        """Keep `host` (`holds`), or let it go (`release`)."""
        moment = self._clock.now() if now is None else now
        if self.holds(host, moment):
            return True
        self.release(host, moment)
        return False

    def keep_until(self, host: Host, at: float) -> bool:
        self.release(host, self._clock.now(), at)
        return False

    def end(self, now: float, next_due: float | None) -> Outcome | None:
        """The cluster's end, once the claim loop has seen it and nothing is scheduled here."""
        return self.outcome if self.finished and next_due is None else None

    def counts(self, scheduled: int) -> tuple[int, int]:
        """The crawl's, as the server last said."""
        return self.scheduled, self.pending

    def announce(self, info: str) -> None:
        """Carried by the heartbeats from the next one on (`crawl status --state` reads it)."""
        self.schedule.info = info

    async def close(self) -> None:
        """Done-marks sent; what this worker still leases or holds goes back."""
        await self.schedule.close()

    # --- claims and releases ---------------------------------------------------------------------

    def holds(self, host: Host, now: float) -> bool:
        """Keep `host` instead of releasing it, when the worker still holds a URL it claimed
        with the host, unstarted (its robots.txt went first, or per_host_concurrency lets
        another start beside the one in flight), and may start it soon; True when kept. The
        next start is then this worker's to time, as in a single process: nobody else may start
        a request to a host held. A round trip is saved, and a poll's lateness after
        robots.txt. The server learns the host's interval and robots.txt entry all the same, so
        that a reaping waits the interval and the next holder does not fetch robots.txt again."""
        origin = host.origin
        politeness = self._politeness
        if not (
            origin in self._claimed
            and host.retired is None
            and not host.robots_busy
            and self._frontier.pending(origin) > 0
            and politeness.may_start(host.timing)
            and politeness.ready_at(host.timing, now) - now <= KEEP_FOR
        ):
            return False
        entry = host.robots
        robots = robots_at = ""
        if entry is not None and entry_version(entry) != self._claimed[origin]:
            robots, robots_at = robots_text(entry), entry_version(entry)
            self._claimed[origin] = robots_at
        interval_us = round(politeness.host_interval(host.timing, now) * 1e6)
        self.schedule.hold(origin, interval_us, host_record(host), robots, robots_at)
        self._poke.set()
        return True

    def release(self, host: Host, now: float, at: float | None = None) -> None:
        """Let a claimed host go once nothing of it is in flight: its next start is
        `politeness.ready_at` (or `at`, when later) from now, counted by the server."""
        origin = host.origin
        if origin not in self._claimed or host.robots_busy:
            return
        if host.timing.in_flight:
            # Let go once nothing of it is in flight: only the holder sends requests, so
            # per_host_concurrency holds for the crawl.
            return
        known_version = self._claimed.pop(origin)
        ready = self._politeness.ready_at(host.timing, now)
        if at is not None:
            ready = max(ready, at)
        unused, requeued = self._frontier.give_back(origin)
        if WORKER_PACING:
            ready = now
        robots = robots_at = ""
        entry = host.robots
        if entry is not None and entry_version(entry) != known_version:
            robots, robots_at = robots_text(entry), entry_version(entry)
        self.schedule.release(
            Release(
                origin,
                round((ready - now) * 1e6),
                round(self._politeness.host_interval(host.timing, now) * 1e6),
                host_record(host),
                robots,
                robots_at,
                unused,
                tuple(requeued),
            )
        )
        self._poke.set()

    def may_launch(self) -> bool:
        """Whether this worker may still start requests: not once its heartbeat could have
        lapsed, when the others may have given its hosts to someone else, nor once the server is
        lost (a host claimed ahead would start by its timer, and the server, back, would not
        know of it)."""
        return time.monotonic() < self.schedule.alive_until and not self.schedule.lost

    async def claim_loop(
        self,
        capacity: Callable[[], int],
        wake: Callable[[Host, float], None],
        drop: Callable[[str], None],
    ) -> None:
        """Claim due hosts while the worker has room (`capacity()`), hand each to `wake`, and
        send what is buffered; ends when the whole crawl has nothing left. When the server is
        lost, start nothing, reach it again, and `drop` every host held before (crawler.state.
        shared.schedule, `recover`)."""
        while True:
            try:
                await self._claim_until_done(capacity, wake)
                return
            except SharedStateError as error:
                lapsed = isinstance(error, WorkerLapsedError)
                if not (self.schedule.lost or lapsed):
                    raise
                if lapsed:
                    log.warning("%s: dropping what it held, and rejoining the crawl", error)
                else:
                    log.warning(
                        "lost the state server %s: starting nothing until it is back",
                        self.schedule.crawl.connection.address,
                    )
                for origin in self._claimed:
                    drop(origin)
                self._claimed.clear()
                self._frontier.forget()
                await self.schedule.recover(self._config.state.url)
                if not lapsed:
                    log.warning("the state server is back: this worker rejoined the crawl")

    async def _claim_until_done(
        self, capacity: Callable[[], int], wake: Callable[[Host, float], None]
    ) -> None:
        schedule = self.schedule
        limits = self._config.limits
        quiet = 0
        while True:
            schedule.check_alive()
            want = max(0, min(capacity() - len(self._claimed), CLAIM_BATCH))
            claim = await schedule.tick(
                want,
                max_pages=limits.max_pages or 0,
                max_pages_per_host=limits.max_pages_per_host or 0,
                ahead=CLAIM_AHEAD,
                per_host=self._config.politeness.per_host_concurrency,
            )
            wait = IDLE_POLL
            if claim is not None:
                self.pending, self.scheduled = claim.pending, claim.scheduled
                await self._take(claim, wake)
                if claim.next_due_us is not None:
                    until_claimable = (claim.next_due_us - claim.now_us) / 1e6 - CLAIM_AHEAD
                    # The host next due may be another worker's to claim ahead (the server
                    # gives it to the one that last held it): not a reason to ask again at once.
                    wait = min(wait, max(EMPTY_CLAIM_WAIT, until_claimable))
                if claim.hosts:
                    quiet = 0
                    continue
            if not self._claimed and not schedule.buffered and want > 0:
                status = await schedule.status()
                self.pending, self.scheduled = status.pending, status.scheduled
                ending = cluster_end(status, max_pages=limits.max_pages, max_wait=self._max_wait)
                quiet = quiet + 1 if ending is not None else 0
                if ending is not None and quiet >= FINISHED_CHECKS:
                    if ending == "finished" and self._recrawls is not None:
                        await self._recrawls.over()
                    self.outcome = ending
                    self.finished = True
                    return
            self._poke.clear()
            if schedule.buffered:
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._poke.wait(), timeout=wait)

    async def _take(self, claim: Claim, wake: Callable[[Host, float], None]) -> None:
        if not claim.hosts:
            return
        if claim.seeds != self._seeds_known:
            # Another worker added seeds: they widen the scope, before any page is read here
            # that may link into it.
            seeds = await self.schedule.seeds(())
            self._seeds_known = len(seeds)
            self._widen_scope(seeds)
        wanted = [
            host.origin
            for host in claim.hosts
            if host.robots_at
            and entry_version(self._robots_store.get(host.origin)) != host.robots_at
        ]
        entries = await self.schedule.crawl.robots(wanted)
        for text in entries:
            if text:
                self._robots_store.put(robots_entry(text, self._robots_options))
        # Heard after the server decided: a wait counted from now ends no earlier than its own.
        now = self._clock.now()
        for claimed in claim.hosts:
            host = self._hosts.get(claimed.origin)
            if claimed.timing:
                restore_host(host, claimed.timing)
            entry = self._robots_store.get(claimed.origin)
            if entry is not None and claimed.timing:
                # Its rules came with its timing record. Without one, the launch reads them from
                # the entry (crawler.crawl.launch), as for a host known from before.
                host.robots = entry
            self._claimed[claimed.origin] = entry_version(entry)
            self._frontier.claimed(claimed.origin, claimed.items)
            # The server says when it is due: whatever this worker's clock remembers of the host,
            # it starts then. Its timing says so too, so that a release meanwhile (a page step of
            # its last answer ending) hands back no less a wait.
            at = now + claimed.wait_us / 1e6
            if WORKER_PACING:
                at = max(at, host.timing.next_start, host.timing.backoff_until)
            host.timing.next_start, host.timing.backoff_until = at, 0.0
            wake(host, at)

    def __repr__(self) -> str:
        return f"SharedHosts({len(self._claimed)} held, {self.schedule!r})"


def cluster_end(status: ClusterStatus, *, max_pages: int | None, max_wait: float) -> Outcome | None:
    """How the whole crawl ends, as `status` shows it, or None while it goes on: nothing queued,
    leased or held (finished); only URLs past limits.max_pages left (page limit); or nothing
    leased or held and the next host due more than politeness.max_wait away (deferred: its
    URLs stay queued for a later run)."""
    if status.leased or status.held:
        return None
    if status.pending == 0:
        return "finished"
    if max_pages is not None and status.pages_started >= max_pages:
        return "page limit"
    if status.next_due_us is not None and (status.next_due_us - status.now_us) / 1e6 > max_wait:
        return "deferred"
    return None


def _normal(urls: Iterable[str]) -> list[str]:
    normal = []
    for url in urls:
        try:
            normal.append(normalize_url(url))
        except InvalidUrlError:
            continue  # a skip of its own, once admission meets it
    return normal
