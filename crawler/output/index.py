"""The crawl's full-text index: `IndexSink` writes DIR/index.sqlite (crawler.output.search reads
it).

Schema (version 1, kept in `PRAGMA user_version` so a later version can migrate):

    pages      one row per fetched URL: id INTEGER PRIMARY KEY, url UNIQUE, final_url, status,
               fetched_at, depth, content_type, title, description, language, size, truncated,
               error, indexed, index_reason, follow, follow_reason, sections, and links,
               nofollow_links, redirects as JSON arrays. Index on fetched_at (export order).
    skips      one row per URL not fetched: url UNIQUE, reason, detail.
    pages_fts  FTS5 (title, text, nosnippet_text), tokenizer `unicode61 remove_diacritics 2`,
               rowid = pages.id. Only indexed pages have a row, and it is the only copy of their
               text. `snippet()` reads the text column alone, so nosnippet_text is matched but never
               shown.

A URL written again (a rerun into the same directory) updates its row in place, keeping its id,
and replaces its FTS row: never a duplicate.

Writes stay off the event loop: `page()` and `skip()` only append to a list. A full batch, or
`flush()`, hands the list to one writer thread, which owns the only write connection (WAL,
synchronous=NORMAL) and commits each batch in one transaction. The hand-off queue is bounded, so
a disk slower than the crawl blocks the crawl instead of growing memory. A writer error is kept and
raised as OutputError from the next `flush()` or `close()`. `stored` counts the records
committed, so the crawl knows which URLs' pages are safe (crawler.state).

Readers open the file read-only; WAL lets them search while a crawl writes.
"""

from __future__ import annotations

import contextlib
import queue
import sqlite3
import threading
from concurrent.futures import Future
from pathlib import Path
from types import TracebackType
from typing import Any

from crawler._sqlite import write_rows
from crawler.errors import OutputError
from crawler.output.records import PageRecord, Skip, Unskip, compact_json
from crawler.runtime import background_thread

__all__ = [
    "BOOL_COLUMNS",
    "INDEX_NAME",
    "JSON_COLUMNS",
    "PAGE_COLUMNS",
    "SCHEMA_VERSION",
    "IndexSink",
    "check_index",
    "version_message",
]

INDEX_NAME = "index.sqlite"
SCHEMA_VERSION = 1

PAGE_COLUMNS = (
    "url",
    "final_url",
    "status",
    "fetched_at",
    "depth",
    "content_type",
    "title",
    "description",
    "language",
    "size",
    "truncated",
    "error",
    "indexed",
    "index_reason",
    "follow",
    "follow_reason",
    "sections",
    "links",
    "nofollow_links",
    "redirects",
)
JSON_COLUMNS = frozenset({"links", "nofollow_links", "redirects"})
BOOL_COLUMNS = frozenset({"truncated", "indexed", "follow"})

_SCHEMA = (
    """CREATE TABLE pages (
        id INTEGER PRIMARY KEY,
        url TEXT NOT NULL UNIQUE,
        final_url TEXT NOT NULL,
        status INTEGER,
        fetched_at REAL NOT NULL,
        depth INTEGER NOT NULL,
        content_type TEXT,
        title TEXT,
        description TEXT,
        language TEXT,
        size INTEGER NOT NULL,
        truncated INTEGER NOT NULL,
        error TEXT,
        indexed INTEGER NOT NULL,
        index_reason TEXT,
        follow INTEGER NOT NULL,
        follow_reason TEXT,
        sections INTEGER NOT NULL,
        links TEXT NOT NULL,
        nofollow_links TEXT NOT NULL,
        redirects TEXT NOT NULL
    )""",
    "CREATE INDEX pages_fetched_at ON pages (fetched_at)",
    """CREATE TABLE skips (
        id INTEGER PRIMARY KEY,
        url TEXT NOT NULL UNIQUE,
        reason TEXT NOT NULL,
        detail TEXT NOT NULL
    )""",
    """CREATE VIRTUAL TABLE pages_fts USING fts5 (
        title, text, nosnippet_text, tokenize = 'unicode61 remove_diacritics 2'
    )""",
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)

