"""The crawl's full-text index: `IndexSink` writes DIR/index.sqlite (crawler.output.search reads
it).

Schema (version 3, kept in `PRAGMA user_version`; a crawl opening an index of an earlier version
migrates it in one transaction):

    pages      one row per fetched URL: id INTEGER PRIMARY KEY, url UNIQUE, final_url, status,
               fetched_at, depth, content_type, title, description, language, size, truncated,
               error, indexed, index_reason, follow, follow_reason, sections, and links,
               nofollow_links, redirects as JSON arrays; and its history (`HISTORY_COLUMNS`):
               etag, last_modified, digest, lastmod (a sitemap's), change (what the last fetch
               found: new, changed, unchanged, gone, failed), first_seen, last_changed,
               times_fetched, times_changed, gone. Indexes on fetched_at (export order) and
               last_changed (`crawl export --changed-since`).
    skips      one row per URL not fetched: url UNIQUE, reason, detail.
    texts      an indexed page's words: id (= pages.id), title, headings, text, nosnippet_text,
               the only copy of its text. Each column is marked for CJK (crawler.output.cjk: a
               separator between Han, kana or Hangul characters, so each is a token); readers
               take the marks out.
    pages_fts  FTS5 over texts (external content: content='texts'), tokenizer `unicode61
               remove_diacritics 2`, with `porter` before it when the index stems English
               (`index.stemming`), rowid = texts.id. `snippet()` reads the text column alone, so
               nosnippet_text is matched but never shown.
    unindexed  id: the texts stored and not yet in pages_fts (below).
    settings   key, value: what the index was created with (`stemming`: none or english). A crawl
               asked for another stemming than its index has stops before it writes.

A URL written again (a recrawl, or a rerun into the same directory) updates its row in place,
keeping its id and first_seen: never a duplicate. A new or changed page replaces its text and its
FTS entry (a change when its digest or status differs: times_changed, last_changed); an unchanged
or failed fetch only counts itself (fetched_at, times_fetched, fresher validators), its text
stays; a gone page (404, 410) keeps its row, marked gone, and leaves the FTS table: not found
by a search.

Writes stay off the event loop: `page()` and `skip()` only append to a list. A full batch, or
`flush()`, hands the list to one writer thread, which owns the only write connection (WAL,
synchronous=NORMAL). It stores each batch in one transaction: the page rows, the texts, and their
ids in `unindexed`; that is what `stored` counts, so the crawl knows which URLs' pages are safe
(crawler.state). Making FTS5's entries, more than half of the writer's work (tokenising, segments,
merges: benchmarks/bench_index.py), comes after, when no batch waits: a chunk of `unindexed` at a
time, each chunk's entries made and its ids taken out of `unindexed` in one transaction. So the
crawl never waits for the tokenizer, the pages waiting for it wait on disk, not in memory, and
`close()` returns once every page is searchable. A kill leaves some pages stored but not yet
searchable; the next crawl into the directory indexes them first (`crawl search` says how many).
The hand-off queue is bounded, so a disk slower than the crawl blocks the crawl instead of
growing memory. A writer error is kept and raised as OutputError from the next `flush()` or
`close()`.

Readers open the file read-only; WAL lets them search while a crawl writes.
"""

from __future__ import annotations

import contextlib
import queue
import sqlite3
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from crawler._sqlite import bound_chunks, write_rows
from crawler.errors import OutputError
from crawler.output.cjk import marked
from crawler.output.handoff import BatchHandOff
from crawler.output.records import PageRecord, Skip, Unskip, compact_json
from crawler.runtime import background_thread

__all__ = [
    "BOOL_COLUMNS",
    "INDEX_NAME",
    "JSON_COLUMNS",
    "PAGE_COLUMNS",
    "READABLE_VERSIONS",
    "SCHEMA_VERSION",
    "STEMMING_CHOICES",
    "IndexSink",
    "check_index",
    "recorded_stemming",
    "stemming_message",
    "version_message",
]

