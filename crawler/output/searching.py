"""Searching the crawl's full-text index (DIR/index.sqlite, written by crawler.output.index,
opened by crawler.output.index_read): `search`, over one data directory or the shards of a shared
crawl, and how many pages wait to be searchable. The query is read by crawler.output.query.
"""

from __future__ import annotations

import re
import reprlib
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from crawler.errors import ConfigError, SearchError
from crawler.output.cjk import has_cjk, unmarked
from crawler.output.export import (
    CSV_PAGE_FIELDS,
    CSV_SKIP_FIELDS,
    EXPORT_FORMATS,
    export_changes,
    export_pages,
    export_skips,
)
from crawler.output.index_read import ELLIPSIS, Layout, find_index, index_purpose, reading
from crawler.output.query import fts_query, names_a_column
from crawler.output.ranking import (
    NAME_IN_HEADINGS,
    NAME_IN_PROSE,
    NAME_IN_TEXT,
    PHRASE_NAMED,
    QUALIFIER_TITLE,
    SIGNATURE,
    WORDS_NAMED,
    in_prose,
    is_hub,
    name_as_typed,
    qualified_parts,
    qualifier_length,
    query_words,
    title_tier,
)
from crawler.usage.purposes import check_purpose, purpose_bit

# The export's names, and find_index, stay importable from here, where they were first.
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

HIGHLIGHT = ("[", "]")
"""Snippet markers around each matched token."""


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
    """Which tier of the results the page is in, higher first (crawler.output.ranking): its title
    names the query, or begins with it, or its title or headings hold it, or its text does, or
    none of these (0); `score` orders the pages within a tier."""


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
    purpose: str | None = None,
) -> list[SearchHit]:
    """The pages best matching `query`, best first: words and punctuation as literal terms, with
    "a phrase", AND/OR/NOT, prefix* and title:word recognised (crawler.output.query); with `fts`,
    FTS5's own syntax as written. SearchError for a query with no word (or, with `fts`, a
    malformed one), one of more than `MAX_QUERY_WORDS` words or `MAX_QUERY_CHARS` characters, or
    one that runs past `SEARCH_SECONDS`; OutputError for a missing, unreadable or damaged
    index. Only pages whose owners do not refuse `purpose` (by default the purpose of the last
    crawl into the index) are found."""
    if limit < 1:
        raise ConfigError(f"search limit must be at least 1, not {limit}")
    check_purpose(purpose)
    if not 1 <= tokens <= 64:  # FTS5 would quietly clamp the count to its bounds
        raise ConfigError(f"snippet tokens must be from 1 to 64, not {tokens}")
    _check_query(query)
    if has_cjk(query):
        # The index makes each CJK character a token: a few words' worth is a few more tokens.
        tokens = min(64, tokens * CJK_SNIPPET_FACTOR)
    with reading(directory) as (connection, layout):
        match = query if fts else fts_query(query, cjk=layout.version >= 2)
        # Tiers (crawler.output.ranking) put the page that defines the query first; BM25 orders
        # each. A query that names its own columns, or FTS5's syntax as written, gets BM25 alone.
        about, about_parameters = "0", list[str]()
        if not fts and not names_a_column(query):
            about, about_parameters = _tiers(connection, query, match, layout)
        # A hub (a book's index, a table of contents, a link list) names a thousand things and is
        # about none: half its BM25.
        hub = _hub(connection, layout)
        main = layout.main_column
        sql = (
            f"SELECT pages.final_url, pages.title, "
            f"snippet(pages_fts, {layout.snippet_column}, ?, ?, ?, ?), "
            + ("''" if main is None else f"snippet(pages_fts, {main}, ?, ?, ?, ?)")
            + f", bm25(pages_fts, {layout.weights}) * (CASE WHEN {hub} THEN 0.5 ELSE 1.0 END) "
            "AS rank, "
            f"{about} AS about FROM pages_fts JOIN pages ON pages.id = pages_fts.rowid"
            f"{' JOIN texts ON texts.id = pages.id' if layout.version >= 2 else ''} "
            "WHERE pages_fts MATCH ? ORDER BY about DESC, rank LIMIT ?"
        )
        if layout.version >= 4:
            bit = purpose_bit(purpose or index_purpose(connection, layout))
            sql = sql.replace(" ORDER BY", f" AND (pages.refuses & {bit}) = 0 ORDER BY")
        connection.set_progress_handler(_deadline(SEARCH_SECONDS), 1_000)
        snippet = (*highlight, ELLIPSIS, tokens)
        head = (*snippet, *(snippet if main is not None else ()), *about_parameters)
        hits = _select(connection, sql, (*head, match, limit), query, highlight[0])
        broadened = _with_qualifiers(match, query, layout) if about_parameters else match
        if broadened != match and not (hits and hits[0].tier >= QUALIFIER_TITLE):
            # A qualified name no page titled by its qualifier spells: such pages found by the
            # qualifier and the rest apart. Only then: the words apart would weigh in every
            # page's BM25.
            hits = _select(connection, sql, (*head, broadened, limit), query, highlight[0])
    return hits


def _select(
    connection: sqlite3.Connection,
    sql: str,
    parameters: Sequence[object],
    query: str,
    mark: str,
) -> list[SearchHit]:
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
    return [
        _hit(url, title, _shown(text, main_text, mark), rank, tier)
        for url, title, text, main_text, rank, tier in rows
    ]


def _shown(text: object, main_text: object, mark: str) -> object:
    """The snippet of a page's main text where the query matched it, or where it matched
    neither that nor the text beside it; else the text's (the whole text of a page without
    main content of its own, the frame of one with)."""
    in_text = isinstance(text, str) and mark in text
    if isinstance(main_text, str) and main_text and (mark in main_text or not in_text):
        return main_text
    return text


