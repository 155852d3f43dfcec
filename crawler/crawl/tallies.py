"""What the crawl counts against its limits, kept by the crawler and shared by its parts: the
pages started (limits.max_pages), and the origins where it met the shape of a trap."""

from __future__ import annotations

from collections import Counter

__all__ = ["PageBudget", "TrapTally"]


class PageBudget:
    """Pages started, this run's and the runs' before (in a recrawl, the pass's): what
    limits.max_pages counts. Counted at launch only, and set again on resume and recrawl."""

    __slots__ = ("limit", "started")

    def __init__(self, limit: int | None, started: int = 0) -> None:
        self.limit = limit
        self.started = started

    def spent(self) -> bool:
        """No more pages may start."""
        limit = self.limit
        return limit is not None and self.started >= limit

    def __repr__(self) -> str:
        return f"PageBudget({self.started} of {self.limit} started)"


class TrapTally:
    """Origins where the crawl met the shape of a trap: URLs skipped by a trap rule (by reason),
    or 'reached limits.max_pages_per_host' once the host's page budget ran out."""

    __slots__ = ("by_origin",)

    def __init__(self) -> None:
        self.by_origin: dict[str, Counter[str]] = {}

    def count(self, origin: str, reason: str) -> None:
        self.by_origin.setdefault(origin, Counter())[reason] += 1

    def __repr__(self) -> str:
        return f"TrapTally({len(self.by_origin)} origins)"