INDEX_NAME = "index.sqlite"
SCHEMA_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
"""Versions `crawl search` and `crawl export` read (version 1: no headings, no CJK marks)."""
STEMMING_CHOICES = ("none", "english")
_TOKENIZERS = {
    "none": "unicode61 remove_diacritics 2",
    # porter stems what unicode61 gives it: English words; other words pass unchanged.
    "english": "porter unicode61 remove_diacritics 2",
}

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
HISTORY_COLUMNS = (
    "etag",
    "last_modified",
    "digest",
    "lastmod",
    "change",
    "first_seen",
    "last_changed",
    "times_fetched",
    "times_changed",
    "gone",
)
"""A page's history, from schema version 3 (crawler.output.records.Change)."""
JSON_COLUMNS = frozenset({"links", "nofollow_links", "redirects"})
BOOL_COLUMNS = frozenset({"truncated", "indexed", "follow", "gone"})
_HISTORY_SCHEMA = (
    *(
        f"ALTER TABLE pages ADD COLUMN {definition}"
        for definition in (
            "etag TEXT",
            "last_modified TEXT",
            "digest TEXT",
            "lastmod REAL",
            "change TEXT NOT NULL DEFAULT 'new'",
            "first_seen REAL NOT NULL DEFAULT 0",
            "last_changed REAL NOT NULL DEFAULT 0",
            "times_fetched INTEGER NOT NULL DEFAULT 1",
            "times_changed INTEGER NOT NULL DEFAULT 0",
            "gone INTEGER NOT NULL DEFAULT 0",
        )
    ),
    "UPDATE pages SET first_seen = fetched_at, last_changed = fetched_at",
    "CREATE INDEX pages_last_changed ON pages (last_changed)",
)
"""Version 2 to 3 (a new index takes the same steps): the history columns, each page seen once,
as of its fetch."""

_SETTINGS_TABLE = "CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
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
    _SETTINGS_TABLE,
)
_TEXT_TABLES = (
    """CREATE TABLE texts (
        id INTEGER PRIMARY KEY,
        title TEXT,
        headings TEXT NOT NULL,
        text TEXT NOT NULL,
        nosnippet_text TEXT NOT NULL
    )""",
    "CREATE TABLE unindexed (id INTEGER PRIMARY KEY)",
)


def _fts_table(stemming: str) -> str:
    return (
        "CREATE VIRTUAL TABLE pages_fts USING fts5 (title, headings, text, nosnippet_text, "
        f"content = 'texts', content_rowid = 'id', tokenize = '{_TOKENIZERS[stemming]}')"
    )


