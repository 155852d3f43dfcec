"""The robots.txt rate and time extensions: Crawl-delay, Request-rate, Visit-time (SPEC section 5).

Pure values and their parsers. Times are UTC seconds after midnight; callers pass `now` (epoch
seconds) in, nothing here reads a clock. A value that does not parse is ignored (the parser returns
None), as the extended standard asks of robots that meet a field they cannot read.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

DAY_SECONDS = 86_400

_TIME = r"(\d{1,2}):?(\d{2})"
_VISIT_TIME = re.compile(rf"{_TIME}\s*(?:-|\s)\s*{_TIME}\s*(?:utc|gmt|z)?", re.IGNORECASE)
# Digits are bounded: a rate of a billion requests, or a period of more than 30 years, is no rate a
# robot can keep, and unbounded numbers would overflow the arithmetic.
_REQUEST_RATE = re.compile(
    rf"(\d{{1,9}})\s*/\s*(\d{{1,9}}(?:\.\d{{1,9}})?)\s*([smhd])?(?:\s+{_TIME}\s*-\s*{_TIME}\s*(?:utc|gmt|z)?)?",
    re.IGNORECASE,
)
_CRAWL_DELAY = re.compile(r"((?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d{1,4})?)\s*s?", re.IGNORECASE)
MAX_CRAWL_DELAY_READ = 1e9
"""A Crawl-delay is read as at most this many seconds (some 30 years): `1e308` or a hundred
digits asks for no crawling at all, which the cap (politeness.max_crawl_delay) then reports."""
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3_600, "d": DAY_SECONDS}


def second_of_day(now: float) -> float:
    """UTC seconds after midnight for an epoch time."""
    return now % DAY_SECONDS


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """A daily UTC window [start, end) in seconds after midnight; end < start wraps midnight."""

    start: int
    end: int

    def contains(self, second: float) -> bool:
        if self.start < self.end:
            return self.start <= second < self.end
        return second >= self.start or second < self.end

    def seconds_until_open(self, second: float) -> float:
        """How long from `second` (of the day) until the window is open; 0 when it is open now."""
        if self.contains(second):
            return 0.0
        return (self.start - second) % DAY_SECONDS

    def __str__(self) -> str:
        return f"{_clock(self.start)}-{_clock(self.end)} UTC"


@dataclass(frozen=True, slots=True)
class RequestRate:
    """At most `requests` requests per `seconds`, only inside `window` when one is given."""

    requests: int
    seconds: float
    window: TimeWindow | None = None

    @property
    def interval(self) -> float:
        """The least time between two request starts that keeps to this rate."""
        return self.seconds / self.requests

    def applies_at(self, second: float) -> bool:
        return self.window is None or self.window.contains(second)

    def __str__(self) -> str:
        text = f"{self.requests}/{self.seconds:g}s"
        return f"{text} {self.window}" if self.window else text


def _clock(second: int) -> str:
    return f"{second // 3600:02d}:{second % 3600 // 60:02d}"


def _time_of_day(hours: str, minutes: str) -> int | None:
    hour, minute = int(hours), int(minutes)
    if minute > 59 or hour > 24 or (hour == 24 and minute):
        return None
    return hour * 3600 + minute * 60


def _window(start_h: str, start_m: str, end_h: str, end_m: str) -> TimeWindow | None:
    start, end = _time_of_day(start_h, start_m), _time_of_day(end_h, end_m)
    if start is None or end is None:
        return None
    # 24:00 ends a day (`0000-2400` is the whole day) and starts one (`2400-0100` is 0000-0100).
    start %= DAY_SECONDS
    if start == end:
        # An empty window would forbid the host for ever; the line says nothing usable.
        return None
    return TimeWindow(start, end)


def parse_crawl_delay(value: str) -> float | None:
    """`Crawl-delay: 10`, `0.5`, `2s`, `1e3`: seconds, at most MAX_CRAWL_DELAY_READ (a huge delay
    is a request to go slowly, never to be ignored); negative, NaN or garbage gives None."""
    match = _CRAWL_DELAY.fullmatch(value.strip())
    if match is None:
        return None
    return min(float(match.group(1)), MAX_CRAWL_DELAY_READ)  # digits only: never NaN


def parse_request_rate(value: str) -> RequestRate | None:
    """`Request-rate: 1/5`, `10/1m`, `1/1h 0600-0845`; garbage or a zero gives None."""
    match = _REQUEST_RATE.fullmatch(value.strip())
    if match is None:
        return None
    requests_text, period_text, unit, *window_parts = match.groups()
    requests = int(requests_text)
    seconds = float(period_text) * _UNIT_SECONDS[(unit or "s").lower()]
    if requests <= 0 or seconds <= 0 or not math.isfinite(seconds):
        return None
    window = None
    if window_parts[0] is not None:
        window = _window(*window_parts)
        if window is None:
            return None
    return RequestRate(requests, seconds, window)


def parse_visit_time(value: str) -> TimeWindow | None:
    """`Visit-time: 0600-0845`, `06:00 - 08:45`, `2200-0400` (wraps midnight); else None."""
    match = _VISIT_TIME.fullmatch(value.strip())
    if match is None:
        return None
    return _window(*match.groups())
