"""The launch loop: hosts by their next allowed start, one timer, the requests in flight.

One coroutine (`Scheduler.run`). Hosts with work wait in a `HostSchedule` heap keyed by their next
allowed start; the loop launches every host that is due (up to `concurrency` requests in flight),
then sleeps on one event until a request ends or one timer fires for the earliest host or the
next checkpoint. Nothing polls and no task sleeps per host. What a launch does with its host is
the launcher's (crawler.crawl.launch); the scheduler starts the request's slot, runs its work as
a task, and whatever happens gives the slot back and puts the host in the schedule again (a bug
of ours in the work is the launcher's to settle). Whether a host stays this process's to
schedule, and when the crawl is over, is the coordination's (crawler.crawl.coordination): the
process's own, or a shared crawl's.

`stop()` ends the run gracefully: nothing new starts, requests in flight get `stop_grace` seconds
to finish, then are cancelled; a cancelled request's URL goes back to the head of its queue.
"""

from __future__ import annotations

import asyncio
import inspect
from collections import deque
from collections.abc import Coroutine
from typing import Any, Protocol

from crawler.crawl.checkpoint import Checkpointer
from crawler.crawl.clock import CrawlClock
from crawler.crawl.coordination import HostCoordination
from crawler.crawl.hosts import Host, HostTable, Slot, deferral_reason
from crawler.crawl.servers import ServerGate
from crawler.crawl.turns import Turns
from crawler.frontier import Frontier, QueuedUrl
from crawler.politeness import HostSchedule, HostTimingStore, Politeness, ServerPacing
from crawler.state.interface import StartLog
from crawler.stats import CrawlStats, DeferredHost

__all__ = ["LAUNCH_BATCH", "TIMER_SLACK", "Launcher", "Scheduler"]

TIMER_SLACK = 0.001
LAUNCH_BATCH = 64
"""Most requests started in one iteration of the event loop (crawler.crawl.turns says why)."""


class Launcher(Protocol):
    """What the scheduler asks of the crawl's request work."""

    def launch(self, host: Host, now: float) -> None:
        """`host` is due: start its next request (through `Scheduler.start` and `watch`), or
        settle why it has none."""

    def at_page_limit(self) -> bool:
        """No more pages may start (limits.max_pages)."""
        ...

    def internal_error(self, host: Host, item: QueuedUrl | None, error: Exception) -> None:
        """A bug of ours in the work of a request to `host` (its robots.txt when `item` is
        None): settle it without ending the crawl or losing the URL's fate."""


