"""The crawl state in DIR/state.sqlite: one database, one connection, committed in batches.

Schema (version 1, in `PRAGMA user_version`):

    origins, queue, seen    the frontier and the seen set (crawler/state/queue.py)
    robots                  one row per origin: the robots.txt text (or allow/disallow-all policy),
                            fetch and expiry times, why, failures, redirect hops
    timings                 one row per origin: rules (JSON), next start, backoff, failure streak,
                            requests, last start and answer, shortest gap, pages
    seeds                   every seed given, in order
    run                     key/value: runs (begun), clean (the last run ended cleanly), stats
                            (JSON), deferred (JSON)

Every store buffers what it is given and writes it when `StateDb.commit()` runs (the crawl
commits every `state.commit_interval` seconds, before a robots.txt request starts or after its
answer, and at the end). Everything between two commits lands in one transaction, so a kill
leaves the file as it was at the last commit: never a URL marked seen but not queued, never a
queue without its origin. WAL with synchronous=NORMAL: a commit survives the process being
killed; a power cut may lose the last commits, never the file's consistency.

All of it runs on the crawl's thread: a store's `put` is a dict or list operation; the SQL runs
in one `executemany` per table per commit. Reads (a host's next URLs, a seen-set lookup, a host
met again) run on the same connection and so see what is written but not yet committed.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from crawler.config import StateConfig
from crawler.errors import StateError
from crawler.politeness import HostTiming
from crawler.robots import RobotsOptions
from crawler.robots_cache import RobotsEntry
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
from crawler.state.queue import SqliteFrontier, SqliteSeenSet
from crawler.stats import CrawlStats, DeferredHost

__all__ = [
    "STATE_NAME",
    "SqliteCrawlState",
    "SqliteHostTimingStore",
    "SqliteRobotsStore",
    "SqliteRunStore",
    "StateDb",
    "open_state",
    "state_files",
]

STATE_NAME = "state.sqlite"
SCHEMA_VERSION = 1
CACHE_KIB = 64 * 1024
"""SQLite's page cache: the rest of the state is read from the OS's file cache."""

_SCHEMA = (
    "CREATE TABLE origins (id INTEGER PRIMARY KEY, origin TEXT NOT NULL UNIQUE)",
    """CREATE TABLE queue (
        id INTEGER PRIMARY KEY,
        origin_id INTEGER NOT NULL,
        url TEXT NOT NULL,
        depth INTEGER NOT NULL,
        attempts INTEGER NOT NULL,
        redirected_from TEXT,
        redirect_status INTEGER
    )""",
    "CREATE INDEX queue_origin ON queue (origin_id, id)",
    "CREATE TABLE seen (id INTEGER PRIMARY KEY, hash INTEGER NOT NULL, url TEXT NOT NULL)",
    "CREATE INDEX seen_hash ON seen (hash)",
    """CREATE TABLE robots (
        origin TEXT PRIMARY KEY,
        text BLOB NOT NULL,
        policy INTEGER,
        policy_message TEXT,
        fetched_at REAL NOT NULL,
        expires_at REAL NOT NULL,
        reason TEXT NOT NULL,
        unreachable INTEGER NOT NULL,
        failures INTEGER NOT NULL,
        stale INTEGER NOT NULL,
        hops TEXT NOT NULL
    )""",
    """CREATE TABLE timings (
        origin TEXT PRIMARY KEY,
        rules TEXT NOT NULL,
        next_start REAL NOT NULL,
        backoff_until REAL NOT NULL,
        failure_streak INTEGER NOT NULL,
        requests INTEGER NOT NULL,
        last_start REAL,
        last_answer REAL,
        shortest_gap REAL,
        pages INTEGER NOT NULL
    )""",
    "CREATE TABLE seeds (id INTEGER PRIMARY KEY, url TEXT NOT NULL UNIQUE)",
    "CREATE TABLE run (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)
_ROBOTS_COLUMNS = (
    "origin, text, policy, policy_message, fetched_at, expires_at, reason, unreachable, "
    "failures, stale, hops"
)
_TIMING_COLUMNS = (
    "origin, rules, next_start, backoff_until, failure_streak, requests, last_start, "
    "last_answer, shortest_gap, pages"
)

Writer = Callable[[sqlite3.Connection], None]


def state_files(directory: Path) -> list[Path]:
    """The state's files in `directory` that exist (the database, its WAL and shared memory)."""
    path = directory / STATE_NAME
    candidates = [path, path.with_name(STATE_NAME + "-wal"), path.with_name(STATE_NAME + "-shm")]
    return [candidate for candidate in candidates if candidate.exists()]


