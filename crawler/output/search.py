"""Reading the crawl's full-text index (DIR/index.sqlite, written by crawler.output.index):
`search`, `export_pages` and `export_skips`. Read-only connections: WAL lets them read while a
crawl writes.

An export is JSON lines (one object per page, its fields named as `PageRecord` names them), or CSV:
a header row, then a row per page of its single-valued fields (`CSV_PAGE_FIELDS`). CSV leaves the
links and the text out: lists do not fit a cell, and a page's text, long and of many lines, makes a
file spreadsheets open badly; the title and description say what a page is.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import re
import reprlib
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from crawler.errors import ConfigError, OutputError, SearchError
from crawler.output.cjk import has_cjk, unmarked
from crawler.output.index_schema import (
    BOOL_COLUMNS,
    HISTORY_COLUMNS,
    INDEX_NAME,
    JSON_COLUMNS,
    PAGE_COLUMNS,
    READABLE_VERSIONS,
    version_message,
)
from crawler.output.jsonl import PAGES_NAME, SKIPS_NAME
from crawler.output.query import fts_query, names_a_column, single_phrase
from crawler.output.records import compact_json

__all__ = [
    "CSV_PAGE_FIELDS",
    "CSV_SKIP_FIELDS",
    "ELLIPSIS",
    "EXPORT_FORMATS",
    "HIGHLIGHT",
    "MAX_QUERY_CHARS",
    "MAX_QUERY_WORDS",
    "SEARCH_SECONDS",
    "SearchHit",
    "export_changes",
    "export_pages",
    "export_skips",
    "find_index",
    "not_yet_searchable",
    "search",
    "search_shards",
]

EXPORT_FORMATS = ("jsonl", "csv")
_EXPORT_NAMES = {"indexed": "index"}
"""Table columns whose export name differs: `index` is an SQL keyword, so the table says
`indexed`; an export says `index`, as `PageRecord` and pages.jsonl do."""
_CSV_COLUMNS = tuple(column for column in PAGE_COLUMNS if column not in JSON_COLUMNS)
CSV_PAGE_FIELDS = tuple(_EXPORT_NAMES.get(column, column) for column in _CSV_COLUMNS)
"""The columns of `crawl export --format csv`: a page's fields that hold one value."""
CSV_SKIP_FIELDS = ("url", "reason", "detail")
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
    tier: int = 0
    """Which tier of the results the page is in, higher first: its title begins with the query,
    its title or headings hold it, or neither (0); `score` orders the pages within a tier."""


def find_index(directory: Path) -> Path:
    """The index file in `directory`; OutputError if there is none."""
    path = directory / INDEX_NAME
    if not path.is_file():
        hint = "crawl with output.format index first"
        if (directory / SKIPS_NAME).is_file():
            hint += f"; this crawl wrote JSONL: {directory / PAGES_NAME}, {directory / SKIPS_NAME}"
        raise OutputError(f"no index in {directory} ({hint})")
    return path


MAX_QUERY_CHARS = 1_000
"""The longest query searched. Google takes 32 words and 2,048 characters in a URL; a query of
32 long words and their operators fits in this."""
MAX_QUERY_WORDS = 32
"""The most words (operators and column names aside) a query may hold. FTS5 ranks and quotes a
page in time that grows with the square of the words: on 300 pages, 16 words take 0.1 s, 32
take 0.5, 64 take 2 and 10,000 take hours (one word repeated, matching 50 times a page)."""
SEARCH_SECONDS = 30.0
"""How long a search may run before it stops with an error: a bound for what the word limit does
not foresee (32 prefixes that each match half the vocabulary of a large index)."""
_WORD = re.compile(r"\w+(?!\w|\s*:)")
"""A word FTS5 matches, roughly (its tokenizer keeps letters and digits); not `title` in
`title:word`."""
_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})
CJK_SNIPPET_FACTOR = 3
"""Snippet tokens for a query with CJK characters, per token asked: there a token is a
character."""
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
class _Layout:
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


