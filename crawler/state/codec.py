"""The crawl state's values as rows and JSON, and back. Pure: no database, no clock.

Each `*_row` function gives the columns one table keeps (crawler.state.db names them); each
`*_from_row` takes them back. A value read back equals the value written, except that a host's
requests in flight are zero (a new process has none) and robots.txt rules are read again with the
options of the crawl reading them.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from crawler.frontier import Earlier, QueuedUrl
from crawler.output.records import compact_json
from crawler.pace import HostPace
from crawler.politeness import HostRules, HostTiming
from crawler.robots.entry import RobotsEntry
from crawler.robots.rates import RequestRate, TimeWindow
from crawler.robots.txt import Explanation, RobotsOptions, RobotsTxt
from crawler.stats import CARRIED_COUNTERS, CARRIED_FIGURES, CrawlStats, DeferredHost
from crawler.usage.tdmrep import TdmRep

__all__ = [
    "QueueRow",
    "deferred_from_json",
    "deferred_json",
    "item_from_row",
    "item_row",
    "pace_from_json",
    "pace_json",
    "robots_from_row",
    "robots_row",
    "stats_from_json",
    "stats_json",
    "timing_from_row",
    "timing_row",
]

QueueRow = tuple[str, int, int, str | None, int | None, str | None]
"""url, depth, attempts, redirected_from (JSON array, NULL when empty), redirect_status, extra
(JSON object of the sitemap, recrawl and requisite fields that are set, NULL for most URLs)."""


def item_row(item: QueuedUrl) -> QueueRow:
    chain = compact_json(list(item.redirected_from)) if item.redirected_from else None
    extra: dict[str, Any] = {}
    if item.sitemap:
        extra["sitemap"] = item.sitemap
    if item.declared_by is not None:
        extra["declared_by"] = item.declared_by
    if item.lastmod is not None:
        extra["lastmod"] = item.lastmod
    if item.requisite_of is not None:
        extra["requisite_of"] = item.requisite_of
    if (earlier := item.earlier) is not None:
        extra["earlier"] = [
            earlier.fetched_at,
            earlier.status,
            earlier.etag,
            earlier.last_modified,
            earlier.digest,
        ]
    return (
        item.url,
        item.depth,
        item.attempts,
        chain,
        item.redirect_status,
        compact_json(extra) if extra else None,
    )


def item_from_row(
    url: str,
    depth: int,
    attempts: int,
    chain: str | None,
    redirect_status: int | None,
    extra: str | None = None,
) -> QueuedUrl:
    redirected_from = tuple(json.loads(chain)) if chain else ()
    if not extra:
        return QueuedUrl(url, depth, redirected_from, attempts, redirect_status)
    fields = json.loads(extra)
    return QueuedUrl(
        url,
        depth,
        redirected_from,
        attempts,
        redirect_status,
        sitemap=int(fields.get("sitemap", 0)),
        declared_by=fields.get("declared_by"),
        lastmod=fields.get("lastmod"),
        earlier=Earlier(*fields["earlier"]) if "earlier" in fields else None,
        requisite_of=fields.get("requisite_of"),
    )


# --- host timing --------------------------------------------------------------------------------


def _window_json(window: TimeWindow | None) -> list[int] | None:
    return None if window is None else [window.start, window.end]


def _window(value: Sequence[int] | None) -> TimeWindow | None:
    return None if value is None else TimeWindow(int(value[0]), int(value[1]))


# Most hosts ask for the same few paces, and a host's timing is written at every commit it moved.
@lru_cache(maxsize=4096)
def rules_json(rules: HostRules) -> str:
    return compact_json(
        {
            "crawl_delay": rules.crawl_delay,
            "request_rates": [
                [rate.requests, rate.seconds, _window_json(rate.window)]
                for rate in rules.request_rates
            ],
            "visit_windows": [_window_json(window) for window in rules.visit_windows],
        }
    )


def rules_from_json(text: str) -> HostRules:
    data = json.loads(text)
    return HostRules(
        data["crawl_delay"],
        tuple(
            RequestRate(int(requests), float(seconds), _window(window))
            for requests, seconds, window in data["request_rates"]
        ),
        tuple(TimeWindow(int(start), int(end)) for start, end in data["visit_windows"]),
    )


TimingRow = tuple[
    str, str, float, float, int, int, float | None, float | None, float | None, int, str
]
"""origin, rules (JSON), next_start, backoff_until, failure_streak, requests, last_start,
last_answer, shortest_gap, pages, pace (JSON)."""


def pace_json(pace: HostPace) -> str:
    return compact_json({name: getattr(pace, name) for name in _PACE_FIELDS})


def pace_from_json(text: str | None) -> HostPace:
    """A host's pace as stored; a field added since keeps its default (None: a row written
    before the pace was kept)."""
    if not text:
        return HostPace()
    data = json.loads(text)
    return HostPace(**{name: data[name] for name in _PACE_FIELDS if name in data})


_PACE_FIELDS = tuple(field.name for field in dataclasses.fields(HostPace))


def timing_row(timing: HostTiming) -> TimingRow:
    return (
        timing.origin,
        rules_json(timing.rules),
        timing.next_start,
        timing.backoff_until,
        timing.failure_streak,
        timing.requests,
        timing.last_start,
        timing.last_answer,
        timing.shortest_gap,
        timing.pages,
        pace_json(timing.pace),
    )


def timing_from_row(row: Sequence[Any]) -> HostTiming:
    origin, rules, next_start, backoff_until, streak, requests, last, answer, gap, pages = row[:10]
    return HostTiming(
        origin,
        rules_from_json(rules),
        next_start=next_start,
        backoff_until=backoff_until,
        failure_streak=streak,
        requests=requests,
        last_start=last,
        last_answer=answer,
        shortest_gap=gap,
        pages=pages,
        pace=pace_from_json(row[10] if len(row) > 10 else None),
    )


# --- robots.txt ---------------------------------------------------------------------------------

RobotsRow = tuple[
    str, bytes, int | None, str | None, float, float, str, int, int, int, str, str | None
]
"""origin, text (UTF-8 bytes, surrogate escapes back to the bytes they stood for), policy
(NULL: parsed; 1 allow-all, 0 disallow-all), policy message, fetched_at, expires_at, reason,
unreachable, failures, stale, hops (JSON array), tdmrep (JSON: crawler.usage.TdmRep, or NULL)."""


def robots_row(entry: RobotsEntry) -> RobotsRow:
    policy = entry.robots.policy
    return (
        entry.origin,
        entry.robots.text.encode("utf-8", "surrogateescape"),
        None if policy is None else int(policy.allowed),
        None if policy is None else policy.message,
        entry.fetched_at,
        entry.expires_at,
        entry.reason,
        int(entry.unreachable),
        entry.failures,
        int(entry.stale),
        compact_json(list(entry.hops)),
        None if entry.tdmrep is None else compact_json(entry.tdmrep.to_json()),
    )


def robots_from_row(row: Sequence[Any], options: RobotsOptions) -> RobotsEntry:
    origin, text, allowed, message, fetched_at, expires_at, reason = row[:7]
    unreachable, failures, stale, hops = row[7:11]
    # A row of a state before TDMRep (schema 4) has no tdmrep: not asked for.
    tdmrep = TdmRep.from_json(json.loads(row[11])) if len(row) > 11 and row[11] else None
    policy = None
    if allowed is not None:
        policy = Explanation(allowed=bool(allowed), reason="policy", message=message)
    robots = RobotsTxt.restore(bytes(text).decode("utf-8", "surrogateescape"), options, policy)
    return RobotsEntry(
        origin,
        robots,
        fetched_at,
        expires_at,
        reason,
        bool(unreachable),
        failures,
        bool(stale),
        tuple(json.loads(hops)),
        tdmrep,
    )


# --- the run ------------------------------------------------------------------------------------

_COUNTERS = CARRIED_COUNTERS
_FIGURES = CARRIED_FIGURES


def stats_json(stats: CrawlStats) -> str:
    """The figures that add up over runs; live ones (in flight, queued, outcome) are left out."""
    data: dict[str, Any] = {name: getattr(stats, name) for name in _FIGURES}
    for name in _COUNTERS:
        # JSON keys are strings; statuses are ints, turned back on reading.
        data[name] = {str(key): count for key, count in getattr(stats, name).items()}
    return compact_json(data)


def stats_from_json(text: str) -> CrawlStats:
    data = json.loads(text)
    # A figure added since the state was saved keeps its default.
    stats = CrawlStats(**{name: data[name] for name in _FIGURES if name in data})
    stats.statuses.update({int(key): count for key, count in data["statuses"].items()})
    for name in _COUNTERS[1:]:
        counter: Counter[str] = getattr(stats, name)
        counter.update(data.get(name, {}))
    return stats


def deferred_json(hosts: Sequence[DeferredHost]) -> str:
    return compact_json([[host.origin, host.until, host.pending, host.reason] for host in hosts])


def deferred_from_json(text: str) -> tuple[DeferredHost, ...]:
    return tuple(
        DeferredHost(origin, until, pending, reason)
        for origin, until, pending, reason in json.loads(text)
    )
