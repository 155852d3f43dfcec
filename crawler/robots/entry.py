"""A robots.txt entry: an origin's rules with when and how they were fetched, with its TDMRep
file (fetched after it, kept and shared with it), and the stores that keep entries (memory here;
SQLite in crawler.state). Pure values; the fetching is crawler.crawl.robots_cache's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol

from crawler.robots.txt import RobotsTxt
from crawler.usage.tdmrep import TdmRep

__all__ = ["MemoryRobotsStore", "RobotsEntry", "RobotsStore"]


@dataclass(frozen=True, slots=True)
class RobotsEntry:
    origin: str
    robots: RobotsTxt
    fetched_at: float
    expires_at: float
    reason: str
    """How the rules came about: 'status 200', 'status 404: unavailable', 'unreachable: ...'."""
    unreachable: bool = False
    """The last attempt failed (429, 5xx, network): retry at `expires_at`."""
    failures: int = 0
    """Consecutive unreachable attempts."""
    stale: bool = False
    """Unreachable, but the rules are the last good copy's, used past its expiry."""
    hops: tuple[str, ...] = ()
    """URLs requested for this entry, robots.txt of the origin first, then redirect targets."""
    tdmrep: TdmRep | None = None
    """The origin's /.well-known/tdmrep.json as read after its robots.txt (crawler.usage.tdmrep);
    None when not asked for (usage.tdmrep off, or robots.txt unreachable)."""
    error: str | None = field(default=None, compare=False)
    """What the last attempt of an unreachable entry met: a failure kind (`dns`, `tls`,
    `connection`, `timeout`, ...) or `status 503`. Only on the entry a fetch returns."""
    answered_at: float | None = field(default=None, compare=False)
    """`time.monotonic()` when the last hop's answer began to arrive, where the client could tell
    (`Response.answered_at`): when the host had answered. Only on the entry a fetch returns; never
    stored, so never older than the fetch."""

    def fresh(self, now: float) -> bool:
        return now < self.expires_at

    @property
    def blocks(self) -> bool:
        """No rules to crawl by until `expires_at`: unreachable and no earlier copy."""
        return self.unreachable and not self.stale


class RobotsStore(Protocol):
    def get(self, origin: str) -> RobotsEntry | None: ...

    def put(self, entry: RobotsEntry) -> None: ...

    def __iter__(self) -> Iterator[RobotsEntry]: ...


class MemoryRobotsStore:
    def __init__(self) -> None:
        self._entries: dict[str, RobotsEntry] = {}

    def get(self, origin: str) -> RobotsEntry | None:
        return self._entries.get(origin)

    def put(self, entry: RobotsEntry) -> None:
        self._entries[entry.origin] = entry

    def __iter__(self) -> Iterator[RobotsEntry]:
        return iter(list(self._entries.values()))

    def __len__(self) -> int:
        return len(self._entries)