RANK_WEIGHTS = {"title": 10.0, "headings": 5.0, "text": 1.0, "nosnippet_text": 1.0}
"""How much a match in each column counts toward a page's BM25 score."""
_LAYOUTS = {
    # Version 1 kept its texts in the FTS table itself, whose rowid is the page's id.
    1: _Layout(1, "10.0, 1.0, 1.0", "(SELECT rowid AS id, * FROM pages_fts)", "''", "title", 1),
    2: _Layout(
        2,
        ", ".join(str(weight) for weight in RANK_WEIGHTS.values()),
        "texts",
        "texts.headings",
        "{title headings}",
        2,
    ),
}
# Version 3 adds each page's history beside it; what a search reads is as in version 2.
_LAYOUTS[3] = dataclasses.replace(_LAYOUTS[2], version=3)


@contextmanager
def _reading(directory: Path) -> Iterator[tuple[sqlite3.Connection, _Layout]]:
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


def _check_query(query: str) -> None:
    """SearchError unless `query` is text FTS5 can be asked in bounded time."""
    try:
        query.encode("utf-8")
    except UnicodeEncodeError as error:
        # A byte the command line could not decode comes as a lone surrogate (PEP 383).
        code = ord(query[error.start])
        byte = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"
        raise SearchError(
            f"search query: {byte} at character {error.start + 1} is not UTF-8 text "
            "(is the terminal's encoding UTF-8?)"
        ) from None
    if len(query) > MAX_QUERY_CHARS:
        raise SearchError(
            f"search query of {len(query)} characters; at most {MAX_QUERY_CHARS} are searched"
        )
    words = sum(1 for word in _WORD.findall(query) if word not in _OPERATORS)
    if words > MAX_QUERY_WORDS:
        raise SearchError(
            f"search query of {words} words; at most {MAX_QUERY_WORDS} are searched "
            "(the time a search takes grows with the square of its words)"
        )


def _deadline(seconds: float) -> Callable[[], int]:
    """An SQLite progress handler that stops the statement once `seconds` have passed."""
    end = time.monotonic() + seconds
    return lambda: int(time.monotonic() > end)


def search(
    directory: Path,
    query: str,
    *,
    limit: int = 10,
    highlight: tuple[str, str] = HIGHLIGHT,
    tokens: int = 12,
    fts: bool = False,
) -> list[SearchHit]:
    """The pages best matching `query`, best first: words and punctuation as literal terms, with
    "a phrase", AND/OR/NOT, prefix* and title:word recognised (crawler.output.query); with `fts`,
    FTS5's own syntax as written. SearchError for a query with no word (or, with `fts`, a
    malformed one), one of more than `MAX_QUERY_WORDS` words or `MAX_QUERY_CHARS` characters, or
    one that runs past `SEARCH_SECONDS`; OutputError for a missing, unreadable or damaged
    index."""
    if limit < 1:
        raise ConfigError(f"search limit must be at least 1, not {limit}")
    if not 1 <= tokens <= 64:  # FTS5 would quietly clamp the count to its bounds
        raise ConfigError(f"snippet tokens must be from 1 to 64, not {tokens}")
    _check_query(query)
    if has_cjk(query):
        # The index makes each CJK character a token: a few words' worth is a few more tokens.
        tokens = min(64, tokens * CJK_SNIPPET_FACTOR)
    with _reading(directory) as (connection, layout):
        match = query if fts else fts_query(query, cjk=layout.version >= 2)
        # Tiers: the pages whose title begins with a one-word (or one-phrase) query, then those
        # whose title or headings hold the whole query (the pages about it), then the pages that
        # only mention it; BM25 orders each. A query that names its own columns, or FTS5's syntax
        # as written, gets BM25 alone.
        tiers: list[str] = []
        if not fts and not names_a_column(query):
            phrase = single_phrase(query, cjk=layout.version >= 2)
            if phrase is not None:
                tiers.append(f"title : ^ {phrase}")
            tiers.append(f"{layout.named_in} : ({match})")
        about = " + ".join(
            f"{2 ** (len(tiers) - number)} * "
            "(pages_fts.rowid IN (SELECT rowid FROM pages_fts WHERE pages_fts MATCH ?))"
            for number in range(1, len(tiers) + 1)
        )
        sql = (
            f"SELECT pages.final_url, pages.title, "
            f"snippet(pages_fts, {layout.snippet_column}, ?, ?, ?, ?), "
            f"bm25(pages_fts, {layout.weights}) AS rank, {about or 0} AS about "
            "FROM pages_fts JOIN pages ON pages.id = pages_fts.rowid "
            "WHERE pages_fts MATCH ? ORDER BY about DESC, rank LIMIT ?"
        )
        parameters = (*highlight, ELLIPSIS, tokens, *tiers, match, limit)
        connection.set_progress_handler(_deadline(SEARCH_SECONDS), 1_000)
        try:
            rows = connection.execute(sql, parameters).fetchall()
        except sqlite3.OperationalError as error:
            if error.sqlite_errorname == "SQLITE_INTERRUPT":
                raise SearchError(
                    f"search query {query!r} ran for more than {SEARCH_SECONDS:g} s and was "
                    "stopped; ask with fewer or longer words"
                ) from error
            # The schema was checked on open, so a plain SQL error here is the query's.
            if error.sqlite_errorname != "SQLITE_ERROR":
                raise
            raise SearchError(f"bad search query {query!r}: {error}") from error
        hits = [_hit(*row) for row in rows]
    return hits


