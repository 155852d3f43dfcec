"""The status page's table of hosts: a row per host as the crawl sees it now (`host_row`), and
the rows a request asks for (`HostQuery`, `select_rows`): filtered, sorted and one page of them,
so that a crawl of a hundred thousand hosts sends a browser fifty rows. Pure: `now` is an
argument, and nothing here touches the network."""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, get_args

from crawler.crawl.hosts import Host
from crawler.errors import CrawlerError
from crawler.politeness import Politeness

__all__ = [
    "HOST_STATES",
    "MAX_ROWS",
    "SORT_KEYS",
    "HostQuery",
    "HostRow",
    "HostState",
    "QueryError",
    "host_row",
    "select_rows",
]

HostState: TypeAlias = Literal[
    "in flight",
    "due",
    "waiting",
    "throttled",
    "backed off",
    "robots.txt",
    "idle",
    "retired",
]
"""What a host is doing now: a request in flight; URLs queued and free to start (due) or waiting
for its interval or its Visit-time; held back after 429/503 (throttled) or after errors (backed
off); its robots.txt being fetched; nothing queued (idle); no more of its URLs to be fetched
(retired: given up, Crawl-delay over the cap, limits.max_pages_per_host)."""
HOST_STATES: tuple[HostState, ...] = get_args(HostState)

SortKey: TypeAlias = Literal[
    "origin",
    "state",
    "requests",
    "pages",
    "queued",
    "in_flight",
    "interval",
    "next_start",
    "refusals",
    "http_429",
    "http_5xx",
    "errors",
    "answer_time",
]
SORT_KEYS: tuple[SortKey, ...] = get_args(SortKey)
DEFAULT_ROWS = 50
MAX_ROWS = 1000
"""Rows one request may ask for."""


class QueryError(CrawlerError):
    """A request for the table asks for something it cannot give (an unknown sort key, ...)."""


@dataclass(slots=True)
class HostRow:
    """One host as the crawl sees it now. Not frozen: one is made per host at each snapshot,
    and a frozen dataclass's constructor costs twice as much."""

    origin: str
    state: HostState
    requests: int
    pages: int
    queued: int
    in_flight: int
    interval: float
    """Seconds between request starts in force (crawler.politeness.Politeness.why)."""
    pace: str
    """Which rule sets the interval: min_delay, robots.txt Crawl-delay, response time, ..."""
    next_start: float | None
    """Seconds from now to its next allowed start; None while nothing is queued or retired."""
    refusals: int
    """429s and 503s, all runs (crawler.pace)."""
    http_429: int
    http_5xx: int
    errors: int
    answer_time: float | None
    robots: str
    held_for: float = 0.0
    """Seconds left of its back-off (throttled, backed off)."""
    retired: str | None = None
    """Why no more of its URLs are fetched."""

    @property
    def why(self) -> str:
        """The state's reason: the interval's rule, the back-off, why it was retired. Made only
        for the rows sent."""
        if self.retired is not None:
            return self.retired
        if self.state in ("throttled", "backed off"):
            cause = "429/503" if self.state == "throttled" else "errors"
            return f"after {cause}, for {self.held_for:.1f} s more"
        return f"{self.interval:.3g} s ({self.pace})"

    def document(self) -> dict[str, Any]:
        """The row as JSON: seconds rounded, no infinity."""
        return {
            "origin": self.origin,
            "state": self.state,
            "why": self.why,
            "requests": self.requests,
            "pages": self.pages,
            "queued": self.queued,
            "in_flight": self.in_flight,
            "interval_s": _seconds(self.interval),
            "pace": self.pace,
            "next_start_s": _seconds(self.next_start),
            "refusals": self.refusals,
            "http_429": self.http_429,
            "http_5xx": self.http_5xx,
            "errors": self.errors,
            "answer_time_s": _seconds(self.answer_time),
            "robots": self.robots,
        }


def _seconds(value: float | None) -> float | None:
    return round(value, 3) if value is not None and math.isfinite(value) else None


