"""The crawl state as the crawl sees it: its stores and the moment they are made durable.

`CrawlState` bundles the stores a crawl keeps (each behind its own small interface, so an SQLite
or a shared Redis version can stand in for the memory one) and says when what was put is durable:

    frontier  Frontier          crawler.frontier    queues per origin, leases
    seen      SeenSet           crawler.frontier    every URL ever queued or skipped
    robots    RobotsStore       crawler.robots_cache   robots.txt entries with their fetch times
    timings   HostTimingStore   crawler.politeness     per-host timing, backoff, rules, counts
    run       RunStore          here                   seeds, figures, deferred hosts, run count
    held      HeldUrls          crawler.frontier    URLs met past limits.max_depth, with depth
    fetches   FetchLog          here                   what the last fetch of each URL found
    starts    StartLog          here                   every request start, for `crawl report`
    freshness FreshnessStore    crawler.state.freshness   revisits' findings, lastmod trust

`MemoryCrawlState` is the one for embedding and tests: `commit` does nothing, and nothing
outlives the process.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from crawler.frontier import (
    Earlier,
    Frontier,
    HeldUrls,
    MemoryFrontier,
    MemoryHeldUrls,
    MemorySeenSet,
    QueuedUrl,
    SeenSet,
)
from crawler.politeness import HostTimingStore, MemoryHostTimingStore
from crawler.robots.entry import MemoryRobotsStore, RobotsStore
from crawler.state.freshness import FreshnessStore, MemoryFreshnessStore
from crawler.stats import CrawlStats, DeferredHost

__all__ = [
    "CrawlState",
    "FetchLog",
    "MemoryCrawlState",
    "MemoryFetchLog",
    "MemoryRunStore",
    "MemoryStartLog",
    "RunStore",
    "StartLog",
]


class FetchLog(Protocol):
    """What the last fetch of each URL found: what a recrawl queues, and asks for
    conditionally."""

    def add(self, item: QueuedUrl, found: Earlier) -> None:
        """The fetch of `item` (filed under `item.first_url`, the URL its record is) found
        `found`."""

    def latest(self) -> Iterator[QueuedUrl]:
        """Every URL fetched, once: as a recrawl queues it (its depth and sitemap fields), with
        what its last fetch found as `earlier`; sitemaps first (what they say of their pages is
        best known before those are due), then in the order of those fetches."""
        ...

    def __len__(self) -> int:
        """URLs fetched."""
        ...


class StartLog(Protocol):
    """Every request start: what `crawl report` draws each host's gaps from."""

    def add(self, origin: str, at: float, interval: float, pace: float) -> None:
        """A request to `origin` started at `at` (epoch seconds); the crawl then allowed the
        origin's next start no sooner than `interval` seconds after it (what robots.txt and
        min_delay ask, or longer while it backs off), and `pace` was the origin's interval in
        force (crawler.politeness.Politeness.why: what its answers taught too, which counts
        from the answer with one request in flight)."""


class MemoryStartLog:
    """Keeps nothing: a crawl in memory leaves nothing to report on."""

    def add(self, origin: str, at: float, interval: float, pace: float) -> None:
        pass


class MemoryFetchLog:
    """Keeps nothing: a crawl in memory is not recrawled (recrawl.enabled needs the durable
    state), and a shared crawl's worker would otherwise hold a row of every page it fetched."""

    def add(self, item: QueuedUrl, found: Earlier) -> None:
        pass

    def latest(self) -> Iterator[QueuedUrl]:
        return iter(())

    def __len__(self) -> int:
        return 0


class RunStore(Protocol):
    """What a crawl keeps about itself from run to run."""

    def seeds(self) -> tuple[str, ...]:
        """Every seed given so far, each once, in the order first given."""
        ...

    def add_seeds(self, urls: Iterable[str]) -> None:
        """Remember `urls` as seeds too (those already known are left as they are)."""

    def seed_moves(self) -> tuple[tuple[str, str], ...]:
        """(seed, where its redirects led), in the order found: each target's host is in the
        crawl's scope as a seed's host is."""
        ...

    def add_seed_move(self, seed: str, target: str) -> None:
        """Remember that a redirect chain from `seed` led to `target` (once per pair)."""

    def stats(self) -> CrawlStats | None:
        """The figures as last saved (live ones zero); None before any was saved."""
        ...

    def save_stats(self, stats: CrawlStats) -> None: ...

    def deferred(self) -> tuple[DeferredHost, ...]:
        """The hosts the last run left waiting longer than politeness.max_wait."""
        ...

    def save_deferred(self, hosts: Sequence[DeferredHost]) -> None: ...

    def runs(self) -> int:
        """Runs begun on this state, the current one included once begun."""
        ...

    def clean(self) -> bool:
        """Whether the last run before this process's ended cleanly (stopped or finished with all
        it did committed), as found when the state was opened; True for a new state. False after
        a kill: that run may have started requests its committed state does not show."""
        ...

    def begin_run(self) -> None:
        """A run begins: until `end_run`, the state counts as not closed cleanly."""

    def end_run(self) -> None:
        """The run ends cleanly: no request in flight, everything put."""

    def recrawl_began(self) -> tuple[float, int] | None:
        """When the last recrawl pass began (epoch seconds), and the page records made before
        it (limits.max_pages counts the pass's own); None before any."""
        ...

    def cookies(self) -> list[dict[str, Any]]:
        """The crawl's cookie jar as `CookieJar.dump` left it (fetch.cookies; crawler.http)."""
        ...

    def save_cookies(self, rows: list[dict[str, Any]]) -> None: ...

    def begin_recrawl(self, at: float, pages_before: int) -> None:
        """A recrawl pass begins at `at`, after `pages_before` page records: the URLs due then
        are queued."""


