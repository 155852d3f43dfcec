"""The SQLite robots.txt, host timing and run stores of the crawl state (tables: see
crawler.state.db). Each buffers what it is given until the state writes, like the
frontier (crawler.state.frontier)."""

from __future__ import annotations

import json
import sqlite3
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from crawler._sqlite import write_rows
from crawler.frontier import Earlier, MemoryHeldUrls, QueuedUrl
from crawler.output.records import compact_json
from crawler.politeness import HostTiming
from crawler.robots.entry import RobotsEntry
from crawler.robots.txt import RobotsOptions
from crawler.state.codec import (
    deferred_from_json,
    deferred_json,
    robots_from_row,
    robots_row,
    stats_from_json,
    stats_json,
    timing_from_row,
    timing_row,
)
from crawler.state.db import StateDb
from crawler.stats import CrawlStats, DeferredHost

__all__ = ["SqliteHeldUrls", "SqliteHostTimingStore", "SqliteRobotsStore", "SqliteRunStore"]

_ROBOTS_COLUMNS = (
    "origin, text, policy, policy_message, fetched_at, expires_at, reason, unreachable, "
    "failures, stale, hops, tdmrep"
)
_TIMING_COLUMNS = (
    "origin, rules, next_start, backoff_until, failure_streak, requests, last_start, "
    "last_answer, shortest_gap, pages, pace"
)
# An upsert changes the row in place; INSERT OR REPLACE would delete it and insert it anew.
_UPSERT_TIMINGS = (
    f"INSERT INTO timings ({_TIMING_COLUMNS}) {{values}} ON CONFLICT (origin) DO UPDATE SET "
    + ", ".join(f"{name} = excluded.{name}" for name in _TIMING_COLUMNS.split(", ")[1:])
)


class _RowsByOrigin:
    """One row per origin in `table`, read by origin; and which origins the table holds. An origin
    it holds no row of is answered from that set, without a query: a crawl asks for every new
    host, and each query runs on the event loop's thread and gives up the GIL (crawler._sqlite;
    benchmarks/README.md, "Origins the stores hold")."""

    __slots__ = ("_columns", "_db", "_origins", "_table")

    def __init__(self, db: StateDb, table: str, columns: str) -> None:
        self._db = db
        self._table = table
        self._columns = columns
        try:
            rows = db.connection.execute(f"SELECT origin FROM {table}")
            self._origins = {origin for (origin,) in rows}
        except sqlite3.Error as error:
            raise db.failed(error) from error

    def add(self, origin: str) -> None:
        """A row of `origin` is on its way to the table (written at the next commit)."""
        self._origins.add(origin)

    def row(self, origin: str) -> tuple[Any, ...] | None:
        if origin not in self._origins:
            return None
        try:
            row: tuple[Any, ...] | None = self._db.connection.execute(
                f"SELECT {self._columns} FROM {self._table} WHERE origin = ?", (origin,)
            ).fetchone()
        except sqlite3.Error as error:
            raise self._db.failed(error) from error
        return row


ROBOTS_CACHE_ENTRIES = 16_384
"""Parsed robots.txt entries the SQLite store keeps in memory, most recently used last. The hosts
a crawl cycles through must fit: a crawl of 2,000 hosts at a 1 s Crawl-delay asks for every
host's entry once a second, and with 1,024 it missed every time, a query and a parse on the
event loop's thread each (and a wait for the GIL behind the index writer after each query), which
held the loop for up to 0.9 s at a time. A parsed entry is about six times its file: 1 KB for a
file of four lines, 5 KB for one of 40 rules, so a full cache of typical files holds tens of MB,
less than the frontier's working set of as many hosts."""


class SqliteRobotsStore:
    """A `RobotsStore`: entries read back are parsed again (with this crawl's options) and kept
    in a cache of `ROBOTS_CACHE_ENTRIES`, most recently used last."""

    def __init__(
        self, db: StateDb, options: RobotsOptions, *, cache_size: int = ROBOTS_CACHE_ENTRIES
    ) -> None:
        self._db = db
        self._options = options
        self._cache_size = cache_size
        self._cache: OrderedDict[str, RobotsEntry] = OrderedDict()
        self._dirty: dict[str, RobotsEntry] = {}
        self._rows = _RowsByOrigin(db, "robots", _ROBOTS_COLUMNS)
        db.add_writer(self._write)

    def get(self, origin: str) -> RobotsEntry | None:
        entry = self._cache.get(origin)
        if entry is not None:
            self._cache.move_to_end(origin)
            return entry
        row = self._rows.row(origin)
        if row is None:
            return None
        entry = robots_from_row(row, self._options)
        self._remember(entry)
        return entry

    def put(self, entry: RobotsEntry) -> None:
        self._dirty[entry.origin] = entry
        self._rows.add(entry.origin)
        self._remember(entry)

    def _remember(self, entry: RobotsEntry) -> None:
        self._cache[entry.origin] = entry
        self._cache.move_to_end(entry.origin)
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)

    def __iter__(self) -> Iterator[RobotsEntry]:
        self._db.write()
        try:
            rows = self._db.connection.execute(f"SELECT {_ROBOTS_COLUMNS} FROM robots").fetchall()
        except sqlite3.Error as error:
            raise self._db.failed(error) from error
        return iter([robots_from_row(row, self._options) for row in rows])

    def __len__(self) -> int:
        self._db.write()
        return int(self._db.connection.execute("SELECT count(*) FROM robots").fetchone()[0])

    def _write(self, connection: sqlite3.Connection) -> None:
        if self._dirty:
            connection.executemany(
                f"INSERT OR REPLACE INTO robots ({_ROBOTS_COLUMNS}) VALUES ({_marks(12)})",
                [robots_row(entry) for entry in self._dirty.values()],
            )
            self._dirty.clear()


