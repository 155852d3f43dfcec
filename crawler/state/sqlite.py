"""The crawl state in DIR/state.sqlite: `SqliteCrawlState` builds every store on one `StateDb`
(crawler.state.db, which holds the schema and the commit).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from crawler.config import StateConfig
from crawler.errors import StateError
from crawler.robots.rules import RobotsOptions
from crawler.state.db import StateDb, damaged_state
from crawler.state.freshness import SqliteFreshnessStore
from crawler.state.frontier import SqliteFrontier
from crawler.state.seen import SqliteSeenSet
from crawler.state.starts import SqliteStartLog
from crawler.state.stores import (
    SqliteFetchLog,
    SqliteHeldUrls,
    SqliteHostTimingStore,
    SqliteRobotsStore,
    SqliteRunStore,
)

__all__ = ["STATE_NAME", "SqliteCrawlState", "open_state", "state_files"]

STATE_NAME = "state.sqlite"


def state_files(directory: Path) -> list[Path]:
    """The state's files in `directory` that exist (the database, its WAL and shared memory)."""
    path = directory / STATE_NAME
    candidates = [path, path.with_name(STATE_NAME + "-wal"), path.with_name(STATE_NAME + "-shm")]
    return [candidate for candidate in candidates if candidate.exists()]


class SqliteCrawlState:
    """A `CrawlState` (crawler.state.interface) in one SQLite file."""

    def __init__(self, path: Path, config: StateConfig, robots_options: RobotsOptions) -> None:
        self.path = path
        self._db = StateDb(path)
        try:
            self._frontier = SqliteFrontier(self._db, working_set=config.working_set)
            self._seen = SqliteSeenSet(self._db)
            self._robots = SqliteRobotsStore(self._db, robots_options)
            self._timings = SqliteHostTimingStore(self._db)
            self._run = SqliteRunStore(self._db)
            self._held = SqliteHeldUrls(self._db)
            self._fetches = SqliteFetchLog(self._db)
            self._starts = SqliteStartLog(self._db)
            self._freshness = SqliteFreshnessStore(self._db)
        except (sqlite3.Error, ValueError, LookupError, TypeError, OverflowError) as error:
            # The stores read what they hold back; rows of the wrong shape (a damaged page that
            # passed the file's check: text that is not UTF-8, a short hash) are a damaged state.
            self._db.close()
            raise damaged_state(path, error) from error
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
    def held(self) -> SqliteHeldUrls:
        return self._held

    @property
    def fetches(self) -> SqliteFetchLog:
        return self._fetches

    @property
    def starts(self) -> SqliteStartLog:
        return self._starts

    @property
    def freshness(self) -> SqliteFreshnessStore:
        return self._freshness

    @property
    def durable(self) -> bool:
        return True

    def commit(self) -> None:
        if self._closed:
            raise StateError(f"crawl state {self.path} is closed")
        self._db.commit()

    def write_again(self) -> None:
        if not self._closed:
            self._db.write_again()

    def close(self) -> None:
        if self._closed:
            return
        try:
            self._starts.flush()
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
    directory's lock (crawler.state.lock)."""
    return SqliteCrawlState(directory / STATE_NAME, config, robots_options)
