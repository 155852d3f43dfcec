"""The index writer process's WAL (crawler.output.index_writer): a thread of its own copies it into
the index while the writer stores batches, the writer's own checkpoint bounds it when batches
never let up, and the close leaves none behind."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from support.files import wal_bytes

import crawler._sqlite
import crawler.output.index_writer as index_writer
from crawler.output.index_open import open_for_writing
from crawler.output.index_writer import IndexWriter
from crawler.output.records import PageRecord
from crawler.output.searching import search

PAGE_BYTES = 16384  # crawler.output.index_open.PAGE_BYTES


def batch(first: int, count: int = 10) -> list[PageRecord]:
    words = " ".join(f"word{first}x{n}" for n in range(1500))  # about 16 KB of text a page
    return [
        PageRecord(
            url=f"https://a.test/{n}",
            final_url=f"https://a.test/{n}",
            status=200,
            fetched_at=1.0 + n,
            depth=1,
            title=f"Page {n}",
            text=f"lighthouse {words}",
            index=True,
        )
        for n in range(first, first + count)
    ]


def test_the_thread_copies_the_wal_in_while_the_writer_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_writer, "CHECKPOINT_EVERY_S", 0.01)
    path = tmp_path / "index.sqlite"
    writer = IndexWriter(open_for_writing(path, "english"), path)
    try:
        before = path.stat().st_size
        for first in range(0, 50, 10):
            writer.store(batch(first))
        writer.index_all()
        # Under the writer's own bound: only the thread can have copied these pages in.
        assert wal_bytes(path) < crawler._sqlite.WAL_BOUND_BYTES
        deadline = time.monotonic() + 10
        while path.stat().st_size < before + 20 * PAGE_BYTES and time.monotonic() < deadline:
            time.sleep(0.01)
        assert path.stat().st_size >= before + 20 * PAGE_BYTES
    finally:
        writer.close()
    assert wal_bytes(path) == 0  # the close, the last connection, copied the rest and removed it
    assert len(search(tmp_path, "lighthouse", limit=100)) == 50


def test_the_writers_own_checkpoint_bounds_the_wal_when_batches_never_let_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The thread never comes round: what bounds the WAL is the writer's checkpoint after a commit
    # once the WAL holds WAL_BOUND_BYTES (without it, the WAL held every page written).
    monkeypatch.setattr(index_writer, "CHECKPOINT_EVERY_S", 3600.0)
    monkeypatch.setattr(crawler._sqlite, "WAL_BOUND_BYTES", 32 * PAGE_BYTES)
    path = tmp_path / "index.sqlite"
    writer = IndexWriter(open_for_writing(path, "english"), path)
    try:
        largest = 0
        for first in range(0, 300, 10):
            writer.store(batch(first))
            writer.index_some()
            largest = max(largest, wal_bytes(path))
    finally:
        writer.close()
    # The WAL file keeps its largest size: the bound, and one commit past it (about 1.8 MB of
    # the index's 8.8 here; without the bound it held it all).
    assert largest < path.stat().st_size / 3
    assert len(search(tmp_path, "lighthouse", limit=1000)) == 300
