"""The statements of a transaction not committed yet, kept to run again: SQLite undoes the whole
transaction when a write finds the disk full (a statement's, or the COMMIT's), and the crawl
stores it once it has made room at its stop (crawler.state.db `StateDb.write_again`)."""

from __future__ import annotations

import sqlite3
from typing import Any

__all__ = ["KEPT_VALUES", "RecordingConnection", "Statement"]

KEPT_VALUES = 4_000_000
"""Most values of an uncommitted transaction kept to run again after a full disk (about 100 MB
at most; half a second of a fast crawl keeps a few thousand)."""
Statement = tuple[str, Any, bool]
"""SQL, its values (a row, or with `True` the rows of an executemany)."""


class RecordingConnection(sqlite3.Connection):
    """A connection that keeps, while `since_commit` is a list, every statement run through it
    with its values: those of the transaction not committed yet, which a full disk may undo
    (`StateDb.failed`) and the crawl runs again once it has made room."""

    since_commit: list[Statement] | None = None
    values_kept = 0
    """Values (or rows) in `since_commit`: a bound on the memory it takes."""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        if self.since_commit is not None:
            # A copy: a store clears its buffers once written.
            values = tuple(parameters)
            self.since_commit.append((sql, values, False))
            self.values_kept += len(values)
        return super().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> sqlite3.Cursor:
        if self.since_commit is not None:
            rows = list(parameters)
            self.since_commit.append((sql, rows, True))
            self.values_kept += len(rows)
            return super().executemany(sql, rows)
        return super().executemany(sql, parameters)