def _with_qualifiers(match: str, query: str, layout: Layout) -> str:
    """`match`, or for a qualified name (`DateUtils.addDays`) also the pages titled by a qualifier
    of it whose title or headings hold the rest: a class's page need not spell `Class.member`."""
    parts = qualified_parts(query) if layout.version >= 2 else None
    if parts is None:
        return match
    splits = " OR ".join(
        f'(title : "{" ".join(parts[:end])}" AND {layout.named_in} : "{" ".join(parts[end:])}")'
        for end in range(1, len(parts))
    )
    return f"({match}) OR {splits}"


def _tiers(
    connection: sqlite3.Connection, query: str, match: str, layout: Layout
) -> tuple[str, list[str]]:
    """The SQL of a page's tier for `query` (crawler.output.ranking), and its parameters in the
    order the SQL takes them. What the title names, and what the headings hold as typed, is read
    by functions of the connection, and only where FTS5 finds the words there: a function run
    over every page found would cost more than the search. Whether the main content speaks of
    the name is read where SQLite's instr finds it as code in the Markdown."""
    words = query_words(query)
    hub = _hub(connection, layout)
    named = "pages_fts.rowid IN (SELECT rowid FROM pages_fts WHERE pages_fts MATCH ?)"
    heading_parameters = [f"{layout.named_in} : ({match})"]
    if words is None:
        return f"{WORDS_NAMED} * ({named} AND NOT {hub})", heading_parameters
    heading_parts = [str(WORDS_NAMED)]
    if len(words) > 1:
        heading_parts.append(f"{PHRASE_NAMED} * ({named})")
        heading_parameters.append(f'{layout.named_in} : "{" ".join(words)}"')
    typed = name_as_typed(query) if layout.version >= 2 else None
    text_parts: list[str] = []
    text_parameters: list[str] = []
    if typed is not None:
        for function, pattern in (("holds_name", typed.anywhere), ("signs_name", typed.signature)):
            connection.create_function(
                function,
                1,
                lambda text, pattern=pattern: pattern.search(text or "") is not None,
                deterministic=True,
            )
        heading_parts.append(f"{SIGNATURE} * signs_name(texts.headings)")
        heading_parts.append(f"{NAME_IN_HEADINGS} * holds_name(texts.headings)")
        if typed.joined:
            text_parts.append(f"{NAME_IN_TEXT} * (NOT {hub} AND holds_name(texts.text))")
        if layout.version >= 5:
            name = query.strip()
            connection.create_function(
                "in_prose", 1, lambda markdown: in_prose(markdown, name), deterministic=True
            )
            # instr first: SQLite's own search, where the Python function would cost more.
            text_parts.append(
                f"{NAME_IN_PROSE} * (instr(texts.markdown, ?) > 0 AND NOT {hub} "
                "AND in_prose(texts.markdown))"
            )
            text_parameters.append(f"`{name}`")
    headings = (
        f"(CASE WHEN {named} THEN (CASE WHEN {hub} THEN 0 ELSE {' + '.join(heading_parts)} END) "
        "ELSE 0 END)"
    )
    connection.create_function(
        "title_tier", 1, lambda title: title_tier(title, words), deterministic=True
    )
    title_parts = ["title_tier(pages.title)"]
    title_parameters = [f'title : "{words[0]}"']
    if len(words) > 1:
        connection.create_function(
            "qualifier_length", 1, lambda title: qualifier_length(title, words), deterministic=True
        )
        cases = " ".join(f"WHEN {end} THEN {named}" for end in range(1, len(words)))
        title_parts.append(
            f"{QUALIFIER_TITLE} * (CASE qualifier_length(pages.title) {cases} ELSE 0 END)"
        )
        title_parameters += [
            f'{layout.named_in} : "{" ".join(words[end:])}"' for end in range(1, len(words))
        ]
    titles = f"(CASE WHEN {named} THEN {' + '.join(title_parts)} ELSE 0 END)"
    return (
        " + ".join([headings, titles, *text_parts]),
        heading_parameters + title_parameters + text_parameters,
    )


def _hub(connection: sqlite3.Connection, layout: Layout) -> str:
    """The SQL of whether a page is a hub (crawler.output.ranking.is_hub)."""
    if layout.version < 2:
        return "0"
    connection.create_function("is_hub", 3, is_hub, deterministic=True)
    fallback = "pages.main_fallback" if layout.version >= 5 else "NULL"
    return f"is_hub({fallback}, length(texts.headings), length(texts.text))"


def not_yet_searchable(directory: Path) -> int:
    """Pages of the index in `directory` stored and not yet searchable (crawler.output.index:
    made so by the crawl writing it, or by the next one after a kill)."""
    with reading(directory) as (connection, layout):
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
    directories: Sequence[Path],
    query: str,
    *,
    limit: int = 10,
    fts: bool = False,
    purpose: str | None = None,
) -> list[SearchHit]:
    """`search` over several data directories, merged: the shards of a shared crawl, one per
    worker. Tiers first, then scores (each shard's BM25 weighs terms by its own pages: any worker
    takes any host, so each shard is a sample of the whole crawl and its weights are close to the
    whole's); a URL found in several shards (fetched again after a worker was killed) once."""
    if len(directories) == 1:
        return search(directories[0], query, limit=limit, fts=fts, purpose=purpose)
    hits = [
        hit
        for where in directories
        for hit in search(where, query, limit=limit, fts=fts, purpose=purpose)
    ]
    best: dict[str, SearchHit] = {}
    for hit in sorted(hits, key=lambda hit: (-hit.tier, -hit.score)):
        best.setdefault(hit.url, hit)
    return list(best.values())[:limit]
