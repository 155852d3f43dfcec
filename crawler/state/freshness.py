"""What a recrawl's schedule and its lastmod trust learn, kept with the crawl state: per page,
what its revisits found (crawler.freshness.ChangeHistory) and what its sitemap said of it
(changefreq, priority); per origin, its lastmod trust (crawler.freshness.LastmodTrust).

    page_history    url, visits, changes, observed, observed_changed (seconds), changefreq,
                    priority
    lastmod_trust   origin, level, right, since, reason

A revisit is written as a delta (visits + 1, changes + changed, observed + interval...), so the
crawl never reads a page's history to write it: only a recrawl pass's start reads them all.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol, cast

from crawler.freshness import ChangeHistory, LastmodTrust, TrustLevel
from crawler.state.db import StateDb

__all__ = [
    "FreshnessStore",
    "HeardLastmods",
    "MemoryFreshnessStore",
    "PageHistory",
    "SqliteFreshnessStore",
]


@dataclass(frozen=True, slots=True)
class PageHistory:
    """A page's revisits, and its sitemap's word on it."""

    url: str
    changes: ChangeHistory
    changefreq: str | None = None
    priority: float | None = None


class FreshnessStore(Protocol):
    def revisited(self, url: str, interval: float, changed: bool) -> None:
        """A revisit of `url`, `interval` seconds after its last fetch, found it `changed`."""

    def listed(self, url: str, changefreq: str | None, priority: float | None) -> None:
        """A sitemap lists `url` with `changefreq` and `priority` (either given)."""

    def histories(self) -> Iterator[PageHistory]:
        """Every page with a history or a sitemap's word."""
        ...

    def trust(self, origin: str) -> LastmodTrust:
        """`origin`'s lastmod trust; a host never judged is untrusted."""
        ...

    def set_trust(self, origin: str, trust: LastmodTrust) -> None: ...

    def trusts(self) -> dict[str, LastmodTrust]:
        """Every origin judged."""
        ...

    def heard(self, url: str, lastmod: float) -> None:
        """A sitemap read again in this recrawl pass lists `url`, fetched before, with
        `lastmod`: kept for the pass (in memory but for a shared crawl's, which every worker
        hears)."""

    def lastmod_heard(self, url: str) -> float | None:
        """The lastmod heard for `url` in this pass, forgotten once asked (None: none)."""
        ...

    def forget_heard(self) -> None:
        """A new pass: the lastmods heard in the last are forgotten."""


class HeardLastmods:
    """The lastmods a recrawl pass heard, in memory: a store's `heard`, `lastmod_heard` and
    `forget_heard`."""

    __slots__ = ("_heard",)

    def __init__(self) -> None:
        self._heard: dict[str, float] = {}

    def heard(self, url: str, lastmod: float) -> None:
        self._heard[url] = lastmod

    def lastmod_heard(self, url: str) -> float | None:
        return self._heard.pop(url, None)

    def forget_heard(self) -> None:
        self._heard.clear()


class MemoryFreshnessStore(HeardLastmods):
    def __init__(self) -> None:
        super().__init__()
        self._pages: dict[str, PageHistory] = {}
        self._trust: dict[str, LastmodTrust] = {}

    def revisited(self, url: str, interval: float, changed: bool) -> None:
        page = self._pages.get(url) or PageHistory(url, ChangeHistory())
        self._pages[url] = PageHistory(
            url, page.changes.after_visit(interval, changed), page.changefreq, page.priority
        )

    def listed(self, url: str, changefreq: str | None, priority: float | None) -> None:
        page = self._pages.get(url) or PageHistory(url, ChangeHistory())
        self._pages[url] = PageHistory(url, page.changes, changefreq, priority)

    def histories(self) -> Iterator[PageHistory]:
        yield from list(self._pages.values())

    def trust(self, origin: str) -> LastmodTrust:
        return self._trust.get(origin) or LastmodTrust()

    def set_trust(self, origin: str, trust: LastmodTrust) -> None:
        self._trust[origin] = trust

    def trusts(self) -> dict[str, LastmodTrust]:
        return dict(self._trust)


