"""Many rows into SQLite in a few statements: a `VALUES` list of placeholders, a few hundred rows
to a statement, every value bound.

Why not `executemany`: the sqlite3 module lets go of the GIL around every statement it steps and
must take it back after, and `executemany` steps once per row. When another thread wants the GIL
meanwhile (the index writer beside the crawl's event loop, or the loop beside the writer), every
taking back waits up to the interpreter's switch interval, 5 ms.

Why not one JSON parameter read with `json_each`: encoding holds the GIL character by character,
and SQLite parses the JSON again for every value it extracts. A bound string goes to SQLite as
the UTF-8 it already is, a NUL included. (The figures: benchmarks/README.md, "Rows into SQLite".)
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from crawler.runtime import background_thread

__all__ = [
    "CHUNK_ROWS",
    "WAL_BOUND_BYTES",
    "WalCheckpoints",
    "bound_chunks",
    "bound_wal",
    "values_list",
    "write_rows",
]

CHUNK_ROWS = 256
"""Most rows bound to one statement. Each statement gives up the GIL while SQLite runs it and
waits to take it back after, so a thousand rows make four waits; a much longer statement costs
more to prepare than it saves."""


def values_list(rows: int, width: int) -> str:
    """`VALUES (?, ?), (?, ?)`: placeholders for `rows` rows of `width` values. As a subquery,
    `(VALUES ...) AS name`, its columns are `name.column1`, `name.column2`, ..."""
    row = "(" + ", ".join("?" * width) + ")"
    return "VALUES " + ", ".join([row] * rows)


def bound_chunks(
    connection: sqlite3.Connection, rows: Sequence[Sequence[Any]], width: int
) -> Iterator[tuple[str, list[Any]]]:
    """The rows in chunks, each its `values_list` and its values in one flat list. A chunk holds
    at most `CHUNK_ROWS` rows and never more values than the connection's SQLite takes in one
    statement."""
    limit = connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
    size = max(1, min(CHUNK_ROWS, limit // width))
    for first in range(0, len(rows), size):
        chunk = rows[first : first + size]
        values = [value for row in chunk for value in row]
        if len(values) != len(chunk) * width:
            raise ValueError(f"every row must hold {width} values")
        yield values_list(len(chunk), width), values


def write_rows(
    connection: sqlite3.Connection, statement: str, rows: Sequence[Sequence[Any]], width: int
) -> None:
    """Run `statement`, whose `{values}` stands for a `values_list`, over all the rows, chunk by
    chunk, in order."""
    for values, parameters in bound_chunks(connection, rows, width):
        connection.execute(statement.format(values=values), parameters)


WAL_BOUND_BYTES = 64 * 1024 * 1024
"""The most WAL a writer lets gather before its own commit checkpoints (`bound_wal`)."""


def bound_wal(connection: sqlite3.Connection) -> None:
    """Bound the WAL of the writer `connection` at `WAL_BOUND_BYTES`: its own checkpoint, after the
    commit that crosses it. A backstop to `WalCheckpoints`, not the checkpoint: the thread's
    passive checkpoints copy the WAL in, but while the writer keeps committing (the index's
    batches; the state's transaction, begun again as soon as one commits) one never finds it all
    copied when a write begins, so SQLite never starts the WAL over. It grew to the file's size:
    280 MB at 5,000 pages for the index, 690 MB beside a state of 28 MB at 100,000 pages. By the
    bound the thread has copied nearly all of it, the commit copies the rest (20-30 ms for the
    state's, once per bound) and the WAL starts over (benchmarks/README.md, "The state's WAL")."""
    page_bytes = connection.execute("PRAGMA page_size").fetchone()[0]
    connection.execute(f"PRAGMA wal_autocheckpoint = {max(1, WAL_BOUND_BYTES // page_bytes)}")


class WalCheckpoints(threading.Thread):
    """Copies the WAL into the database every `interval` seconds, on a connection of its own, at
    a lower CPU priority (crawler.runtime.background_thread): the writer's own connection then
    never waits on a checkpoint's copying and syncing, only checkpoints to bound the WAL
    (`bound_wal`). A passive checkpoint never waits for the writer, nor the writer for it. `stop`
    before the writer closes, so that the writer's close, the last, copies in the rest and
    removes the WAL."""

    def __init__(self, path: Path, interval: float, name: str) -> None:
        super().__init__(name=name, daemon=True)
        self._path = path
        self._interval = interval
        self._stopping = threading.Event()

    def run(self) -> None:
        background_thread()
        try:
            connection = sqlite3.connect(self._path, isolation_level=None)
        except sqlite3.Error:
            return  # the writer's connection checkpoints when it closes
        try:
            while not self._stopping.wait(self._interval):
                # Busy, or the disk failed: the next round, or the close, copies it in.
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
        finally:
            connection.close()

    def stop(self) -> None:
        self._stopping.set()
        self.join()
