"""Per-host timing: when may the next request to a host start (SPEC section 6). Pure: time comes
in as `now` (epoch seconds); nothing here sleeps, reads a clock or touches the network.

The rules this module keeps, for every host (origin):
- Two request starts are at least `interval` apart, where `interval` is
  `max(min_delay, Crawl-delay capped at max_crawl_delay, t/n of the Request-rate in force, the
  response interval, the learned interval)`, the last two from the host's own answers
  (crawler.pace: how long it takes to answer, and the rate its 429s and 503s taught). With
  one request in flight per host (the default) the interval is also counted from the moment the
  host answered, so the host itself sees the full interval even when the previous request waited
  on a new connection or sat in its accept queue.
- No request starts outside the host's Visit-time windows, when it has any.
- After a 429 or 503 (a refusal) the host waits its learned interval, at least the Retry-After
  (crawler.pace). After other 5xx or a network error it backs off: `backoff_initial` doubling per
  consecutive failure up to `backoff_max`. A success ends the streak. Backing off never shortens a
  wait already set (Scrapy AutoThrottle's rule).
- `HostSchedule` keeps hosts in a heap by the time they may next start, so the crawl computes its
  next wake-up instead of polling.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC
from email.utils import parsedate_to_datetime
from typing import Protocol

from crawler.config import PolitenessConfig
from crawler.pace import HostPace, PaceRules
from crawler.robots.rates import RequestRate, TimeWindow, second_of_day
from crawler.robots.txt import RobotsTxt

__all__ = [
    "HostRules",
    "HostSchedule",
    "HostTiming",
    "HostTimingStore",
    "MemoryHostTimingStore",
    "PaceReason",
    "Politeness",
    "ServerPacing",
    "parse_retry_after",
]


@dataclass(frozen=True, slots=True)
class HostRules:
    """What a host's robots.txt asks of our pace, for our product token."""

    crawl_delay: float | None = None
    request_rates: tuple[RequestRate, ...] = ()
    visit_windows: tuple[TimeWindow, ...] = ()

    @classmethod
    def from_robots(cls, robots: RobotsTxt, agent: str) -> HostRules:
        return cls(robots.crawl_delay(agent), robots.request_rates(agent), robots.visit_time(agent))


@dataclass(slots=True)
class HostTiming:
    """The politeness state of one origin; `Politeness` reads and moves it."""

    origin: str
    rules: HostRules = field(default_factory=HostRules)
    next_start: float = 0.0
    """Earliest start the interval allows."""
    backoff_until: float = 0.0
    failure_streak: int = 0
    in_flight: int = 0
    requests: int = 0
    last_start: float | None = None
    last_answer: float | None = None
    """When the last request ended; the interval also counts from here with one in flight."""
    shortest_gap: float | None = None
    """Shortest time between two of our request starts to this host, for the summary."""
    pages: int = 0
    """Pages started at this host (redirect hops and retries aside), for
    limits.max_pages_per_host; kept here so a resumed crawl counts on."""
    pace: HostPace = field(default_factory=HostPace)
    """What the host's answers taught about its pace."""

    def __repr__(self) -> str:
        return (
            f"HostTiming({self.origin}, next_start={self.next_start:.3f}, "
            f"backoff_until={self.backoff_until:.3f}, in_flight={self.in_flight}, "
            f"requests={self.requests})"
        )


class HostTimingStore(Protocol):
    """Where host timing lives: memory here, SQLite in crawler.state, a shared (Redis) store
    later. `Politeness` changes a `HostTiming` in place; the crawl `put`s it again after each
    change, so a store that writes it out knows what changed."""

    def get(self, origin: str) -> HostTiming | None: ...

    def put(self, timing: HostTiming) -> None: ...

    def __iter__(self) -> Iterator[HostTiming]: ...


