"""What the report shows, worked out from the crawl's summary document and the rows its state
keeps: pure (no file, no clock), so the tests give it rows and read the figures back.

Every list the report draws is bounded, whatever the crawl's size: tables show the first
`TOP_HOSTS` hosts of their order, the gap charts the `GAP_CHARTS` busiest hosts with at most
`POINTS_PER_HOST` gaps each (evenly taken, the shortest always among them), the time charts
`TIME_BINS` bins, and the overview of every host at most `OVERVIEW_HOSTS` points.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "GAP_CHARTS",
    "GAP_SLACK",
    "OVERVIEW_HOSTS",
    "POINTS_PER_HOST",
    "TIME_BINS",
    "TOP_HOSTS",
    "GapPoint",
    "HostGaps",
    "HostRow",
    "ReportFigures",
    "Start",
    "TimeSeries",
    "host_gaps",
    "report_figures",
    "sample_evenly",
    "time_series",
]

TOP_HOSTS = 50
GAP_CHARTS = 6
POINTS_PER_HOST = 400
TIME_BINS = 120
OVERVIEW_HOSTS = 2000
GAP_SLACK = 0.001
"""Seconds a gap may fall short of its interval and still count as kept: the crawl's clock and
the timer that wakes it differ by less than a millisecond."""


Start = tuple[float, float, float]
"""A request start as the state keeps it: (epoch seconds, the least gap then allowed before the
origin's next start, the pace in force)."""
GapPoint = tuple[float, float, float, float]
"""A gap: (seconds from the crawl's first start to the start that ends it, the gap, the least
gap allowed and the pace in force at the start before it)."""


@dataclass(frozen=True, slots=True)
class HostGaps:
    """One origin's gaps between the starts of our requests, from the state's `starts` rows."""

    origin: str
    starts: int
    shortest: float | None
    median: float | None
    under: int
    """Gaps shorter than the least the crawl allowed at the start before them (less GAP_SLACK)."""
    median_pace: float | None = None
    """The median of the pace in force at the host's starts."""
    points: tuple[GapPoint, ...] = ()
    """The gaps, sampled."""


@dataclass(frozen=True, slots=True)
class HostRow:
    """A host as the tables show it: the summary's figures with its gaps beside them."""

    origin: str
    requests: int
    interval: float | None
    reason: str
    least_interval: float | None
    crawl_delay: float | None
    answer_time: float | None
    refusals: int
    backed_off: float
    robots: str
    shortest_gap: float | None
    """The summary's: the shortest gap of every run."""
    gaps: HostGaps | None


@dataclass(frozen=True, slots=True)
class TimeSeries:
    """Counts over the crawl's time: `edges` are seconds since `began` (epoch), one more than
    the bins; `counts[i]` happened in [edges[i], edges[i+1])."""

    began: float
    edges: tuple[float, ...]
    counts: tuple[int, ...]

    @property
    def cumulative(self) -> list[int]:
        total, out = 0, []
        for count in self.counts:
            total += count
            out.append(total)
        return out


@dataclass(frozen=True, slots=True)
class ReportFigures:
    """Everything the page shows."""

    document: Mapping[str, Any]
    hosts: tuple[HostRow, ...]
    """Every host, busiest first (the tables take the first TOP_HOSTS of an order)."""
    pages: TimeSeries | None
    requests: TimeSeries | None
    gaps_known: bool
    """The state held request starts (a crawl before schema 6, or in memory, did not)."""
    totals: Mapping[str, int] = field(default_factory=dict)
    """Over every host: 'gaps', 'under', 'hosts'."""

    @property
    def busiest(self) -> list[HostRow]:
        return [host for host in self.hosts if host.gaps is not None and host.gaps.starts > 1][
            :GAP_CHARTS
        ]


def sample_evenly(count: int, most: int, keep: int | None = None) -> list[int]:
    """Indexes of at most `most` of `count` items, evenly spread, first and last included, and
    `keep` (an index that must be shown, such as the shortest gap's) too."""
    if count <= most:
        return list(range(count))
    step = (count - 1) / (most - 1)
    chosen = {round(i * step) for i in range(most)}
    if keep is not None:
        chosen.add(keep)
    return sorted(chosen)


def host_gaps(
    origin: str, starts: Sequence[Start], began: float, most: int = POINTS_PER_HOST
) -> HostGaps:
    """The gaps of one origin from its starts, in time order."""
    gaps = [
        (at - began, at - before[0], before[1], before[2])
        for before, (at, _, _) in itertools.pairwise(starts)
    ]
    pace = statistics.median(start[2] for start in starts) if starts else None
    if not gaps:
        return HostGaps(origin, len(starts), None, None, 0, pace)
    values = [gap[1] for gap in gaps]
    shortest = min(values)
    under = sum(1 for _, gap, least, _ in gaps if gap < least - GAP_SLACK)
    keep = values.index(shortest)
    points = tuple(gaps[i] for i in sample_evenly(len(gaps), most, keep))
    median = statistics.median(values)
    return HostGaps(origin, len(starts), shortest, median, under, pace, points)


def time_series(times: Iterable[float], bins: int = TIME_BINS) -> TimeSeries | None:
    """`times` (epoch seconds) counted in `bins` equal bins from the first to the last; None for
    no times."""
    ordered = sorted(times)
    if not ordered:
        return None
    began, span = ordered[0], ordered[-1] - ordered[0]
    if span <= 0:
        return TimeSeries(began, (0.0, 1.0), (len(ordered),))
    width = span / bins
    counts = [0] * bins
    for at in ordered:
        counts[min(int((at - began) / width), bins - 1)] += 1
    return TimeSeries(began, tuple(width * i for i in range(bins + 1)), tuple(counts))


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def report_figures(
    document: Mapping[str, Any],
    starts: Iterable[tuple[str, Sequence[Start]]] | None,
    fetch_times: Sequence[float],
    *,
    began: float | None = None,
) -> ReportFigures:
    """The figures of a crawl from its summary `document` (summary.json's shape), its request
    starts one origin at a time ((origin, [Start, ...] in time order); None when the
    state keeps none), the times of its page fetches, and when its first request started
    (`began`; None: the first of `starts`, which are then all held at once)."""
    groups = list(starts) if starts is not None and began is None else starts
    if began is None:
        firsts = [rows[0][0] for _, rows in groups or () if rows]
        began = min(firsts) if firsts else (min(fetch_times) if fetch_times else 0.0)
    gaps: dict[str, HostGaps] = {}
    all_starts: list[float] = []
    for origin, host_starts in groups or ():
        if host_starts:
            gaps[origin] = host_gaps(origin, host_starts, began)
            all_starts.extend(start[0] for start in host_starts)
    rows = []
    for host in document.get("hosts") or []:
        origin = str(host.get("origin"))
        rows.append(
            HostRow(
                origin=origin,
                requests=int(host.get("requests") or 0),
                interval=_number(host.get("interval_s")),
                reason=str(host.get("interval_reason") or "min_delay"),
                least_interval=_number(host.get("least_interval_s")),
                crawl_delay=_number(host.get("crawl_delay_s")),
                answer_time=_number(host.get("answer_time_s")),
                refusals=int(host.get("refusals") or 0),
                backed_off=_number(host.get("backed_off_s")) or 0.0,
                robots=str(host.get("robots") or ""),
                shortest_gap=_number(host.get("shortest_gap_s")),
                gaps=gaps.get(origin),
            )
        )
    rows.sort(key=lambda row: (-row.requests, row.origin))
    known = list(gaps.values())
    totals = {
        "hosts": len(rows),
        "gaps": sum(max(0, host.starts - 1) for host in known),
        "under": sum(host.under for host in known),
    }
    return ReportFigures(
        document=document,
        hosts=tuple(rows),
        pages=time_series(fetch_times),
        requests=time_series(all_starts),
        gaps_known=groups is not None,
        totals=totals,
    )
