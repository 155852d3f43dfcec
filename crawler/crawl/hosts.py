"""One origin's place in a crawl (`Host`), a request's hold on it (`Slot`), and what the crawl
reports about hosts at the end: how each was paced, and why a deferred one waits."""

from __future__ import annotations

from collections.abc import Callable

from crawler.politeness import HostTiming, Politeness
from crawler.robots.entry import RobotsEntry
from crawler.stats import HostReport

__all__ = ["Host", "Slot", "deferral_reason", "host_report"]


class Host:
    """An origin's timing, its robots.txt, and what it has used of the limits."""

    __slots__ = ("origin", "retired", "robots", "robots_busy", "timing")

    def __init__(self, timing: HostTiming) -> None:
        self.origin = timing.origin
        self.timing = timing
        self.robots: RobotsEntry | None = None
        self.robots_busy = False
        """Its robots.txt is being fetched: nothing else of it starts meanwhile."""
        self.retired: str | None = None
        """Why no more URLs of this origin are fetched (Crawl-delay over the cap, page limit)."""

    def __repr__(self) -> str:
        return f"Host({self.timing!r}, pages={self.timing.pages}, retired={self.retired!r})"


class Slot:
    """One request's hold on its host: given back exactly once, whatever happens."""

    __slots__ = ("_host", "_on_release", "_politeness", "released")

    def __init__(
        self, host: Host, politeness: Politeness, on_release: Callable[[], None] | None = None
    ) -> None:
        self._host = host
        self._politeness = politeness
        self._on_release = on_release
        self.released = False

    def release(self, now: float) -> None:
        """The request ended at `now` (its answer, or its failure)."""
        if not self.released:
            self.released = True
            self._politeness.on_answer(self._host.timing, now)
            if self._on_release is not None:
                self._on_release()


def deferral_reason(host: Host, now: float) -> str:
    """Why a host that still has URLs cannot start before its scheduled time."""
    if host.robots is not None and host.robots.blocks:
        return f"robots.txt {host.robots.reason}"
    if host.timing.backoff_until > now:
        return "backing off after errors"
    if host.timing.rules.visit_windows:
        windows = ", ".join(str(window) for window in host.timing.rules.visit_windows)
        return f"outside its Visit-time ({windows})"
    return "waiting for its interval"


def host_report(host: Host, politeness: Politeness, now: float) -> HostReport:
    timing = host.timing
    return HostReport(
        origin=host.origin,
        requests=timing.requests,
        interval=politeness.interval(timing.rules, now),
        crawl_delay=timing.rules.crawl_delay,
        crawl_delay_capped=politeness.crawl_delay_over_cap(timing.rules),
        shortest_gap=timing.shortest_gap,
        robots=host.robots.reason if host.robots is not None else "not fetched",
    )
