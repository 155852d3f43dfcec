"""The frontier on SQLite: pending URLs on disk, a working set per host in memory.

Tables (crawler.state.db creates them; the seen set is crawler.state.seen's):

    origins  id INTEGER PRIMARY KEY, origin UNIQUE
    queue    id INTEGER PRIMARY KEY, origin_id, url, depth, attempts, redirected_from,
             redirect_status, extra (a sitemap's fields, JSON); index on (origin_id, id)

Why this shape: rows are appended in id order, so the tables grow at their ends, and the only trees
that take inserts all over are two small indexes of integers (this one and the seen set's), which
stay in SQLite's cache. (A table keyed by URL, or by origin, takes each insert on a different page
of a tree ten times larger: every commit then writes most of the tree again.)

A URL's row stays in `queue` from `push` until `done`: popping it (a lease) changes nothing on
disk, so whatever was leased when a crawl was killed is queued again when the state is opened.
Ids grow with every push; `push_front` of a URL that was never popped takes an id below every
other, so the order on disk is the order the crawl would have taken.

In memory each origin keeps a `head` of at most `working_set` rows (more only when leased URLs
come back) and the highest id it has read (`loaded_to`). The invariant that makes refills
cheap: every row of the origin with an id up to `loaded_to` is in `head` or leased; none above
it is. A refill reads the next rows above `loaded_to`, in id order.

Writes are buffered in lists and run by `write()` (in the state's open transaction) when the
state commits, when a buffer fills, or before a refill must see them; reads run on the same
connection, so they see writes not yet committed.
"""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Iterator

from crawler._sqlite import write_rows
from crawler.frontier import QueuedUrl
from crawler.state.codec import item_from_row, item_row
from crawler.state.db import StateDb

__all__ = ["BUFFER_ROWS", "SqliteFrontier"]

_BEFORE_ALL = -(2**62)
"""`loaded_to` of an origin none of whose rows has been read."""
BUFFER_ROWS = 4096
"""Buffered rows past which the buffer is written out: memory stays bounded between commits."""

_INSERT = (
    "INSERT INTO queue "
    "(origin_id, id, url, depth, attempts, redirected_from, redirect_status, extra) {values}"
)
_UPDATE = (
    "UPDATE queue SET url = row.column1, depth = row.column2, attempts = row.column3, "
    "redirected_from = row.column4, redirect_status = row.column5, extra = row.column6 "
    "FROM ({values}) AS row WHERE queue.id = row.column7"
)
_DELETE = "DELETE FROM queue WHERE id IN ({values})"
_REFILL = (
    "SELECT id, url, depth, attempts, redirected_from, redirect_status, extra FROM queue "
    "WHERE origin_id = ? AND id > ? ORDER BY id LIMIT ?"
)


class _Origin:
    """One origin's queue: its head in memory, the rest on disk."""

    __slots__ = ("head", "id", "leased", "loaded_to", "name", "pending")

    def __init__(self, name: str, origin_id: int, pending: int = 0) -> None:
        self.name = name
        self.id = origin_id
        self.head: deque[tuple[int, QueuedUrl]] = deque()
        self.loaded_to = _BEFORE_ALL
        self.pending = pending
        """Rows queued: those in `head` and those on disk above `loaded_to`."""
        self.leased = 0

    @property
    def on_disk(self) -> int:
        """Queued rows not in memory."""
        return self.pending - len(self.head)

    def __repr__(self) -> str:
        return (
            f"_Origin({self.name}, {self.pending} pending, {len(self.head)} in memory, "
            f"{self.leased} leased)"
        )


