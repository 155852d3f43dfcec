"""The crawl's full-text index: `IndexSink` writes DIR/index.sqlite (crawler.output.searching and
crawler.output.export read it). What the file holds is crawler.output.index_schema; how it is
opened, created or migrated, crawler.output.index_open; what a batch writes,
crawler.output.index_writes.

Writes stay off the event loop: `page()` and `skip()` only append to a list. A full batch, or
`flush()`, hands the list to one writer thread, which owns the only write connection (WAL,
synchronous=NORMAL). It stores each batch in one transaction: the page rows, the texts, and their
ids in `unindexed`; that is what `stored` counts, so the crawl knows which URLs' pages are safe
(crawler.state). Making FTS5's entries, about half of the writer's work (tokenising, segments,
merges: benchmarks/bench_index.py), comes after: a chunk of `unindexed` at a time, each chunk's
entries made and its ids taken out of `unindexed` in one transaction, when no batch waits or
once a chunk's worth of pages waits for it. So a short crawl never waits for the tokenizer, the
pages waiting for it wait on disk, not in memory, a long one makes them searchable as it goes
rather than all at its end (which it would wait for), and `close()` returns once every page is
searchable. A kill leaves some pages stored but not yet
searchable; the next crawl into the directory indexes them first (`crawl search` says how many).
The hand-off queue is bounded, so a disk slower than the crawl blocks the crawl instead of
growing memory. A writer error is kept and raised as OutputError from the next `flush()` or
`close()`.

Readers open the file read-only; WAL lets them search while a crawl writes.
"""

from __future__ import annotations

import contextlib
import functools
import os
import queue
import sqlite3
import subprocess
import threading
from concurrent.futures import Future
from pathlib import Path

from crawler.child import receive, send
from crawler.child import start as start_child
from crawler.config import IndexWriter
from crawler.errors import DiskFullError, OutputError, no_room
from crawler.output.handoff import BatchHandOff
from crawler.output.index_open import (
    FTS_HASH_BYTES,
    check_index,
    open_for_writing,
    recorded_stemming,
    stemming_message,
)
from crawler.output.index_schema import (
    BOOL_COLUMNS,
    INDEX_NAME,
    JSON_COLUMNS,
    PAGE_COLUMNS,
    READABLE_VERSIONS,
    SCHEMA_VERSION,
    STEMMING_CHOICES,
    version_message,
)
from crawler.output.index_writes import (
    INDEX_CHUNK_PAGES,
    SEARCHABLE,
    index_chunk,
    keeps_text,
    unindexed_count,
    write_batch,
)
from crawler.output.records import PageRecord, Skip, Unskip
from crawler.runtime import background_thread

# The schema's and the opening's public names stay importable from here, where they were first.
__all__ = [
    "BOOL_COLUMNS",
    "FTS_HASH_BYTES",
    "INDEX_NAME",
    "JSON_COLUMNS",
    "PAGE_COLUMNS",
    "PROCESS_AFTER_RECORDS",
    "READABLE_VERSIONS",
    "SCHEMA_VERSION",
    "STEMMING_CHOICES",
    "IndexSink",
    "check_index",
    "recorded_stemming",
    "stemming_message",
    "version_message",
]


PROCESS_AFTER_RECORDS = 1_000
"""`writer="auto"` moves the writing to the writer process once this many records are stored (on
a machine of two cores or more). The process is started with the sink, so it has read its
modules by then, and a crawl that ends sooner kills it unused. On the speed web
(benchmarks/README.md, "When the writing moves to the writer process") the process from the
start took 5,000 pages from 4.99 s to 4.41 s, but 100 pages from 0.56 s to 0.71 s: a crawl of
a few hundred pages is over before the process has paid for its start."""
STOP_WAIT_S = 30.0
"""How long a closing sink waits for the writer process to end before it kills it."""


def process_after(writer: IndexWriter) -> int | None:
    """Records stored before the writing moves to the writer process (None: never)."""
    if writer == "thread" or (writer == "auto" and (os.cpu_count() or 1) < 2):
        return None
    return 0 if writer == "process" else PROCESS_AFTER_RECORDS


