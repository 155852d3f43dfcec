"""What tells the page that defines a name from the pages that only mention it. Pure: titles and
queries in, tiers out; crawler.output.searching puts them into its SQL.

A search's results come in tiers, highest first, and BM25 orders each (the sum of the flags a
page has is its tier, with its title's `TITLE_NEARNESS` below them all):

- `NAME_IS_TITLE`: the title's name is the query. A title names its page before it says what
  else it is: the name stands before a separator (`pickle — Python object serialization`,
  `ClassUtils (Apache Commons Lang API)`), after a section number (`Chapter 71. BRIN
  Indexes`, `8.12. UUID Type`).
- `TITLE_BEGINS`: the title's name begins with the query (`ClassUtils.Interfaces` for
  `ClassUtils`: a page about a part of the thing, below the thing's own page).
- `QUALIFIER_TITLE`: the query is a qualified name (`DateUtils.addDays`, `json.dumps`), the
  title's name is its qualifier, and the rest is in the page's title or headings: the page of the
  class or module that defines the member.
- `SIGNATURE`: the query is one name and a heading is its signature: the name as typed, then its
  parameters (`zip(*iterables, strict=False)`, `work_mem (integer)`, `addAll(boolean[]...)`).
  API documentation defines a function, a method or a setting so.
- `NAME_IN_HEADINGS`: the query is one name (no space) and the headings hold it as typed, case
  and punctuation and all, and not inside a longer name: `work_mem ( integer )` where a page
  about `maintenance_work_mem` holds the words `work mem` too, `zip(*iterables)` where a page
  about `zipimport` holds `Zip` (the index folds case and reads `_` as a space: a name as typed
  says what the words no longer do).
- `PHRASE_NAMED`: the title or headings hold the query's words together, in order.
- `WORDS_NAMED`: the title or headings hold all of its words.
- `NAME_IN_TEXT`: the query is one name the index reads as several words (`row_number`,
  `pg_hba.conf`) and the text holds it as typed.
- `NAME_IN_PROSE`: the query is one name and the main content's prose speaks of it as code, as
  typed, in a sentence with words before it ("The data type `uuid` stores", "The
  `regexp_replace` function provides"): not in a heading, a table row, a code block or a line it
  begins (a signature in a table of functions, an example). The page that explains a name in
  sentences above one that gives it a line of its own, where nothing above tells them.
- `TITLE_NEARNESS`: of two titles that begin with the query, the one whose name says fewer words
  beside it (`JSON Types` before `JSON Functions and Operators`).

A hub (`is_hub`: a book's index, a table of contents, a list of commands) names a thousand things
in its headings and is about none of them: its headings and text earn no tier, and its BM25 counts
half.
Its title still names it (a chapter's contents page, `BRIN Indexes`, is the chapter's page).

Words are compared as the index's tokenizer (unicode61, diacritics folded) reads them: runs of
letters and digits, case folded; each CJK character a word (crawler.output.cjk).
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

from crawler.output.cjk import spaced
from crawler.output.query import OPERATORS, names_a_column

__all__ = [
    "HUB_HEADINGS_SHARE",
    "HUB_MIN_CHARS",
    "NAME_IN_HEADINGS",
    "NAME_IN_PROSE",
    "NAME_IN_TEXT",
    "NAME_IS_TITLE",
    "PHRASE_NAMED",
    "QUALIFIER_TITLE",
    "SIGNATURE",
    "TITLE_BEGINS",
    "TITLE_NEARNESS",
    "WORDS_NAMED",
    "TypedName",
    "in_prose",
    "is_hub",
    "name_as_typed",
    "qualified_parts",
    "qualifier_length",
    "query_words",
    "title_name",
    "title_tier",
    "words_of",
]

NAME_IS_TITLE = 2048
TITLE_BEGINS = 1024
QUALIFIER_TITLE = 512
SIGNATURE = 256
NAME_IN_HEADINGS = 128
PHRASE_NAMED = 64
WORDS_NAMED = 32
NAME_IN_TEXT = 16
NAME_IN_PROSE = 8
TITLE_NEARNESS = 7
"""Below every flag, with `TITLE_BEGINS`: how few words the title's name says beside the query
(7 less their number, to none): of two titles that begin with it, the one about the thing itself
before one about what is done with it or a part of it (`JSON Types` before `JSON Functions and
Operators`), where nothing above tells them."""

HUB_HEADINGS_SHARE = 0.5
"""A page whose headings (h1-h6, dt, dfn) are more than this share of its text is a list of
names: PostgreSQL's book index (1.0), its list of SQL commands (0.96), its chapters' contents
(0.6 to 0.95), javadoc's index of all names (0.59). A page that defines names and says what
they do stays under it: Python's documentation at most 0.45, nine in ten of its pages under
0.15; javadoc's class pages under 0.4."""
HUB_MIN_CHARS = 500
"""Text below which a page is never a hub: a short page may be little more than its heading."""