class CrawlState(Protocol):
    """The stores of one crawl, and when what was put in them is durable."""

    @property
    def frontier(self) -> Frontier: ...

    @property
    def seen(self) -> SeenSet: ...

    @property
    def robots(self) -> RobotsStore: ...

    @property
    def timings(self) -> HostTimingStore: ...

    @property
    def run(self) -> RunStore: ...

    @property
    def held(self) -> HeldUrls: ...

    @property
    def fetches(self) -> FetchLog: ...

    @property
    def starts(self) -> StartLog: ...

    @property
    def freshness(self) -> FreshnessStore: ...

    @property
    def durable(self) -> bool:
        """Whether the state outlives the process (a resumed crawl reads it)."""
        ...

    def commit(self) -> None:
        """Make everything put so far durable, at once: a kill loses none of it."""

    def write_again(self) -> None:
        """After a commit found the disk full, once the crawl has made room: the next commit
        stores what that one could not (a disk still full keeps the state at its last commit)."""

    def close(self) -> None:
        """Commit, then let go of what the state holds. Idempotent."""


class MemoryRunStore:
    def __init__(self) -> None:
        self._seeds: dict[str, None] = {}
        self._moves: dict[tuple[str, str], None] = {}
        self._stats: CrawlStats | None = None
        self._deferred: tuple[DeferredHost, ...] = ()
        self._runs = 0
        self._recrawl: tuple[float, int] | None = None
        self._cookies: list[dict[str, Any]] = []

    def seeds(self) -> tuple[str, ...]:
        return tuple(self._seeds)

    def add_seeds(self, urls: Iterable[str]) -> None:
        self._seeds.update(dict.fromkeys(urls))

    def seed_moves(self) -> tuple[tuple[str, str], ...]:
        return tuple(self._moves)

    def add_seed_move(self, seed: str, target: str) -> None:
        self._moves[(seed, target)] = None

    def stats(self) -> CrawlStats | None:
        return self._stats

    def save_stats(self, stats: CrawlStats) -> None:
        self._stats = stats

    def deferred(self) -> tuple[DeferredHost, ...]:
        return self._deferred

    def save_deferred(self, hosts: Sequence[DeferredHost]) -> None:
        self._deferred = tuple(hosts)

    def runs(self) -> int:
        return self._runs

    def clean(self) -> bool:
        return True

    def begin_run(self) -> None:
        self._runs += 1

    def end_run(self) -> None:
        pass

    def recrawl_began(self) -> tuple[float, int] | None:
        return self._recrawl

    def cookies(self) -> list[dict[str, Any]]:
        return self._cookies

    def save_cookies(self, rows: list[dict[str, Any]]) -> None:
        self._cookies = rows

    def begin_recrawl(self, at: float, pages_before: int) -> None:
        self._recrawl = (at, pages_before)


@dataclass(slots=True)
class MemoryCrawlState:
    """Every store in memory: for embedding and tests. Nothing to commit, nothing outlives it."""

    frontier: Frontier = field(default_factory=MemoryFrontier)
    seen: SeenSet = field(default_factory=MemorySeenSet)
    robots: RobotsStore = field(default_factory=MemoryRobotsStore)
    timings: HostTimingStore = field(default_factory=MemoryHostTimingStore)
    run: RunStore = field(default_factory=MemoryRunStore)
    held: HeldUrls = field(default_factory=MemoryHeldUrls)
    fetches: FetchLog = field(default_factory=MemoryFetchLog)
    starts: StartLog = field(default_factory=MemoryStartLog)
    freshness: FreshnessStore = field(default_factory=MemoryFreshnessStore)

    @property
    def durable(self) -> bool:
        return False

    def commit(self) -> None:
        pass

    def write_again(self) -> None:
        pass

    def close(self) -> None:
        pass
