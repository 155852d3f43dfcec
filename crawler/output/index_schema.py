"""What DIR/index.sqlite holds: its tables and columns, its schema versions, its tokenizers, as
the statements that make them (crawler.output.index_open runs them). Pure.

Schema (version 7, kept in `PRAGMA user_version`; a crawl opening an index of an earlier version
migrates it in one transaction):

    pages      one row per fetched URL: id INTEGER PRIMARY KEY, url UNIQUE, final_url, status,
               fetched_at, depth, content_type, title, description, language, size, truncated,
               error, indexed, index_reason, follow, follow_reason, sections, and links,
               nofollow_links, redirects as JSON arrays; and its history (`HISTORY_COLUMNS`):
               etag, last_modified, digest, lastmod (a sitemap's), change (what the last fetch
               found: new, changed, unchanged, gone, failed), first_seen, last_changed,
               times_fetched, times_changed, gone; from version 4 its owner's usage signals
               (`USAGE_COLUMNS`): usage (JSON, crawler.usage) and refuses (the bits of the
               purposes they refuse, crawler.usage.purposes); from version 5 `main_fallback`,
               why its main content is its whole visible text (crawler.page.main_content), or
               null; from version 7 `fields`, the user's fields (`extract:`, the library's
               callable) as a JSON object, or null. `indexed` and `index_reason` are
               its robots rules' word; a search or export decides usage for its purpose. Indexes
               on fetched_at (export order) and last_changed (`crawl export --changed-since`).
    skips      one row per URL not fetched: url UNIQUE, reason, detail.
    texts      an indexed page's words (a page its robots rules let be indexed, whatever its
               usage signals refuse: another purpose may use it): id (= pages.id), title,
               headings, text, nosnippet_text, the only copy of its text; from version 5
               main_text (its main content, a block to a line; empty when it has none of its own
               and falls back to its text) and markdown (the main content as Markdown, not
               searched); from version 6 frame_text (the text outside the main content, null
               when the page has none of its own or was stored before). Each column pages_fts
               reads is marked for CJK (crawler.output.cjk: a separator between Han, kana or
               Hangul characters, so each is a token; from version 6 the text of a page with a
               frame_text is not, since pages_fts reads the frame instead); readers take the
               marks out.
    texts_fts  (version 6) a view of texts as pages_fts reads them: its text column is the
               frame_text of a page with main content, else the text, so that no word of a page
               is tokenised twice (the main content's are main_text's).
    pages_fts  FTS5 over title, headings, text, nosnippet_text and (from version 5) main_text
               (external content: content='texts', from version 6 'texts_fts'), tokenizer
               `unicode61 remove_diacritics 2`, with `porter` before it when the index stems
               English (`index.stemming`), rowid = texts.id. `snippet()` reads the text column
               (and from version 6 main_text's first), so nosnippet_text is matched but never
               shown.
    unindexed  id: the texts stored and not yet in pages_fts (crawler.output.index).
    settings   key, value: what the index was created with (`stemming`: none or english), and
               the purpose of the last crawl into it (`purpose`), which searches and exports
               take unless told another. A crawl asked for another stemming than its index has
               stops before it writes.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "BOOL_COLUMNS",
    "FIELDS_COLUMNS",
    "FIELDS_SCHEMA",
    "FRAME_SCHEMA",
    "HISTORY_COLUMNS",
    "HISTORY_SCHEMA",
    "INDEX_NAME",
    "JSON_COLUMNS",
    "MAIN_COLUMNS",
    "MAIN_SCHEMA",
    "MAIN_TEXTS_SCHEMA",
    "NEW_INDEX_STEMMING",
    "PAGE_COLUMNS",
    "READABLE_VERSIONS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "SETTINGS_TABLE",
    "STEMMING_CHOICES",
    "TEXT_TABLES",
    "USAGE_COLUMNS",
    "USAGE_SCHEMA",
    "fts_table",
    "version_message",
]

INDEX_NAME = "index.sqlite"
SCHEMA_VERSION = 7
READABLE_VERSIONS = (1, 2, 3, 4, 5, 6, 7)
"""Versions `crawl search` and `crawl export` read (version 1: no headings, no CJK marks)."""
STEMMING_CHOICES = ("auto", "none", "english")
"""`index.stemming`: auto is the index's own, or `NEW_INDEX_STEMMING` for a new index."""
NEW_INDEX_STEMMING = "english"
"""What `auto` makes a new index: on three documentation trees, stemming found the defining
page first for 141 of 141 names, 140 without (benchmarks/README.md, "Main content")."""
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
USAGE_COLUMNS = ("refuses", "usage")
"""A page's usage signals, from schema version 4 (crawler.usage)."""
USAGE_SCHEMA = (
    "ALTER TABLE pages ADD COLUMN usage TEXT",
    "ALTER TABLE pages ADD COLUMN refuses INTEGER NOT NULL DEFAULT 0",
)
"""Version 3 to 4 (a new index takes the same steps): no page has signals."""
MAIN_COLUMNS = ("main_fallback",)
"""Why a page's main content is its visible text, from schema version 5."""
MAIN_SCHEMA = ("ALTER TABLE pages ADD COLUMN main_fallback TEXT",)
"""Version 4 to 5 of pages (a new index takes the same step)."""
MAIN_TEXTS_SCHEMA = (
    "ALTER TABLE texts ADD COLUMN main_text TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE texts ADD COLUMN markdown TEXT NOT NULL DEFAULT ''",
)
"""Version 2, 3 or 4 to 5 of texts: a page stored before has no main content of its own (it is
searched by its text as before); pages_fts is made again with the main_text column, and every
text queued to be indexed in it."""
FRAME_SCHEMA = (
    "ALTER TABLE texts ADD COLUMN frame_text TEXT",
    """CREATE VIEW texts_fts AS SELECT id, title, headings, coalesce(frame_text, text) AS text,
        nosnippet_text, main_text FROM texts""",
)
"""Version 5 to 6 of texts (a new index takes the same steps): a page stored before is searched
by its whole text beside its main text, as before; pages_fts is made again over the view, and
every text queued to be indexed in it."""
FIELDS_COLUMNS = ("fields",)
"""A page's user fields (crawler.page.fields) as JSON, from schema version 7."""
FIELDS_SCHEMA = ("ALTER TABLE pages ADD COLUMN fields TEXT",)
"""Version 6 to 7 (a new index takes the same step): a page stored before has no fields."""
JSON_COLUMNS = frozenset({"links", "nofollow_links", "redirects"})
BOOL_COLUMNS = frozenset({"truncated", "indexed", "follow", "gone"})
HISTORY_SCHEMA = (
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

SETTINGS_TABLE = "CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
SCHEMA = (
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
    SETTINGS_TABLE,
)
TEXT_TABLES = (
    """CREATE TABLE texts (
        id INTEGER PRIMARY KEY,
        title TEXT,
        headings TEXT NOT NULL,
        text TEXT NOT NULL,
        nosnippet_text TEXT NOT NULL,
        main_text TEXT NOT NULL DEFAULT '',
        markdown TEXT NOT NULL DEFAULT ''
    )""",
    "CREATE TABLE unindexed (id INTEGER PRIMARY KEY)",
)


def fts_table(stemming: str) -> str:
    """The statement making pages_fts, its tokenizer the one `stemming` (STEMMING_CHOICES) names."""
    return (
        "CREATE VIRTUAL TABLE pages_fts USING fts5 (title, headings, text, nosnippet_text, "
        "main_text, content = 'texts_fts', content_rowid = 'id', "
        f"tokenize = '{_TOKENIZERS[stemming]}')"
    )


def version_message(path: Path, version: int) -> str:
    readable = " and ".join(str(number) for number in READABLE_VERSIONS)
    return (
        f"index {path} has schema version {version}; this crawler reads versions {readable} "
        "(a newer crawler wrote it?)"
    )