class SqliteHostTimingStore:
    """A `HostTimingStore`: the timings handed out stay in memory (the crawl holds them anyway);
    those `put` since the last write are written."""

    def __init__(self, db: StateDb) -> None:
        self._db = db
        self._live: dict[str, HostTiming] = {}
        self._dirty: dict[str, HostTiming] = {}
        self._rows = _RowsByOrigin(db, "timings", _TIMING_COLUMNS)
        db.add_writer(self._write)

    def get(self, origin: str) -> HostTiming | None:
        timing = self._live.get(origin)
        if timing is not None:
            return timing
        row = self._rows.row(origin)  # a timing put is in _live: no need to tell _rows of it
        if row is None:
            return None
        timing = self._live[origin] = timing_from_row(row)
        return timing

    def put(self, timing: HostTiming) -> None:
        self._live[timing.origin] = timing
        self._dirty[timing.origin] = timing

    def __iter__(self) -> Iterator[HostTiming]:
        self._db.write()
        try:
            rows = self._db.connection.execute(f"SELECT {_TIMING_COLUMNS} FROM timings").fetchall()
        except sqlite3.Error as error:
            raise self._db.failed(error) from error
        return iter([self._live.get(row[0]) or timing_from_row(row) for row in rows])

    def __len__(self) -> int:
        self._db.write()
        return int(self._db.connection.execute("SELECT count(*) FROM timings").fetchone()[0])

    def _write(self, connection: sqlite3.Connection) -> None:
        if self._dirty:
            rows = [timing_row(timing) for timing in self._dirty.values()]
            write_rows(connection, _UPSERT_TIMINGS, rows, 11)
            self._dirty.clear()


class SqliteRunStore:
    """A `RunStore`: seeds in their table, the rest as JSON values in `run`."""

    def __init__(self, db: StateDb) -> None:
        self._db = db
        self._values: dict[str, str] = {}
        self._new_seeds: list[tuple[str]] = []
        try:
            connection = db.connection
            values: dict[str, str] = dict(
                connection.execute("SELECT key, value FROM run").fetchall()
            )
            seeds = [url for (url,) in connection.execute("SELECT url FROM seeds ORDER BY id")]
        except sqlite3.Error as error:
            raise db.failed(error) from error
        self._seeds = dict.fromkeys(seeds)
        self._runs = int(values.get("runs", "0"))
        self._clean = values.get("clean", "1") == "1"
        self._stats = values.get("stats")
        self._deferred = deferred_from_json(values.get("deferred", "[]"))
        self._cookies: list[dict[str, Any]] = json.loads(values.get("cookies", "[]"))
        recrawl = json.loads(values["recrawl"]) if "recrawl" in values else None
        self._recrawl = (float(recrawl[0]), int(recrawl[1])) if recrawl else None
        self._moves: dict[tuple[str, str], None] = {
            (seed, target): None for seed, target in json.loads(values.get("seed_moves", "[]"))
        }
        db.add_writer(self._write)

    def seeds(self) -> tuple[str, ...]:
        return tuple(self._seeds)

    def add_seeds(self, urls: Iterable[str]) -> None:
        for url in urls:
            if url not in self._seeds:
                self._seeds[url] = None
                self._new_seeds.append((url,))

    def seed_moves(self) -> tuple[tuple[str, str], ...]:
        return tuple(self._moves)

    def add_seed_move(self, seed: str, target: str) -> None:
        if (seed, target) not in self._moves:
            self._moves[(seed, target)] = None
            self._values["seed_moves"] = compact_json([list(move) for move in self._moves])

    def stats(self) -> CrawlStats | None:
        return stats_from_json(self._stats) if self._stats is not None else None

    def save_stats(self, stats: CrawlStats) -> None:
        self._stats = self._values["stats"] = stats_json(stats)

    def deferred(self) -> tuple[DeferredHost, ...]:
        return self._deferred

    def save_deferred(self, hosts: Sequence[DeferredHost]) -> None:
        self._deferred = tuple(hosts)
        self._values["deferred"] = deferred_json(hosts)

    def runs(self) -> int:
        return self._runs

    def clean(self) -> bool:
        return self._clean

    def begin_run(self) -> None:
        self._runs += 1
        self._values["runs"] = str(self._runs)
        self._values["clean"] = "0"

    def end_run(self) -> None:
        self._values["clean"] = "1"

    def recrawl_began(self) -> tuple[float, int] | None:
        return self._recrawl

    def cookies(self) -> list[dict[str, Any]]:
        return self._cookies

    def save_cookies(self, rows: list[dict[str, Any]]) -> None:
        # A row of `run`, as the figures are: a state from before it simply has none.
        self._cookies = rows
        self._values["cookies"] = compact_json(rows)

    def begin_recrawl(self, at: float, pages_before: int) -> None:
        self._recrawl = (at, pages_before)
        self._values["recrawl"] = compact_json([at, pages_before])

    def _write(self, connection: sqlite3.Connection) -> None:
        if self._new_seeds:
            connection.executemany("INSERT INTO seeds (url) VALUES (?)", self._new_seeds)
        if self._values:
            connection.executemany(
                "INSERT OR REPLACE INTO run (key, value) VALUES (?, ?)", self._values.items()
            )
        # Cleared once both ran (crawler.state.db: a failed write runs again from them).
        self._new_seeds.clear()
        self._values.clear()


