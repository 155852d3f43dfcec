"""The frontier: URLs waiting to be fetched, one queue per origin, and the seen set. Pure: no I/O.

Both sit behind small interfaces (`Frontier`, `SeenSet`) so a persistent (crawler.state: SQLite)
and a shared (Redis) version can take the in-memory one's place without the crawl changing. The
rules they keep:
- A URL enters the frontier at most once per crawl: the caller adds it to the seen set first, and
  only a URL new to the seen set is pushed.
- Nothing pushed is lost. `pop` leases a URL: it leaves its queue but stays in the frontier's
  keeping until `done` (its page is stored, or it was skipped: it leaves for good) or
  `push_front` (it could not be fetched yet: backoff, robots.txt unreachable, interrupted; it is
  queued again, next out). A persistent frontier opened again queues every URL leased and not done
  when it was last closed or killed: those are the only URLs a crawl may fetch twice.
- Within an origin, URLs come out in the order they went in (breadth first), except that a
  returned URL is next.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Protocol

__all__ = [
    "ONLY_BY_LINK",
    "Frontier",
    "HeldUrls",
    "MemoryFrontier",
    "MemoryHeldUrls",
    "MemorySeenSet",
    "QueuedUrl",
    "SeenSet",
]


@dataclass(frozen=True, slots=True)
class Earlier:
    """What the last fetch of a URL found, for a recrawl to ask whether it changed."""

    fetched_at: float
    """Epoch seconds."""
    status: int | None
    etag: str | None = None
    last_modified: str | None = None
    digest: str | None = None
    """The body's digest (crawler.output.records.body_digest) when the answer was a 2xx."""


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
    sitemap: int = 0
    """0 for a page. For a sitemap, its level: 1 when a robots.txt named it (or it is the
    default /sitemap.xml), one more for each sitemap index that led to it."""
    declared_by: str | None = None
    """For a sitemap: the origin whose robots.txt named it (or the index that led to it). That
    origin's URLs it may list wherever it sits: the protocol's cross-submission."""
    lastmod: float | None = None
    """For a page a sitemap listed: its `lastmod` there, epoch seconds."""
    earlier: Earlier | None = None
    """In a recrawl, what the URL's last fetch found: it is asked for conditionally."""
    requisite_of: str | None = None
    """For a page requisite (fetch.page_requisites): the URL of the page, stylesheet or frame
    that needs it. A requisite is fetched and archived, never read as a page: its links are not
    followed and it gets no page record. None for a page or a sitemap."""

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
        """Queue `item` at the head of its origin's queue: it is the next one out. A leased URL
        (`item.url` popped and not done) is given back, its lease ended; `item` may differ from
        what was popped (one more attempt)."""

    def pop(self, origin: str) -> QueuedUrl | None:
        """Lease the next URL of `origin`, or None when none is queued."""
        ...

    def done(self, item: QueuedUrl) -> None:
        """End the lease of a popped URL for good: its page is stored, or it was skipped.
        ValueError if `item.url` is not leased."""

    def pending(self, origin: str) -> int:
        """URLs of `origin` queued, leased ones not counted."""
        ...

    def leased(self) -> int:
        """URLs popped and neither done nor given back."""
        ...

    def origins(self) -> Iterator[str]:
        """Origins with at least one URL queued."""
        ...

    def __len__(self) -> int:
        """URLs queued, leased ones not counted."""
        ...


class SeenSet(Protocol):
    def add(self, url: str) -> bool:
        """Record `url`; True when it was not seen before."""
        ...

    def __contains__(self, url: str) -> bool: ...

    def __len__(self) -> int: ...


ONLY_BY_LINK = 2**31 - 1
"""The depth a URL is held at when only a link may queue it: a sitemap listed it where the
protocol does not let it list that URL. No depth limit releases it."""


class HeldUrls(Protocol):
    """URLs met past `limits.max_depth`, each with the least depth it was found at: skips that a
    shallower link, or a crawl resumed with a greater depth, turns into queued URLs. Also the
    URLs a sitemap could not list, at `ONLY_BY_LINK`. Each is in the seen set too."""

    def hold(self, url: str, depth: int) -> None:
        """Keep `url` as found at `depth` (the least depth found so far stays)."""

    def depth(self, url: str) -> int | None:
        """The depth `url` is held at; None when it is not held."""
        ...

    def release(self, url: str) -> None:
        """`url` is held no more (it is queued now)."""

    def within(self, max_depth: int | None) -> list[tuple[str, int]]:
        """(url, depth) of every URL held at `max_depth` or less (any depth a link can give for
        None: not `ONLY_BY_LINK`), in the order held."""
        ...

    def __len__(self) -> int: ...


class MemoryFrontier:
    """Per-origin deques in a dict; an origin's entry goes when its queue empties. Leases are a
    dict by URL."""

    __slots__ = ("_leases", "_queues", "_size")

    def __init__(self) -> None:
        self._queues: dict[str, deque[QueuedUrl]] = {}
        self._leases: dict[str, QueuedUrl] = {}
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
        self._leases.pop(item.url, None)
        self._queue(origin).appendleft(item)

    def pop(self, origin: str) -> QueuedUrl | None:
        queue = self._queues.get(origin)
        if not queue:
            return None
        item = queue.popleft()
        self._size -= 1
        if not queue:
            del self._queues[origin]
        self._leases[item.url] = item
        return item

    def done(self, item: QueuedUrl) -> None:
        if self._leases.pop(item.url, None) is None:
            raise ValueError(f"{item.url} is not leased")

    def leased(self) -> int:
        return len(self._leases)

    def pending(self, origin: str) -> int:
        queue = self._queues.get(origin)
        return len(queue) if queue else 0

    def origins(self) -> Iterator[str]:
        return iter(list(self._queues))

    def __len__(self) -> int:
        return self._size

    def __repr__(self) -> str:
        return (
            f"MemoryFrontier({self._size} URLs in {len(self._queues)} origins, "
            f"{len(self._leases)} leased)"
        )


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


class MemoryHeldUrls:
    __slots__ = ("_depths",)

    def __init__(self) -> None:
        self._depths: dict[str, int] = {}

    def hold(self, url: str, depth: int) -> None:
        known = self._depths.get(url)
        if known is None or depth < known:
            self._depths[url] = depth

    def depth(self, url: str) -> int | None:
        return self._depths.get(url)

    def release(self, url: str) -> None:
        self._depths.pop(url, None)

    def within(self, max_depth: int | None) -> list[tuple[str, int]]:
        limit = ONLY_BY_LINK - 1 if max_depth is None else max_depth
        return [(url, depth) for url, depth in self._depths.items() if depth <= limit]

    def __len__(self) -> int:
        return len(self._depths)
