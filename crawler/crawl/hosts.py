"""One origin's place in a crawl (`Host`), every origin the crawl has met (`HostTable`), a
request's hold on its host (`Slot`), and what the crawl reports about hosts at the end: how each
was paced, and why a deferred one waits."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from crawler.crawl.clock import CrawlClock
from crawler.politeness import HostTiming, HostTimingStore, Politeness
from crawler.robots.entry import RobotsEntry, RobotsStore
from crawler.stats import HostReport, SkipReason

__all__ = ["Host", "HostTable", "Slot", "deferral_reason", "host_report"]


class Host:
    """An origin's timing, its robots.txt, and what it has used of the limits."""

    __slots__ = (
        "errors",
        "origin",
        "over_budget",
        "refused_429",
        "retired",
        "retired_as",
        "robots",
        "robots_busy",
        "server",
        "server_errors",
        "timing",
        "unreachable_since",
    )

    def __init__(self, timing: HostTiming) -> None:
        self.origin = timing.origin
        self.timing = timing
        self.robots: RobotsEntry | None = None
        self.robots_busy = False
        """Its robots.txt is being fetched: nothing else of it starts meanwhile."""
        self.retired: str | None = None
        """Why no more URLs of this origin are fetched (Crawl-delay over the cap, page limit, a
        robots.txt that could not be had)."""
        self.retired_as: SkipReason = "host skipped"
        """The skip reason of the URLs it will not fetch."""
        self.over_budget = False
        """Retired at limits.max_pages_per_host: its URLs stay queued for a greater limit."""
        self.unreachable_since: float | None = None
        """When its robots.txt first failed to come, in this run, while it still fails."""
        self.server: str | None = None
        """With politeness.per_server: the address its name resolved to, its pacing group."""
        # This run's failed requests, for the live status (crawler.monitor): counted where a
        # request fails, never per page.
        self.refused_429 = 0
        self.server_errors = 0
        """5xx answers asked again (500, 502, 503, 504)."""
        self.errors = 0
        """Requests that got no answer (timeouts, connections, DNS), and robots.txt fetches that
        left the host unreachable."""

    def failed(self, status: int | None) -> None:
        """A request to the host failed: with `status`, or with no answer (None)."""
        if status is None:
            self.errors += 1
        elif status == 429:
            self.refused_429 += 1
        elif status >= 500:
            self.server_errors += 1

    def __repr__(self) -> str:
        return f"Host({self.timing!r}, pages={self.timing.pages}, retired={self.retired!r})"


class HostTable:
    """The hosts of a crawl by origin. A host met for the first time in this run starts from the
    timing an earlier run left, if any (`Politeness.resumed`)."""

    __slots__ = ("_clean", "_clock", "_hosts", "_politeness", "_robots", "_timings")

    def __init__(
        self,
        politeness: Politeness,
        timings: HostTimingStore,
        robots: RobotsStore,
        clock: CrawlClock,
        *,
        clean: Callable[[], bool],
    ) -> None:
        """`clean()`: whether the run before this one ended cleanly (crawler.state's RunStore)."""
        self._politeness = politeness
        self._timings = timings
        self._robots = robots
        self._clock = clock
        self._clean = clean
        self._hosts: dict[str, Host] = {}

    def __getitem__(self, origin: str) -> Host:
        return self._hosts[origin]

    def __contains__(self, origin: str) -> bool:
        return origin in self._hosts

    def __iter__(self) -> Iterator[Host]:
        return iter(self._hosts.values())

    def __len__(self) -> int:
        return len(self._hosts)

    def get(self, origin: str) -> Host:
        """The host of `origin`, met now if not before."""
        host = self._hosts.get(origin)
        return host if host is not None else self._meet(origin)

    def _meet(self, origin: str) -> Host:
        timing = self._timings.get(origin)
        if timing is None:
            timing = HostTiming(origin)
        else:
            # Left by an earlier run: a new run meets it here first.
            known = self._robots.get(origin) is not None
            self._politeness.resumed(
                timing, self._clock.epoch0, clean=self._clean(), rules_known=known
            )
        self._timings.put(timing)
        host = self._hosts[origin] = Host(timing)
        return host

    def reports(self, now: float) -> list[HostReport]:
        """How each origin asked was paced, busiest first."""
        reports = [
            host_report(host, self._politeness, now)
            for host in self._hosts.values()
            if host.timing.requests
        ]
        reports.sort(key=lambda report: (-report.requests, report.origin))
        return reports

    def __repr__(self) -> str:
        return f"HostTable({len(self._hosts)} hosts)"


class Slot:
    """One request's hold on its host: given back exactly once, whatever happens."""

    __slots__ = ("_host", "_on_release", "_politeness", "released", "slow")

    def __init__(
        self,
        host: Host,
        politeness: Politeness,
        on_release: Callable[[Slot], None] | None = None,
    ) -> None:
        self._host = host
        self._politeness = politeness
        self._on_release = on_release
        self.released = False
        self.slow = False
        """Counted slow (fetch.slow_after) by the scheduler: no longer against concurrency."""

    def release(self, now: float) -> None:
        """The request ended at `now` (its answer, or its failure)."""
        if not self.released:
            self.released = True
            self._politeness.on_answer(self._host.timing, now)
            if self._on_release is not None:
                self._on_release(self)


def deferral_reason(host: Host, now: float) -> str:
    """Why a host that still has URLs cannot start before its scheduled time."""
    if host.robots is not None and host.robots.blocks:
        return f"robots.txt {host.robots.reason}"
    if host.timing.backoff_until > now:
        if host.timing.pace.refusal_streak:
            return "backing off after refusals (429/503)"
        return "backing off after errors"
    if host.timing.rules.visit_windows:
        windows = ", ".join(str(window) for window in host.timing.rules.visit_windows)
        return f"outside its Visit-time ({windows})"
    return "waiting for its interval"


def host_report(host: Host, politeness: Politeness, now: float) -> HostReport:
    timing = host.timing
    interval, reason = politeness.why(timing, now)
    if timing.backoff_until > now:
        reason = "back-off"
    return HostReport(
        origin=host.origin,
        requests=timing.requests,
        interval=interval,
        least_interval=politeness.interval(timing.rules, now),
        reason=reason,
        answer_time=timing.pace.answer_time,
        whole_time=timing.pace.whole_time,
        refusals=timing.pace.refusals,
        backed_off=timing.pace.backed_off,
        crawl_delay=timing.rules.crawl_delay,
        crawl_delay_capped=politeness.crawl_delay_over_cap(timing.rules),
        shortest_gap=timing.shortest_gap,
        robots=host.robots.reason if host.robots is not None else "not fetched",
        server=host.server,
    )