_WORD = re.compile(r"[^\W_]+")
"""A word as unicode61 reads one: letters and digits (`_` and punctuation separate)."""
_NUMBERING = re.compile(
    r"^\s*(?:[^\W\d_]+\s+)?(?:\d+|[IVXLCDM]+|[A-Z])(?:\.(?:\d+|[IVXLCDM]+))*\.(?:\s+|$)"
)
"""A section number before a title's name: `5.1.3. `, `Chapter 71. `, `Part VI. `, `F.47. `."""
_SEPARATOR = re.compile("\\s+[\u2014\u2013|\u00b7:-]\\s|\\s*\\(|:\\s")
"""What ends a title's name: ` — `, ` - `, ` | `, `: `, or `(` (`ClassUtils (… API)`, `zip()`)."""
_JOINED = re.compile(r"[^\W_]+(?:[\W_]+[^\W_]+)+")
"""A name the index reads as several words: letters and digits joined by other characters."""
_NAME_BREAK = re.compile(r"[\s.]+")
_QUALIFIED = re.compile(r"[^\W_]+(?:(?:\.|::|#)[^\W_]+)+")
"""A qualified name as typed: words joined by `.`, `::` or `#`, no space."""
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_LINE_MARKS = re.compile(r"^[\s>]*(?:(?:[-*+]|\d+\.)\s+)?")
"""What a Markdown line begins with before its text: a quote's `>`, a list item's marker."""
_PROSE_WORD = re.compile(r"[^\W\d_]{2,}")


def words_of(text: str) -> tuple[str, ...]:
    """The words of `text` as the index's tokenizer reads them, case folded."""
    folded = unicodedata.normalize("NFKD", spaced(text).casefold())
    plain = "".join(char for char in folded if not unicodedata.combining(char))
    return tuple(_WORD.findall(plain))


def title_name(title: str | None) -> tuple[str, ...]:
    """The words of what a title names: the title after a section number, up to a separator."""
    return tuple(word for part in _name_parts(title) for word in part)


def _name_parts(title: str | None) -> list[tuple[str, ...]]:
    """The words of each name in what a title names, apart where a space or a dot parts them
    (`ClassUtils.Interfaces`, `UUID Type`); a name joined by `-` or `_` is one (`uuid-ossp`)."""
    if not title:
        return []
    named = _SEPARATOR.split(_NUMBERING.sub("", title, count=1), maxsplit=1)[0]
    return [words for part in _NAME_BREAK.split(named) if (words := words_of(part))]


def query_words(query: str) -> tuple[str, ...] | None:
    """The words of a query of words and phrases only (a name as typed); None for one with an
    operator, a column, a prefix, or no word."""
    tokens = query.split()
    if any(token in OPERATORS or token.endswith("*") for token in tokens) or names_a_column(query):
        return None
    return words_of(query.replace('"', " ")) or None


def title_tier(title: str | None, words: tuple[str, ...]) -> int:
    """`NAME_IS_TITLE` plus `TITLE_BEGINS` when the title's name is `words`, `TITLE_BEGINS` when it
    begins with them as a whole name (`UUID Type`, not `uuid-ossp`), each with its
    `TITLE_NEARNESS`; else 0."""
    name: tuple[str, ...] = ()
    for part in _name_parts(title):
        name += part
        if len(name) >= len(words):
            break
    if not words or name != words:
        return 0
    whole = title_name(title)
    nearness = max(0, TITLE_NEARNESS - (len(whole) - len(name)))
    return TITLE_BEGINS + nearness + (NAME_IS_TITLE if name == whole else 0)