# A batch is written a few hundred rows to a statement, each statement's values bound in a
# VALUES list (crawler._sqlite says why: the GIL). `{values}` is that list.
_SAME_PAGE = "pages.digest IS excluded.digest AND pages.status IS excluded.status"
_UPSERT_PAGES = (
    f"INSERT INTO pages ({', '.join(PAGE_COLUMNS + HISTORY_COLUMNS)}) {{values}} "
    "ON CONFLICT (url) DO UPDATE SET "
    + ", ".join(f"{column} = excluded.{column}" for column in PAGE_COLUMNS[1:])
    + ", etag = excluded.etag, last_modified = excluded.last_modified, digest = excluded.digest, "
    "lastmod = excluded.lastmod, times_fetched = pages.times_fetched + 1, gone = 0, "
    # A page fetched again as it was (a URL fetched twice around a kill) is no change.
    f"change = CASE WHEN {_SAME_PAGE} THEN 'unchanged' ELSE excluded.change END, "
    f"times_changed = pages.times_changed + NOT ({_SAME_PAGE}), "
    f"last_changed = CASE WHEN {_SAME_PAGE} THEN pages.last_changed ELSE excluded.fetched_at END"
)
# An unchanged or failed fetch: counted, validators freshened; what the page said stays.
_FETCHED_AGAIN = (
    "UPDATE pages SET fetched_at = row.column2, change = row.column3, error = row.column4, "
    "etag = coalesce(row.column5, pages.etag), "
    "last_modified = coalesce(row.column6, pages.last_modified), "
    "times_fetched = pages.times_fetched + 1 "
    "FROM ({values}) AS row WHERE pages.url = row.column1"
)
# Gone (404, 410): the row stays, marked, out of the FTS table.
_GONE = (
    "UPDATE pages SET fetched_at = row.column2, status = row.column3, error = row.column4, "
    "index_reason = row.column5, change = 'gone', gone = 1, indexed = 0, "
    "times_fetched = pages.times_fetched + 1, times_changed = pages.times_changed + 1, "
    "last_changed = row.column2 FROM ({values}) AS row WHERE pages.url = row.column1"
)
_OLD_IDS = "SELECT id, url FROM pages WHERE url IN ({values})"
# An external-content FTS5 table forgets a row only when told the words it indexed for it.
_FORGET_INDEXED = (
    "INSERT INTO pages_fts (pages_fts, rowid, title, headings, text, nosnippet_text) "
    "SELECT 'delete', id, title, headings, text, nosnippet_text FROM texts "
    "WHERE id IN ({values}) AND id NOT IN (SELECT id FROM unindexed)"
)
_DELETE_TEXTS = "DELETE FROM texts WHERE id IN ({values})"
_DELETE_UNINDEXED = "DELETE FROM unindexed WHERE id IN ({values})"
_INSERT_TEXTS = (
    "INSERT INTO texts (id, title, headings, text, nosnippet_text) "
    "SELECT pages.id, batch.column2, batch.column3, batch.column4, batch.column5 "
    "FROM ({values}) AS batch JOIN pages ON pages.url = batch.column1"
)
_QUEUE_TEXTS = (
    "INSERT INTO unindexed (id) SELECT pages.id FROM ({values}) AS batch "
    "JOIN pages ON pages.url = batch.column1"
)
_NEXT_UNINDEXED = "SELECT id FROM unindexed ORDER BY id LIMIT ?"
_INDEX_CHUNK = (
    "INSERT INTO pages_fts (rowid, title, headings, text, nosnippet_text) "
    f"SELECT id, title, headings, text, nosnippet_text FROM texts WHERE id IN ({_NEXT_UNINDEXED})"
)
_DROP_CHUNK = f"DELETE FROM unindexed WHERE id IN ({_NEXT_UNINDEXED})"
_ANY_UNINDEXED = "SELECT EXISTS (SELECT 1 FROM unindexed)"
_COUNT_UNINDEXED = "SELECT count(*) FROM unindexed"
INDEX_CHUNK_PAGES = 500
"""Pages made searchable in one transaction: FTS5 writes a segment a transaction, and fewer,
larger segments are merged less often; a chunk takes about 0.2 s, the longest a batch handed
over meanwhile waits to be stored."""
_UPSERT_SKIPS = (
    "INSERT INTO skips (url, reason, detail) {values} "
    "ON CONFLICT (url) DO UPDATE SET reason = excluded.reason, detail = excluded.detail"
)

_DELETE_SKIPS = "DELETE FROM skips WHERE url IN ({values})"

_Batch = list[PageRecord | Skip | Unskip]


