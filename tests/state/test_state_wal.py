"""The crawl state's WAL (crawler.state.db): bounded while commits never let up, even when the
checkpoint thread never comes round, and removed by the close."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from support.files import wal_bytes

import crawler._sqlite
import crawler.state.db as state_db
from crawler.state.db import StateDb

PAGE_BYTES = 4096  # SQLite's default page size, the state's


def test_the_state_bounds_its_wal_when_commits_never_let_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As in a crawl: a transaction begins again as soon as one commits (a read wants the
    # buffered rows), so the WAL is never all copied in when one begins. The thread never comes
    # round here; without the bound the WAL held every page each commit wrote (about 10 MB).
    monkeypatch.setattr(state_db, "CHECKPOINT_EVERY_S", 3600.0)
    monkeypatch.setattr(crawler._sqlite, "WAL_BOUND_BYTES", 64 * PAGE_BYTES)
    path = tmp_path / "state.sqlite"
    db = StateDb(path)
    batch: list[tuple[str, str]] = []

    def write(connection: sqlite3.Connection) -> None:
        connection.executemany("INSERT OR REPLACE INTO run (key, value) VALUES (?, ?)", batch)
        batch.clear()

    db.add_writer(write)
    largest = 0
    try:
        for commit in range(200):
            batch.extend((f"key{n}", f"{commit} " + "x" * 2000) for n in range(16))
            db.commit()
            db.write()  # begins the next transaction at once, as the crawl's reads do
            largest = max(largest, wal_bytes(path))
    finally:
        db.close()
    # The bound, and one commit past it: 64 pages and about 10 more.
    assert largest < 100 * PAGE_BYTES
    assert wal_bytes(path) == 0  # the close, the last connection, copied the rest and removed it
    with sqlite3.connect(path) as connection:
        rows = connection.execute("SELECT value FROM run WHERE key LIKE 'key%'").fetchall()
    assert len(rows) == 16
    assert all(value.startswith("199 ") for (value,) in rows)