def not_yet_searchable(directory: Path) -> int:
    """Pages of the index in `directory` stored and not yet searchable (crawler.output.index:
    made so by the crawl writing it, or by the next one after a kill)."""
    with _reading(directory) as (connection, layout):
        if layout.version < 2:
            return 0
        return int(connection.execute("SELECT count(*) FROM unindexed").fetchone()[0])


def _hit(url: object, title: object, snippet: object, rank: object, tier: object) -> SearchHit:
    if (
        not isinstance(url, str)
        or not isinstance(title, str | None)
        or not isinstance(snippet, str | None)
        or not isinstance(rank, int | float)
        or not isinstance(tier, int)
    ):
        raise TypeError(f"a result row of the wrong types: {reprlib.repr((url, title, rank))}")
    return SearchHit(url, title, unmarked(snippet or ""), -rank, tier)


def search_shards(
    directories: Sequence[Path], query: str, *, limit: int = 10, fts: bool = False
) -> list[SearchHit]:
    """`search` over several data directories, merged: the shards of a shared crawl, one per
    worker. Tiers first, then scores (each shard's BM25 weighs terms by its own pages: any worker
    takes any host, so each shard is a sample of the whole crawl and its weights are close to the
    whole's); a URL found in several shards (fetched again after a worker was killed) once."""
    if len(directories) == 1:
        return search(directories[0], query, limit=limit, fts=fts)
    hits = [hit for where in directories for hit in search(where, query, limit=limit, fts=fts)]
    best: dict[str, SearchHit] = {}
    for hit in sorted(hits, key=lambda hit: (-hit.tier, -hit.score)):
        best.setdefault(hit.url, hit)
    return list(best.values())[:limit]


def _check_format(format: str) -> None:
    if format not in EXPORT_FORMATS:
        raise ConfigError(f"unknown export format {format!r} (known: {', '.join(EXPORT_FORMATS)})")


def export_pages(
    directory: Path, out: TextIO, *, format: str = "jsonl", header: bool = True
) -> int:
    """Write every fetched page to `out`, in fetch order; returns the count. jsonl: one JSON object
    a line, `text` and `nosnippet_text` null unless the page is indexed. csv: a header row of
    `CSV_PAGE_FIELDS` (unless not `header`), then a row a page (true/false for booleans, empty for
    null)."""
    _check_format(format)
    count = 0
    with _reading(directory) as (connection, layout):
        names = PAGE_COLUMNS + (HISTORY_COLUMNS if layout.version >= 3 else ())
        columns = ", ".join(f"pages.{column}" for column in names)
        sql = (
            f"SELECT {columns}, texts.text, texts.nosnippet_text, {layout.headings} "
            f"FROM pages LEFT JOIN {layout.texts} AS texts ON texts.id = pages.id "
            "ORDER BY pages.fetched_at, pages.id"
        )
        if format == "csv":  # neither text nor lists: no need to read them
            columns = ", ".join(f"pages.{column}" for column in _CSV_COLUMNS)
            sql = f"SELECT {columns} FROM pages ORDER BY pages.fetched_at, pages.id"
        rows = connection.execute(sql)  # a cursor: rows stream, never all in memory
        if format == "csv":
            writer = csv.writer(out)
            if header:
                writer.writerow(CSV_PAGE_FIELDS)
            for row in rows:
                page = _export_object(row, _CSV_COLUMNS)
                writer.writerow([_csv_cell(page[field]) for field in CSV_PAGE_FIELDS])
                count += 1
            return count
        for row in rows:
            out.write(compact_json(_export_object(row, names)) + "\n")
            count += 1
    return count