class IndexSink(BatchHandOff[PageRecord | Skip | Unskip, threading.Event]):
    """A `PageSink` writing DIR/index.sqlite through one writer thread (see the module doc). Its
    queue's signal is an Event, set once all before it is searchable."""

    def __init__(
        self,
        directory: Path,
        *,
        stemming: str = "none",
        batch_size: int = 200,
        max_batches: int = 8,
    ) -> None:
        """Opens (or creates) the index now, so a bad directory fails before the crawl starts.
        `stemming` (STEMMING_CHOICES) is the new index's; an index created with another is an
        OutputError. `batch_size` records are stored in one transaction; `max_batches` bounds the
        batches waiting for the writer, beyond which `flush()` blocks. Storing is quick, so small
        batches cost little, and the records waiting in memory are few: 500 a batch made the
        crawl's peak memory 1.54 times the JSONL crawl's on the speed web, 200 1.38 times
        (benchmarks/bench_speed.py)."""
        if stemming not in STEMMING_CHOICES:
            raise ValueError(f"stemming must be one of {STEMMING_CHOICES}, not {stemming!r}")
        self.path = directory / INDEX_NAME
        super().__init__(f"index {self.path}", max_batches)
        self._stemming = stemming
        self._batch_size = batch_size
        self._written = 0
        self._unindexed = 0
        """Pages stored and not yet searchable, as the writer thread counts them."""
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
        """The writer thread: the only code that touches the write connection. Batches are stored
        as they come; when none waits, a chunk of stored pages is made searchable."""
        background_thread()
        try:
            connection = _open_for_writing(self.path, self._stemming)
            self._unindexed = int(connection.execute(_COUNT_UNINDEXED).fetchone()[0])
        except Exception as error:  # the constructor waits on `opened`: it must hear of anything
            if not isinstance(error, OutputError):
                error = OutputError(f"cannot open index {self.path}: {error}")
            opened.set_exception(error)
            return
        opened.set_result(None)
        try:
            while True:
                try:
                    # No batch waiting: a chunk of stored pages made searchable meanwhile.
                    item = self._queue.get(block=not self._unindexed or self._error is not None)
                except queue.Empty:
                    self._index_some(connection)
                    continue
                try:
                    if item is None or isinstance(item, threading.Event):
                        while self._unindexed and self._error is None:
                            self._index_some(connection)  # close() and flush(wait=True) wait
                        if item is None:
                            return
                        item.set()
                    elif self._error is None:
                        _write_batch(connection, item)
                        self._written += len(item)
                        self._unindexed += sum(
                            isinstance(record, PageRecord) and record.index for record in item
                        )
                except Exception as error:  # whatever the cause, a lost batch must reach the crawl
                    self._fail(error)
                finally:
                    self._queue.task_done()
        finally:
            connection.close()

    def _index_some(self, connection: sqlite3.Connection) -> None:
        """One chunk of `unindexed` made searchable. After an error, none: the pages stay stored,
        and a later crawl indexes them."""
        if self._error is not None:
            return
        try:
            left = _index_chunk(connection)
        except Exception as error:
            self._fail(error)
            return
        self._unindexed = max(1, self._unindexed - INDEX_CHUNK_PAGES) if left else 0

    def _fail(self, error: Exception) -> None:
        self._error = OutputError(f"cannot write index {self.path}: {error}")
        self._error.__cause__ = error

    def __repr__(self) -> str:
        state = "closed" if self._closed else "failed" if self._error is not None else "open"
        return (
            f"IndexSink({self.path}, {state}, {len(self._batch)} pending, "
            f"{self._queue.qsize()} batches queued, {self._written} written)"
        )


def _open_for_writing(path: Path, stemming: str) -> sqlite3.Connection:
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
                for statement in (*_SCHEMA, *_HISTORY_SCHEMA, *_TEXT_TABLES, _fts_table(stemming)):
                    connection.execute(statement)
                _finish_schema(connection, stemming)
            elif version in (1, 2):
                if version == 1:
                    _migrate_from_1(connection, stemming)
                elif (recorded := _recorded_stemming(connection)) != stemming:
                    raise OutputError(stemming_message(path, recorded, stemming))
                for statement in _HISTORY_SCHEMA:
                    connection.execute(statement)
                connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            elif version != SCHEMA_VERSION:
                raise OutputError(version_message(path, version))
            else:
                recorded = _recorded_stemming(connection)
                if recorded != stemming:
                    raise OutputError(stemming_message(path, recorded, stemming))
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
A chunk of 500 pages of 12 KB overflows the default several times over, and every segment written
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


