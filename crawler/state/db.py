"""The crawl state's database: one SQLite file, one connection, committed in batches (`StateDb`).

Schema (version 7, in `PRAGMA user_version`; a version 1 file gains the `held` table, a version 2
file the `queue.extra` column and the `fetches` table, a version 3 file `timings.pace`, a version
4 file `robots.tdmrep`, a version 5 file the `starts` and `start_origins` tables, a version 6
file the `page_history` and `lastmod_trust` tables); the
frontier and the seen set are in crawler.state.frontier, the other stores in crawler.state.stores:

    origins, queue, seen    the frontier and the seen set
    robots                  one row per origin: the robots.txt text (or allow/disallow-all policy),
                            fetch and expiry times, why, failures, redirect hops, and the
                            origin's tdmrep.json as read (JSON)
    timings                 one row per origin: rules (JSON), next start, backoff, failure streak,
                            requests, last start and answer, shortest gap, pages, pace (JSON:
                            what its answers taught, crawler.pace)
    seeds                   every seed given, in order
    held                    URLs met past limits.max_depth: url, the least depth found
    fetches                 a row per fetch, appended: url, depth, sitemap, declared_by, and what
                            it found (fetched_at, status, etag, last_modified, digest); a
                            recrawl reads each URL's last and drops the rest
    starts, start_origins   every request start, appended a few seconds' worth at a time, a row
                            per origin: when, the least gap the crawl then allowed before the
                            origin's next start, and the pace in force, packed (crawler.state.
                            starts; `crawl report` draws each host's gaps from them)
    page_history            per page: its revisits (visits, changes found, seconds observed, in
                            all and in the intervals that found a change)
                            and its sitemap's changefreq and priority (crawler.state.freshness)
    lastmod_trust           per origin: whether its sitemap lastmod spares a recrawl's request
    run                     key/value: runs (begun), clean (the last run ended cleanly), stats
                            (JSON), deferred (JSON)

Every store buffers what it is given and writes it when `StateDb.commit()` runs (the crawl
commits every `state.commit_interval` seconds, before a robots.txt request starts or after its
answer, and at the end). Everything between two commits lands in one transaction, so a kill
leaves the file as it was at the last commit: never a URL marked seen but not queued, never a
queue without its origin. WAL with synchronous=NORMAL: a commit survives the process being
killed; a power cut may lose the last commits, never the file's consistency. With NORMAL only a
checkpoint (copying the WAL into the database) waits for the disk, and it can wait long when the
disk is busy with other writes (the index's, say): so checkpoints run in a thread of their own
(crawler._sqlite.WalCheckpoints), and on the crawl's only to bound the WAL (`bound_wal`).

All of it runs on the crawl's thread: a store's `put` is a dict or list operation; the SQL runs
in a few statements per table per commit (crawler._sqlite). Reads (a host's next URLs, a seen-set
lookup, a host met again) run on the same connection and so see what is written but not yet
committed.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from pathlib import Path

from crawler._sqlite import WalCheckpoints, bound_wal
from crawler.errors import StateDiskFullError, StateError, no_room
from crawler.state.uncommitted import KEPT_VALUES, RecordingConnection, Statement

__all__ = ["SCHEMA_VERSION", "StateDb", "Writer", "check_state_file", "damaged_state"]

SCHEMA_VERSION = 7
CACHE_KIB = 64 * 1024
"""SQLite's page cache: the rest of the state is read from the OS's file cache."""
CHECKPOINT_EVERY_S = 1.0

_HELD_TABLE = ("CREATE TABLE held (url TEXT PRIMARY KEY, depth INTEGER NOT NULL)",)
_FETCHES_TABLE = (
    """CREATE TABLE fetches (
        id INTEGER PRIMARY KEY,
        url TEXT NOT NULL,
        depth INTEGER NOT NULL,
        sitemap INTEGER NOT NULL,
        declared_by TEXT,
        fetched_at REAL NOT NULL,
        status INTEGER,
        etag TEXT,
        last_modified TEXT,
        digest TEXT
    )""",
)
_STARTS_TABLES = (
    "CREATE TABLE start_origins (id INTEGER PRIMARY KEY, origin TEXT NOT NULL UNIQUE)",
    "CREATE TABLE starts (origin_id INTEGER NOT NULL, data BLOB NOT NULL)",
)
_FRESHNESS_TABLES = (
    """CREATE TABLE page_history (
        url TEXT PRIMARY KEY,
        visits INTEGER NOT NULL,
        changes INTEGER NOT NULL,
        observed REAL NOT NULL,
        observed_changed REAL NOT NULL,
        changefreq TEXT,
        priority REAL
    )""",
    """CREATE TABLE lastmod_trust (
        origin TEXT PRIMARY KEY,
        level TEXT NOT NULL,
        right INTEGER NOT NULL,
        since REAL,
        reason TEXT NOT NULL
    )""",
)
_SCHEMA = (
    "CREATE TABLE origins (id INTEGER PRIMARY KEY, origin TEXT NOT NULL UNIQUE)",
    """CREATE TABLE queue (
        id INTEGER PRIMARY KEY,
        origin_id INTEGER NOT NULL,
        url TEXT NOT NULL,
        depth INTEGER NOT NULL,
        attempts INTEGER NOT NULL,
        redirected_from TEXT,
        redirect_status INTEGER,
        extra TEXT
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
        hops TEXT NOT NULL,
        tdmrep TEXT
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
        pages INTEGER NOT NULL,
        pace TEXT
    )""",
    "CREATE TABLE seeds (id INTEGER PRIMARY KEY, url TEXT NOT NULL UNIQUE)",
    "CREATE TABLE run (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    *_HELD_TABLE,
    *_FETCHES_TABLE,
    *_STARTS_TABLES,
    *_FRESHNESS_TABLES,
)
_MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: _HELD_TABLE,
    2: ("ALTER TABLE queue ADD COLUMN extra TEXT", *_FETCHES_TABLE),
    3: ("ALTER TABLE timings ADD COLUMN pace TEXT",),
    4: ("ALTER TABLE robots ADD COLUMN tdmrep TEXT",),
    5: _STARTS_TABLES,
    6: _FRESHNESS_TABLES,
}
"""From a version, the statements that bring a file to the next one."""
Writer = Callable[[sqlite3.Connection], None]


_START_OVER = (
    "nothing in the data directory was changed; to start over, crawl with --fresh (it deletes "
    "the crawl state and the index, and says so first)"
)
_BRIEF = 200
"""Characters of an SQLite error kept in a message: a damaged row's error quotes the row."""


