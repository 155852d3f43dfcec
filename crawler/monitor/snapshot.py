"""What the crawl looks like at one moment (`Snapshot`), and the documents made of it: the live
status (/status.json). Pure: the snapshot is taken from values passed in (crawler.monitor.server
reads them off the crawler), the time is an argument.

/status.json holds what DIR/summary.json holds (crawler.cli.summary_document), with its `hosts`
cut to the busiest STATUS_HOSTS, and a `live` part beside it: the history for the charts, the
projected end, how many hosts are in each state, and the page of the host table asked for."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from crawler.monitor.history import History, Projection, project
from crawler.monitor.hosts import HOST_STATES, HostQuery, HostRow, HostState, select_rows
from crawler.stats import CARRIED_COUNTERS, CrawlStats

__all__ = ["STATUS_HOSTS", "Snapshot", "copy_stats", "status_document"]

STATUS_HOSTS = 100
"""Hosts in /status.json's `hosts` (the summary's part), the busiest by requests; the host
table (`live.host_table`) pages through all of them."""


def copy_stats(stats: CrawlStats) -> CrawlStats:
    """A copy of `stats` that the crawl's counting no longer moves."""
    # Every counter of the stats is one the runs add up: none is left shared.
    counters = {name: getattr(stats, name).copy() for name in CARRIED_COUNTERS}
    return dataclasses.replace(stats, **counters)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The crawl at `at`, as the monitor serves it until the next snapshot."""

    at: float
    """Epoch seconds."""
    stats: CrawlStats
    rows: Sequence[HostRow]
    """Every host the crawl has met, in no order."""
    summary: Mapping[str, Any]
    """The summary document (summary.json's shape) with the busiest STATUS_HOSTS hosts."""
    history: Mapping[str, Any]
    """`History.columns`, and `every`: seconds between samples."""
    projection: Projection
    info: Mapping[str, str]
    """Who serves: version, http_client, event_loop, purpose, worker, and the like."""
    states: Mapping[HostState, int]
    """How many hosts are in each state."""

    @classmethod
    def of(
        cls,
        at: float,
        stats: CrawlStats,
        rows: Sequence[HostRow],
        summary: Mapping[str, Any],
        history: History,
        *,
        max_pages: int | None,
        info: Mapping[str, str],
    ) -> Snapshot:
        # The chart's time runs from this run's first sample: a resumed crawl's began runs ago.
        kept = history.recent()
        start = kept[0].at if kept else at
        counts = Counter(row.state for row in rows)
        return cls(
            at,
            stats,
            rows,
            summary,
            {**history.columns(start), "every_s": history.every, "start": _iso(start)},
            project(kept, queued=stats.queued, pages=stats.pages, max_pages=max_pages),
            info,
            {state: counts[state] for state in HOST_STATES},
        )


def _iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    try:
        return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError):
        return None


def status_document(snapshot: Snapshot, query: HostQuery) -> dict[str, Any]:
    """/status.json: the summary, and the `live` part with the table's page `query` asks for."""
    matched, rows = select_rows(snapshot.rows, query)
    projection = snapshot.projection
    ends = None if projection.seconds is None else snapshot.at + projection.seconds
    return {
        **snapshot.summary,
        "live": {
            "at": _iso(snapshot.at),
            "info": dict(snapshot.info),
            "history": dict(snapshot.history),
            "projection": {
                "remaining": projection.remaining,
                "rate_per_s": round(projection.rate, 3),
                "seconds_left": None if projection.seconds is None else round(projection.seconds),
                "ends_at": _iso(ends),
                "queue_growing": projection.growing,
                "basis": projection.basis,
            },
            "hosts_total": len(snapshot.rows),
            "host_states": dict(snapshot.states),
            "host_table": {**query.document(), "matched": matched},
            "host_rows": [row.document() for row in rows],
        },
    }
