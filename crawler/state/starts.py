"""`SqliteStartLog`: every request start (origin, when, the least gap then allowed before the
origin's next start, the pace in force), for `crawl report`'s picture of each host's gaps
against its interval (crawler.crawl_report).

What a start costs the crawl: three floats appended to its origin's array. The arrays go to the
`starts` table as one row per origin, its starts packed as little-endian float64 triples, at the
first commit after `FLUSH_STARTS` starts have gathered or `FLUSH_EVERY` seconds have passed, and
at the state's close: a row per origin a flush, whatever the pace. About 26 bytes a start on
disk, a million requests 26 MB (benchmarks/bench_start_log.py); a kill loses at most the last
few seconds' starts, which only the report reads. Nothing reads the table while the crawl runs.
"""

from __future__ import annotations

import sqlite3
import sys
import time
from array import array
from collections.abc import Iterator

from crawler._sqlite import write_rows
from crawler.state.db import StateDb

__all__ = ["FLUSH_EVERY", "FLUSH_STARTS", "SqliteStartLog", "unpack_starts"]

FLUSH_STARTS = 20_000
FLUSH_EVERY = 5.0
"""Seconds, at most, between two flushes while starts gather."""
_BIG_ENDIAN = sys.byteorder == "big"


def _packed(starts: array[float]) -> bytes:
    if _BIG_ENDIAN:
        starts = array("d", starts)
        starts.byteswap()
    return starts.tobytes()


def unpack_starts(data: bytes) -> Iterator[tuple[float, float, float]]:
    """The (epoch, least gap allowed, pace) triples of one row's `data`."""
    values = array("d")
    values.frombytes(data[: len(data) - len(data) % 24])
    if _BIG_ENDIAN:
        values.byteswap()
    for index in range(0, len(values), 3):
        yield values[index], values[index + 1], values[index + 2]


class SqliteStartLog:
    """A `StartLog` (crawler.state.interface) in DIR/state.sqlite."""

    __slots__ = ("_db", "_flushed_at", "_ids", "_new_origins", "_pending", "_waiting")

    def __init__(self, db: StateDb) -> None:
        self._db = db
        try:
            rows = db.connection.execute("SELECT origin, id FROM start_origins")
            self._ids: dict[str, int] = dict(rows)
        except sqlite3.Error as error:
            raise db.failed(error) from error
        self._new_origins: list[tuple[int, str]] = []
        self._pending: dict[int, array[float]] = {}
        self._waiting = 0
        self._flushed_at = time.monotonic()
        db.add_writer(self._write)

    def add(self, origin: str, at: float, interval: float, pace: float) -> None:
        origin_id = self._ids.get(origin)
        if origin_id is None:
            origin_id = self._ids[origin] = len(self._ids) + 1
            self._new_origins.append((origin_id, origin))
        starts = self._pending.get(origin_id)
        if starts is None:
            starts = self._pending[origin_id] = array("d")
        starts.extend((at, interval, pace))
        self._waiting += 1

    def flush(self) -> None:
        """Write what has gathered at the next commit, however little (the state is closing)."""
        self._flushed_at = -FLUSH_EVERY

    def _write(self, connection: sqlite3.Connection) -> None:
        if not self._waiting:
            return
        now = time.monotonic()
        if self._waiting < FLUSH_STARTS and now - self._flushed_at < FLUSH_EVERY:
            return
        if self._new_origins:
            write_rows(
                connection, "INSERT INTO start_origins (id, origin) {values}", self._new_origins, 2
            )
        rows = [(origin_id, _packed(starts)) for origin_id, starts in self._pending.items()]
        write_rows(connection, "INSERT INTO starts (origin_id, data) {values}", rows, 2)
        # Cleared once both ran (crawler.state.db: a failed write runs again from them).
        self._new_origins.clear()
        self._pending.clear()
        self._waiting = 0
        self._flushed_at = now

    def __repr__(self) -> str:
        return f"SqliteStartLog({len(self._ids)} origins, {self._waiting} starts to write)"