class SqliteFrontier:
    """A `Frontier` (crawler.frontier) on the state database; see the module doc."""

    def __init__(self, db: StateDb, *, working_set: int = 32) -> None:
        self._db = db
        self._working_set = working_set
        self._origin_ids: dict[str, int] = {}
        self._origins: dict[str, _Origin] = {}
        """Origins with URLs queued or leased; an origin leaves when it has neither."""
        self._leases: dict[str, tuple[int, _Origin, QueuedUrl]] = {}
        self._size = 0
        self._inserts: list[tuple[object, ...]] = []
        self._updates: list[tuple[object, ...]] = []
        self._deletes: list[tuple[int]] = []
        self._new_origins: list[tuple[int, str]] = []
        connection = db.connection
        try:
            for origin_id, name in connection.execute("SELECT id, origin FROM origins"):
                self._origin_ids[name] = origin_id
            names = {origin_id: name for name, origin_id in self._origin_ids.items()}
            low, high = 0, 0
            for origin_id, count, first, last in connection.execute(
                "SELECT origin_id, count(*), min(id), max(id) FROM queue GROUP BY origin_id"
            ):
                name = names[origin_id]
                self._origins[name] = _Origin(name, origin_id, count)
                self._size += count
                low, high = min(low, first), max(high, last)
        except sqlite3.Error as error:
            raise db.failed(error) from error
        self._next_id = high + 1
        self._next_front_id = low - 1
        self._next_origin_id = max(self._origin_ids.values(), default=0) + 1
        db.add_writer(self._write)

    # --- Frontier --------------------------------------------------------------------------------

    def push(self, origin: str, item: QueuedUrl) -> None:
        queue = self._queue(origin)
        row_id = self._next_id
        self._next_id += 1
        self._insert(queue, row_id, item)
        if queue.on_disk == 0 and len(queue.head) < self._working_set:
            queue.head.append((row_id, item))
            queue.loaded_to = row_id  # the highest id there is
        queue.pending += 1
        self._size += 1

    def push_front(self, origin: str, item: QueuedUrl) -> None:
        lease = self._leases.pop(item.url, None)
        if lease is not None:
            row_id, queue, popped = lease
            queue.leased -= 1
            if item != popped:
                self._updates.append((*item_row(item), row_id))
            queue.head.appendleft((row_id, item))  # its id is at most loaded_to: it was read
        else:
            queue = self._queue(origin)
            row_id = self._next_front_id
            self._next_front_id -= 1
            self._insert(queue, row_id, item)
            if queue.on_disk == 0 or row_id <= queue.loaded_to:
                queue.head.appendleft((row_id, item))
                queue.loaded_to = max(queue.loaded_to, row_id)
            # Else nothing of the origin is in memory: the lowest id there is comes first from disk.
        queue.pending += 1
        self._size += 1

    def pop(self, origin: str) -> QueuedUrl | None:
        queue = self._origins.get(origin)
        if queue is None or not queue.pending:
            return None
        if not queue.head:
            self._refill(queue)
        row_id, item = queue.head.popleft()
        queue.pending -= 1
        queue.leased += 1
        self._size -= 1
        self._leases[item.url] = (row_id, queue, item)
        return item

    def done(self, item: QueuedUrl) -> None:
        lease = self._leases.pop(item.url, None)
        if lease is None:
            raise ValueError(f"{item.url} is not leased")
        row_id, queue, _ = lease
        queue.leased -= 1
        self._deletes.append((row_id,))
        if len(self._deletes) >= BUFFER_ROWS:
            self._db.spill()
        if not queue.pending and not queue.leased:
            # Safe to forget `loaded_to`: the origin has no row left that was read.
            del self._origins[queue.name]

    def pending(self, origin: str) -> int:
        queue = self._origins.get(origin)
        return queue.pending if queue is not None else 0

    def leased(self) -> int:
        return len(self._leases)

    def origins(self) -> Iterator[str]:
        return iter([name for name, queue in self._origins.items() if queue.pending])

    def __len__(self) -> int:
        return self._size

    # --- disk ------------------------------------------------------------------------------------

    def _queue(self, origin: str) -> _Origin:
        queue = self._origins.get(origin)
        if queue is None:
            origin_id = self._origin_ids.get(origin)
            if origin_id is None:
                origin_id = self._origin_ids[origin] = self._next_origin_id
                self._next_origin_id += 1
                self._new_origins.append((origin_id, origin))
            queue = self._origins[origin] = _Origin(origin, origin_id)
        return queue

    def _insert(self, queue: _Origin, row_id: int, item: QueuedUrl) -> None:
        self._inserts.append((queue.id, row_id, *item_row(item)))
        if len(self._inserts) >= BUFFER_ROWS:
            self._db.spill()

    def _refill(self, queue: _Origin) -> None:
        if self._inserts or self._updates or self._deletes:
            self._db.write()
        try:
            rows = self._db.connection.execute(
                _REFILL, (queue.id, queue.loaded_to, self._working_set)
            ).fetchall()
        except sqlite3.Error as error:
            raise self._db.failed(error) from error
        if not rows:
            raise self._db.failed(
                RuntimeError(
                    f"{queue!r}: its rows on disk are missing (loaded to {queue.loaded_to})"
                )
            )
        queue.head.extend((row[0], item_from_row(*row[1:])) for row in rows)
        queue.loaded_to = rows[-1][0]

    def _write(self, connection: sqlite3.Connection) -> None:
        # Each row's statements come in this order (insert, updates, delete), so running each
        # kind in turn keeps every row's history.
        # A few statements per kind, rows bound (crawler._sqlite). An id updated twice keeps
        # its last update: within one statement the order of its rows is not the order applied.
        # The buffers are cleared once every statement ran (crawler.state.db: a failed write
        # runs again from them).
        if self._new_origins:
            write_rows(
                connection, "INSERT INTO origins (id, origin) {values}", self._new_origins, 2
            )
        if self._inserts:
            write_rows(connection, _INSERT, self._inserts, 8)
        if self._updates:
            last = {row[-1]: row for row in self._updates}
            write_rows(connection, _UPDATE, list(last.values()), 7)
        if self._deletes:
            write_rows(connection, _DELETE, self._deletes, 1)
        self._new_origins.clear()
        self._inserts.clear()
        self._updates.clear()
        self._deletes.clear()

    def __repr__(self) -> str:
        return (
            f"SqliteFrontier({self._size} URLs in {len(self._origins)} origins, "
            f"{len(self._leases)} leased)"
        )
