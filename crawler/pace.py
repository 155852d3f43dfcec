"""What a host's own answers say about its pace, beside what its robots.txt asks
(crawler.politeness). Pure: times come in as arguments; nothing here reads a clock.

Most sites publish no Crawl-delay; two things every server says anyway:

- **How long it takes to answer.** The host's answer time is the lower median of its last
  ANSWERS_KEPT answers' (any status) times to first byte, from its second answer on: from the
  request's start (its connection's included) to when its first bytes reached the process, stamped
  as the event loop polls the socket, not when the crawl's task got to it. A busy crawl must not
  pass its own lag off as the server's (the time to the whole answer, reported beside it, holds
  the crawl's own work); and a median, from two answers on, because a stall of the crawl's loop
  delays the one stamp it meets, and the first wave of a crawl of thousands of hosts waits in
  accept queues, while a server that slows down moves every answer. The response interval is
  `response_factor` times it, at most `max_response_delay`, counted from the answer (one request
  in flight per host): a server that spends `t` on each of our requests then waits `factor * t`
  for the next one, so we take at most 1 / (1 + factor) of one worker's time, 20% at the default 4
  (Heritrix waits 5 times the last fetch; AutoThrottle at its default target waits 1 times, half
  the worker). A server that answers in 20 ms keeps min_delay; one that answers in 1 s waits 4 s;
  one that slows down as we go (its queue grows) gets more room as it slows.
- **When it refuses.** A 429, or a 503, is a refusal: the server allows less than we asked. The
  host's learned interval rises at once, `refusal_factor` times the longer of the interval in force
  and the gap that was refused (the time from the last accepted request's start to the refused
  one's: the gap the server's limiter saw); with a Retry-After, to that gap plus the Retry-After
  (when the server said it would accept again), and the Retry-After is a floor under the next
  wait. Each accepted answer takes `recovery` (half) of the way down from the learned interval to
  its floor: `headroom` times the longest gap refused, or the gap a Retry-After of at most
  RATE_RETRY_AFTER allowed (a longer one says when to come back, not how often). So the crawl
  comes down gradually and settles a quarter above the gap the server refused, or at the gap it
  said it allows, instead of oscillating between bursts and
  long back-offs (kmike's warning on scrapy#3061; crawl4ai's and Crawlee's back-offs decay back to
  the rate that was refused, and are refused again). After `forgive_after` seconds without a
  refusal the refused gap is forgotten, and the pace may come down further. Every wait after a
  refusal is stretched by up to JITTER, by a hash of the host and its refusal count, so that
  hosts refused together do not all come back together. On a server that accepts one request
  every 2 s, crawled at min_delay 0.1 s, the rules settle at 2.5 s (2.2 s with Retry-After)
  after three refusals (tests/test_pace.py simulates it; benchmarks/bench_pacing.py measures it).
"""

from __future__ import annotations

import math
import statistics
import zlib
from dataclasses import dataclass, field

__all__ = [
    "ANSWERS_KEPT",
    "ANSWER_WEIGHT",
    "JITTER",
    "RATE_RETRY_AFTER",
    "HostPace",
    "PaceRules",
    "jitter",
]

ANSWERS_KEPT = 5
"""The answers a host's answer time is the median of."""
ANSWER_WEIGHT = 0.3
"""The weight of the newest answer in the smoothed time to the whole answer (for the report)."""
JITTER = 0.1
"""A wait after a refusal is stretched by 0 to this fraction of itself."""
RATE_RETRY_AFTER = 60.0
"""A Retry-After up to this long is a rate limiter's: the gap it allows is the learned floor."""


@dataclass(frozen=True, slots=True)
class PaceRules:
    """The constants of the pace rules (politeness.* in the config)."""

    response_factor: float = 4.0
    max_response_delay: float = 30.0
    refusal_factor: float = 3.0
    recovery: float = 0.5
    headroom: float = 1.25
    forgive_after: float = 1800.0
    max_learned: float = 3600.0