class StateDb:
    """The connection, the schema, and the commit that writes every store's buffer."""

    def __init__(self, path: Path, *, cache_kib: int = CACHE_KIB) -> None:
        self.path = path
        self._writers: list[Writer] = []
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Autocommit mode: transactions are begun and ended explicitly below.
            self.connection = sqlite3.connect(path, isolation_level=None)
        except (OSError, sqlite3.Error) as error:
            raise StateError(f"cannot open crawl state {path}: {error}") from error
        try:
            self._prepare(cache_kib)
        except BaseException:
            self.connection.close()
            raise

    def _prepare(self, cache_kib: int) -> None:
        connection = self.connection
        try:
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
            connection.execute(f"PRAGMA cache_size = -{cache_kib}")
            connection.execute("BEGIN IMMEDIATE")
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                for statement in _SCHEMA:
                    connection.execute(statement)
            elif version != SCHEMA_VERSION:
                raise StateError(
                    f"crawl state {self.path} has schema version {version}; this crawler reads "
                    f"version {SCHEMA_VERSION} (crawl with --fresh to start over)"
                )
            connection.execute("COMMIT")
        except sqlite3.DatabaseError as error:
            raise StateError(
                f"{self.path} is not a crawl state this crawler can use: {error}"
            ) from error
        finally:
            if connection.in_transaction:
                connection.execute("ROLLBACK")

    def add_writer(self, writer: Writer) -> None:
        """`writer(connection)` runs a store's buffered statements at every write."""
        self._writers.append(writer)

    def write(self) -> None:
        """Run every store's buffered statements in the open transaction, not committed yet."""
        connection = self.connection
        try:
            if not connection.in_transaction:
                connection.execute("BEGIN IMMEDIATE")
            for writer in self._writers:
                writer(connection)
        except sqlite3.Error as error:
            raise self.failed(error) from error

    def commit(self) -> None:
        self.write()
        try:
            self.connection.execute("COMMIT")
        except sqlite3.Error as error:
            raise self.failed(error) from error

    def failed(self, error: Exception) -> StateError:
        """The error to raise for `error`; the transaction since the last commit is dropped, so
        the file stays as it was then."""
        try:
            if self.connection.in_transaction:
                self.connection.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # the first error is the one worth reporting
        return StateError(f"cannot use crawl state {self.path}: {error}")

    def close(self) -> None:
        self.connection.close()

    def __repr__(self) -> str:
        return f"StateDb({self.path}, {len(self._writers)} stores)"


class SqliteRobotsStore:
    """A `RobotsStore`: entries read back are parsed again (with this crawl's options) and kept
    in a small cache, most recently used last."""

    def __init__(self, db: StateDb, options: RobotsOptions, *, cache_size: int = 1024) -> None:
        self._db = db
        self._options = options
        self._cache_size = cache_size
        self._cache: OrderedDict[str, RobotsEntry] = OrderedDict()
        self._dirty: dict[str, RobotsEntry] = {}
        db.add_writer(self._write)

    def get(self, origin: str) -> RobotsEntry | None:
        entry = self._cache.get(origin)
        if entry is not None:
            self._cache.move_to_end(origin)
            return entry
        try:
            row = self._db.connection.execute(
                f"SELECT {_ROBOTS_COLUMNS} FROM robots WHERE origin = ?", (origin,)
            ).fetchone()
        except sqlite3.Error as error:
            raise self._db.failed(error) from error
        if row is None:
            return None
        entry = robots_from_row(row, self._options)
        self._remember(entry)
        return entry

    def put(self, entry: RobotsEntry) -> None:
        self._dirty[entry.origin] = entry
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
                f"INSERT OR REPLACE INTO robots ({_ROBOTS_COLUMNS}) VALUES ({_marks(11)})",
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
        db.add_writer(self._write)

    def get(self, origin: str) -> HostTiming | None:
        timing = self._live.get(origin)
        if timing is not None:
            return timing
        try:
            row = self._db.connection.execute(
                f"SELECT {_TIMING_COLUMNS} FROM timings WHERE origin = ?", (origin,)
            ).fetchone()
        except sqlite3.Error as error:
            raise self._db.failed(error) from error
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
            connection.executemany(
                f"INSERT OR REPLACE INTO timings ({_TIMING_COLUMNS}) VALUES ({_marks(10)})",
                [timing_row(timing) for timing in self._dirty.values()],
            )
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
        db.add_writer(self._write)

    def seeds(self) -> tuple[str, ...]:
        return tuple(self._seeds)

    def add_seeds(self, urls: Iterable[str]) -> None:
        for url in urls:
            if url not in self._seeds:
                self._seeds[url] = None
                self._new_seeds.append((url,))

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

    def _write(self, connection: sqlite3.Connection) -> None:
        if self._new_seeds:
            connection.executemany("INSERT INTO seeds (url) VALUES (?)", self._new_seeds)
            self._new_seeds.clear()
        if self._values:
            connection.executemany(
                "INSERT OR REPLACE INTO run (key, value) VALUES (?, ?)", self._values.items()
            )
            self._values.clear()


class SqliteCrawlState:
    """A `CrawlState` (crawler/state/interface.py) in one SQLite file."""

    def __init__(self, path: Path, config: StateConfig, robots_options: RobotsOptions) -> None:
        self.path = path
        self._db = StateDb(path)
        try:
            self._frontier = SqliteFrontier(self._db, working_set=config.working_set)
            self._seen = SqliteSeenSet(self._db)
            self._robots = SqliteRobotsStore(self._db, robots_options)
            self._timings = SqliteHostTimingStore(self._db)
            self._run = SqliteRunStore(self._db)
        except BaseException:
            self._db.close()
            raise
        self._closed = False

    @property
    def frontier(self) -> SqliteFrontier:
        return self._frontier

    @property
    def seen(self) -> SqliteSeenSet:
        return self._seen

    @property
    def robots(self) -> SqliteRobotsStore:
        return self._robots

    @property
    def timings(self) -> SqliteHostTimingStore:
        return self._timings

    @property
    def run(self) -> SqliteRunStore:
        return self._run

    @property
    def durable(self) -> bool:
        return True

    def commit(self) -> None:
        if self._closed:
            raise StateError(f"crawl state {self.path} is closed")
        self._db.commit()

    def close(self) -> None:
        if self._closed:
            return
        try:
            self._db.commit()
        finally:
            self._closed = True
            self._db.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"SqliteCrawlState({self.path}, {state}, {self._frontier!r})"


def open_state(
    directory: Path, config: StateConfig, robots_options: RobotsOptions
) -> SqliteCrawlState:
    """The crawl state in `directory` (created when there is none). The caller holds the
    directory's lock (crawler/state/lock.py)."""
    return SqliteCrawlState(directory / STATE_NAME, config, robots_options)


def _marks(count: int) -> str:
    return ", ".join("?" * count)
