"""Who else decides when a host may start and when the crawl is over: nobody (`LocalHosts`, a
crawl in one process), or the shared crawl's server (crawler.crawl.shared's `SharedHosts`, one
worker of many). The crawler chooses one when it is built; the scheduler and the crawl's parts
ask it, never which one they have.

The rules every implementation keeps:
- `keep(host, now)` is asked each time a host could go back in the local schedule: False when the
  host was handed back (it is no longer this process's to start).
- `end(now, next_due)` is asked when nothing is in flight: the crawl's outcome once it is over,
  else None (wait for the schedule's timer, or for the background task).
- `background(...)` is a coroutine the scheduler runs beside its loop, or None; when it ends, the
  loop wakes (and a failure of it ends the crawl).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Protocol

from crawler.crawl.hosts import Host
from crawler.frontier import Frontier
from crawler.stats import Outcome

__all__ = ["HostCoordination", "LocalHosts"]


class HostCoordination(Protocol):
    """Hosts and the crawl's end, as far as others have a say in them."""

    async def join(
        self, seeds: Sequence[str], widen: Callable[[Sequence[str]], None]
    ) -> Sequence[str]:
        """The crawl's seeds known so far besides `seeds` (this process's); `widen(seeds)` is
        called when more are known later (every worker's scope is every worker's seeds)."""
        ...

    def scope_widened(self, url: str) -> None:
        """A seed's redirects led to `url`, whose host joined the scope."""

    async def recrawl_pass(self, now: float) -> float | None:
        """A recrawl (recrawl.enabled) is about to begin or go on with a pass at `now`: when the
        pass the others take part in began (what is due is decided then), with the fetch log
        read (`refresh_fetches`); None when the pass is this process's own."""
        ...

    async def refresh_fetches(self) -> None:
        """Read the crawl's fetch log and change histories again (what the others fetched)."""

    def background(
        self,
        room: Callable[[], int],
        claimed: Callable[[Host, float], None],
        drop: Callable[[str], None],
    ) -> Coroutine[Any, Any, None] | None:
        """What runs beside the launch loop: hosts handed to `claimed(host, at)` while there is
        `room()`, and `drop(origin)` for hosts no longer this process's."""
        ...

    def may_launch(self) -> bool:
        """Whether requests may start now."""
        ...

    def keep(self, host: Host, now: float | None) -> bool:
        """Whether `host` stays this process's to schedule (False: handed back)."""
        ...

    def keep_until(self, host: Host, at: float) -> bool:
        """Whether `host`, which may not start before `at`, waits in the local schedule (False:
        handed back, to start at `at` at the earliest)."""
        ...

    def end(self, now: float, next_due: float | None) -> Outcome | None:
        """With nothing in flight, and the local schedule's next host due at `next_due` (None:
        none scheduled): how the crawl ends, or None while it goes on."""
        ...

    def counts(self, scheduled: int) -> tuple[int, int]:
        """(hosts waiting, URLs queued) in the whole crawl, with `scheduled` hosts here."""
        ...

    def announce(self, info: str) -> None:
        """Tell the others `info` about this process (where it serves its live status)."""

    async def close(self) -> None:
        """Hand back what is still held."""


class LocalHosts:
    """A crawl in one process: every host is its own, and the crawl is over when nothing is
    scheduled, or deferred when the next host is due more than politeness.max_wait away."""

    __slots__ = ("_frontier", "_max_wait")

    def __init__(self, frontier: Frontier, max_wait: float) -> None:
        self._frontier = frontier
        self._max_wait = max_wait

    async def join(
        self, seeds: Sequence[str], widen: Callable[[Sequence[str]], None]
    ) -> Sequence[str]:
        return ()

    def scope_widened(self, url: str) -> None:
        pass

    async def recrawl_pass(self, now: float) -> None:
        return None

    async def refresh_fetches(self) -> None:
        pass  # the state's own: read as it is used

    def background(
        self,
        room: Callable[[], int],
        claimed: Callable[[Host, float], None],
        drop: Callable[[str], None],
    ) -> None:
        return None

    def may_launch(self) -> bool:
        return True

    def keep(self, host: Host, now: float | None) -> bool:
        return True

    def keep_until(self, host: Host, at: float) -> bool:
        return True

    def end(self, now: float, next_due: float | None) -> Outcome | None:
        if next_due is None:
            return "finished"
        if next_due - now > self._max_wait:
            return "deferred"
        return None

    def counts(self, scheduled: int) -> tuple[int, int]:
        return scheduled, len(self._frontier)

    def announce(self, info: str) -> None:
        pass  # nobody else to tell

    async def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"LocalHosts(max_wait={self._max_wait:g} s)"