def damaged_state(path: Path, error: BaseException | str) -> StateError:
    """The error for a state file that cannot be resumed: it says so, and how to start over."""
    detail = str(error).splitlines()[0] if str(error) else type(error).__name__
    if len(detail) > _BRIEF:
        detail = detail[:_BRIEF] + "…"
    return StateError(
        f"crawl state {path} is damaged or is not a crawl state ({detail}); {_START_OVER}"
    )


def check_state_file(path: Path) -> None:
    """StateError unless the existing file at `path` reads as a sound SQLite database: checked
    read-only before anything opens it for writing, so that a damaged state is reported with
    nothing changed, neither it nor the index beside it. A file of 0 bytes is not taken for a new
    database: a crawl writes its schema at once, so an empty file is one that lost its content
    (unless its WAL holds the schema, as after a kill before the first checkpoint).

    `PRAGMA quick_check` reads every page of the file once (1.2 s for 235 MB of state, 2 million
    URLs, with the file in the OS cache) and finds what SQLite would trip over later: broken
    b-trees, pages out of range, a truncated file."""
    wal = path.with_name(path.name + "-wal")
    try:
        empty = path.stat().st_size == 0 and not (wal.is_file() and wal.stat().st_size > 0)
    except OSError as error:
        raise StateError(f"cannot open crawl state {path}: {error.strerror}") from error
    if empty:
        raise StateError(f"crawl state {path} is empty (0 bytes): nothing to resume; {_START_OVER}")
    # Without a WAL to read, immutable: a read-only connection would still create the -wal and
    # -shm files, and leave them behind.
    options = "mode=ro" if wal.exists() else "mode=ro&immutable=1"
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?{options}", uri=True)
    except sqlite3.Error as error:
        raise StateError(f"cannot open crawl state {path}: {error}") from error
    try:
        verdict = connection.execute("PRAGMA quick_check(1)").fetchone()[0]
    except sqlite3.DatabaseError as error:
        raise damaged_state(path, error) from error
    finally:
        connection.close()
    if verdict != "ok":
        raise damaged_state(path, " ".join(str(verdict).split()))


