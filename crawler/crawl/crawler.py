"""`Crawler`: wires the pure core (urls, robots, politeness, frontier, page) to the I/O shell
(fetch, robots_cache, store) and runs the crawl on the caller's event loop.

    async with Crawler(config, data_dir=Path("crawl-data")) as crawler:
        async for page in crawler.crawl(["https://example.org/"]):
            ...

How the crawl runs:
- One scheduler coroutine. Hosts with work wait in a `HostSchedule` heap keyed by their next
  allowed start; the scheduler launches every host that is due (up to `concurrency` requests in
  flight), then sleeps on one event until a request ends or one timer fires for the earliest host.
  Nothing polls and no task sleeps per host.
- Before any other URL of an origin, its robots.txt is fetched, in the origin's own politeness slot
  (it counts as a request to the host). A URL is checked against robots.txt when it is queued, if
  the rules are known, and again just before it is fetched.
- A request's task fetches, then acts on the answer: a retry with backoff (429, 5xx, network),
  a redirect hop queued like any other URL (so robots.txt, scope and politeness apply to it), or a
  page record with the links it queued.
- Skips are values: counted in `stats.skips` by reason and written to the sinks with their detail.
- `stop()` ends the crawl gracefully: nothing new starts, requests in flight get
  `state.stop_grace` seconds to finish, then are cancelled. Cancelling the crawl returns in-flight
  URLs to the frontier. Nothing queued is lost either way.
- The crawl state (crawler/state) holds the frontier, the seen set, robots.txt entries, host
  timing and the run record. With a data directory it is durable by default: DIR/state.sqlite,
  locked for the crawl's lifetime, committed by the `Checkpointer` (crawler/crawl/checkpoint.py). A
  crawl on a state left by an earlier run resumes it: its figures, seeds and scope, and its hosts
  with URLs queued, each host's timing as that run left it (`Politeness.resumed`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Coroutine, Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from crawler.config import Config
from crawler.crawl.checkpoint import Checkpointer
from crawler.crawl.hosts import Host, Slot, deferral_reason, host_report
from crawler.crawl.robots_cache import RobotsCache
from crawler.crawl.scope import Scope
from crawler.crawl.turns import Turns
from crawler.errors import OutputError
from crawler.frontier import QueuedUrl
from crawler.http.answer import FetchFailure, Response, is_html
from crawler.http.fetcher import Fetcher
from crawler.output.records import PageRecord, Skip, record_of
from crawler.output.sinks import PageSink, open_sinks
from crawler.page.read import Page, PageRules, read_page
from crawler.politeness import HostRules, HostSchedule, HostTiming, Politeness, parse_retry_after
from crawler.robots.entry import RobotsEntry
from crawler.state import CrawlState, DataDirLock, MemoryCrawlState, open_state
from crawler.stats import CrawlStats, DeferredHost, HostReport
from crawler.urls import InvalidUrlError, normalize_url, origin_of, resolve_url

__all__ = ["Crawler"]

log = logging.getLogger("crawler")

# Answers worth asking again after a backoff; anything else is the page's answer.
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
ROBOTS_DISALLOWED = "disallowed by robots.txt"
HOST_SKIPPED = "host skipped"
TIMER_SLACK = 0.001
CONNECTIONS_SPARE = 8
"""Connections the fetcher may hold beyond `concurrency`: idle ones of hosts just answered, kept
for their next request while others start."""
LAUNCH_BATCH = 64
"""Most requests started in one iteration of the event loop (crawler/crawl/turns.py says why)."""


class Crawler:
    """A polite crawl. One crawl at a time per instance; instances share nothing."""

    def __init__(
        self,
        config: Config,
        *,
        data_dir: Path | None = None,
        sinks: Sequence[PageSink] | None = None,
        state: CrawlState | None = None,
        start_time: float | None = None,
    ) -> None:
        """`sinks` default to those `config.output.format` names in `data_dir` when one is given
        (the full-text index, JSONL files or both), else none. `state` defaults to the state in
        `data_dir` (DIR/state.sqlite, unless `state.durable` is false), opened on entry, with the
        directory locked until exit; without a data directory, to memory. A `state` given is
        the caller's to lock and close. `start_time` sets the epoch the crawl's clock starts from
        (the default is now), for Visit-time windows."""
        self._config = config
        self._token = config.product_token
        self._page_rules = PageRules(self._token, config.page.follow_rel_nofollow)
        self._politeness = Politeness(config.politeness)
        self._sinks: list[PageSink] = list(sinks) if sinks is not None else []
        self._data_dir = data_dir
        self._given_state = state
        self._lock: DataDirLock | None = None
        self._bind(state if state is not None else MemoryCrawlState())
        self._fetcher = Fetcher(
            config.fetch, config.user_agent, connections=config.concurrency + CONNECTIONS_SPARE
        )
        self._start_time = start_time
        self._epoch0 = 0.0
        self._monotonic0 = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._hosts: dict[str, Host] = {}
        self._schedule = HostSchedule()
        self._scope = Scope()
        self._tasks: set[asyncio.Task[None]] = set()
        self._wake = asyncio.Event()
        self._turns = Turns()
        self._requests_in_flight = 0
        self._robots_answers: dict[str, Response | FetchFailure] = {}
        """The answers to robots.txt requests of the fetches under way, by URL."""
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None
        self._grace: asyncio.TimerHandle | None = None
        self._stopping = False
        self._page_starts = 0
        self._elapsed_before = 0.0
        self._ended_cleanly = False
        self._results: asyncio.Queue[PageRecord | None] = asyncio.Queue()
        self._deferred: list[DeferredHost] = []
        self._open = False
        self._running = False
        self.stats = CrawlStats()

    def _bind(self, state: CrawlState) -> None:
        self._state = state
        self._frontier = state.frontier
        self._seen = state.seen
        self._timings = state.timings
        self._robots = RobotsCache(
            self._config.robots, self._get_robots, store=state.robots, clock=self._now
        )
        self._checkpoints = Checkpointer(state, self._sinks, self._config.state.commit_interval)

    @property
    def state(self) -> CrawlState:
        """The frontier, seen set, robots.txt entries, host timing and run record (open once the
        crawler is entered)."""
        return self._state

    # --- lifetime --------------------------------------------------------------------------------

    async def __aenter__(self) -> Crawler:
        directory = self._data_dir
        try:
            if self._given_state is None and directory is not None:
                self._lock = DataDirLock(directory)
                if self._config.state.durable:
                    options = self._config.robots.options()
                    self._bind(open_state(directory, self._config.state, options))
            if directory is not None and not self._sinks:
                self._sinks.extend(open_sinks(directory, self._config.output.format))
            await self._fetcher.open()
        except BaseException:
            self._let_go()
            raise
        self._restore_stats()
        self._open = True
        return self

    def _let_go(self) -> None:
        """Close the state and release the lock if they are this crawler's own."""
        try:
            if self._given_state is None:
                self._state.close()
        finally:
            if self._lock is not None:
                self._lock.release()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._open = False
        failure: OutputError | None = None
        try:
            await self._fetcher.close()
            for sink in self._sinks:
                # Every sink gets closed, even after one fails; the first failure is raised after.
                # The index's close waits for its writer thread to commit the last batch.
                try:
                    await asyncio.to_thread(sink.close)
                except OutputError as closing:
                    failure = failure or closing
            if self._loop is not None:  # a run began
                # What the sinks stored is settled; a URL whose record they lost stays queued.
                self._checkpoints.close(self.stats, self._deferred, clean=self._ended_cleanly)
        finally:
            self._let_go()
        if failure is not None and error is None:
            raise failure

    def stop(self) -> None:
        """Stop gracefully: start nothing new; requests in flight get `state.stop_grace` seconds
        to finish, then are cancelled and their URLs go back to the queue; queued URLs stay."""
        self._stopping = True
        if self.stats.outcome == "running":
            self.stats.outcome = "stopped"
        if self._loop is not None and self._grace is None and self._running:
            self._grace = self._loop.call_later(
                self._config.state.stop_grace, self._cancel_in_flight
            )
        self._wake.set()

    def _cancel_in_flight(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    @property
    def deferred(self) -> tuple[DeferredHost, ...]:
        """Hosts left waiting longer than politeness.max_wait when the crawl stopped."""
        return tuple(self._deferred)

    @property
    def scope(self) -> Scope:
        return self._scope

    def _answered_at(self, answer: Response | FetchFailure | None, now: float) -> float:
        """When the host answered, on the crawl's clock: when the answer's first bytes arrived
        where the fetcher could tell (crawler/http/fetcher.py), else `now`, when the crawl saw
        it."""
        if isinstance(answer, Response) and answer.answered_at is not None:
            return min(now, self._epoch0 + (answer.answered_at - self._monotonic0))
        return now

    def _now(self) -> float:
        """Epoch seconds on the monotonic clock: immune to wall-clock steps. Not the loop's clock:
        uvloop's counts whole milliseconds, and a start stamped up to a millisecond early would
        let the next one come that much too soon."""
        return self._epoch0 + (time.monotonic() - self._monotonic0)

    # --- the crawl -------------------------------------------------------------------------------

    async def crawl(self, seeds: Iterable[str]) -> AsyncIterator[PageRecord]:
        """Crawl from `seeds` (URLs); yields a record per fetched URL as it completes."""
        if not self._open:
            raise RuntimeError("use the crawler as `async with Crawler(config) as crawler`")
        if self._running:
            raise RuntimeError("this Crawler is already crawling")
        self._running = True
        self._loop = asyncio.get_running_loop()
        self._monotonic0 = time.monotonic()
        self._epoch0 = self._start_time if self._start_time is not None else time.time()
        if self._state.run.stats() is None:
            self.stats.started_at = self._epoch0
        self._state.run.begin_run()
        self.stats.runs = self._state.run.runs()
        self._state.commit()  # from here on, a kill counts as a kill (RunStore.clean)
        self._checkpoints.next_at = self._epoch0 + self._config.state.commit_interval
        self._resume_hosts()
        self._add_seeds(seeds)
        runner = asyncio.create_task(self._run())
        try:
            while True:
                record = await self._results.get()
                if record is None:
                    break
                yield record
            await runner
        finally:
            if not runner.done():
                self.stop()
                runner.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await runner
            self._running = False

    def _restore_stats(self) -> None:
        """The figures of the runs before, in place (a progress display may hold `stats`)."""
        saved = self._state.run.stats()
        if saved is None:
            return
        stats = self.stats
        for name in ("started_at", "pages", "requests", "robots_fetches", "bytes", "retries"):
            setattr(stats, name, getattr(saved, name))
        stats.statuses = saved.statuses.copy()
        stats.errors = saved.errors.copy()
        stats.skips = saved.skips.copy()
        stats.page_rules = saved.page_rules.copy()
        stats.elapsed = self._elapsed_before = saved.elapsed
        stats.queued = len(self._frontier)
        self._page_starts = saved.pages

    def _resume_hosts(self) -> None:
        """Schedule every origin the state holds URLs of."""
        for origin in self._frontier.origins():
            if origin not in self._hosts:
                self._reschedule(self._new_host(origin), self._epoch0)

    def _add_seeds(self, seeds: Iterable[str]) -> None:
        normal: list[str] = []
        for seed in seeds:
            try:
                normal.append(normalize_url(seed))
            except InvalidUrlError as error:
                self._skip(Skip(seed, "invalid seed", error.reason))
        run = self._state.run
        run.add_seeds(normal)  # the seeds of every run set the scope; each is queued once
        scope = self._config.scope
        self._scope = Scope.for_seeds(
            run.seeds(),
            seed_hosts=scope.seed_hosts,
            include_subdomains=scope.include_subdomains,
            allow_domains=scope.allow_domains,
            allow=scope.allow,
            deny=scope.deny,
        )
        for url in normal:
            self._offer(url, 0)

    async def _run(self) -> None:
        max_wait = self._config.politeness.max_wait
        try:
            while True:
                now = self._now()
                if not self._stopping:
                    self._launch_due(now)
                self._update_stats(now)
                self._checkpoints.tick(now, self.stats)
                if not self._tasks:
                    if self._stopping:
                        break
                    due = self._schedule.next_due()
                    if due is None:
                        self.stats.outcome = "finished"
                        break
                    if due - now > max_wait:
                        self._defer_all(now)
                        break
                self._arm_timer()
                await self._wake.wait()
                self._wake.clear()
        except BaseException:
            # Cancelled, or a sink or the state failed: every request in flight gives its URL
            # back before the crawl ends.
            self._cancel_in_flight()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            raise
        finally:
            for handle in (self._timer, self._grace):
                if handle is not None:
                    handle.cancel()
            self._ended_cleanly = all(task.done() for task in self._tasks)
            self._update_stats(self._now())
            for sink in self._sinks:
                sink.flush()
            self._results.put_nowait(None)

    def _arm_timer(self) -> None:
        """One timer, for the earliest host (unless a request ending will wake us first anyway)
        or the next checkpoint, whichever comes first."""
        due = None
        if not self._stopping and self._may_launch():
            due = self._schedule.next_due()
        if self._tasks or not self._stopping:
            checkpoint = self._checkpoints.next_at
            due = checkpoint if due is None else min(due, checkpoint)
        if due == self._timer_at:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._timer_at = due
        if due is not None:
            assert self._loop is not None
            # A timer wakes the loop; _launch_due decides by _now(). uvloop's timers count whole
            # milliseconds and may fire that much early: arm one a millisecond late instead of
            # waking to find nothing due.
            delay = max(0.0, due - self._now()) + TIMER_SLACK
            self._timer = self._loop.call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self._timer_at = None
        self._wake.set()

    def _launch_due(self, now: float) -> None:
        limit = self._config.limits.max_pages
        launched = 0
        while self._may_launch():
            if launched == LAUNCH_BATCH:
                # More are due: go on in the next iteration, once the loop has polled
                # (crawler/crawl/turns.py says why a long iteration costs every host its pace).
                self._wake.set()
                break
            launched += 1
            if limit is not None and self._page_starts >= limit:
                self.stats.outcome = "page limit"
                self._stopping = True
                break
            origin = self._schedule.pop_due(now)
            if origin is None:
                break
            self._launch_host(self._hosts[origin], now)
        # The requests just launched run once this returns: what politeness must not forget is
        # committed first.
        self._checkpoints.before_requests()

    def _may_launch(self) -> bool:
        """Under `concurrency` requests in flight, and under as many answers waiting for their
        turn at the CPU: an answer waiting for its page step is no request in flight, but its
        body is held in memory."""
        cap = self._config.concurrency
        return self._requests_in_flight < cap and len(self._turns) < cap

    def _request_ended(self) -> None:
        self._requests_in_flight -= 1

    def _launch_host(self, host: Host, now: float) -> None:
        entry = self._robots.cached(host.origin, now)
        if entry is None:
            host.robots_busy = True
            slot = self._start(host, now)
            self._checkpoints.robots_moved()
            self._watch(host, slot, self._robots_task(host, slot), None)
            return
        if host.robots is None:
            # Known from an earlier run: its rules apply as if just fetched.
            host.robots = entry
            self._robots_known(host, entry)
            if host.retired is not None:
                return
        host.robots = entry
        if entry.blocks:
            self._schedule.put(host.origin, max(entry.expires_at, now))
            return
        while (item := self._frontier.pop(host.origin)) is not None:
            limit = self._config.limits.max_pages_per_host
            if limit is not None and host.timing.pages >= limit:
                self._frontier.push_front(host.origin, item)
                host.retired = f"over limits.max_pages_per_host ({limit})"
                return
            if not entry.robots.can_fetch(item.url, self._token):
                self._disallowed(item, entry, now)
                self._checkpoints.finished(item)
                continue
            if not item.redirected_from and not item.attempts:
                self._page_starts += 1
                host.timing.pages += 1
            slot = self._start(host, now)
            self._watch(host, slot, self._page_task(host, slot, item, now), item)
            break
        self._reschedule(host, now)

    def _start(self, host: Host, now: float) -> Slot:
        self._politeness.on_start(host.timing, now)
        self._timings.put(host.timing)
        self.stats.requests += 1
        self._requests_in_flight += 1
        return Slot(host, self._politeness, self._request_ended)

    def _watch(
        self,
        host: Host,
        slot: Slot,
        work: Coroutine[Any, Any, None],
        item: QueuedUrl | None,
    ) -> None:
        task = asyncio.create_task(self._guarded(host, slot, work, item))
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._wake.set()

    async def _guarded(
        self, host: Host, slot: Slot, work: Coroutine[Any, Any, None], item: QueuedUrl | None
    ) -> None:
        """Run one request's work; whatever happens, the host's slot is given back, and an
        interrupted URL goes back to the head of its queue."""
        try:
            await work
        except asyncio.CancelledError:
            if item is not None:
                self._frontier.push_front(host.origin, item)
            raise
        except Exception as error:  # a bug of ours must not end the crawl or lose the URL's fate
            log.exception("internal error on %s", item.url if item else host.origin)
            self.stats.errors["internal"] += 1
            # The host backs off as after a network error: a bug that recurs on every try must
            # not turn into requests at the host's full pace (with min_delay 0, a tight loop).
            self._politeness.on_failure(host.timing, self._now())
            if item is not None:
                self._emit(
                    self._record(item, self._now(), None, error=f"internal error: {error!r}")
                )
                self._checkpoints.finished(item)
        finally:
            now = self._now()
            slot.release(now)
            self._timings.put(host.timing)
            if item is None:
                host.robots_busy = False
            self._reschedule(host, now)

    # --- URLs in ---------------------------------------------------------------------------------

    def _offer(self, url: str, depth: int) -> bool:
        """Queue a normal URL found at `depth`, unless a rule says no; True when queued."""
        reason = self._scope.reason_out(url)
        if reason is not None:
            self.stats.skips[reason] += 1
            return False
        max_depth = self._config.limits.max_depth
        if max_depth is not None and depth > max_depth:
            self.stats.skips["over limits.max_depth"] += 1
            return False
        if not self._seen.add(url):
            return False
        origin = origin_of(url)
        host = self._hosts.get(origin) or self._new_host(origin)
        item = QueuedUrl(url, depth)
        if host.retired is not None:
            self._skip(Skip(url, HOST_SKIPPED, host.retired))
            return False
        entry = host.robots
        if entry is not None and not entry.blocks and not entry.robots.can_fetch(url, self._token):
            self._disallowed(item, entry, None)
            return False
        self._frontier.push(origin, item)
        self._reschedule(host, None)
        return True

    def _new_host(self, origin: str) -> Host:
        timing = self._timings.get(origin)
        if timing is None:
            timing = HostTiming(origin)
        else:
            # Left by an earlier run: a new run meets it here first.
            known = self._robots.store.get(origin) is not None
            self._politeness.resumed(
                timing, self._epoch0, clean=self._state.run.clean(), rules_known=known
            )
        self._timings.put(timing)
        host = self._hosts[origin] = Host(timing)
        return host

    def _reschedule(self, host: Host, now: float | None) -> None:
        """Put the host in the schedule at its next allowed start if it has work it may start."""
        if host.retired is not None or host.robots_busy:
            return
        if not self._politeness.may_start(host.timing):
            return
        if not self._frontier.pending(host.origin):
            return
        at = self._politeness.ready_at(host.timing, self._now() if now is None else now)
        self._schedule.put(host.origin, at)
        self._wake.set()

    # --- robots.txt ------------------------------------------------------------------------------

    async def _get_robots(self, url: str, max_bytes: int) -> Response | FetchFailure:
        answer = await self._fetcher.get(url, max_bytes=max_bytes)
        self._robots_answers[url] = answer
        return answer

    async def _robots_task(self, host: Host, slot: Slot) -> None:
        entry = await self._robots.get(host.origin)
        now = self._now()
        answer = None
        for hop in entry.hops:  # the last hop's answer ends the request
            answer = self._robots_answers.pop(hop, answer)
        slot.release(self._answered_at(answer, now))
        self._checkpoints.robots_moved()
        host.robots_busy = False
        host.robots = entry
        self.stats.robots_fetches += 1
        self.stats.requests += len(entry.hops) - 1
        if entry.unreachable:
            self._politeness.on_failure(host.timing, now)
        if entry.blocks:
            host.timing.backoff_until = max(host.timing.backoff_until, entry.expires_at)
            log.info(
                "robots.txt of %s: %s; next try in %.1f s",
                host.origin,
                entry.reason,
                entry.expires_at - now,
            )
            return
        self._robots_known(host, entry)

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

    def _retire(self, host: Host, reason: str) -> None:
        host.retired = reason
        while (item := self._frontier.pop(host.origin)) is not None:
            self._skip(Skip(item.url, HOST_SKIPPED, reason))
            self._checkpoints.finished(item)

    def _disallowed(self, item: QueuedUrl, entry: RobotsEntry, now: float | None) -> None:
        verdict = entry.robots.explain(item.url, self._token)
        self._skip(Skip(item.url, ROBOTS_DISALLOWED, verdict.message))
        if item.redirected_from:
            error = f"redirect to {item.url} not followed: {ROBOTS_DISALLOWED} ({verdict.message})"
            at = now if now is not None else self._now()
            self._emit(
                self._record(
                    item, at, None, status=item.redirect_status, error=error, reached=False
                )
            )

    # --- answers ---------------------------------------------------------------------------------

    async def _page_task(self, host: Host, slot: Slot, item: QueuedUrl, started_at: float) -> None:
        answer = await self._fetcher.get(item.url, html_only=True)
        now = self._now()
        slot.release(self._answered_at(answer, now))
        if isinstance(answer, FetchFailure):
            self.stats.errors[answer.kind] += 1
            # A kept-alive connection the server closed as the request came is no sign of
            # trouble: asked again at the host's pace, without a backoff (crawler/http/http1.py).
            retry_after = 0.0 if answer.kind == "closed" else None
            self._failed(host, item, started_at, now, None, str(answer), retry_after)
            return
        status = answer.status
        self.stats.statuses[status] += 1
        self.stats.bytes += len(answer.body)
        if status in RETRY_STATUSES:
            retry_after = None
            if status in (429, 503):
                retry_after = parse_retry_after(answer.headers.get("Retry-After"), now)
            self._failed(host, item, started_at, now, status, f"status {status}", retry_after)
            return
        self._politeness.on_success(host.timing)
        # The host's pace is settled (no backoff), so it may go on while this answer waits its
        # turn at the CPU (crawler/crawl/turns.py).
        self._reschedule(host, now)
        await self._turns.take()
        if 300 <= status < 400 and answer.location:
            self._redirect(item, answer, started_at)
            return
        self._page(item, answer, started_at)

    def _failed(
        self,
        host: Host,
        item: QueuedUrl,
        started_at: float,
        now: float,
        status: int | None,
        error: str,
        retry_after: float | None,
    ) -> None:
        until = self._politeness.on_failure(host.timing, now, retry_after)
        if item.attempts < self._config.fetch.max_retries:
            self.stats.retries += 1
            log.info("%s: %s; retry after %.1f s", item.url, error, until - now)
            self._frontier.push_front(host.origin, item.retried())
            return
        tries = item.attempts + 1
        self._emit(
            self._record(item, started_at, None, status=status, error=f"{error} ({tries} tries)")
        )
        self._checkpoints.finished(item)

    def _redirect(self, item: QueuedUrl, answer: Response, started_at: float) -> None:
        location = answer.location or ""
        stopped = None
        target = ""
        try:
            target = resolve_url(item.url, location)
        except InvalidUrlError as error:
            stopped = f"redirect to an unusable URL ({error.reason})"
        if stopped is None and len(item.redirected_from) >= self._config.fetch.max_redirects:
            stopped = (
                f"more than fetch.max_redirects ({self._config.fetch.max_redirects}) redirects"
            )
        if stopped is None:
            reason = self._scope.reason_out(target)
            if reason is not None:
                self.stats.skips[reason] += 1
                self._skip(Skip(target, reason, f"redirect from {item.url}"))
                stopped = f"redirect to {target} not followed: {reason}"
        if stopped is None and target in self._seen:
            stopped = f"redirect to {target}, a URL already seen"
        if stopped is not None:
            self._emit(self._record(item, started_at, answer, error=stopped))
            self._checkpoints.finished(item)
            return
        self._seen.add(target)
        origin = origin_of(target)
        host = self._hosts.get(origin) or self._new_host(origin)
        hop = QueuedUrl(
            target, item.depth, (*item.redirected_from, item.url), redirect_status=answer.status
        )
        entry = host.robots
        if (
            entry is not None
            and not entry.blocks
            and not entry.robots.can_fetch(target, self._token)
        ):
            self._disallowed(hop, entry, started_at)
            self._checkpoints.finished(item)
            return
        self._frontier.push(origin, hop)
        self._checkpoints.finished(item)  # its chain goes on as `hop`
        self._reschedule(host, None)

    def _page(self, item: QueuedUrl, answer: Response, started_at: float) -> None:
        page: Page | None = None
        if 200 <= answer.status < 300 and is_html(answer.content_type) and answer.body:
            page = read_page(
                answer.body,
                item.url,
                charset=answer.charset,
                x_robots_tag=answer.headers.getall("X-Robots-Tag", ()),
                rules=self._page_rules,
            )
            self._count_rules(page)
            if page.follow:
                depth = item.depth + 1
                for link in page.links:
                    self._offer(link, depth)
        self._emit(self._record(item, started_at, answer, page=page))
        self._checkpoints.finished(item)

    def _count_rules(self, page: Page) -> None:
        rules = self.stats.page_rules
        rules["indexed" if page.index else "noindex"] += 1
        if not page.follow:
            rules["nofollow"] += 1
        if page.sections:
            rules["with sections"] += 1
        rules["links not followed"] += len(page.nofollow_links)

    # --- out -------------------------------------------------------------------------------------

    def _record(
        self,
        item: QueuedUrl,
        fetched_at: float,
        answer: Response | None,
        *,
        status: int | None = None,
        error: str | None = None,
        page: Page | None = None,
        reached: bool = True,
    ) -> PageRecord:
        if not reached:
            # Stopped before fetching `item`: the chain ends at the hop before it.
            chain = item.redirected_from
            return record_of(chain[0], chain[-1], chain[:-1], item.depth, fetched_at, status, error)
        return record_of(
            item.first_url,
            item.url,
            item.redirected_from,
            item.depth,
            fetched_at,
            status,
            error,
            answer,
            page,
        )

    def _emit(self, record: PageRecord) -> None:
        self.stats.pages += 1
        for sink in self._sinks:
            sink.page(record)
        self._checkpoints.handed()
        self._results.put_nowait(record)

    def _skip(self, skip: Skip) -> None:
        self.stats.skips[skip.reason] += 1
        for sink in self._sinks:
            sink.skip(skip)
        self._checkpoints.handed()

    def _update_stats(self, now: float) -> None:
        stats = self.stats
        stats.elapsed = self._elapsed_before + (now - self._epoch0)
        stats.updated_at = now
        stats.in_flight = self._requests_in_flight
        stats.hosts_waiting = len(self._schedule)
        stats.queued = len(self._frontier)

    def _defer_all(self, now: float) -> None:
        self.stats.outcome = "deferred"
        for origin, until in self._schedule.waiting():
            host = self._hosts[origin]
            pending = self._frontier.pending(origin)
            self._deferred.append(DeferredHost(origin, until, pending, deferral_reason(host, now)))

    def host_reports(self) -> list[HostReport]:
        """How each origin was paced, busiest first."""
        now = self._now() if self._loop is not None else 0.0
        reports = [
            host_report(host, self._politeness, now)
            for host in self._hosts.values()
            if host.timing.requests
        ]
        reports.sort(key=lambda report: (-report.requests, report.origin))
        return reports

    def __repr__(self) -> str:
        return (
            f"Crawler({self.stats.outcome}, {self._requests_in_flight} in flight, "
            f"{len(self._schedule)} hosts scheduled, {len(self._frontier)} queued)"
        )