def host_row(host: Host, politeness: Politeness, queued: int, now: float) -> HostRow:
    """How `host`, with `queued` URLs waiting, stands at `now`."""
    timing = host.timing
    interval, pace = politeness.why(timing, now)
    ready = politeness.ready_at(timing, now)
    state: HostState
    if host.retired is not None:
        state = "retired"
    elif host.robots_busy:
        state = "robots.txt"
    elif timing.in_flight:
        state = "in flight"
    elif timing.backoff_until > now:
        state = "throttled" if timing.pace.refusal_streak > 0 else "backed off"
    elif not queued:
        state = "idle"
    elif ready > now:
        state = "waiting"
    else:
        state = "due"
    robots = host.robots
    return HostRow(
        host.origin,
        state,
        timing.requests,
        timing.pages,
        queued,
        timing.in_flight,
        interval,
        pace,
        ready - now if queued and host.retired is None else None,
        timing.pace.refusals,
        host.refused_429,
        host.server_errors,
        host.errors,
        timing.pace.answer_time,
        robots.reason
        if robots is not None
        else ("fetching" if host.robots_busy else "not fetched"),
        timing.backoff_until - now,
        host.retired,
    )


@dataclass(frozen=True, slots=True)
class HostQuery:
    """Which rows of the table a request asks for."""

    sort: SortKey = "requests"
    descending: bool = True
    contains: str = ""
    """Only origins containing this (case aside)."""
    state: HostState | None = None
    offset: int = 0
    limit: int = DEFAULT_ROWS

    @classmethod
    def parse(cls, params: Mapping[str, str]) -> HostQuery:
        """The query of a request's parameters: sort, order (asc, desc), filter, state, offset,
        limit. QueryError saying what is wrong."""
        sort = params.get("sort", "requests")
        if sort not in SORT_KEYS:
            raise QueryError(f"sort: {sort!r} is none of {', '.join(SORT_KEYS)}")
        order = params.get("order", "asc" if sort in ("origin", "state") else "desc")
        if order not in ("asc", "desc"):
            raise QueryError(f"order: {order!r} is neither asc nor desc")
        state = params.get("state") or None
        if state is not None and state not in HOST_STATES:
            raise QueryError(f"state: {state!r} is none of {', '.join(HOST_STATES)}")
        return cls(
            sort=sort,
            descending=order == "desc",
            contains=params.get("filter", "").strip().lower()[:200],
            state=state,
            offset=_whole(params, "offset", 0, None),
            limit=_whole(params, "limit", DEFAULT_ROWS, MAX_ROWS),
        )

    def document(self) -> dict[str, Any]:
        return {
            "sort": self.sort,
            "order": "desc" if self.descending else "asc",
            "filter": self.contains,
            "state": self.state,
            "offset": self.offset,
            "limit": self.limit,
        }


def _whole(params: Mapping[str, str], name: str, default: int, most: int | None) -> int:
    text = params.get(name)
    if text is None or text == "":
        return default
    if not text.isascii() or not text.isdigit():
        raise QueryError(f"{name}: {text!r} is not a whole number")
    value = int(text)
    if most is not None and value > most:
        raise QueryError(f"{name}: {value} is over {most}")
    return value


_STATE_ORDER = {state: rank for rank, state in enumerate(HOST_STATES)}


def _key(sort: SortKey) -> Any:
    """The row's sort key; missing figures (None) sort as the least."""
    if sort == "origin":
        return lambda row: row.origin
    if sort == "state":
        return lambda row: (_STATE_ORDER[row.state], row.origin)

    def figure(row: HostRow) -> tuple[bool, float, str]:
        value = getattr(row, sort)
        return (value is not None, value if value is not None else 0.0, row.origin)

    return figure


def select_rows(rows: Iterable[HostRow], query: HostQuery) -> tuple[int, list[HostRow]]:
    """(how many rows match, the page of them `query` asks for, in its order). Only as many as
    the page needs are sorted (a heap): a page of 50 of 100,000 rows costs one pass."""
    matched: Sequence[HostRow] = [
        row
        for row in rows
        if (not query.contains or query.contains in row.origin.lower())
        and (query.state is None or row.state == query.state)
    ]
    wanted = query.offset + query.limit
    key = _key(query.sort)
    if wanted >= len(matched):
        ordered = sorted(matched, key=key, reverse=query.descending)
    elif query.descending:
        ordered = heapq.nlargest(wanted, matched, key=key)
    else:
        ordered = heapq.nsmallest(wanted, matched, key=key)
    return len(matched), ordered[query.offset : wanted]