class StateDb:
    """The connection, the schema, and the commit that writes every store's buffer."""

    def __init__(self, path: Path, *, cache_kib: int = CACHE_KIB) -> None:
        self.path = path
        self._writers: list[Writer] = []
        self.held_at_last_commit = False
        """A write found the disk full: the file stays as the last commit left it, as after a
        kill then, and nothing more is written until the crawl has made room (see `failed`)."""
        self._unreported: StateDiskFullError | None = None
        """A full disk a `spill` met, for the next commit to raise."""
        self._since_commit: list[Statement] | None = []
        """The statements of the transaction not committed yet (`RecordingConnection`); None
        once they passed `KEPT_VALUES` (a first commit of a million seeds, say), until the
        commit: a full disk then holds the file at the last commit."""
        if path.exists():
            check_state_file(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Autocommit mode: transactions are begun and ended explicitly below.
            self.connection = sqlite3.connect(
                path, isolation_level=None, factory=RecordingConnection
            )
        except (OSError, sqlite3.Error) as error:
            raise StateError(f"cannot open crawl state {path}: {error}") from error
        try:
            self._prepare(cache_kib)
        except BaseException:
            self.connection.close()
            raise
        self._checkpoints = WalCheckpoints(path, CHECKPOINT_EVERY_S, "state-checkpoints")
        self._checkpoints.start()

    def _prepare(self, cache_kib: int) -> None:
        connection = self.connection
        try:
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
            bound_wal(connection)  # WalCheckpoints copies the WAL in
            connection.execute(f"PRAGMA cache_size = -{cache_kib}")
            connection.execute("BEGIN IMMEDIATE")
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                for statement in _SCHEMA:
                    connection.execute(statement)
                version = SCHEMA_VERSION
            while version in _MIGRATIONS:
                for statement in _MIGRATIONS[version]:
                    connection.execute(statement)
                version += 1
            connection.execute(f"PRAGMA user_version = {version}")
            if version != SCHEMA_VERSION:
                raise StateError(
                    f"crawl state {self.path} has schema version {version}; this crawler reads "
                    f"version {SCHEMA_VERSION} (crawl with --fresh to start over)"
                )
            connection.execute("COMMIT")
        except sqlite3.DatabaseError as error:
            raise damaged_state(self.path, error) from error
        finally:
            if connection.in_transaction:
                connection.execute("ROLLBACK")

    def add_writer(self, writer: Writer) -> None:
        """`writer(connection)` runs a store's buffered statements at every write."""
        self._writers.append(writer)

    def write(self) -> None:
        """Run every store's buffered statements in the open transaction, not committed yet."""
        connection = self.connection
        if self.held_at_last_commit:
            return
        assert isinstance(connection, RecordingConnection)
        try:
            if not connection.in_transaction:
                connection.execute("BEGIN IMMEDIATE")
            since_commit = connection.since_commit = self._since_commit
            try:
                for writer in self._writers:
                    mark = len(since_commit) if since_commit is not None else 0
                    try:
                        writer(connection)
                    except sqlite3.Error:
                        # A writer clears its buffers once all its statements ran: those it
                        # ran hold them still, and are to run again from there.
                        if since_commit is not None:
                            del since_commit[mark:]
                        raise
            finally:
                connection.since_commit = None
                if connection.values_kept > KEPT_VALUES:
                    self._since_commit = None
        except sqlite3.Error as error:
            raise self.failed(error) from error

    def spill(self) -> None:
        """`write`, for a store whose buffer filled in the middle of the crawl's work (a page's
        links): a full disk is not raised there but by the next commit, where the crawl stops."""
        try:
            self.write()
        except StateDiskFullError as full:
            self._unreported = full

    def commit(self) -> None:
        self.write()
        if self.held_at_last_commit:
            unreported, self._unreported = self._unreported, None
            if unreported is not None:
                raise unreported
            return
        try:
            self.connection.execute("COMMIT")
        except sqlite3.Error as error:
            raise self.failed(error) from error
        self._forget_since_commit()

    def _forget_since_commit(self) -> None:
        self._since_commit = []
        assert isinstance(self.connection, RecordingConnection)
        self.connection.values_kept = 0

    def write_again(self) -> None:
        """After a full disk, once the crawl has made room (crawler.output.reserve): run again
        the statements of the transaction the full disk undid, so the next commit stores them
        with what the stores buffered since. A disk still full holds the file at the last commit,
        as before (the crawl has said the disk is full already)."""
        if not self.held_at_last_commit or self._since_commit is None:
            return
        self.held_at_last_commit = False
        connection = self.connection
        try:
            connection.execute("BEGIN IMMEDIATE")
            for sql, parameters, many in self._since_commit:
                if many:
                    connection.executemany(sql, parameters)
                else:
                    connection.execute(sql, parameters)
        except sqlite3.Error as error:
            failure = self.failed(error)
            if not isinstance(failure, StateDiskFullError):
                raise failure from error

    def failed(self, error: Exception) -> StateError:
        """The error to raise for `error`; the transaction since the last commit is dropped, so
        the file stays as it was then. After a full disk, nothing more is written either: SQLite
        may have undone the statement that failed, or the whole transaction (a failed COMMIT),
        and what the stores had buffered for it is gone; a later commit would mark done pages
        whose links were in it, or save figures that count URLs the file lacks. As it stands,
        the file is what a kill at the last commit leaves, which a resumed crawl goes on from
        with its books balanced, unless `write_again` stores the lost transaction once the crawl
        has made room."""
        reason = no_room(error)
        if reason is not None:
            self.held_at_last_commit = True
            with contextlib.suppress(sqlite3.Error):
                if self.connection.in_transaction:
                    self.connection.execute("ROLLBACK")
            return StateDiskFullError(self.path, reason)
        self._forget_since_commit()
        try:
            if self.connection.in_transaction:
                self.connection.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # the first error is the one worth reporting
        return StateError(f"cannot use crawl state {self.path}: {error}")

    def close(self) -> None:
        """Close; the last connection to go copies the WAL in and removes it."""
        try:
            self._checkpoints.stop()
        finally:
            self.connection.close()

    def __repr__(self) -> str:
        return f"StateDb({self.path}, {len(self._writers)} stores)"
