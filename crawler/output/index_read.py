"""DIR/index.sqlite (crawler.output.index_schema) opened for reading, by search
(crawler.output.searching) and export (crawler.output.export): the file found, its schema version's
`Layout`, and SQLite's errors as OutputError. Read-only connections: WAL lets them read while a
crawl writes.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from crawler.errors import OutputError
from crawler.output.index_schema import INDEX_NAME, READABLE_VERSIONS, version_message
from crawler.output.jsonl import PAGES_NAME, SKIPS_NAME

__all__ = ["ELLIPSIS", "RANK_WEIGHTS", "Layout", "find_index", "index_purpose", "reading"]

ELLIPSIS = "…"
"""What stands for text left out: of a snippet, or of an error quoted."""


def find_index(directory: Path) -> Path:
    """The index file in `directory`; OutputError if there is none."""
    path = directory / INDEX_NAME
    if not path.is_file():
        hint = "crawl with output.format index first"
        if (directory / SKIPS_NAME).is_file():
            hint += f"; this crawl wrote JSONL: {directory / PAGES_NAME}, {directory / SKIPS_NAME}"
        raise OutputError(f"no index in {directory} ({hint})")
    return path


_BRIEF = 200
"""Characters of an SQLite error kept in a message: a damaged row's error quotes the row."""


def _brief(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text if len(text) <= _BRIEF else text[:_BRIEF] + ELLIPSIS


def _damaged(path: Path, error: BaseException) -> OutputError:
    return OutputError(
        f"index {path} is damaged or is not an index a crawl wrote ({_brief(error)}); "
        "crawl again with --fresh to start over (it deletes the index and the crawl state)"
    )


def _unreadable(path: Path, error: sqlite3.Error) -> OutputError:
    """The error to raise for `error`, met reading the index at `path`."""
    name = getattr(error, "sqlite_errorname", "") or ""
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "decode" in str(error):
        return _damaged(path, error)
    return OutputError(f"cannot read index {path}: {_brief(error)}")


@dataclass(frozen=True, slots=True)
class Layout:
    """Where a schema version keeps what a search reads."""

    snippet_column: int
    """The text column's number in pages_fts."""
    weights: str
    """bm25's weights, one a column (see `RANK_WEIGHTS`)."""
    texts: str
    """The table a page's texts are in, its rows' id the page's."""
    headings: str
    """The SQL of a page's headings in `texts`."""
    named_in: str
    """The FTS5 column filter of the columns that name what a page is about."""
    version: int
    """The schema version: from 2, CJK characters are tokens of their own (crawler.output.cjk),
    and stored pages wait in `unindexed` until they are searchable."""
    main_column: int | None = None
    """The main text column's number in pages_fts when a snippet reads it first (version 6: the
    text column then holds a page's frame, not its main content)."""


RANK_WEIGHTS = {
    "title": 10.0,
    "headings": 5.0,
    "text": 1.0,
    "nosnippet_text": 1.0,
    "main_text": 3.0,
}
"""How much a match in each column counts toward a page's BM25 score (version 6). A word of a
page's main content counts 3, one of its frame (the text column then) 1, as in version 5, where
the text column held the main content too, weighing 1 + 2."""
_LAYOUTS = {
    # Version 1 kept its texts in the FTS table itself, whose rowid is the page's id.
    1: Layout(1, "10.0, 1.0, 1.0", "(SELECT rowid AS id, * FROM pages_fts)", "''", "title", 1),
    2: Layout(
        2,
        ", ".join(str(weight) for weight in list(RANK_WEIGHTS.values())[:4]),
        "texts",
        "texts.headings",
        "{title headings}",
        2,
    ),
}
# Version 3 adds each page's history beside it, version 4 its usage signals; what a search reads
# is as in version 2.
_LAYOUTS[3] = dataclasses.replace(_LAYOUTS[2], version=3)
_LAYOUTS[4] = dataclasses.replace(_LAYOUTS[2], version=4)
# Version 5 searches each page's main content apart, and weighs it above the rest.
_LAYOUTS[5] = dataclasses.replace(_LAYOUTS[2], weights="10.0, 5.0, 1.0, 1.0, 2.0", version=5)
# Version 6 searches the text outside it in the text column.
_LAYOUTS[6] = dataclasses.replace(
    _LAYOUTS[2],
    weights=", ".join(str(weight) for weight in RANK_WEIGHTS.values()),
    version=6,
    main_column=list(RANK_WEIGHTS).index("main_text"),
)
# Version 7 keeps each page's user fields beside it; what a search reads is as in version 6.
_LAYOUTS[7] = dataclasses.replace(_LAYOUTS[6], version=7)


def index_purpose(connection: sqlite3.Connection, layout: Layout) -> str:
    """The purpose of the last crawl into the index: what a search or export decides usage for
    unless told another ('search' for an index from before usage signals)."""
    if layout.version < 4:
        return "search"
    row = connection.execute("SELECT value FROM settings WHERE key = 'purpose'").fetchone()
    return str(row[0]) if row is not None else "search"


@contextmanager
def reading(directory: Path) -> Iterator[tuple[sqlite3.Connection, Layout]]:
    """A read-only connection to the index in `directory`, and its schema version's layout;
    SQLite's errors met meanwhile, and rows of the wrong shape, raised as OutputError."""
    path = find_index(directory)
    wal = path.with_name(path.name + "-wal")
    if path.stat().st_size == 0 and not (wal.is_file() and wal.stat().st_size > 0):
        raise OutputError(
            f"index {path} is empty (0 bytes): not an index a crawl wrote; "
            "crawl again with --fresh to start over (it deletes the index and the crawl state)"
        )
    try:
        # Read-only, so a search never takes a write lock from a crawl writing the same file.
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise _unreadable(path, error) from error
    try:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version not in READABLE_VERSIONS:
            raise OutputError(version_message(path, version))
        yield connection, _LAYOUTS[version]
    except sqlite3.Error as error:
        raise _unreadable(path, error) from error
    except (ValueError, TypeError) as error:  # a row of the wrong shape: JSON, a type
        raise _damaged(path, error) from error
    finally:
        connection.close()
