"""The index writer process (crawler.output.index): `python -m crawler.output.index_writer`,
started by `IndexSink` once a crawl is long enough to pay for it, owns the index's write
connection from then on: it stores each batch and makes its FTS5 entries.

A process of its own, not the sink's thread: storing a batch and tokenising it cost about 0.7 ms
of CPU a page (benchmarks/README.md, "The index writer at 100,000 pages"), and in a thread each
step of it (the rows built, the texts bound, every return from SQLite) waits for the GIL the event
loop holds, and holds the loop back in turn; the JSONL crawl, which has no writer, ran 1.46 times
as fast at 100,000 pages.

It reads messages from its standard input and answers each on its standard output, every one a
pickle framed by its length (crawler.child `send`, `receive`): first `(path, stemming, purpose)`,
answered `("ready", unindexed)`; then batches (lists of PageRecord, Skip and Unskip), each
answered `("stored", count)` once committed; `SEARCHABLE`, answered `(SEARCHABLE,)` once every
stored page is searchable; None at the end, answered `("closed",)` once every page is searchable.
After a failure every answer is `("error", message)` and nothing more is written, so the crawl
marks none of the URLs of a batch it sends after it done; but after a full disk, a batch is tried
again: the crawl sends one then only at its close, when it has made room (crawler.output.handoff).
Between messages, while stored pages wait for their entries, a chunk of them is made searchable.
It dies with the crawl (Linux: PR_SET_PDEATHSIG): a kill loses the batch in
flight, whose URLs the crawl has not marked done.
"""

from __future__ import annotations

import functools
import os
import select
import sqlite3
import sys
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from crawler._sqlite import WalCheckpoints, bound_wal
from crawler.child import Frames, die_with_parent, end, send
from crawler.errors import no_room
from crawler.output.index_open import open_for_writing
from crawler.output.index_writes import (
    INDEX_CHUNK_PAGES,
    SEARCHABLE,
    index_chunk,
    keeps_text,
    unindexed_count,
    write_batch,
)
from crawler.output.records import PageRecord

__all__ = ["CHECKPOINT_EVERY_S", "IndexWriter", "main"]

_READ_BYTES = 1 << 20


CHECKPOINT_EVERY_S = 1.0
"""How often the checkpoint thread copies the WAL into the index."""


class IndexWriter:
    """What the process does with each message, on the one write connection; its WAL copied in
    by a thread of its own (crawler._sqlite.WalCheckpoints), so that storing a batch never waits
    for a checkpoint's copying and syncing (at 5,000 pages, the exit came a tenth of a second
    sooner: benchmarks/README.md, "The index writer's checkpoints")."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._connection = connection
        bound_wal(connection)
        self._checkpoints = WalCheckpoints(path, CHECKPOINT_EVERY_S, "index-checkpoints")
        self._checkpoints.start()
        self.unindexed = unindexed_count(connection)
        """Pages stored and not yet searchable."""
        self.error: str | None = None
        """What failed; from then on nothing is written, and every answer says it."""
        self.full = False
        """The failure was for want of room: the next batch is tried again."""

    def attempt(self, work: Callable[[], None], *, batch: bool = False) -> None:
        """`work`, unless something failed before (a `batch` after a full disk is tried); a
        failure kept as `error`."""
        if batch and self.full:
            self.error, self.full = None, False
        if self.error is not None:
            return
        try:
            work()
        except Exception as error:  # whatever the cause, a lost batch must reach the crawl
            self.error = f"{type(error).__name__}: {error}"
            self.full = no_room(error) is not None

    def store(self, batch: list[Any]) -> None:
        write_batch(self._connection, batch)
        self.unindexed += sum(
            isinstance(record, PageRecord) and keeps_text(record) for record in batch
        )

    def index_some(self) -> None:
        """One chunk of the stored pages made searchable."""
        if not self.unindexed:
            return
        left = index_chunk(self._connection)
        self.unindexed = max(1, self.unindexed - INDEX_CHUNK_PAGES) if left else 0

    def index_all(self) -> None:
        while self.unindexed:
            self.index_some()

    def close(self) -> None:
        self._checkpoints.stop()  # first: the writer's close, the last, copies in the rest
        self._connection.close()


class _Messages:
    """The messages on a file descriptor, read as they come; whether one waits, without
    blocking."""

    def __init__(self, descriptor: int) -> None:
        self._descriptor = descriptor
        self._frames = Frames()
        self._ready: deque[Any] = deque()
        self.ended = False

    def waiting(self) -> bool:
        if not self._ready and not self.ended:
            readable, _, _ = select.select([self._descriptor], [], [], 0)
            if readable:
                self._read()
        return bool(self._ready)

    def next(self) -> Any:
        """The next message; EOFError once the crawl has closed the pipe."""
        while not self._ready:
            if self.ended:
                raise EOFError("the crawl closed the pipe")
            self._read()
        return self._ready.popleft()

    def _read(self) -> None:
        data = os.read(self._descriptor, _READ_BYTES)
        if not data:
            self.ended = True
        self._ready.extend(self._frames.feed(data))


def main() -> int:
    die_with_parent()  # and Ctrl-C is the crawl's: it closes us once all is written
    messages = _Messages(sys.stdin.buffer.fileno())
    answers = sys.stdout.buffer
    try:
        path, stemming, purpose = messages.next()
        writer = IndexWriter(open_for_writing(Path(path), stemming, purpose), Path(path))
    except EOFError:
        return 1
    except Exception as error:  # the crawl hears of it: it writes nothing more
        send(answers, ("error", f"cannot open the index: {type(error).__name__}: {error}"))
        return 1
    send(answers, ("ready", writer.unindexed))
    try:
        while True:
            if writer.unindexed and writer.error is None and not messages.waiting():
                writer.attempt(writer.index_some)  # a failure is the next answer
                continue
            try:
                message = messages.next()
            except EOFError:
                return 0  # the crawl is gone: what is stored stays, the rest waits for a crawl
            if message is None or message == SEARCHABLE:
                writer.attempt(writer.index_all)
                answer: tuple[Any, ...] = ("closed",) if message is None else (SEARCHABLE,)
            else:
                writer.attempt(functools.partial(writer.store, message), batch=True)
                answer = ("stored", len(message))
            send(answers, answer if writer.error is None else ("error", writer.error))
            if message is None:
                return 0
            if writer.unindexed >= INDEX_CHUNK_PAGES:
                # Batches come faster than the lulls between them: the entries are made
                # meanwhile, once the batch is answered: a chunk that fails (a full disk) is the
                # next answer's error, and the batch stays stored.
                writer.attempt(writer.index_some)
    finally:
        writer.close()


if __name__ == "__main__":
    end(main())
