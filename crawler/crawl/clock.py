"""The crawl's clock: epoch seconds read off the monotonic clock, and when a host answered."""

from __future__ import annotations

import time

from crawler.http.answer import FetchFailure, Response

__all__ = ["CrawlClock"]


class CrawlClock:
    """Epoch seconds on the monotonic clock, from the moment `start()` is called: immune to
    wall-clock steps. Not the event loop's clock: uvloop's counts whole milliseconds, and a start
    stamped up to a millisecond early would let the next one come that much too soon."""

    __slots__ = ("_aligned", "_epoch0", "_monotonic0", "_start_time", "started")

    def __init__(self, start_time: float | None = None) -> None:
        """`start_time`: the epoch the clock starts from (default: the time `start()` runs), for
        Visit-time windows."""
        self._start_time = start_time
        self._aligned: tuple[float, float] | None = None
        self._epoch0 = 0.0
        self._monotonic0 = 0.0
        self.started = False

    def align(self, epoch: float, monotonic: float) -> None:
        """Take the epoch from another clock, read at `time.monotonic()` == `monotonic`: a shared
        crawl's server's, so that every worker's Visit-time and Request-rate windows are the
        same, whatever the machines' own clocks say (unless a start_time was given)."""
        self._aligned = (epoch, monotonic)

    def start(self) -> None:
        self._monotonic0 = time.monotonic()
        if self._start_time is not None:
            self._epoch0 = self._start_time
        elif self._aligned is not None:
            epoch, monotonic = self._aligned
            self._epoch0 = epoch + (self._monotonic0 - monotonic)
        else:
            self._epoch0 = time.time()
        self.started = True

    @property
    def epoch0(self) -> float:
        """When the clock started, in epoch seconds."""
        return self._epoch0

    def now(self) -> float:
        return self._epoch0 + (time.monotonic() - self._monotonic0)

    def at(self, monotonic: float) -> float:
        """A `time.monotonic()` reading on this clock."""
        return self._epoch0 + (monotonic - self._monotonic0)

    def answered_at(self, answer: Response | FetchFailure | None, now: float) -> float:
        """When the host answered: when the answer's first bytes arrived where the client could
        tell (`Response.answered_at`), else `now`, when the crawl saw it."""
        if isinstance(answer, Response) and answer.answered_at is not None:
            return min(now, self.at(answer.answered_at))
        return now

    def __repr__(self) -> str:
        return f"CrawlClock({self.now():.3f})" if self.started else "CrawlClock(not started)"
