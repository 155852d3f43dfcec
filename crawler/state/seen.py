"""The seen set on SQLite: every URL the crawl has queued or skipped, on disk, with the URLs met
most recently and a filter of the hashes the table holds in memory.

Table (crawler.state.db creates it):

    seen     id INTEGER PRIMARY KEY, hash (CRC-32 of the URL), url; index on hash

A seen-set lookup of a new URL reads the hash index alone; a hash that matches reads the row to
compare the URL itself.
"""

from __future__ import annotations

import contextlib
import mmap
import sqlite3
from zlib import crc32

from crawler._sqlite import write_rows
from crawler.state.db import StateDb
from crawler.state.frontier import BUFFER_ROWS

__all__ = ["SqliteSeenSet"]


class _DigestFilter:
    """Which URL hashes the seen table may hold: a bit per hash, its top 27 bits (16 MiB). A clear
    bit means no URL of that hash was ever added, so a URL never met costs no query; a set one
    means look. With a million URLs seen, 0.7% of new URLs are looked up for nothing.

    Why: a crawl meets new URLs all the time, and each lookup was a query on the event loop's
    thread, one that gives up the GIL and must wait to take it back (crawler._sqlite;
    benchmarks/README.md, "The seen set's filter")."""

    __slots__ = ("_bits",)

    def __init__(self) -> None:
        self._bits = _zeroed(1 << 24)

    def add(self, digest: int) -> None:
        position = digest >> 5
        self._bits[position >> 3] |= 1 << (position & 7)

    def __contains__(self, digest: int) -> bool:
        position = digest >> 5
        return bool(self._bits[position >> 3] & (1 << (position & 7)))


def _zeroed(size: int) -> bytearray | mmap.mmap:
    """`size` zero bytes that cost nothing until touched: memory the kernel maps in as it is
    first written, in huge pages where it can. A bytearray is zeroed as it is made, 4,096 page
    faults for the filter's 16 MiB: 19 to 98 ms of the crawl's start on one core on these
    machines, against under 2 ms for its 8 huge pages (benchmarks/README.md, "The seen set's
    filter")."""
    try:
        bits = mmap.mmap(-1, size)
    except (OSError, ValueError):  # no anonymous mappings here
        return bytearray(size)
    with contextlib.suppress(AttributeError, OSError):  # no huge pages: 4 KiB ones, as touched
        bits.madvise(mmap.MADV_HUGEPAGE)
    return bits


class SqliteSeenSet:
    """A `SeenSet` on the state database. URLs added since the last write wait in a dict; the
    URLs met most recently (added or found) are remembered in two generations of sets, since a
    crawl meets the same links again and again (navigation, the next page); the rest are looked
    up by hash, when the `_DigestFilter` says the table may hold it."""

    def __init__(self, db: StateDb, *, remember: int = 1 << 16) -> None:
        self._db = db
        self._new: dict[str, int] = {}
        """URL -> hash, added since the last write, in order."""
        self._generation = remember // 2
        self._recent: set[str] = set()
        self._older: set[str] = set()
        self._filter = _DigestFilter()
        try:
            self._size: int = db.connection.execute("SELECT count(*) FROM seen").fetchone()[0]
            for (digest,) in db.connection.execute("SELECT hash FROM seen"):
                self._filter.add(digest)
        except sqlite3.Error as error:
            raise db.failed(error) from error
        db.add_writer(self._write)

    def add(self, url: str) -> bool:
        if url in self._recent or url in self._older or url in self._new:
            return False
        digest = crc32(url.encode())
        if self._on_disk(url, digest):
            self._remember(url)
            return False
        self._new[url] = digest
        self._filter.add(digest)
        self._size += 1
        if len(self._new) >= BUFFER_ROWS:
            self._db.spill()
        return True

    def __contains__(self, url: str) -> bool:
        if url in self._recent or url in self._older or url in self._new:
            return True
        return self._on_disk(url, crc32(url.encode()))

    def _on_disk(self, url: str, digest: int) -> bool:
        if digest not in self._filter:
            return False
        try:
            rows = self._db.connection.execute(
                "SELECT url FROM seen WHERE hash = ?", (digest,)
            ).fetchall()
        except sqlite3.Error as error:
            raise self._db.failed(error) from error
        return any(found == url for (found,) in rows)

    def _remember(self, url: str) -> None:
        recent = self._recent
        recent.add(url)
        if len(recent) >= self._generation:
            self._older, self._recent = recent, set()

    def __len__(self) -> int:
        return self._size

    def _write(self, connection: sqlite3.Connection) -> None:
        if self._new:
            rows = [(digest, url) for url, digest in self._new.items()]
            write_rows(connection, "INSERT INTO seen (hash, url) {values}", rows, 2)
            for url in self._new:
                self._remember(url)
            self._new.clear()

    def __repr__(self) -> str:
        return f"SqliteSeenSet({self._size} URLs, {len(self._new)} not written)"
