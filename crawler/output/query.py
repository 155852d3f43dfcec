"""What a person types into `crawl search`, as an FTS5 query. Pure.

Plain words and punctuation are literal terms, all of which a page must have: each is quoted, so
no input is an FTS5 syntax error. The index's tokenizer (unicode61) then reads a quoted term as
it reads page text: `foo-bar` is the phrase "foo bar", `c++` the word c, `AND` on its own the word
and. Chinese, Japanese and Korean characters are each a word of their own, as the index keeps them
(crawler.output.cjk): `日本語` is the phrase "日 本 語", found wherever those three stand together.
The FTS5 forms people use are recognised where they stand:

- "a phrase" in double quotes;
- AND, OR and NOT in capitals between two terms (anywhere else they are words);
- a word ending in `*`: a prefix;
- `title:word` and `text:word` (or `title:"a phrase"`): that column only.

Anything else FTS5 reads (parentheses, NEAR, `^`, `{col1 col2}:`) is for `crawl search --fts`,
which hands the query to FTS5 as written.
"""

from __future__ import annotations

import re

from crawler.errors import SearchError
from crawler.output.cjk import spaced

__all__ = ["COLUMNS", "OPERATORS", "fts_query", "names_a_column", "single_phrase"]

OPERATORS = frozenset({"AND", "OR", "NOT"})
COLUMNS = frozenset({"title", "text"})
"""The columns a term may name (`nosnippet_text` is searched with `text`, never by name)."""

_TOKEN = re.compile(r'(?:\w+:)?"[^"]*"|\S+')
_COLUMN = re.compile(r"(\w+):(.+)", re.DOTALL)
_WORD_CHARACTER = re.compile(r"\w")


def _quoted(text: str, cjk: bool) -> str | None:
    """`text` as one FTS5 string (a phrase of the tokens in it; with `cjk`, each CJK character
    one of them); None when it holds no word character, which the tokenizer would read as
    nothing."""
    if not _WORD_CHARACTER.search(text):
        return None
    return '"' + (spaced(text) if cjk else text).replace('"', '""') + '"'


def _column_of(token: str) -> tuple[str, str] | None:
    """(column, the rest) of a `column:term` token naming a column a term may name."""
    column = _COLUMN.fullmatch(token)
    if column is not None and column.group(1).lower() in COLUMNS:
        return column.group(1).lower(), column.group(2)
    return None


def _term(token: str, cjk: bool) -> str | None:
    named = _column_of(token)
    if named is not None:
        inner = _term(named[1], cjk)
        return None if inner is None else f"{named[0]} : {inner}"
    if len(token) >= 2 and token.startswith('"') and token.endswith('"'):
        return _quoted(token[1:-1], cjk)
    if len(token) >= 2 and token.endswith("*"):
        stem = _quoted(token.rstrip("*"), cjk)
        return None if stem is None else stem + " *"
    return _quoted(token, cjk)


def single_phrase(text: str, *, cjk: bool = True) -> str | None:
    """The FTS5 phrase of `text` when it is one word or one quoted phrase (no operator, column or
    prefix), else None: the query a title can begin with (`^`)."""
    tokens = _TOKEN.findall(text)
    if len(tokens) != 1 or tokens[0] in OPERATORS or _column_of(tokens[0]) is not None:
        return None
    token = tokens[0]
    if len(token) >= 2 and token.startswith('"') and token.endswith('"'):
        token = token[1:-1]
    elif token.endswith("*"):
        return None
    return _quoted(token, cjk)


def names_a_column(text: str) -> bool:
    """Whether `text` (as a person typed it) limits a term to a column (`title:word`)."""
    return any(_column_of(token) is not None for token in _TOKEN.findall(text))


def fts_query(text: str, *, cjk: bool = True) -> str:
    """The FTS5 query for `text` as a person typed it (see the module's docstring); `cjk` false
    for an index that keeps a run of CJK characters as one token (schema 1). SearchError when it
    has no word to search."""
    items: list[tuple[bool, str]] = []
    """(is an operator, FTS5 text), in order."""
    for token in _TOKEN.findall(text):
        if token in OPERATORS:
            items.append((True, token))
            continue
        term = _term(token, cjk)
        if term is not None:
            items.append((False, term))
    query: list[str] = []
    last_was_term = False
    for index, (operator, value) in enumerate(items):
        if operator:
            next_is_term = index + 1 < len(items) and not items[index + 1][0]
            if last_was_term and next_is_term:
                query.append(value)
                last_was_term = False
                continue
            value = f'"{value}"'  # an operator with no term on one side is the word itself
        query.append(value)
        last_was_term = True
    if not query:
        raise SearchError(f"search query {text!r} has no word to search")
    return " ".join(query)
