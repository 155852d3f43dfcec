"""The frontier: URLs waiting to be fetched, one queue per origin, and the seen set. Pure: no I/O.

Both sit behind small interfaces (`Frontier`, `SeenSet`) so a persistent (SQLite) and a shared
(Redis) version can take the in-memory one's place without the crawl changing. The rules they
keep:
- A URL enters the frontier at most once per crawl: the caller adds it to the seen set first, and
  only a URL new to the seen set is pushed.
- Nothing pushed is lost: a URL leaves its queue by `pop` only, and a URL that could not be
  fetched yet (backoff, robots.txt unreachable, interrupted) goes back with `push_front`.
- Within an origin, URLs come out in the order they went in (breadth first), except that a
  returned URL is next.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Protocol

__all__ = ["Frontier", "MemoryFrontier", "MemorySeenSet", "QueuedUrl", "SeenSet"]


@dataclass(frozen=True, slots=True)
class QueuedUrl:
    """A URL waiting to be fetched, with what the crawl knows about how it got there."""

    url: str
    """Normal URL (crawler.urls.normalize_url)."""
    depth: int = 0
    """Links followed from a seed; a redirect hop keeps its source's depth."""
    redirected_from: tuple[str, ...] = ()
    """The redirect chain that led here, first URL first; empty when not reached by redirect."""
    attempts: int = 0
    """Earlier tries that failed and may be retried (429, 5xx, network errors)."""
    redirect_status: int | None = None
    """Status of the redirect that led here, for the record if the chain stops at this URL."""

    @property
    def first_url(self) -> str:
        """The URL the chain started at: the one a page record is filed under."""
        return self.redirected_from[0] if self.redirected_from else self.url

    def retried(self) -> QueuedUrl:
        return replace(self, attempts=self.attempts + 1)


class Frontier(Protocol):
    def push(self, origin: str, item: QueuedUrl) -> None:
        """Queue `item` at the back of its origin's queue."""

    def push_front(self, origin: str, item: QueuedUrl) -> None:
        """Return `item` to the head of its origin's queue: it is the next one out."""

    def pop(self, origin: str) -> QueuedUrl | None: ...

    def pending(self, origin: str) -> int: ...

    def origins(self) -> Iterator[str]:
        """Origins with at least one URL queued."""
        ...

    def __len__(self) -> int: ...


class SeenSet(Protocol):
    def add(self, url: str) -> bool:
        """Record `url`; True when it was not seen before."""
        ...

    def __contains__(self, url: str) -> bool: ...

    def __len__(self) -> int: ...


class MemoryFrontier:
    """Per-origin deques in a dict; an origin's entry goes when its queue empties."""

    __slots__ = ("_queues", "_size")

    def __init__(self) -> None:
        self._queues: dict[str, deque[QueuedUrl]] = {}
        self._size = 0

    def _queue(self, origin: str) -> deque[QueuedUrl]:
        queue = self._queues.get(origin)
        if queue is None:
            queue = self._queues[origin] = deque()
        self._size += 1  # every caller adds one URL
        return queue

    def push(self, origin: str, item: QueuedUrl) -> None:
        self._queue(origin).append(item)

    def push_front(self, origin: str, item: QueuedUrl) -> None:
        self._queue(origin).appendleft(item)

    def pop(self, origin: str) -> QueuedUrl | None:
        queue = self._queues.get(origin)
        if not queue:
            return None
        item = queue.popleft()
        self._size -= 1
        if not queue:
            del self._queues[origin]
        return item

    def pending(self, origin: str) -> int:
        queue = self._queues.get(origin)
        return len(queue) if queue else 0

    def origins(self) -> Iterator[str]:
        return iter(list(self._queues))

    def __len__(self) -> int:
        return self._size

    def __repr__(self) -> str:
        return f"MemoryFrontier({self._size} URLs in {len(self._queues)} origins)"


class MemorySeenSet:
    __slots__ = ("_urls",)

    def __init__(self) -> None:
        self._urls: set[str] = set()

    def add(self, url: str) -> bool:
        urls = self._urls
        if url in urls:
            return False
        urls.add(url)
        return True

    def __contains__(self, url: str) -> bool:
        return url in self._urls

    def __len__(self) -> int:
        return len(self._urls)