_REVISIT = (
    "INSERT INTO page_history (url, visits, changes, observed, observed_changed) "
    "VALUES (?, 1, ?, ?, ?) ON CONFLICT (url) DO UPDATE SET visits = visits + 1, "
    "changes = changes + excluded.changes, observed = observed + excluded.observed, "
    "observed_changed = observed_changed + excluded.observed_changed"
)
_LISTED = (
    "INSERT INTO page_history (url, visits, changes, observed, observed_changed, changefreq, "
    "priority) VALUES (?, 0, 0, 0.0, 0.0, ?, ?) ON CONFLICT (url) DO UPDATE SET "
    "changefreq = excluded.changefreq, priority = excluded.priority"
)
_TRUST = (
    "INSERT OR REPLACE INTO lastmod_trust (origin, level, right, since, reason) "
    "VALUES (?, ?, ?, ?, ?)"
)


class SqliteFreshnessStore(HeardLastmods):
    """A `FreshnessStore` in the state's database, written at its commit (but the lastmods a
    pass heard: a pass resumed reads its sitemaps again)."""

    __slots__ = ("_db", "_dirty_trust", "_listed", "_revisits", "_trust")

    def __init__(self, db: StateDb) -> None:
        super().__init__()
        self._db = db
        self._revisits: list[tuple[str, int, float, float]] = []
        self._listed: dict[str, tuple[str | None, float | None]] = {}
        self._dirty_trust: set[str] = set()
        rows = db.connection.execute(
            "SELECT origin, level, right, since, reason FROM lastmod_trust"
        ).fetchall()
        self._trust = {
            origin: LastmodTrust(cast(TrustLevel, level), right, since, reason)
            for origin, level, right, since, reason in rows
        }
        db.add_writer(self._write)

    def revisited(self, url: str, interval: float, changed: bool) -> None:
        interval = max(0.0, interval)
        self._revisits.append((url, int(changed), interval, interval if changed else 0.0))

    def listed(self, url: str, changefreq: str | None, priority: float | None) -> None:
        self._listed[url] = (changefreq, priority)

    def histories(self) -> Iterator[PageHistory]:
        connection = self._db.connection
        self._db.write()
        try:
            rows = connection.execute(
                "SELECT url, visits, changes, observed, observed_changed, changefreq, priority "
                "FROM page_history"
            )
            for url, visits, changes, observed, observed_changed, changefreq, priority in rows:
                history = ChangeHistory(visits, changes, observed, observed_changed)
                yield PageHistory(url, history, changefreq, priority)
        except sqlite3.Error as error:
            raise self._db.failed(error) from error

    def trust(self, origin: str) -> LastmodTrust:
        return self._trust.get(origin) or LastmodTrust()

    def set_trust(self, origin: str, trust: LastmodTrust) -> None:
        self._trust[origin] = trust
        self._dirty_trust.add(origin)

    def trusts(self) -> dict[str, LastmodTrust]:
        return dict(self._trust)

    def _write(self, connection: sqlite3.Connection) -> None:
        if self._revisits:
            connection.executemany(_REVISIT, self._revisits)
        if self._listed:
            connection.executemany(
                _LISTED, [(url, freq, priority) for url, (freq, priority) in self._listed.items()]
            )
        if self._dirty_trust:
            rows = []
            for origin in sorted(self._dirty_trust):
                trust = self._trust[origin]
                rows.append((origin, trust.level, trust.right, trust.since, trust.reason))
            connection.executemany(_TRUST, rows)
        # Cleared once all ran (crawler.state.db: a failed write runs again from them).
        self._revisits.clear()
        self._listed.clear()
        self._dirty_trust.clear()

    def __repr__(self) -> str:
        return f"SqliteFreshnessStore({len(self._trust)} origins judged)"