class SqliteHeldUrls(MemoryHeldUrls):
    """A `HeldUrls` (crawler.frontier): every URL in memory, as the crawl asks of each link it
    meets again whether it is held; changes written at the state's commit."""

    __slots__ = ("_changed",)

    def __init__(self, db: StateDb) -> None:
        super().__init__()
        try:
            rows = db.connection.execute("SELECT url, depth FROM held ORDER BY rowid").fetchall()
        except sqlite3.Error as error:
            raise db.failed(error) from error
        self._depths.update(rows)
        self._changed: dict[str, int | None] = {}
        """URL -> its new depth, or None once released: what the next write does."""
        db.add_writer(self._write)

    def hold(self, url: str, depth: int) -> None:
        super().hold(url, depth)
        if self._depths[url] == depth:
            self._changed[url] = depth

    def release(self, url: str) -> None:
        if url in self._depths:
            super().release(url)
            self._changed[url] = None

    def _write(self, connection: sqlite3.Connection) -> None:
        if not self._changed:
            return
        held = [(url, depth) for url, depth in self._changed.items() if depth is not None]
        released = [(url,) for url, depth in self._changed.items() if depth is None]
        if held:
            connection.executemany("INSERT OR REPLACE INTO held (url, depth) VALUES (?, ?)", held)
        if released:
            connection.executemany("DELETE FROM held WHERE url = ?", released)
        self._changed.clear()


def _marks(count: int) -> str:
    return ", ".join("?" * count)


_LATEST_FETCHES = (
    "SELECT url, depth, sitemap, declared_by, fetched_at, status, etag, last_modified, digest "
    "FROM fetches WHERE id IN (SELECT max(id) FROM fetches GROUP BY url) "
    "ORDER BY sitemap DESC, id"
)
_DROP_SUPERSEDED = "DELETE FROM fetches WHERE id NOT IN (SELECT max(id) FROM fetches GROUP BY url)"


class SqliteFetchLog:
    """A `FetchLog` (crawler.state.interface): a row appended per fetch, written at the state's
    commit. Appending costs the crawl one row at the end of a table, no lookup; a recrawl's
    `latest()` groups the rows by URL once, and drops those superseded."""

    __slots__ = ("_count", "_db", "_rows")

    def __init__(self, db: StateDb) -> None:
        self._db = db
        self._rows: list[tuple[Any, ...]] = []
        self._count: int | None = None
        db.add_writer(self._write)

    def add(self, item: QueuedUrl, found: Earlier) -> None:
        self._count = None
        self._rows.append(
            (
                item.first_url,
                item.depth,
                item.sitemap,
                item.declared_by,
                found.fetched_at,
                found.status,
                found.etag,
                found.last_modified,
                found.digest,
            )
        )

    def latest(self) -> Iterator[QueuedUrl]:
        connection = self._db.connection
        self._db.write()
        try:
            connection.execute(_DROP_SUPERSEDED)
            # A cursor, not a list: a million URLs' rows need not all be in memory at once.
            rows = connection.execute(_LATEST_FETCHES)
            for url, depth, sitemap, declared_by, *found in rows:
                yield QueuedUrl(
                    url, depth, sitemap=sitemap, declared_by=declared_by, earlier=Earlier(*found)
                )
        except sqlite3.Error as error:
            raise self._db.failed(error) from error

    def __len__(self) -> int:
        if self._count is None:
            self._db.write()
            row = self._db.connection.execute("SELECT count(DISTINCT url) FROM fetches").fetchone()
            self._count = int(row[0])
        return self._count

    def _write(self, connection: sqlite3.Connection) -> None:
        if self._rows:
            write_rows(
                connection,
                "INSERT INTO fetches (url, depth, sitemap, declared_by, "
                "fetched_at, status, etag, last_modified, digest) {values}",
                self._rows,
                9,
            )
            self._rows.clear()
