"""`SqliteStartLog`: a row per request start (origin, when, the least gap then allowed before the
origin's next start, the pace in force), appended, for `crawl report`'s picture of each host's
gaps against its interval (crawler.crawl_report).

What a start costs the crawl: one tuple appended to a list; the rows go to the `starts` table at
the state's commit, a few hundred to a statement (crawler._sqlite), beside the frontier's. An
origin is a small integer in each row (`start_origins` names it), so a row is about 30 bytes on
disk: a million requests take about 30 MB. Nothing reads the table while the crawl runs.
"""

from __future__ import annotations

import sqlite3

from crawler._sqlite import write_rows
from crawler.state.db import StateDb

__all__ = ["SqliteStartLog"]


class SqliteStartLog:
    """A `StartLog` (crawler.state.interface) in DIR/state.sqlite."""

    __slots__ = ("_db", "_ids", "_new_origins", "_rows")

    def __init__(self, db: StateDb) -> None:
        self._db = db
        try:
            rows = db.connection.execute("SELECT origin, id FROM start_origins")
            self._ids: dict[str, int] = dict(rows)
        except sqlite3.Error as error:
            raise db.failed(error) from error
        self._new_origins: list[tuple[int, str]] = []
        self._rows: list[tuple[int, float, float, float]] = []
        db.add_writer(self._write)

    def add(self, origin: str, at: float, interval: float, pace: float) -> None:
        origin_id = self._ids.get(origin)
        if origin_id is None:
            origin_id = self._ids[origin] = len(self._ids) + 1
            self._new_origins.append((origin_id, origin))
        self._rows.append((origin_id, at, interval, pace))

    def _write(self, connection: sqlite3.Connection) -> None:
        if self._new_origins:
            write_rows(
                connection,
                "INSERT INTO start_origins (id, origin) {values}",
                self._new_origins,
                2,
            )
            self._new_origins.clear()
        if self._rows:
            write_rows(
                connection,
                "INSERT INTO starts (origin_id, started_at, interval, pace) {values}",
                self._rows,
                4,
            )
            self._rows.clear()

    def __repr__(self) -> str:
        return f"SqliteStartLog({len(self._ids)} origins, {len(self._rows)} rows to write)"