def qualifier_length(title: str | None, words: tuple[str, ...]) -> int:
    """How many of `words` the title's name is, when it is a qualifier of them (their first
    words, not all); else 0."""
    name = title_name(title)
    if name and len(name) < len(words) and words[: len(name)] == name:
        return len(name)
    return 0


def qualified_parts(query: str) -> tuple[str, ...] | None:
    """The words of a query that is one qualified name (`DateUtils.addDays`, `os.path.join`);
    None for any other."""
    text = query.strip()
    if _QUALIFIED.fullmatch(text) is None:
        return None
    return words_of(text)


class TypedName(NamedTuple):
    """How a query of one name is found as typed (`name_as_typed`)."""

    anywhere: re.Pattern[str]
    """The name as typed, not inside a longer one (`work_mem` in `maintenance_work_mem`, `zip`
    in `zipimport`, `a.b` in `x.a.b`)."""
    signature: re.Pattern[str]
    """The name as typed, then an opening parenthesis: its parameters."""
    joined: bool
    """Whether the index reads the name as several words (`NAME_IN_TEXT`)."""


def name_as_typed(query: str) -> TypedName | None:
    """How a query of one name (no space, quote or operator) is found as typed; None for
    another query."""
    name = query.strip()
    if not name or len(name.split()) != 1 or query_words(name) is None or '"' in name:
        return None
    alone = rf"(?<![\w.\-]){re.escape(name)}"
    return TypedName(
        re.compile(alone + r"(?![\w\-]|\.\w)"),
        re.compile(alone + r"\s*\("),
        _JOINED.fullmatch(name) is not None,
    )


def is_hub(main_fallback: str | None, headings_chars: int, text_chars: int) -> bool:
    """Whether a page is a list of names rather than a page about one (see `HUB_HEADINGS_SHARE`):
    it has no main content of its own, or its headings are most of its text."""
    if main_fallback is not None:
        return True
    return text_chars >= HUB_MIN_CHARS and headings_chars > HUB_HEADINGS_SHARE * text_chars


def in_prose(markdown: str | None, name: str) -> bool:
    """Whether `markdown` (a page's main content, crawler.page.markdown) speaks of `name` as
    code in a sentence (see `NAME_IN_PROSE`): inline code holding just the name, words before
    it on its line, outside headings, table rows and code blocks."""
    if not markdown:
        return False
    span = f"`{name}`"
    at = markdown.find(span)
    while at >= 0:
        start = markdown.rfind("\n", 0, at) + 1
        end = markdown.find("\n", at)
        end = len(markdown) if end < 0 else end
        line = _LINE_MARKS.sub("", markdown[start:end], count=1)
        if _prose_line(line, span) and not _in_code_block(markdown, start):
            return True
        at = markdown.find(span, end)
    return False


def _prose_line(text: str, span: str) -> bool:
    """Whether a line's text (its list or quote marks taken off) holds `span` with words before
    it, and is no heading, table row or fence."""
    at = text.rfind(span)  # the last: the most words before it
    if at <= 0 or text.startswith(("#", "|", "```")):
        return False
    return _PROSE_WORD.search(_CODE_SPAN.sub(" ", text[:at])) is not None


def _in_code_block(markdown: str, offset: int) -> bool:
    """Whether `offset` of `markdown` is inside a fenced code block. A fence is a run of three or
    more backticks that begins its line (after a list's indent or a quote's `>`); it closes at a
    line that begins with the same fence (crawler.page.markdown makes it longer than any run of
    backticks the code holds). Fences are found by str.find, and only before `offset`: a regex
    anchored at a line's start is tried at every character, ten times as slow on a page."""
    opened = ""
    at = markdown.find("```", 0, offset)
    while at >= 0:
        end = at + 3
        while end < len(markdown) and markdown[end] == "`":
            end += 1
        if not markdown[markdown.rfind("\n", 0, at) + 1 : at].strip(" \t>"):
            fence = markdown[at:end]
            if not opened:
                opened = fence
            elif fence.startswith(opened):
                opened = ""
        at = markdown.find("```", end, offset)
    return bool(opened)
