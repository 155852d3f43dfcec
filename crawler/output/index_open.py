"""DIR/index.sqlite opened for the writer (crawler.output.index): created, or migrated from an
earlier schema version (crawler.output.index_schema) in one transaction, and FTS5 tuned; and
`check_index`, which tells a crawl before it starts, read only, whether it could write the index.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from crawler.errors import OutputError
from crawler.output.cjk import marked
from crawler.output.index_schema import (
    FIELDS_SCHEMA,
    FRAME_SCHEMA,
    HISTORY_SCHEMA,
    INDEX_NAME,
    MAIN_SCHEMA,
    MAIN_TEXTS_SCHEMA,
    NEW_INDEX_STEMMING,
    READABLE_VERSIONS,
    SCHEMA,
    SCHEMA_VERSION,
    SETTINGS_TABLE,
    TEXT_TABLES,
    USAGE_SCHEMA,
    fts_table,
    version_message,
)

__all__ = [
    "FTS_HASH_BYTES",
    "check_index",
    "open_for_writing",
    "recorded_stemming",
    "stemming_message",
]


def open_for_writing(path: Path, stemming: str, purpose: str = "search") -> sqlite3.Connection:
    """The writer's one connection (WAL, synchronous=NORMAL), the index at `path` created or
    migrated to SCHEMA_VERSION, the crawl's `purpose` recorded; OutputError if it cannot be, or
    has another stemming than `stemming` (`auto`: whichever it has; a new index
    NEW_INDEX_STEMMING)."""
    try:
        # Autocommit mode: transactions are begun and ended explicitly, here and by the writes
        # (crawler.output.index_writes).
        # Few statements cached: the batch's last chunk has a row count of its own each time, and
        # a statement of a few thousand placeholders is worth keeping only while it recurs.
        connection = sqlite3.connect(path, isolation_level=None, timeout=30.0, cached_statements=16)
    except sqlite3.Error as error:
        raise OutputError(f"cannot open index {path}: {error}") from error
    try:
        # Before anything is written: a new file takes it, an existing one keeps its own.
        connection.execute(f"PRAGMA page_size = {PAGE_BYTES}")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = NORMAL")
        connection.execute("BEGIN IMMEDIATE")
        try:
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if stemming == "auto":
                stemming = recorded_stemming(connection) if version else NEW_INDEX_STEMMING
            if version == 0:
                for statement in (
                    *SCHEMA,
                    *HISTORY_SCHEMA,
                    *USAGE_SCHEMA,
                    *MAIN_SCHEMA,
                    *FIELDS_SCHEMA,
                    *TEXT_TABLES,
                    *FRAME_SCHEMA,
                    fts_table(stemming),
                ):
                    connection.execute(statement)
                _finish_schema(connection, stemming)
            elif version in (1, 2, 3, 4, 5, 6):
                if version == 1:
                    _migrate_from_1(connection, stemming)
                elif (recorded := _recorded_stemming(connection)) != stemming:
                    raise OutputError(stemming_message(path, recorded, stemming))
                elif version < 6:
                    _texts_to_6(connection, stemming, version)
                for statement in (
                    *(HISTORY_SCHEMA if version < 3 else ()),
                    *(USAGE_SCHEMA if version < 4 else ()),
                    *(MAIN_SCHEMA if version < 5 else ()),
                    *FIELDS_SCHEMA,
                ):
                    connection.execute(statement)
                connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            elif version != SCHEMA_VERSION:
                raise OutputError(version_message(path, version))
            else:
                recorded = _recorded_stemming(connection)
                if recorded != stemming:
                    raise OutputError(stemming_message(path, recorded, stemming))
            _tune_fts(connection)
            connection.execute(
                "INSERT OR REPLACE INTO settings (key, value) VALUES ('purpose', ?)", (purpose,)
            )
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


PAGE_BYTES = 16384
"""SQLite's page size for a new index (its default: 4,096). A page's texts are about 25 KB (its
text, main text and Markdown), and FTS5's segments are read and written whole: with larger
pages the writer spent about a quarter less CPU a page, the file 10% larger
(benchmarks/README.md, "The index writer at 100,000 pages")."""
FTS_AUTOMERGE = 8
"""Segments of one level FTS5 lets gather before it merges them into one of the next (its
default: 4). Each merge writes every entry again; at 20,000 pages, 8 took a fifth less of the
tokenising's CPU than 4 (16 a quarter), and a search reads at most 7 segments a level."""
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


def check_index(directory: Path, stemming: str = "auto") -> None:
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
    if recorded is not None and stemming != "auto" and recorded != stemming:
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
    for statement in (*TEXT_TABLES, *FRAME_SCHEMA):
        connection.execute(statement)
    connection.execute(
        "INSERT INTO texts (id, title, headings, text, nosnippet_text) "
        "SELECT rowid, marked(title), '', marked(coalesce(text, '')), "
        "marked(coalesce(nosnippet_text, '')) FROM pages_fts"
    )
    connection.execute("INSERT INTO unindexed (id) SELECT id FROM texts")
    connection.execute("DROP TABLE pages_fts")
    connection.execute(fts_table(stemming))
    connection.execute(SETTINGS_TABLE)
    _finish_schema(connection, stemming)


def _texts_to_6(connection: sqlite3.Connection, stemming: str, version: int) -> None:
    """Texts of version 2 to 5 to version 6, inside the caller's transaction: the main content
    columns (before 5), frame_text and the view of them pages_fts reads, and pages_fts made
    again over it, every text queued to be indexed in it (the writer does as it does a
    crawl's)."""
    for statement in (*(MAIN_TEXTS_SCHEMA if version < 5 else ()), *FRAME_SCHEMA):
        connection.execute(statement)
    connection.execute("DROP TABLE pages_fts")
    connection.execute(fts_table(stemming))
    connection.execute("INSERT OR IGNORE INTO unindexed (id) SELECT id FROM texts")


def _marked_or_null(text: str | None) -> str | None:
    return None if text is None else marked(text)


def _tune_fts(connection: sqlite3.Connection) -> None:
    # Kept in the index's own config table; an SQLite too old to know `hashsize` refuses it, and
    # the default then stands.
    with contextlib.suppress(sqlite3.OperationalError):
        connection.execute(
            "INSERT INTO pages_fts (pages_fts, rank) VALUES ('hashsize', ?)", (FTS_HASH_BYTES,)
        )
    connection.execute(
        "INSERT INTO pages_fts (pages_fts, rank) VALUES ('automerge', ?)", (FTS_AUTOMERGE,)
    )