# A batch is written a few hundred rows to a statement, each statement's values bound in a
# VALUES list (crawler._sqlite says why: the GIL). `{values}` is that list.
_UPSERT_PAGES = (
    f"INSERT INTO pages ({', '.join(PAGE_COLUMNS)}) {{values}} "
    "ON CONFLICT (url) DO UPDATE SET "
    + ", ".join(f"{column} = excluded.{column}" for column in PAGE_COLUMNS[1:])
)
_DELETE_TEXTS = (
    "DELETE FROM pages_fts WHERE rowid IN (SELECT id FROM pages WHERE url IN ({values}))"
)
_INSERT_TEXTS = (
    "INSERT INTO pages_fts (rowid, title, text, nosnippet_text) "
    "SELECT pages.id, batch.column2, batch.column3, batch.column4 "
    "FROM ({values}) AS batch JOIN pages ON pages.url = batch.column1"
)
_UPSERT_SKIPS = (
    "INSERT INTO skips (url, reason, detail) {values} "
    "ON CONFLICT (url) DO UPDATE SET reason = excluded.reason, detail = excluded.detail"
)

_DELETE_SKIPS = "DELETE FROM skips WHERE url IN ({values})"

_Batch = list[PageRecord | Skip | Unskip]


class IndexSink:
    """A `PageSink` writing DIR/index.sqlite through one writer thread (see the module doc)."""

    def __init__(self, directory: Path, *, batch_size: int = 500, max_batches: int = 8) -> None:
        """Opens (or creates) the index now, so a bad directory fails before the crawl starts.
        `max_batches` bounds the batches waiting for the writer; beyond it `flush()` blocks."""
        self.path = directory / INDEX_NAME
        self._batch_size = batch_size
        self._batch: _Batch = []
        self._queue: queue.Queue[_Batch | None] = queue.Queue(maxsize=max_batches)
        self._error: OutputError | None = None
        self._written = 0
        self._closed = False
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

    @property
    def stored(self) -> int:
        """Records committed, in the order given (the writer thread counts them)."""
        return self._written

    def page(self, record: PageRecord) -> None:
        self._add(record)

    def skip(self, skip: Skip) -> None:
        self._add(skip)

    def unskip(self, unskip: Unskip) -> None:
        self._add(unskip)

    def flush(self, *, wait: bool = False) -> None:
        """Hand the batch to the writer; with `wait`, also wait until all of it is committed, so a
        reader sees it. Raises OutputError if the writer has failed."""
        if self._closed:
            raise OutputError(f"index {self.path} is closed")
        self._hand_over()
        if wait:
            self._queue.join()
        self._raise_error()

    def close(self) -> None:
        """Write what is left and stop the writer. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._hand_over()
        self._queue.put(None)
        self._writer.join()
        self._raise_error()

    def __enter__(self) -> IndexSink:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _add(self, item: PageRecord | Skip | Unskip) -> None:
        if self._closed:
            raise OutputError(f"index {self.path} is closed")
        self._batch.append(item)
        if len(self._batch) >= self._batch_size:
            self._hand_over()

    def _hand_over(self) -> None:
        if not self._batch:
            return
        batch, self._batch = self._batch, []
        if self._error is None:
            self._queue.put(batch)  # blocks while the queue is full: the backpressure

    def _raise_error(self) -> None:
        # Sticky: once a batch is lost, every later flush says so, not just the first.
        if self._error is not None:
            raise OutputError(str(self._error)) from self._error.__cause__

    def _write_batches(self, opened: Future[None]) -> None:
        """The writer thread: the only code that touches the write connection."""
        background_thread()
        try:
            connection = _open_for_writing(self.path)
        except Exception as error:  # the constructor waits on `opened`: it must hear of anything
            if not isinstance(error, OutputError):
                error = OutputError(f"cannot open index {self.path}: {error}")
            opened.set_exception(error)
            return
        opened.set_result(None)
        try:
            while (batch := self._queue.get()) is not None:
                try:
                    if self._error is None:
                        _write_batch(connection, batch)
                        self._written += len(batch)
                except Exception as error:  # whatever the cause, a lost batch must reach the crawl
                    self._error = OutputError(f"cannot write index {self.path}: {error}")
                    self._error.__cause__ = error
                finally:
                    self._queue.task_done()
            self._queue.task_done()
        finally:
            connection.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "failed" if self._error is not None else "open"
        return (
            f"IndexSink({self.path}, {state}, {len(self._batch)} pending, "
            f"{self._queue.qsize()} batches queued, {self._written} written)"
        )


def _open_for_writing(path: Path) -> sqlite3.Connection:
    try:
        # Autocommit mode: transactions are begun and ended explicitly below.
        # Few statements cached: the batch's last chunk has a row count of its own each time, and
        # a statement of a few thousand placeholders is worth keeping only while it recurs.
        connection = sqlite3.connect(path, isolation_level=None, timeout=30.0, cached_statements=16)
    except sqlite3.Error as error:
        raise OutputError(f"cannot open index {path}: {error}") from error
    try:
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = NORMAL")
        connection.execute("BEGIN IMMEDIATE")
        try:
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                for statement in _SCHEMA:
                    connection.execute(statement)
            elif version != SCHEMA_VERSION:
                raise OutputError(version_message(path, version))
            _tune_fts(connection)
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
    except sqlite3.DatabaseError as error:
        connection.close()
        raise _cannot_open(path, error) from error
    except sqlite3.Error as error:
        connection.close()
        raise OutputError(f"cannot open index {path}: {error}") from error
    except BaseException:
        connection.close()
        raise
    return connection


FTS_HASH_BYTES = 8 * 1024 * 1024
"""Terms FTS5 gathers in memory before it writes them out as a new segment (its default: 1 MiB).
A batch of 500 pages of 12 KB overflows the default several times over, and every segment written
is merged again later (benchmarks/README.md, "FTS5's hash size")."""


def _cannot_open(path: Path, error: sqlite3.DatabaseError) -> OutputError:
    name = getattr(error, "sqlite_errorname", "") or ""
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return OutputError(
            f"cannot open index {path}: it is damaged or is not an index a crawl wrote "
            f"({error}); nothing was written to it; to start over, crawl with --fresh (it "
            "deletes the index and the crawl state, and says so first)"
        )
    return OutputError(f"cannot open index {path}: {error}")


def check_index(directory: Path) -> None:
    """OutputError if the index in `directory` is there but a crawl could not write it: not
    SQLite, damaged where SQLite looks first, or of another schema. Read only: a crawl checks
    before it opens its state (which records a run), so one that must stop here has changed
    nothing. An empty or missing file is a new index."""
    path = directory / INDEX_NAME
    try:
        if path.stat().st_size == 0:
            return
    except OSError:
        return  # missing, or an error opening it for writing names better
    # Immutable when no write-ahead log is beside it: SQLite then makes no -wal or -shm file.
    wal = path.with_name(path.name + "-wal")
    options = "mode=ro" if wal.exists() else "mode=ro&immutable=1"
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?{options}", uri=True)
    except sqlite3.Error:
        return
    try:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as error:
        raise _cannot_open(path, error) from error
    finally:
        connection.close()
    if version not in (0, SCHEMA_VERSION):
        raise OutputError(version_message(path, version))


def _tune_fts(connection: sqlite3.Connection) -> None:
    # `hashsize` is kept in the index's own config table; an SQLite too old to know it refuses
    # it, and the default then stands.
    with contextlib.suppress(sqlite3.OperationalError):
        connection.execute(
            "INSERT INTO pages_fts (pages_fts, rank) VALUES ('hashsize', ?)", (FTS_HASH_BYTES,)
        )


def _write_batch(connection: sqlite3.Connection, batch: _Batch) -> None:
    # The last record of a URL wins; two FTS rows for one rowid would be a constraint error.
    pages = {item.url: item for item in batch if isinstance(item, PageRecord)}
    skips: dict[str, Skip] = {}
    unskipped: dict[str, None] = {}
    for item in batch:
        if isinstance(item, Skip):
            skips[item.url] = item
            unskipped.pop(item.url, None)
        elif isinstance(item, Unskip):
            skips.pop(item.url, None)
            unskipped[item.url] = None
    page_rows = [_page_row(record) for record in pages.values()]
    texts = [
        [record.url, record.title, record.text, record.nosnippet_text]
        for record in pages.values()
        if record.index
    ]
    skip_rows = [[skip.url, skip.reason, skip.detail] for skip in skips.values()]
    connection.execute("BEGIN IMMEDIATE")
    try:
        if pages:
            write_rows(connection, _DELETE_TEXTS, [(url,) for url in pages], 1)
            write_rows(connection, _UPSERT_PAGES, page_rows, len(PAGE_COLUMNS))
        if texts:
            write_rows(connection, _INSERT_TEXTS, texts, 4)
        if skip_rows:
            write_rows(connection, _UPSERT_SKIPS, skip_rows, 3)
        if unskipped:
            write_rows(connection, _DELETE_SKIPS, [(url,) for url in unskipped], 1)
        connection.execute("COMMIT")
    except BaseException:
        # SQLite may have rolled back already (a full disk, say); a second ROLLBACK would fail.
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


def _page_row(record: PageRecord) -> list[Any]:
    # The record's own JSON form names every field once; the table calls `index` `indexed`, and
    # keeps the lists as JSON text.
    fields = record.to_json()
    fields["indexed"] = fields["index"]
    for column in JSON_COLUMNS:
        fields[column] = compact_json(fields[column])
    return [fields[column] for column in PAGE_COLUMNS]


def version_message(path: Path, version: int) -> str:
    return f"index {path} has schema version {version}; this crawler reads version {SCHEMA_VERSION}"