@dataclass(slots=True)
class HostPace:
    """What a host's answers taught about its pace: kept with its timing, stored, shared."""

    answer_time: float | None = None
    """The lower median of `answer_times`, once there are two."""
    answer_times: list[float] = field(default_factory=list)
    """Seconds from a request's start to its answer's first byte, of the last ANSWERS_KEPT."""
    whole_time: float | None = None
    """Smoothed seconds from a request's start to its answer's last byte (for the report)."""
    learned: float = 0.0
    """The interval refusals taught (0: none)."""
    refused_gap: float = 0.0
    """The longest gap from the last accepted request's start the host refused (0: none, or
    forgiven)."""
    floor: float = 0.0
    """The least the learned interval comes down to: `headroom` times the refused gap, or the
    gap a Retry-After allowed (0: none, or forgiven)."""
    accepted_start: float | None = None
    """When the last request the host accepted (answered, no refusal) started."""
    last_refusal: float | None = None
    refusals: int = 0
    """429s and 503s from the host."""
    refusal_streak: int = 0
    """Refusals since the last accepted answer."""
    backed_off: float = 0.0
    """Seconds the host was held back by refusals, in all."""

    def response_interval(self, rules: PaceRules) -> float:
        if self.answer_time is None:
            return 0.0
        return min(rules.response_factor * self.answer_time, rules.max_response_delay)

    def answered(self, started: float, first_byte: float | None, ended: float) -> None:
        """An answer (any status) to a request started at `started`: its times taken in."""
        times = self.answer_times
        first = ended if first_byte is None else min(first_byte, ended)
        times.append(round(max(0.0, first - started), 6))
        del times[:-ANSWERS_KEPT]
        # From two answers on, the lower median: one slow answer alone (the crawl's first wave,
        # hundreds of robots.txt requests at once, waits in its own accept queue) is no pace.
        self.answer_time = statistics.median_low(times) if len(times) > 1 else None
        self.whole_time = _smoothed(self.whole_time, max(0.0, ended - started))

    def accepted(self, started: float, now: float, rules: PaceRules) -> None:
        """The host accepted a request started at `started` (it was not refused)."""
        self.accepted_start = (
            started if self.accepted_start is None else max(self.accepted_start, started)
        )
        self.refusal_streak = 0
        if (
            self.floor
            and self.last_refusal is not None
            and now - self.last_refusal >= rules.forgive_after
        ):
            self.refused_gap = self.floor = 0.0
        if self.learned:
            floor = self.floor
            self.learned = max(floor, floor + (self.learned - floor) * (1.0 - rules.recovery))
            if not floor and self.learned < 0.001:
                self.learned = 0.0

    def refused(
        self,
        origin: str,
        started: float,
        now: float,
        interval: float,
        retry_after: float | None,
        rules: PaceRules,
    ) -> float:
        """The host refused (429, 503) a request started at `started` while `interval` was in
        force; returns the seconds to wait from `now` before the next request starts."""
        gap = started - self.accepted_start if self.accepted_start is not None else interval
        self.refused_gap = max(self.refused_gap, gap, 0.0)
        self.floor = max(self.floor, rules.headroom * self.refused_gap)
        wait = 0.0
        if retry_after is not None and retry_after >= 0 and math.isfinite(retry_after):
            # The server said when: from the last accepted request, that is the gap it allows.
            # A short one is a rate limiter's (it rounds up to a second); a long one says when
            # to come back, not how often.
            wait = min(retry_after, rules.max_learned)
            learned = max(self.learned * rules.refusal_factor, gap + wait)
            if retry_after <= RATE_RETRY_AFTER:
                self.floor = max(self.floor, gap + wait)
        else:
            learned = max(self.learned, interval, self.refused_gap) * rules.refusal_factor
        self.learned = min(learned, rules.max_learned)
        self.refusals += 1
        self.refusal_streak += 1
        self.last_refusal = now
        wait = max(wait, self.learned)
        wait *= 1.0 + jitter(origin, self.refusals)
        self.backed_off += wait
        return wait


def _smoothed(average: float | None, sample: float) -> float:
    if average is None:
        return sample
    return average + ANSWER_WEIGHT * (sample - average)


def jitter(origin: str, count: int) -> float:
    """0 to JITTER, the same for the same host and count on every machine (no random state: a
    shared crawl's workers agree, and tests can say what it is)."""
    digest = zlib.crc32(f"{origin} {count}".encode())
    return JITTER * (digest / 0xFFFFFFFF)