class Scheduler:
    def __init__(
        self,
        *,
        clock: CrawlClock,
        politeness: Politeness,
        hosts: HostTable,
        frontier: Frontier,
        timings: HostTimingStore,
        starts: StartLog,
        checkpoints: Checkpointer,
        stats: CrawlStats,
        coordination: HostCoordination,
        concurrency: int,
        stop_grace: float,
        slow_after: float = float("inf"),
        max_slow: int = 0,
        servers: ServerPacing | None = None,
        pinned: dict[str, str] | None = None,
    ) -> None:
        self._clock = clock
        self._politeness = politeness
        self._hosts = hosts
        self._frontier = frontier
        self._timings = timings
        self._start_log = starts
        self._checkpoints = checkpoints
        self._stats = stats
        self._coordination = coordination
        self._keep = coordination.keep
        self._concurrency = concurrency
        self._slow_after = slow_after
        self._max_slow = max_slow
        self._starts: deque[tuple[float, Slot]] = deque()
        """Requests in flight not yet counted slow (and some ended), by start."""
        self._slow_count = 0
        """Requests in flight counted slow."""
        self._stop_grace = stop_grace
        self._schedule = HostSchedule()
        self._tasks: set[asyncio.Task[None]] = set()
        self._wake = asyncio.Event()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None
        self._grace: asyncio.TimerHandle | None = None
        self._running = self._ran = False
        self._elapsed_before = 0.0
        self.turns = Turns()
        """Page steps take turns at the CPU, one per iteration of the event loop."""
        self.requests_in_flight = 0
        self.stopping = False
        self.deferred: list[DeferredHost] = []
        """Hosts left waiting longer than max_wait when the run stopped."""
        self.ended_cleanly = False
        """The run ended with no request left in flight: every lease ended or given back."""
        self._background: asyncio.Task[None] | None = None
        """What the coordination runs beside the loop (a shared crawl's claims)."""
        self._launcher: Launcher | None = None
        self.servers = (
            ServerGate(
                servers,
                pinned or {},
                schedule=self._schedule,
                clock=clock,
                run=self._run_task,
                reschedule=self.reschedule,
            )
            if servers is not None
            else None
        )
        """politeness.per_server: hosts grouped by their server's address (None: off)."""

    # --- the loop --------------------------------------------------------------------------------

    async def run(self, launcher: Launcher) -> None:
        self._running = True
        self._launcher = launcher
        if not self._ran:  # a crawl kept fresh runs the loop again: its clock goes on
            self._elapsed_before, self._ran = self._stats.elapsed, True
        background = self._coordination.background(
            self._room_to_claim, self.claimed, self._schedule.discard
        )
        if background is not None:
            self._background = asyncio.create_task(background)
            self._background.add_done_callback(lambda _: self._wake.set())
        try:
            while True:
                now = self._clock.now()
                if not self.stopping:
                    self._launch_due(launcher, now)
                self.update_stats(now)
                self._checkpoints.tick(now, self._stats)
                if self._checkpoints.full is not None and not self.stopping:
                    self.stop()  # a full disk: what is in flight finishes, its records kept
                if self._background is not None and self._background.done():
                    self._background.result()  # a lost state server ends the crawl here
                if not self._tasks:
                    if self.stopping:
                        break
                    ending = self._coordination.end(now, self._schedule.next_due())
                    if ending == "deferred":
                        self._defer_all(now)
                        break
                    if ending is not None:
                        if self._stats.outcome == "running":
                            self._stats.outcome = ending
                        break
                self._arm_timer()
                await self._wake.wait()
                self._wake.clear()
        except BaseException:
            # Cancelled, or a sink or the state failed: every request in flight gives its URL
            # back before the crawl ends.
            self.cancel_in_flight()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            raise
        finally:
            self._running = False
            if self._background is not None and not self._background.done():
                self._background.cancel()
                await asyncio.gather(self._background, return_exceptions=True)
            self.turns.close()
            self._timer_at = None  # a crawl kept fresh arms the timer again in its next pass
            for handle in (self._timer, self._grace):
                if handle is not None:
                    handle.cancel()
            self.ended_cleanly = all(task.done() for task in self._tasks)
            self.update_stats(self._clock.now())
        if self._checkpoints.full is not None:
            raise self._checkpoints.full

    def _launch_due(self, launcher: Launcher, now: float) -> None:
        if not self._coordination.may_launch():
            return  # the coordination ends the crawl: this worker may have been given up
        launched = started = 0
        servers = self.servers
        while self._may_launch(now):
            if launched == LAUNCH_BATCH:
                # More are due: go on in the next iteration, once the loop has polled
                # (crawler.crawl.turns says why a long iteration costs every host its pace).
                self._wake.set()
                break
            launched += 1
            if launcher.at_page_limit():
                self._stats.outcome = "page limit"
                self.stopping = True
                break
            origin = self._schedule.pop_due(now)
            if origin is None:
                break
            host = self._hosts[origin]
            if servers is not None and not servers.allows(host, now):
                continue
            launcher.launch(host, now)
            started += 1
        if started:
            # The requests just launched run once this returns: what politeness must not forget
            # is committed first.
            self._checkpoints.before_requests()

    def _may_launch(self, now: float) -> bool:
        """Under `concurrency` requests in flight, and under as many answers waiting for their
        turn at the CPU: an answer waiting for its page step is no request in flight, but its
        body is held in memory. A request running longer than fetch.slow_after counts no more,
        up to fetch.max_slow_requests of them: waiting on a slow server (a byte every few
        seconds, an answer that never comes) costs a socket and a few kilobytes, not a slot, so
        the other hosts keep their pace whatever the number of tarpits."""
        cap = self._concurrency
        counted = self.requests_in_flight
        if counted >= cap:
            counted -= min(self._count_slow(now), self._max_slow)
        return counted < cap and len(self.turns) < cap

    def _count_slow(self, now: float) -> int:
        """Requests in flight that started more than slow_after seconds before `now`. `_starts`
        holds the requests not yet counted slow, by start: each is looked at once on its way
        out, so a call costs the requests that turned slow since the last, not every slow one
        (at 2,000 hosts a scan of thousands took 1.2 ms a call, 11 s of a 14 s crawl)."""
        cutoff = now - self._slow_after
        starts = self._starts
        while starts:
            started, slot = starts[0]
            if not slot.released:
                if started > cutoff:
                    break
                slot.slow = True
                self._slow_count += 1
            starts.popleft()
        return self._slow_count

    def _next_slow_at(self) -> float | None:
        """When the next request in flight becomes slow, if one will."""
        if self._slow_after == float("inf"):
            return None
        starts = self._starts
        while starts and starts[0][1].released:
            starts.popleft()
        return starts[0][0] + self._slow_after if starts else None

    def _arm_timer(self) -> None:
        """One timer, for the earliest host (unless a request ending will wake us first anyway)
        or the next checkpoint, whichever comes first."""
        due = None
        if not self.stopping:
            if self._may_launch(self._clock.now()):
                due = self._schedule.next_due()
            elif self._schedule.next_due() is not None:
                # Full: a request turning slow frees a slot, as one ending does.
                due = self._next_slow_at()
        if self._tasks or not self.stopping:
            checkpoint = self._checkpoints.next_at
            due = checkpoint if due is None else min(due, checkpoint)
        if due == self._timer_at:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._timer_at = due
        if due is not None:
            # A timer wakes the loop; _launch_due decides by the crawl's clock. uvloop's timers
            # count whole milliseconds and may fire that much early: arm one a millisecond late
            # instead of waking to find nothing due.
            delay = max(0.0, due - self._clock.now()) + TIMER_SLACK
            self._timer = asyncio.get_running_loop().call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = self._timer_at = None
        self._wake.set()

    def update_stats(self, now: float) -> None:
        stats = self._stats
        stats.elapsed = self._elapsed_before + (now - self._clock.epoch0)
        stats.updated_at = now
        stats.in_flight = self.requests_in_flight
        stats.hosts_throttled = len(self._politeness.throttled)
        # The crawl's: a shared crawl's as its server last said.
        stats.hosts_waiting, stats.queued = self._coordination.counts(len(self._schedule))

    def _defer_all(self, now: float) -> None:
        self._stats.outcome = "deferred"
        for origin, until in self._schedule.waiting():
            pending = self._frontier.pending(origin)
            reason = deferral_reason(self._hosts[origin], now)
            self.deferred.append(DeferredHost(origin, until, pending, reason))

    # --- stopping --------------------------------------------------------------------------------

    def stop(self) -> None:
        """Start nothing new; requests in flight get `stop_grace` seconds, then are cancelled."""
        self.stopping = True
        if self._stats.outcome == "running":
            self._stats.outcome = "stopped"
        if self._grace is None and self._running:
            loop = asyncio.get_running_loop()
            self._grace = loop.call_later(self._stop_grace, self.cancel_in_flight)
        self._wake.set()

    def cancel_in_flight(self) -> None:
        loop = asyncio.get_running_loop()
        for task in list(self._tasks):
            if inspect.getcoroutinestate(task.get_coro()) == inspect.CORO_CREATED:  # type: ignore[arg-type]
                # Not begun: cancelled now, it would never run the request's own handling (its
                # URL back to the queue, its slot given back). Cancelled once it has begun.
                loop.call_soon(task.cancel)
            else:
                task.cancel()

    # --- hosts and their requests ----------------------------------------------------------------

    def reschedule(self, host: Host, now: float | None) -> None:
        """Put the host in the schedule at its next allowed start if it has work it may start
        (unless the coordination takes it back: a shared crawl's worker lets a claimed host go,
        once it may start again)."""
        if not self._keep(host, now):
            return
        if host.retired is not None or host.robots_busy:
            return
        if not self._politeness.may_start(host.timing):
            return
        if not self._frontier.pending(host.origin):
            return
        at = self._politeness.ready_at(host.timing, self._clock.now() if now is None else now)
        self._schedule.put(host.origin, at)
        self._wake.set()

    def wait_until(self, host: Host, at: float) -> None:
        """Hold `host` out of the schedule until `at`, whatever else its timing says (its
        robots.txt cannot be had before then)."""
        if self._coordination.keep_until(host, at):
            self._schedule.put(host.origin, at)

    def claimed(self, host: Host, at: float) -> None:
        """The coordination handed `host` to this process (a shared crawl's claim), due at `at`."""
        self._schedule.put(host.origin, at)
        self._wake.set()

    def _room_to_claim(self) -> int:
        in_use = self.requests_in_flight + len(self.turns)
        return 0 if self.stopping else max(0, self._concurrency - in_use)

    def start(self, host: Host, now: float) -> Slot:
        """A request to `host` starts at `now`: its hold on the host."""
        timing = host.timing
        self._politeness.on_start(timing, now)
        self._timings.put(timing)
        self._start_log.add(
            host.origin, now, timing.next_start - now, self._politeness.host_interval(timing, now)
        )
        self._stats.requests += 1
        self.requests_in_flight += 1
        ended = self._request_ended
        servers = self.servers
        if servers is not None and host.server is not None:
            servers.started(host.server, now)
            ended = lambda slot: self._server_request_ended(host, slot)  # noqa: E731
        slot = Slot(host, self._politeness, ended)
        starts = self._starts
        if len(starts) > 4 * self.requests_in_flight + 1024:
            # Ended requests behind a straggler stay until it ends: dropped now and then (one
            # pass per thousand starts or more), the deque a few times the requests in flight.
            starts = self._starts = deque(entry for entry in starts if not entry[1].released)
        starts.append((now, slot))
        return slot

    def _request_ended(self, slot: Slot) -> None:
        self.requests_in_flight -= 1
        self._slow_count -= slot.slow

    def _server_request_ended(self, host: Host, slot: Slot) -> None:
        """A request to a server paced by politeness.per_server ended: its parked hosts go on."""
        self._request_ended(slot)
        assert self.servers is not None and host.server is not None
        self.servers.ended(host.server)

    def watch(
        self,
        host: Host,
        slot: Slot,
        work: Coroutine[Any, Any, None],
        item: QueuedUrl | None,
    ) -> None:
        """Run a request's `work` as a task: its robots.txt (`item` None) or `item`."""
        self._run_task(self._guarded(host, slot, work, item))

    def _run_task(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` as one of the crawl's tasks: the crawl does not end while it runs, and a
        stop cancels it."""
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._wake.set()

    async def _guarded(
        self, host: Host, slot: Slot, work: Coroutine[Any, Any, None], item: QueuedUrl | None
    ) -> None:
        """Whatever happens, the host's slot is given back and the host scheduled again; an
        interrupted URL goes back to the head of its queue, and a bug of ours is the launcher's
        to settle."""
        try:
            await work
        except asyncio.CancelledError:
            if item is not None:
                self._frontier.push_front(host.origin, item)
            raise
        except Exception as error:
            assert self._launcher is not None
            self._launcher.internal_error(host, item, error)
        finally:
            now = self._clock.now()
            slot.release(now)
            self._timings.put(host.timing)
            # A refusal's back-off is committed now, not at the next checkpoint: a kill must
            # not shorten it (crawler.crawl.checkpoint).
            self._checkpoints.after_request()
            if item is None:
                host.robots_busy = False
            self.reschedule(host, now)

    @property
    def working(self) -> bool:
        """A task of the crawl's is running: a request's work, its page read included."""
        return bool(self._tasks)

    def __len__(self) -> int:
        """Hosts in the schedule."""
        return len(self._schedule)

    def __repr__(self) -> str:
        flight, hosts, tasks = self.requests_in_flight, len(self._schedule), len(self._tasks)
        return f"Scheduler({flight} in flight, {hosts} hosts scheduled, {tasks} tasks)"
