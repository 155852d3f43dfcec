"""Reading the crawl's full-text index (DIR/index.sqlite, written by crawler.output.index): `search`
and `export_pages`. Read-only connections: WAL lets them read while a crawl writes.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from crawler.errors import ConfigError, OutputError, SearchError
from crawler.output.index import (
    BOOL_COLUMNS,
    INDEX_NAME,
    JSON_COLUMNS,
    PAGE_COLUMNS,
    SCHEMA_VERSION,
    version_message,
)
from crawler.output.jsonl import PAGES_NAME, SKIPS_NAME
from crawler.output.records import compact_json

__all__ = [
    "ELLIPSIS",
    "EXPORT_FORMATS",
    "HIGHLIGHT",
    "SearchHit",
    "export_pages",
    "export_skips",
    "find_index",
    "search",
]

EXPORT_FORMATS = ("jsonl",)
HIGHLIGHT = ("[", "]")
"""Snippet markers around each matched token."""
ELLIPSIS = "…"


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One page matching a search."""

    url: str
    """Where the text was found: the page record's `final_url`."""
    title: str | None
    snippet: str
    """A few words of the page's text around the matches, matches between the highlight marks."""
    score: float
    """Relevance, higher is better (negated bm25; title matches weigh 10 times text matches)."""


def find_index(directory: Path) -> Path:
    """The index file in `directory`; OutputError if there is none."""
    path = directory / INDEX_NAME
    if not path.is_file():
        hint = "crawl with output.format index first"
        if (directory / SKIPS_NAME).is_file():
            hint += f"; this crawl wrote JSONL: {directory / PAGES_NAME}, {directory / SKIPS_NAME}"
        raise OutputError(f"no index in {directory} ({hint})")
    return path


@contextmanager
def _reading(directory: Path) -> Iterator[sqlite3.Connection]:
    path = find_index(directory)
    try:
        # Read-only, so a search never takes a write lock from a crawl writing the same file.
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise OutputError(f"cannot read index {path}: {error}") from error
    try:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            raise OutputError(version_message(path, version))
        yield connection
    except sqlite3.Error as error:
        raise OutputError(f"cannot read index {path}: {error}") from error
    finally:
        connection.close()


def search(
    directory: Path,
    query: str,
    *,
    limit: int = 10,
    highlight: tuple[str, str] = HIGHLIGHT,
    tokens: int = 12,
) -> list[SearchHit]:
    """The pages best matching `query` (FTS5 syntax: "a phrase", AND/OR/NOT, prefix*, title:word),
    best first. SearchError for a malformed query, OutputError for a missing or unreadable index."""
    if limit < 1:
        raise ConfigError(f"search limit must be at least 1, not {limit}")
    if not 1 <= tokens <= 64:  # FTS5 would quietly clamp the count to its bounds
        raise ConfigError(f"snippet tokens must be from 1 to 64, not {tokens}")
    sql = (
        "SELECT pages.final_url, pages.title, snippet(pages_fts, 1, ?, ?, ?, ?), "
        "bm25(pages_fts, 10.0, 1.0, 1.0) AS rank "
        "FROM pages_fts JOIN pages ON pages.id = pages_fts.rowid "
        "WHERE pages_fts MATCH ? ORDER BY rank LIMIT ?"
    )
    parameters = (*highlight, ELLIPSIS, tokens, query, limit)
    with _reading(directory) as connection:
        try:
            rows = connection.execute(sql, parameters).fetchall()
        except sqlite3.OperationalError as error:
            # The schema was checked on open, so a plain SQL error here is the query's.
            if error.sqlite_errorname != "SQLITE_ERROR":
                raise
            raise SearchError(f"bad search query {query!r}: {error}") from error
    return [SearchHit(url, title, snippet or "", -rank) for url, title, snippet, rank in rows]


def export_pages(directory: Path, out: TextIO, *, format: str = "jsonl") -> int:
    """Write every fetched page to `out`, in fetch order, one JSON object a line; returns the
    count. `text` and `nosnippet_text` are null unless the page is indexed."""
    if format not in EXPORT_FORMATS:
        raise ConfigError(f"unknown export format {format!r} (known: {', '.join(EXPORT_FORMATS)})")
    columns = ", ".join(f"pages.{column}" for column in PAGE_COLUMNS)
    sql = (
        f"SELECT {columns}, pages_fts.text, pages_fts.nosnippet_text "
        "FROM pages LEFT JOIN pages_fts ON pages_fts.rowid = pages.id "
        "ORDER BY pages.fetched_at, pages.id"
    )
    count = 0
    with _reading(directory) as connection:
        for row in connection.execute(sql):  # a cursor: rows stream, never all in memory
            out.write(compact_json(_export_object(row)) + "\n")
            count += 1
    return count


def export_skips(directory: Path, out: TextIO, *, reason: str | None = None) -> int:
    """Write every URL the crawl met and did not fetch to `out`, in the order first skipped, one
    JSON object a line (url, reason, detail); only those skipped for `reason` when given. Returns
    the count."""
    sql = "SELECT url, reason, detail FROM skips"
    parameters: tuple[str, ...] = ()
    if reason is not None:
        sql += " WHERE reason = ?"
        parameters = (reason,)
    count = 0
    with _reading(directory) as connection:
        for url, why, detail in connection.execute(sql + " ORDER BY id", parameters):
            out.write(compact_json({"url": url, "reason": why, "detail": detail}) + "\n")
            count += 1
    return count


def _export_object(row: Sequence[Any]) -> dict[str, Any]:
    page: dict[str, Any] = {}
    for column, value in zip(PAGE_COLUMNS, row, strict=False):
        if column in JSON_COLUMNS:
            page[column] = json.loads(value)
        elif column in BOOL_COLUMNS:
            page[column] = bool(value)
        elif column == "fetched_at":
            page[column] = round(value, 3)
        else:
            page[column] = value
    indexed = page["indexed"]
    page["text"] = row[-2] if indexed else None
    page["nosnippet_text"] = row[-1] if indexed else None
    return page