def check_index(directory: Path, stemming: str = "none") -> None:
    """OutputError if the index in `directory` is there but a crawl could not write it: not
    SQLite, damaged where SQLite looks first, of another schema, or created with another stemming
    than `stemming`. Read only: a crawl checks before it opens its state (which records a run), so
    one that must stop here has changed nothing. An empty or missing file is a new index."""
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
        recorded = _recorded_stemming(connection) if version >= 2 else None
    except sqlite3.DatabaseError as error:
        raise _cannot_open(path, error) from error
    finally:
        connection.close()
    if version not in (0, *READABLE_VERSIONS):
        raise OutputError(version_message(path, version))
    if recorded is not None and recorded != stemming:
        raise OutputError(stemming_message(path, recorded, stemming))


def recorded_stemming(connection: sqlite3.Connection) -> str:
    """The stemming an index of version 2 or later was created with ('none' for version 1)."""
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    return _recorded_stemming(connection) if version >= 2 else "none"


def _recorded_stemming(connection: sqlite3.Connection) -> str:
    row = connection.execute("SELECT value FROM settings WHERE key = 'stemming'").fetchone()
    return str(row[0]) if row is not None else "none"


def stemming_message(path: Path, recorded: str, asked: str) -> str:
    return (
        f"index {path} was created with index.stemming {recorded}, and this crawl asks for "
        f"{asked}: an index keeps the stemming it was created with; set index.stemming to "
        f"{recorded}, or crawl with --fresh to start over with {asked} (it deletes the index and "
        "the crawl state)"
    )


def _finish_schema(connection: sqlite3.Connection, stemming: str) -> None:
    connection.execute("INSERT INTO settings (key, value) VALUES ('stemming', ?)", (stemming,))
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _migrate_from_1(connection: sqlite3.Connection, stemming: str) -> None:
    """Version 1 to 2, inside the caller's transaction: the texts out of version 1's FTS table
    (which held them), marked for CJK, with empty headings (version 1 kept none), all of them
    `unindexed`: the writer makes them searchable as it does a crawl's."""
    connection.create_function("marked", 1, _marked_or_null, deterministic=True)
    for statement in _TEXT_TABLES:
        connection.execute(statement)
    connection.execute(
        "INSERT INTO texts (id, title, headings, text, nosnippet_text) "
        "SELECT rowid, marked(title), '', marked(coalesce(text, '')), "
        "marked(coalesce(nosnippet_text, '')) FROM pages_fts"
    )
    connection.execute("INSERT INTO unindexed (id) SELECT id FROM texts")
    connection.execute("DROP TABLE pages_fts")
    connection.execute(_fts_table(stemming))
    connection.execute(_SETTINGS_TABLE)
    _finish_schema(connection, stemming)


def _marked_or_null(text: str | None) -> str | None:
    return None if text is None else marked(text)


def _tune_fts(connection: sqlite3.Connection) -> None:
    # `hashsize` is kept in the index's own config table; an SQLite too old to know it refuses
    # it, and the default then stands.
    with contextlib.suppress(sqlite3.OperationalError):
        connection.execute(
            "INSERT INTO pages_fts (pages_fts, rank) VALUES ('hashsize', ?)", (FTS_HASH_BYTES,)
        )


def _write_batch(connection: sqlite3.Connection, batch: _Batch) -> None:
    """Store a batch in one transaction: page rows, texts (in `unindexed`, for `_index_chunk`),
    skips."""
    # The last record of a URL wins; two text rows for one id would be a constraint error.
    records = {item.url: item for item in batch if isinstance(item, PageRecord)}
    skips: dict[str, Skip] = {}
    unskipped: dict[str, None] = {}
    for item in batch:
        if isinstance(item, Skip):
            skips[item.url] = item
            unskipped.pop(item.url, None)
        elif isinstance(item, Unskip):
            skips.pop(item.url, None)
            unskipped[item.url] = None
    skip_rows = [[skip.url, skip.reason, skip.detail] for skip in skips.values()]
    connection.execute("BEGIN IMMEDIATE")
    try:
        _write_pages(connection, records)
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


