"""The crawl's figures over time, for the status page's charts, and when the queue will be done
at the recent pace. Pure: samples and times come in as arguments.

A sample is taken at a low fixed rate (crawler.monitor.server's sampler), never per page. The
history keeps at most `most` samples for the whole crawl: once full, every other one is dropped
and samples are kept half as often, so a crawl of days draws on the same few hundred points as
one of minutes."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from crawler.stats import CrawlStats

__all__ = ["HISTORY_SAMPLES", "RECENT_SECONDS", "History", "Projection", "Sample", "project"]

HISTORY_SAMPLES = 480
"""Samples the history keeps, at most: a chart's width in points."""
RECENT_SECONDS = 60.0
"""The recent pace a projection goes by: over the last minute (or what history there is)."""


@dataclass(frozen=True, slots=True)
class Sample:
    """The crawl's figures at one moment."""

    at: float
    """Epoch seconds."""
    pages: int
    fetched: int
    queued: int
    errors: int
    skips: int
    in_flight: int

    @classmethod
    def of(cls, stats: CrawlStats, at: float) -> Sample:
        return cls(
            at,
            stats.pages,
            stats.fetched,
            stats.queued,
            sum(stats.errors.values()),
            sum(stats.skips.values()),
            stats.in_flight,
        )


class History:
    """Samples over the whole crawl, at most `most` of them, evenly spaced in time."""

    __slots__ = ("_every", "_last_at", "_latest", "_most", "samples")

    def __init__(self, every: float, most: int = HISTORY_SAMPLES) -> None:
        if most < 2:
            raise ValueError("a history keeps at least 2 samples")
        self._every = every
        self._most = most
        self._last_at: float | None = None
        self._latest: Sample | None = None
        """The newest sample, kept or not: the chart ends at it."""
        self.samples: list[Sample] = []

    @property
    def every(self) -> float:
        """Seconds between two samples kept, now."""
        return self._every

    def add(self, sample: Sample) -> None:
        """Keep `sample` if it comes `every` seconds (less a hair) after the last one kept."""
        self._latest = sample
        if self._last_at is not None and sample.at - self._last_at < self._every * 0.99:
            return
        self._last_at = sample.at
        self.samples.append(sample)
        if len(self.samples) > self._most:
            # The oldest and the newest stay: the chart runs from the start to now.
            self.samples = [*self.samples[:-1:2], self.samples[-1]]
            self._every *= 2

    def recent(self) -> list[Sample]:
        """The samples kept, and the newest one if it was not."""
        latest = self._latest
        if latest is not None and self.samples and latest.at > self.samples[-1].at:
            return [*self.samples, latest]
        return list(self.samples)

    def columns(self, start: float) -> dict[str, list[float] | list[int]]:
        """The samples as columns for the page (`recent`): seconds since `start`, the figures,
        and pages per second between each sample and the one before (0 for the first)."""
        samples = self.recent()
        rates = [0.0] + [
            round((later.pages - earlier.pages) / (later.at - earlier.at), 3)
            if later.at > earlier.at
            else 0.0
            for earlier, later in itertools.pairwise(samples)
        ]
        return {
            "t": [round(sample.at - start, 3) for sample in samples],
            "pages": [sample.pages for sample in samples],
            "pages_per_s": rates,
            "queued": [sample.queued for sample in samples],
            "fetched": [sample.fetched for sample in samples],
            "errors": [sample.errors for sample in samples],
            "skips": [sample.skips for sample in samples],
            "in_flight": [sample.in_flight for sample in samples],
        }

    def __repr__(self) -> str:
        return f"History({len(self.samples)} samples, every {self._every:g} s)"


@dataclass(frozen=True, slots=True)
class Projection:
    """When the crawl will be done, at the recent pace."""

    remaining: int
    """URLs left: those queued, or the pages left under limits.max_pages when fewer."""
    rate: float
    """URLs fetched per second, recently (pages, under limits.max_pages)."""
    seconds: float | None
    """Seconds to go at that rate; None when nothing is done (no rate to go by)."""
    growing: bool
    """The queue grew over the recent past: the crawl ends no sooner, and likely later."""
    basis: str
    """The projection in words."""


def project(
    samples: Sequence[Sample], *, queued: int, pages: int, max_pages: int | None
) -> Projection:
    """When the queue is done, at the pace of the last RECENT_SECONDS of `samples` (oldest
    first; the newest is now)."""
    remaining = queued
    limited = max_pages is not None and max_pages - pages < queued
    if max_pages is not None:
        remaining = max(0, min(queued, max_pages - pages))
    if remaining == 0:
        return Projection(0, 0.0, 0.0, False, "nothing left to fetch")
    if len(samples) < 2:
        return Projection(remaining, 0.0, None, False, "too early to say")
    last = samples[-1]
    first = next(
        (sample for sample in samples if last.at - sample.at <= RECENT_SECONDS), samples[-2]
    )
    if first is last:
        first = samples[-2]
    span = last.at - first.at
    # URLs leave the queue fetched (skips are mostly links never queued: out of scope).
    done = last.fetched - first.fetched
    if limited:
        done = last.pages - first.pages
    rate = done / span if span > 0 else 0.0
    growing = last.queued > first.queued and not limited
    what = "pages left under limits.max_pages" if limited else "URLs queued"
    if rate <= 0:
        return Projection(remaining, 0.0, None, growing, f"{remaining} {what}, none done lately")
    seconds = remaining / rate
    basis = f"{remaining} {what} at {rate:.1f}/s (the last {span:.0f} s)"
    if growing:
        basis += "; the queue still grows, so no sooner"
    return Projection(remaining, rate, seconds, growing, basis)