class MemoryHostTimingStore:
    def __init__(self) -> None:
        self._hosts: dict[str, HostTiming] = {}

    def get(self, origin: str) -> HostTiming | None:
        return self._hosts.get(origin)

    def put(self, timing: HostTiming) -> None:
        self._hosts[timing.origin] = timing

    def __iter__(self) -> Iterator[HostTiming]:
        return iter(list(self._hosts.values()))

    def __len__(self) -> int:
        return len(self._hosts)


PaceReason = str
"""Why a host's interval is what it is: 'min_delay', 'robots.txt Crawl-delay', 'robots.txt
Request-rate', 'response time', 'learned rate'."""


class Politeness:
    """The timing rules of SPEC section 6, for one crawl's `PolitenessConfig`."""

    __slots__ = ("_config", "pace_rules", "throttled")

    def __init__(self, config: PolitenessConfig) -> None:
        self._config = config
        self.throttled: set[str] = set()
        """Origins paced by a learned interval now (for the progress line)."""
        self.pace_rules = PaceRules(
            response_factor=config.response_factor,
            max_response_delay=config.max_response_delay,
            refusal_factor=config.refusal_factor,
            recovery=config.refusal_recovery,
            headroom=config.refusal_headroom,
            forgive_after=config.forgive_after,
            max_learned=config.backoff_max,
        )

    @property
    def config(self) -> PolitenessConfig:
        return self._config

    def crawl_delay_over_cap(self, rules: HostRules) -> bool:
        return rules.crawl_delay is not None and rules.crawl_delay > self._config.max_crawl_delay

    def interval(self, rules: HostRules, now: float) -> float:
        """Least time between two request starts to a host with these rules, at `now`."""
        interval = self._config.min_delay
        if rules.crawl_delay is not None:
            interval = max(interval, min(rules.crawl_delay, self._config.max_crawl_delay))
        if rules.request_rates:
            second = second_of_day(now)
            for rate in rules.request_rates:
                if rate.applies_at(second) and rate.interval > interval:
                    interval = rate.interval
        return interval

    def host_interval(self, timing: HostTiming, now: float) -> float:
        """Least time between two request starts to the host, at `now`: its robots.txt's and
        min_delay, and what its answers taught."""
        return self.why(timing, now)[0]

    def why(self, timing: HostTiming, now: float) -> tuple[float, PaceReason]:
        """The host's interval at `now`, and which rule sets it."""
        config = self._config
        interval, reason = config.min_delay, "min_delay"
        rules = timing.rules
        if rules.crawl_delay is not None:
            delay = min(rules.crawl_delay, config.max_crawl_delay)
            if delay > interval:
                interval, reason = delay, "robots.txt Crawl-delay"
        if rules.request_rates:
            rate = self.interval(rules, now)
            if rate > interval:
                interval, reason = rate, "robots.txt Request-rate"
        response = timing.pace.response_interval(self.pace_rules)
        if response > interval:
            interval, reason = response, "response time"
        if timing.pace.learned > interval:
            interval, reason = timing.pace.learned, "learned rate"
        return interval, reason

    def ready_at(self, timing: HostTiming, now: float) -> float:
        """Earliest time at or after `now` a new request to the host may start, ignoring how many
        are in flight (the caller holds that count)."""
        start = max(now, timing.next_start, timing.backoff_until)
        windows = timing.rules.visit_windows
        if windows:
            second = second_of_day(start)
            start += min(window.seconds_until_open(second) for window in windows)
        return start

    def may_start(self, timing: HostTiming) -> bool:
        return timing.in_flight < self._config.per_host_concurrency

    def on_start(self, timing: HostTiming, now: float) -> None:
        """A request to the host (robots.txt included) starts at `now`."""
        if timing.last_start is not None:
            gap = now - timing.last_start
            if timing.shortest_gap is None or gap < timing.shortest_gap:
                timing.shortest_gap = gap
        timing.last_start = now
        timing.requests += 1
        timing.in_flight += 1
        # With one request in flight, what the answers taught counts from the answer
        # (`on_answer`), once this one's answer has taught it too.
        interval = (
            self.interval(timing.rules, now)
            if self._config.per_host_concurrency == 1
            else self.host_interval(timing, now)
        )
        timing.next_start = max(timing.next_start, now + interval)

    def on_answer(self, timing: HostTiming, now: float) -> None:
        """The request ended (answer or failure) at `now`."""
        timing.in_flight = max(0, timing.in_flight - 1)
        timing.last_answer = now
        if self._config.per_host_concurrency == 1:
            timing.next_start = max(timing.next_start, now + self.host_interval(timing, now))

    def on_response(
        self, timing: HostTiming, started: float, first_byte: float | None, now: float
    ) -> None:
        """An answer (any status) to a request started at `started` came in whole at `now`, its
        first byte at `first_byte`: the host's answer time moves toward it. Before `on_answer`,
        which counts the interval from it."""
        timing.pace.answered(started, first_byte, now)

    def on_success(self, timing: HostTiming, started: float, now: float) -> None:
        """The host accepted a request started at `started` (no refusal, no failure)."""
        timing.failure_streak = 0
        timing.pace.accepted(started, now, self.pace_rules)
        if not timing.pace.learned:
            self.throttled.discard(timing.origin)

    def on_refusal(
        self, timing: HostTiming, started: float, now: float, retry_after: float | None
    ) -> float:
        """A 429 or 503 at `now` to a request started at `started`: the learned interval rises,
        and the next start waits it (at least the Retry-After, with jitter); returns until when.
        No failure streak: a refusal says the server is up and asks for less."""
        interval = self.host_interval(timing, started)
        wait = timing.pace.refused(
            timing.origin, started, now, interval, retry_after, self.pace_rules
        )
        timing.backoff_until = max(timing.backoff_until, now + wait)
        self.throttled.add(timing.origin)
        return timing.backoff_until

    def on_failure(self, timing: HostTiming, now: float, retry_after: float | None = None) -> float:
        """429, 5xx or a network error at `now`: back the host off; returns until when. A
        Retry-After is honoured up to `backoff_max`: a server asking for a year (or 1e12 s)
        defers the host as long as the longest backoff, no longer."""
        if retry_after is not None and retry_after >= 0 and math.isfinite(retry_after):
            wait = min(retry_after, self._config.backoff_max)
        else:
            wait = min(
                self._config.backoff_initial * 2.0 ** min(timing.failure_streak, 30),
                self._config.backoff_max,
            )
        timing.failure_streak += 1
        timing.backoff_until = max(timing.backoff_until, now + wait)
        return timing.backoff_until

    def resumed(self, timing: HostTiming, start: float, *, clean: bool, rules_known: bool) -> None:
        """A new run of the crawl, begun at `start`, meets the host's timing as the last run left
        it. Nothing is in flight any more. After a clean end the timing is exact. After a kill,
        the last run may have started requests its committed timing does not show, though none
        after `start` (it had died before this run took over the data directory): the next start
        waits a full interval from `start`, the longest one robots.txt could ask for when its
        answer was lost. A host never asked needs no wait: a first request to a host (its
        robots.txt) is committed before it starts."""
        timing.in_flight = 0
        if clean or timing.last_start is None:
            return
        if rules_known:
            interval = self.host_interval(timing, start)
        else:
            interval = max(self._config.min_delay, self._config.max_crawl_delay)
        timing.next_start = max(timing.next_start, start + interval)

    def rules_changed(self, timing: HostTiming, rules: HostRules) -> None:
        """New robots.txt rules for the host: later starts follow them (earlier ones stand)."""
        timing.rules = rules
        last = timing.last_start
        if self._config.per_host_concurrency == 1 and timing.last_answer is not None:
            last = timing.last_answer if last is None else max(last, timing.last_answer)
        if last is not None:
            timing.next_start = max(timing.next_start, last + self.host_interval(timing, last))