def _write_pages(connection: sqlite3.Connection, records: dict[str, PageRecord]) -> None:
    """The batch's page records, inside its transaction (see the module doc)."""
    if not records:
        return
    urls = [(url,) for url in records]
    old = dict(
        (url, row_id)
        for values, parameters in bound_chunks(connection, urls, 1)
        for row_id, url in connection.execute(_OLD_IDS.format(values=values), parameters)
    )
    pages: dict[str, PageRecord] = {}
    again: list[list[Any]] = []
    gone: list[list[Any]] = []
    for url, record in records.items():
        if url not in old or record.change in ("new", "changed"):
            pages[url] = record
        elif record.change == "gone":
            gone.append([url, record.fetched_at, record.status, record.error, record.index_reason])
        else:
            fetched = [url, record.fetched_at, record.change, record.error]
            again.append([*fetched, record.etag, record.last_modified])
    if again:
        write_rows(connection, _FETCHED_AGAIN, again, 6)
    if gone:
        forget = [(old[row[0]],) for row in gone]
        for statement in (_FORGET_INDEXED, _DELETE_TEXTS, _DELETE_UNINDEXED):
            write_rows(connection, statement, forget, 1)
        write_rows(connection, _GONE, gone, 5)
    if not pages:
        return
    page_rows = [_page_row(record) for record in pages.values()]
    texts = [
        [
            record.url,
            None if record.title is None else marked(record.title),
            marked(record.headings),
            marked(record.text),
            marked(record.nosnippet_text),
        ]
        for record in pages.values()
        if record.index
    ]
    replaced = [(old[url],) for url in pages if url in old]
    if replaced:  # fetched before: these URLs' old words and texts go first
        for statement in (_FORGET_INDEXED, _DELETE_TEXTS, _DELETE_UNINDEXED):
            write_rows(connection, statement, replaced, 1)
    width = len(PAGE_COLUMNS) + len(HISTORY_COLUMNS)
    write_rows(connection, _UPSERT_PAGES, page_rows, width)
    if texts:
        write_rows(connection, _INSERT_TEXTS, texts, 5)
        write_rows(connection, _QUEUE_TEXTS, [(text[0],) for text in texts], 1)


def _index_chunk(connection: sqlite3.Connection) -> bool:
    """Make up to INDEX_CHUNK_PAGES stored texts searchable, in one transaction; whether any are
    left."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.execute(_INDEX_CHUNK, (INDEX_CHUNK_PAGES,))
        connection.execute(_DROP_CHUNK, (INDEX_CHUNK_PAGES,))
        left = bool(connection.execute(_ANY_UNINDEXED).fetchone()[0])
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    return left


def _page_row(record: PageRecord) -> list[Any]:
    # The record's own JSON form names every field once; the table calls `index` `indexed`, and
    # keeps the lists as JSON text. As a first fetch: the upsert keeps an existing row's history.
    fields = record.to_json()
    fields["indexed"] = fields["index"]
    for column in JSON_COLUMNS:
        fields[column] = compact_json(fields[column])
    fetched_at = record.fetched_at
    fields.update(
        first_seen=fetched_at, last_changed=fetched_at, times_fetched=1, times_changed=0, gone=0
    )
    return [fields[column] for column in PAGE_COLUMNS + HISTORY_COLUMNS]


def version_message(path: Path, version: int) -> str:
    readable = " and ".join(str(number) for number in READABLE_VERSIONS)
    return (
        f"index {path} has schema version {version}; this crawler reads versions {readable} "
        "(a newer crawler wrote it?)"
    )
