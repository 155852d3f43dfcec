"""What one worker of a shared crawl (crawler.crawl.shared) holds and hands over: the URLs of the
hosts it has claimed, each with its lease until it is done (`ClaimedFrontier`), and the records
of a host's timing and of its robots.txt entry, as the server keeps them for the host's next
holder."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

from crawler.crawl.hosts import Host
from crawler.frontier import QueuedUrl
from crawler.robots.entry import RobotsEntry
from crawler.robots.rules import RobotsOptions
from crawler.state.codec import (
    item_from_row,
    item_row,
    pace_from_json,
    pace_json,
    robots_from_row,
    robots_row,
    rules_from_json,
    rules_json,
)
from crawler.state.shared.fresh import version_of
from crawler.state.shared.schedule import SharedSchedule

__all__ = [
    "ClaimedFrontier",
    "entry_version",
    "host_record",
    "item_of",
    "item_text",
    "restore_host",
    "robots_entry",
    "robots_text",
]


def item_text(item: QueuedUrl) -> str:
    return json.dumps(item_row(item), separators=(",", ":"))


def item_of(text: str) -> QueuedUrl:
    return item_from_row(*json.loads(text))


def host_record(host: Host) -> str:
    """What the next holder of the host needs of its timing: its rules and counters. Its times
    are this worker's clock's, so they stay here: the server's next start stands for them."""
    timing = host.timing
    return json.dumps(
        {
            "rules": rules_json(timing.rules),
            "streak": timing.failure_streak,
            "requests": timing.requests,
            "pages": timing.pages,
            "gap": timing.shortest_gap,
            # What its answers taught: the next holder paces it so (times on the crawl's epoch,
            # which every worker's clock is aligned to).
            "pace": pace_json(timing.pace),
            "retired": host.retired,
            "retired_as": host.retired_as,
        },
        separators=(",", ":"),
    )


def robots_text(entry: RobotsEntry) -> str:
    row: list[Any] = list(robots_row(entry))
    row[1] = row[1].decode("utf-8", "surrogateescape")
    return json.dumps(row)


def robots_entry(text: str, options: RobotsOptions) -> RobotsEntry:
    row = json.loads(text)
    row[1] = row[1].encode("utf-8", "surrogateescape")
    return robots_from_row(row, options)


class ClaimedFrontier:
    """A `Frontier` for one worker: pushes are offers to the shared queues; what the worker
    holds locally is the URLs of the hosts it has claimed, and each claimed URL's lease."""

    def __init__(self, schedule: SharedSchedule) -> None:
        self._schedule = schedule
        self._queues: dict[str, deque[QueuedUrl]] = {}
        self._leases: dict[str, str] = {}
        """Claimed URL -> the lease's text on the server, until done or given back."""
        self._started: set[str] = set()

    def claimed(self, origin: str, texts: Sequence[str]) -> None:
        """URLs leased with the host, in queue order: they go first."""
        queue = self._queues.setdefault(origin, deque())
        for text in reversed(texts):
            item = item_of(text)
            self._leases[item.url] = text
            queue.appendleft(item)

    def push(self, origin: str, item: QueuedUrl) -> None:
        fresh = self._schedule.fresh
        if item.earlier is not None and not item.redirected_from and fresh is not None:
            # A recrawl's revisit: queued despite the seen set, once per fetch across the
            # workers (crawler.state.shared.fresh).
            fresh.revisit(item.url, origin, item_text(item), version_of(item.earlier))
            return
        self._schedule.offer(item.url, origin, item_text(item))

    def push_front(self, origin: str, item: QueuedUrl) -> None:
        self._started.discard(item.url)
        self._queues.setdefault(origin, deque()).appendleft(item)

    def pop(self, origin: str) -> QueuedUrl | None:
        queue = self._queues.get(origin)
        if not queue:
            return None
        item = queue.popleft()
        if not queue:
            del self._queues[origin]
        self._started.add(item.url)
        return item

    def forget(self) -> None:
        """The server gave back every URL this worker held (it was lost and came back): none is
        this worker's to fetch, give back or mark done any more."""
        self._queues.clear()
        self._leases.clear()
        self._started.clear()

    def give_back(self, origin: str) -> tuple[tuple[str, ...], list[str]]:
        """The host is released: (the leases of its claimed URLs not started; the texts of its
        URLs to go back to the head of its queue)."""
        items = self._queues.pop(origin, deque())
        unused = []
        for item in items:
            lease = self._leases.get(item.url)
            if lease is not None and item.url not in self._started:
                unused.append(self._leases.pop(item.url))
        return tuple(unused), [item_text(item) for item in items]

    def done(self, item: QueuedUrl) -> None:
        self._started.discard(item.url)
        lease = self._leases.pop(item.url, None)
        if lease is not None:
            self._schedule.done(lease)
        fresh = self._schedule.fresh
        if item.earlier is not None and fresh is not None:
            fresh.revisit_ended(item.first_url)  # the next pass may queue it again

    def leased(self) -> int:
        return len(self._leases)

    def pending(self, origin: str) -> int:
        queue = self._queues.get(origin)
        return len(queue) if queue else 0

    def origins(self) -> Iterator[str]:
        return iter(list(self._queues))

    def __len__(self) -> int:
        return sum(len(queue) for queue in self._queues.values())

    def __repr__(self) -> str:
        return f"ClaimedFrontier({len(self)} local URLs, {len(self._leases)} leased)"


def entry_version(entry: RobotsEntry | None) -> str:
    return "" if entry is None else repr(entry.fetched_at)


def restore_host(host: Host, text: str) -> None:
    record = json.loads(text)
    timing = host.timing
    timing.rules = rules_from_json(record["rules"])
    timing.failure_streak = record["streak"]
    if "pace" in record:
        timing.pace = pace_from_json(record["pace"])
    timing.requests = max(timing.requests, record["requests"])
    timing.pages = max(timing.pages, record["pages"])
    gap = record["gap"]
    if gap is not None and (timing.shortest_gap is None or gap < timing.shortest_gap):
        timing.shortest_gap = gap
    if record["retired"] is not None:
        host.retired = record["retired"]
        host.retired_as = record["retired_as"]