class IndexSink(BatchHandOff[PageRecord | Skip | Unskip, threading.Event]):
    """A `PageSink` writing DIR/index.sqlite through one writer thread (see the module doc). Its
    queue's signal is an Event, set once all before it is searchable."""

    def __init__(
        self,
        directory: Path,
        *,
        stemming: str = "auto",
        purpose: str = "search",
        batch_size: int = 100,
        max_batches: int = 4,
        writer: IndexWriter = "thread",
    ) -> None:
        """Opens (or creates) the index now, so a bad directory fails before the crawl starts.
        `stemming` (STEMMING_CHOICES) is the new index's; an index created with another is an
        OutputError (`auto`: the index's own, a new index's NEW_INDEX_STEMMING). `batch_size`
        records are stored in one transaction; `max_batches` bounds the batches waiting for the
        writer, beyond which `flush()` blocks. Storing is quick, so small batches cost little,
        and the records waiting in memory are few: 500 a batch made the crawl's peak memory 1.54
        times the JSONL crawl's on the speed web, 200 1.38 times (benchmarks/bench_speed.py).
        With the main text and its Markdown a record is three times the size: 200 a batch and 8
        batches made it 2.06 times, 100 and 4 1.40 times (146 and 100 MiB against 71).
        `writer`: where the writing is done: in the sink's thread, in the writer process from
        the start, or (`auto`) in the thread until `PROCESS_AFTER_RECORDS` are stored. The
        process, unless `thread`, is started now."""
        if stemming not in STEMMING_CHOICES:
            raise ValueError(f"stemming must be one of {STEMMING_CHOICES}, not {stemming!r}")
        self.path = directory / INDEX_NAME
        super().__init__(f"index {self.path}", max_batches)
        self._stemming = stemming
        self._purpose = purpose
        self._batch_size = batch_size
        self._process_after = process_after(writer)
        self._written = 0
        self._unindexed = 0
        """Pages stored and not yet searchable, as the writer thread counts them."""
        self._process: subprocess.Popen[bytes] | None = None
        self._process_lock = threading.Lock()
        """Held to start the process, and by the writer thread to end one it never used."""
        self._process_started = threading.Event()
        """Set once the process has started, or none will (`_process` still None)."""
        self._process_ended = threading.Event()
        self._starter: threading.Thread | None = None
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise OutputError(f"cannot write index {self.path}: {error}") from error
        opened: Future[None] = Future()
        # A daemon, so a process that dies without close() cannot hang at exit; every batch is
        # its own transaction, so such a death loses the batches in flight, never the file.
        self._writer = threading.Thread(
            target=self._write_batches, args=(opened,), name="index-writer", daemon=True
        )
        self._writer.start()
        try:
            opened.result()
        except OutputError:
            self._writer.join()
            self._closed = True
            raise
        if self._process_after is not None:
            self._starter = threading.Thread(
                target=self._start_process, name="index-writer-start", daemon=True
            )
            self._starter.start()

    @property
    def stored(self) -> int:
        """Records committed, in the order given (the writer thread counts them)."""
        return self._written

    def page(self, record: PageRecord) -> None:
        self._add(record, full=len(self._batch) + 1 >= self._batch_size)

    def skip(self, skip: Skip) -> None:
        self._add(skip, full=len(self._batch) + 1 >= self._batch_size)

    def unskip(self, unskip: Unskip) -> None:
        self._add(unskip, full=len(self._batch) + 1 >= self._batch_size)

    def flush(self, *, wait: bool = False) -> None:
        """Hand the batch to the writer; with `wait`, also wait until all of it is stored and
        searchable, so a reader finds it. Raises OutputError if the writer has failed."""
        self._check_open()
        self._hand_over()
        if wait:
            searchable = threading.Event()
            self._queue.put(searchable)
            searchable.wait()
        self._raise_error()

    def _write_batches(self, opened: Future[None]) -> None:
        """The writer thread: the only code that touches the write connection, until the crawl
        has stored `process_after` records; then it hands the connection on to the writer
        process and talks to it."""
        background_thread()
        try:
            connection = open_for_writing(self.path, self._stemming, self._purpose)
            self._unindexed = unindexed_count(connection)
        except Exception as error:  # the constructor waits on `opened`: it must hear of anything
            if not isinstance(error, OutputError):
                error = OutputError(f"cannot open index {self.path}: {error}")
            opened.set_exception(error)
            return
        opened.set_result(None)
        moving = False
        try:
            try:
                moving = self._write_here(connection)
            finally:
                connection.close()
            if moving:
                self._write_through_process()
        finally:
            self._end_unused_process(used=moving)
            self._process_ended.set()
            if self._starter is not None:
                self._starter.join()  # close() returns with no thread of the sink's left

    def _start_process(self) -> None:
        """The thread that starts the writer process as the sink opens, so that it has read its
        modules by the time the writing moves to it, and lives until it has ended. A thread of
        the crawl's own priority, not the writer thread: a child takes the CPU priority of the
        thread that starts it, and the writer thread's is lowered
        (crawler.runtime.background_thread), which left the process a core only when the crawl
        had none to use; the crawl waited for it 22 to 28 s of the 100,000 pages' 87 to 94
        (benchmarks/README.md, "The writer process's priority"). It outlives the process
        because the process dies with the thread that started it (PR_SET_PDEATHSIG)."""
        with self._process_lock:
            if not self._process_started.is_set():  # else the writer thread has ended
                with contextlib.suppress(OSError):  # none: the writer thread writes on
                    self._process = start_child("crawler.output.index_writer")
                self._process_started.set()
        self._process_ended.wait()

    def _end_unused_process(self, *, used: bool) -> None:
        """In the writer thread, at its end: a process started and never handed the writing (a
        crawl shorter than `PROCESS_AFTER_RECORDS`) is killed and reaped; it has opened
        nothing. From then on none starts."""
        with self._process_lock:
            self._process_started.set()
            unused = None if used else self._process
        if unused is not None:
            with unused:  # its pipes closed and it reaped
                unused.kill()

    def _moving(self) -> bool:
        """Whether the writing moves to the writer process now: it has started, once the crawl
        has stored `process_after` records."""
        after = self._process_after
        if after is None or self._written < after or self._error is not None:
            return False
        self._process_started.wait()
        return self._process is not None

    def _write_here(self, connection: sqlite3.Connection) -> bool:
        """Batches stored as they come; when none waits, a chunk of stored pages is made
        searchable. True when the writing moves to the writer process (before the next
        batch), False at the end."""
        while True:
            if self._moving():
                return True
            try:
                # No batch waiting: a chunk of stored pages made searchable meanwhile.
                item = self._queue.get(block=not self._unindexed or self._error is not None)
            except queue.Empty:
                self._index_some(connection)
                continue
            try:
                if item is None or isinstance(item, threading.Event):
                    if item is None:
                        self._kept_written(functools.partial(self._store, connection))
                    while self._unindexed and self._error is None:
                        self._index_some(connection)  # close() and flush(wait=True) wait
                    if item is None:
                        return False
                    item.set()
                elif not self._keep(item) and self._error is None:
                    self._store(connection, item)
                    if self._unindexed >= INDEX_CHUNK_PAGES:
                        # Batches come faster than the lulls between them: the entries are
                        # made meanwhile (at 100,000 pages, leaving them all to the end made
                        # the exit wait a minute; benchmarks/README.md).
                        self._index_some(connection)
            except Exception as error:  # whatever the cause, a lost batch must reach the crawl
                self._fail(error)
                if isinstance(item, list):
                    self._keep(item)  # for the close, if for want of room
            finally:
                self._queue.task_done()

    def _store(
        self, connection: sqlite3.Connection, batch: list[PageRecord | Skip | Unskip]
    ) -> None:
        write_batch(connection, batch)
        self._written += len(batch)
        self._unindexed += sum(
            isinstance(record, PageRecord) and keeps_text(record) for record in batch
        )

    def _write_through_process(self) -> None:
        """Hands each batch to the writer process (crawler.output.index_writer) and counts it
        stored once the process says so. It waits on the pipe, without the GIL, most of the
        time."""
        process = self._process
        assert process is not None and process.stdin is not None and process.stdout is not None
        source, answers = process.stdin, process.stdout
        item: list[PageRecord | Skip | Unskip] | threading.Event | None = None
        ended = False
        try:
            send(source, (str(self.path), self._stemming, self._purpose))
            self._answer(receive(answers))

            def store(batch: list[PageRecord | Skip | Unskip]) -> None:
                send(source, batch)
                if not self._answer(receive(answers)):
                    raise OutputError("not stored")
                self._written += len(batch)

            while not ended:
                item = self._queue.get()
                try:
                    ended = item is None
                    if ended:
                        self._kept_written(store)  # the writer tries a batch after a full disk
                    if isinstance(item, list) and self._keep(item):
                        pass
                    elif self._error is None:
                        message = item if isinstance(item, list) else None if ended else SEARCHABLE
                        send(source, message)
                        if not self._answer(receive(answers)) and isinstance(item, list):
                            self._keep(item)
                        elif isinstance(item, list):
                            self._written += len(item)
                    if isinstance(item, threading.Event):
                        item.set()
                finally:
                    self._queue.task_done()
        except Exception as error:  # whatever it was, the crawl hears of it and never hangs
            status = process.poll()
            ended_with = f"it ended with status {status}" if status is not None else repr(error)
            self._fail(OutputError(f"the index writer process stopped answering ({ended_with})"))
            if isinstance(item, threading.Event):
                item.set()
            if not ended:
                self._drain()
        finally:
            for stream in (source, answers):
                with contextlib.suppress(OSError):
                    stream.close()
            try:
                process.wait(timeout=STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def _answer(self, answer: tuple[object, ...]) -> bool:
        """Whether the writer process did what was asked; its error kept, if not."""
        if answer[0] == "error":
            self._fail(OutputError(str(answer[1])))
            return False
        return True

    def _drain(self) -> None:
        """After the writer process is lost: the queue emptied to its end, nothing stored, every
        waiter let go."""
        while True:
            item = self._queue.get()
            self._queue.task_done()
            if item is None:
                return
            if isinstance(item, threading.Event):
                item.set()

    def _index_some(self, connection: sqlite3.Connection) -> None:
        """One chunk of `unindexed` made searchable. After an error, none: the pages stay stored,
        and a later crawl indexes them."""
        if self._error is not None:
            return
        try:
            left = index_chunk(connection)
        except Exception as error:
            self._fail(error)
            return
        self._unindexed = max(1, self._unindexed - INDEX_CHUNK_PAGES) if left else 0

    def _fail(self, error: Exception) -> None:
        reason = no_room(error)
        self._error = (
            DiskFullError(self.path, reason)
            if reason is not None
            else OutputError(f"cannot write index {self.path}: {error}")
        )
        self._error.__cause__ = error

    def __repr__(self) -> str:
        state = "closed" if self._closed else "failed" if self._error is not None else "open"
        return (
            f"IndexSink({self.path}, {state}, {len(self._batch)} pending, "
            f"{self._queue.qsize()} batches queued, {self._written} written)"
        )