MAX_RETRY_AFTER = 30 * 86_400.0
"""A Retry-After longer than this is read as this: the host is deferred either way, and a wait of
centuries is no date a report can print."""


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a `Retry-After` header (delta seconds or an HTTP date in any of the
    three forms of RFC 9110 section 5.6.7), at most MAX_RETRY_AFTER; None when it says nothing
    usable."""
    if value is None:
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():
        return min(float(text), MAX_RETRY_AFTER)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        if "," in text:
            return None  # an IMF or RFC 850 date without its zone: malformed
        # The asctime form carries no zone; HTTP dates are always GMT.
        when = when.replace(tzinfo=UTC)
    seconds = when.timestamp() - now
    return min(max(0.0, seconds), MAX_RETRY_AFTER) if math.isfinite(seconds) else None


class HostSchedule:
    """Hosts waiting for their next allowed start, earliest first: a heap with lazy deletion.

    Each host is in the schedule at most once; `put` replaces its time. `pop_due(now)` hands out
    the hosts whose time has come; `next_due()` is when the crawl should next wake up."""

    __slots__ = ("_due", "_heap")

    def __init__(self) -> None:
        self._heap: list[tuple[float, str]] = []
        self._due: dict[str, float] = {}

    def put(self, origin: str, at: float) -> None:
        if self._due.get(origin) == at:
            return
        self._due[origin] = at
        heapq.heappush(self._heap, (at, origin))

    def discard(self, origin: str) -> None:
        self._due.pop(origin, None)

    def __contains__(self, origin: str) -> bool:
        return origin in self._due

    def __len__(self) -> int:
        return len(self._due)

    def pop_due(self, now: float) -> str | None:
        heap, due = self._heap, self._due
        while heap and heap[0][0] <= now:
            at, origin = heapq.heappop(heap)
            if due.get(origin) == at:
                del due[origin]
                return origin
        return None

    def next_due(self) -> float | None:
        heap, due = self._heap, self._due
        while heap:
            at, origin = heap[0]
            if due.get(origin) == at:
                return at
            heapq.heappop(heap)
        return None

    def waiting(self) -> list[tuple[str, float]]:
        """Every scheduled host with its time, earliest first."""
        return sorted(self._due.items(), key=lambda item: item[1])

    def __repr__(self) -> str:
        return f"HostSchedule({len(self._due)} hosts, next at {self.next_due()})"


class ServerPacing:
    """politeness.per_server: the pacing groups of origins on one server address, on top of each
    origin's own timing. A server's next request may start `min_delay` after the later of its last
    start and its last answer, and while fewer than `concurrency` of its requests are in flight.
    From the answer, as a host's interval runs: a start is stamped before its request is on the
    wire (a new connection's first request reaches the server later than a kept-alive one's), so
    start-to-start pacing let the server see two requests closer than `min_delay`. Pure: times
    are given."""

    __slots__ = ("_concurrency", "_in_flight", "_last", "_min_delay", "names")

    def __init__(self, min_delay: float, concurrency: int) -> None:
        self._min_delay = min_delay
        self._concurrency = concurrency
        self._last: dict[str, float] = {}
        """Per server, the later of its last start and its last answer."""
        self._in_flight: dict[str, int] = {}
        self.names: dict[str, set[str]] = {}
        """Per server address, the origins met on it (for the report)."""

    def join(self, server: str, origin: str) -> None:
        self.names.setdefault(server, set()).add(origin)

    def ready_at(self, server: str, now: float) -> float | None:
        """When the server may be sent its next request: `now` or later; None while it has
        `concurrency` requests in flight (one ending says when)."""
        if self._in_flight.get(server, 0) >= self._concurrency:
            return None
        last = self._last.get(server)
        return now if last is None else max(now, last + self._min_delay)

    def on_start(self, server: str, now: float) -> None:
        self._last[server] = max(now, self._last.get(server, now))
        self._in_flight[server] = self._in_flight.get(server, 0) + 1

    def on_end(self, server: str, now: float) -> None:
        self._last[server] = max(now, self._last.get(server, now))
        self._in_flight[server] = max(0, self._in_flight.get(server, 0) - 1)