def export_changes(directory: Path, out: TextIO, since: float) -> int:
    """Write every page that appeared, changed or went away at `since` (epoch seconds) or later
    to `out`, one JSON object a line, in the order of those changes: url, change (new, changed or
    gone: its last change), at (when its last fetch saw it), first_seen, status, title. Returns
    the count. OutputError for an index older than the page history (schema version 3)."""
    count = 0
    with _reading(directory) as (connection, layout):
        if layout.version < 3:
            raise OutputError(
                f"index {find_index(directory)} keeps no page history (schema version "
                f"{layout.version}, from an older crawler): the next crawl into it adds one"
            )
        rows = connection.execute(
            "SELECT url, gone, first_seen, last_changed, status, title FROM pages "
            "WHERE last_changed >= ? ORDER BY last_changed, id",
            (since,),
        )
        for url, gone, first_seen, last_changed, status, title in rows:
            change = "gone" if gone else "new" if first_seen >= since else "changed"
            line = {
                "url": url,
                "change": change,
                "at": _iso(last_changed),
                "first_seen": _iso(first_seen),
                "status": status,
                "title": title,
            }
            out.write(compact_json(line) + "\n")
            count += 1
    return count


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch)) + f".{int(epoch % 1 * 1000):03d}Z"


def export_skips(
    directory: Path,
    out: TextIO,
    *,
    reason: str | None = None,
    format: str = "jsonl",
    header: bool = True,
) -> int:
    """Write every URL the crawl met and did not fetch to `out`, in the order first skipped: one
    JSON object a line (url, reason, detail), or with format csv a header row (unless not
    `header`) and a row each; only those skipped for `reason` when given. Returns the count."""
    _check_format(format)
    sql = "SELECT url, reason, detail FROM skips"
    parameters: tuple[str, ...] = ()
    if reason is not None:
        sql += " WHERE reason = ?"
        parameters = (reason,)
    count = 0
    with _reading(directory) as (connection, _):
        rows = connection.execute(sql + " ORDER BY id", parameters)
        if format == "csv":
            writer = csv.writer(out)
            if header:
                writer.writerow(CSV_SKIP_FIELDS)
            for row in rows:
                writer.writerow(row)
                count += 1
            return count
        for url, why, detail in rows:
            out.write(compact_json({"url": url, "reason": why, "detail": detail}) + "\n")
            count += 1
    return count


def _csv_cell(value: object) -> object:
    """A value as a CSV cell: booleans as JSON writes them, null as an empty cell."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else value


def _export_object(row: Sequence[Any], columns: Sequence[str] = PAGE_COLUMNS) -> dict[str, Any]:
    """A page row (`columns`, then its text, nosnippet text and headings if selected) as
    exported."""
    page: dict[str, Any] = {}
    for column, value in zip(columns, row, strict=False):
        name = _EXPORT_NAMES.get(column, column)
        if column in JSON_COLUMNS:
            page[name] = json.loads(value)
        elif column in BOOL_COLUMNS:
            page[name] = bool(value)
        elif column in ("fetched_at", "first_seen", "last_changed"):
            page[name] = round(value, 3)
        else:
            page[name] = value
    if len(row) > len(columns):
        text, nosnippet_text, headings = row[len(columns) :]
        indexed = page["index"]
        page["text"] = unmarked(text) if indexed and text is not None else None
        page["nosnippet_text"] = (
            unmarked(nosnippet_text) if indexed and nosnippet_text is not None else None
        )
        page["headings"] = unmarked(headings) if indexed and headings is not None else None
    return page
