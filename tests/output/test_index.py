"""The full-text index: records written through `IndexSink`, read back by `search` and
`export_pages`."""

from __future__ import annotations

import csv
import importlib
import io
import json
import re
import sqlite3
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import crawler.output.index
from crawler.errors import ConfigError, OutputError, SearchError
from crawler.output.index import SCHEMA_VERSION, IndexSink
from crawler.output.records import PageRecord, Skip
from crawler.output.searching import SearchHit, export_pages, export_skips, search, search_shards

SEARCH = importlib.import_module("crawler.output.searching")
"""The module (`crawler.output.searching` is the function the package exports)."""

FILLER = [
    "weather report for the coast tomorrow",
    "a recipe for bread with flour and water",
    "train timetable changes this winter",
    "notes on the history of the harbour",
]


def record(
    url: str,
    text: str = "",
    *,
    title: str | None = None,
    index: bool = True,
    **fields: Any,
) -> PageRecord:
    defaults: dict[str, Any] = {"final_url": url, "status": 200, "fetched_at": 1.0, "depth": 0}
    return PageRecord(url=url, title=title, text=text, index=index, **(defaults | fields))


def write(directory: Path, *items: PageRecord | Skip) -> None:
    with IndexSink(directory) as sink:
        for item in items:
            if isinstance(item, PageRecord):
                sink.page(item)
            else:
                sink.skip(item)


def exported(directory: Path) -> list[dict[str, Any]]:
    out = io.StringIO()
    count = export_pages(directory, out)
    # JSON lines end at \n only: splitlines() would also split at a U+2028 inside a string.
    pages = [json.loads(line) for line in out.getvalue().split("\n") if line]
    assert count == len(pages)
    return pages


def urls(hits: list[SearchHit]) -> list[str]:
    return [hit.url for hit in hits]


def filler(n: int = len(FILLER)) -> list[PageRecord]:
    """Unrelated pages, so a word in one or two pages has a real bm25 weight."""
    return [record(f"https://filler.test/{i}", FILLER[i]) for i in range(n)]


def test_only_indexed_text_is_searchable_but_every_page_is_stored(tmp_path: Path) -> None:
    write(
        tmp_path,
        record("https://a.test/", "an open page about otters", title="Otters"),
        # Text on a noindex record should never happen; if it does, the index still keeps it out.
        record(
            "https://a.test/hidden",
            "a noindex page about beavers",
            index=False,
            index_reason="meta robots: noindex",
            follow=True,
        ),
        record(
            "https://a.test/gone",
            status=404,
            index=False,
            index_reason="status 404",
            follow_reason="status 404",
        ),
        *filler(),
    )
    assert urls(search(tmp_path, "otters")) == ["https://a.test/"]
    assert search(tmp_path, "beavers") == []
    pages = {page["url"]: page for page in exported(tmp_path)}
    assert pages["https://a.test/hidden"]["status"] == 200
    assert pages["https://a.test/hidden"]["index_reason"] == "meta robots: noindex"
    assert pages["https://a.test/hidden"]["text"] is None
    assert pages["https://a.test/gone"]["status"] == 404
    assert pages["https://a.test/gone"]["follow_reason"] == "status 404"


def test_nosnippet_text_is_matched_but_never_shown(tmp_path: Path) -> None:
    write(
        tmp_path,
        record(
            "https://a.test/",
            "public words about lighthouses",
            nosnippet_text="confidential lighthouse keeper roster",
        ),
        *filler(),
    )
    for query in ("confidential", "roster", "lighthouses", '"keeper roster"'):
        hits = search(tmp_path, query)
        assert urls(hits) == ["https://a.test/"], query
        assert "confidential" not in hits[0].snippet
        assert "roster" not in hits[0].snippet
    assert exported(tmp_path)[0]["nosnippet_text"] == "confidential lighthouse keeper roster"


def test_a_url_written_again_replaces_its_row_and_its_text(tmp_path: Path) -> None:
    write(tmp_path, record("https://a.test/", "old wording", title="Old"), *filler())
    write(tmp_path, record("https://a.test/", "new wording", title="New", fetched_at=2.0))
    assert search(tmp_path, "old") == []
    assert [(hit.url, hit.title) for hit in search(tmp_path, "new")] == [("https://a.test/", "New")]
    assert sum(page["url"] == "https://a.test/" for page in exported(tmp_path)) == 1
    # Written again as not indexed: the row stays, its text goes.
    write(tmp_path, record("https://a.test/", index=False, index_reason="meta robots: noindex"))
    assert search(tmp_path, "new") == []
    [page] = [page for page in exported(tmp_path) if page["url"] == "https://a.test/"]
    assert (page["index"], page["text"]) == (False, None)


def test_the_last_record_of_a_url_in_one_batch_wins(tmp_path: Path) -> None:
    write(
        tmp_path,
        record("https://a.test/", "first draft"),
        record("https://a.test/", "second draft"),
        *filler(),
    )
    assert search(tmp_path, "first") == []
    assert urls(search(tmp_path, "second")) == ["https://a.test/"]


def test_title_matches_rank_above_text_matches(tmp_path: Path) -> None:
    write(
        tmp_path,
        # Written first, and mentions the word more often: only the title weight can beat it.
        record("https://a.test/text", "gardening here, gardening there, gardening everywhere"),
        record("https://a.test/title", "seasonal advice for gardening", title="Gardening"),
        *filler(),
    )
    hits = search(tmp_path, "gardening")
    assert urls(hits) == ["https://a.test/title", "https://a.test/text"]
    assert hits[0].score > hits[1].score > 0


def test_limit_caps_the_hits(tmp_path: Path) -> None:
    write(tmp_path, *(record(f"https://a.test/{n}", f"common page {n}") for n in range(5)))
    assert len(search(tmp_path, "common", limit=3)) == 3
    with pytest.raises(ConfigError, match="at least 1"):
        search(tmp_path, "common", limit=0)


def test_snippet_marks_matches_and_elides(tmp_path: Path) -> None:
    words = " ".join(f"w{n}" for n in range(40))
    write(tmp_path, record("https://a.test/", f"{words} needle {words}"), *filler())
    [hit] = search(tmp_path, "needle")
    assert "[needle]" in hit.snippet
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
    assert len(hit.snippet.split()) <= 12
    [hit] = search(tmp_path, "needle", highlight=("<b>", "</b>"))
    assert "<b>needle</b>" in hit.snippet


def test_diacritics_are_folded(tmp_path: Path) -> None:
    write(tmp_path, record("https://a.test/", "un café crème à Zürich"), *filler())
    assert urls(search(tmp_path, "cafe zurich")) == ["https://a.test/"]


SYNTAX_PAGES = [
    record("https://a.test/fox", "the quick brown fox", title="Fox"),
    record("https://a.test/dog", "the lazy brown dog", title="Dog"),
    record("https://a.test/cat", "a quick grey cat", title="Brown cat"),
    *filler(),
]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ('"quick brown"', {"fox"}),
        ('"brown quick"', set()),
        ("fox OR dog", {"fox", "dog"}),
        ("quick NOT fox", {"cat"}),
        ("quick AND brown", {"fox", "cat"}),
        ("qui*", {"fox", "cat"}),
        ("title:brown", {"cat"}),
        ("text:brown", {"fox", "dog"}),
    ],
)
def test_fts5_query_syntax(tmp_path: Path, query: str, expected: set[str]) -> None:
    """The FTS5 forms people type work as they are, and as written with `fts`."""
    write(tmp_path, *SYNTAX_PAGES)
    assert {url.rsplit("/", 1)[1] for url in urls(search(tmp_path, query))} == expected
    assert {url.rsplit("/", 1)[1] for url in urls(search(tmp_path, query, fts=True))} == expected


PUNCTUATION_PAGES = [
    record("https://a.test/cpp", "Templates in C++ with the c language", title="C++ templates"),
    record("https://a.test/hyphen", "The foo-bar protocol, unlike foo alone", title="Foo"),
    record("https://a.test/apart", "bar comes first here, then foo", title="Apart"),
    record("https://a.test/and", "Logic: AND, OR, NOT gates", title="Gates"),
    record("https://a.test/home", "The home page of the site", title="Home page"),
]
"""Pages without the words and, or, not, but for /and."""


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("c++", {"cpp"}),
        ("foo-bar", {"hyphen"}),
        ("AND", {"and"}),
        ("OR", {"and"}),
        ("home page", {"home"}),
        ("NOT", {"and"}),
        ("gates AND", {"and"}),  # a trailing operator is the word "and"
        ("foo AND bar", {"hyphen", "apart"}),
        ('"unterminated', set()),
        ("don't", set()),
        ("nope:foo", set()),
        ('title:"c++ templates"', {"cpp"}),
    ],
)
def test_words_and_punctuation_search_as_written(
    tmp_path: Path, query: str, expected: set[str]
) -> None:
    write(tmp_path, *PUNCTUATION_PAGES)
    assert {url.rsplit("/", 1)[1] for url in urls(search(tmp_path, query))} == expected


@pytest.mark.parametrize("query", ["", "   ", "++", "-- !"])
def test_a_query_without_a_word_is_a_search_error(tmp_path: Path, query: str) -> None:
    write(tmp_path, *PUNCTUATION_PAGES)
    with pytest.raises(SearchError, match="has no word to search"):
        search(tmp_path, query)


@pytest.mark.parametrize(
    ("query", "detail"),
    [
        ("foo AND", 'fts5: syntax error near ""'),
        ('"unterminated', "unterminated string"),
        ("title:", "syntax error"),
        ("", "syntax error"),
        ("AND", "syntax error"),
        ("nope:foo", "no such column: nope"),
        ("don't", "syntax error"),
    ],
)
def test_malformed_fts_queries_raise_search_error(tmp_path: Path, query: str, detail: str) -> None:
    write(tmp_path, *SYNTAX_PAGES)
    with pytest.raises(SearchError) as caught:
        search(tmp_path, query, fts=True)
    message = str(caught.value)
    assert message.startswith(f"bad search query {query!r}: ")
    assert detail in message
    assert "\n" not in message


def test_missing_index_is_an_output_error_naming_the_directory(tmp_path: Path) -> None:
    hint = "(crawl with output.format index first)"
    with pytest.raises(OutputError, match=re.escape(f"no index in {tmp_path} {hint}")):
        search(tmp_path, "anything")
    with pytest.raises(OutputError, match=re.escape(f"no index in {tmp_path}")):
        export_pages(tmp_path, io.StringIO())


def test_unusable_directory_or_file_is_an_output_error_at_open(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory", "utf-8")
    with pytest.raises(OutputError, match=re.escape(str(blocker / "index.sqlite"))):
        IndexSink(blocker)
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "index.sqlite").write_bytes(b"this is not a database" * 100)
    with pytest.raises(OutputError, match=r"cannot open index .*junk/index\.sqlite"):
        IndexSink(tmp_path / "junk")


def test_an_index_of_a_newer_schema_is_refused(tmp_path: Path) -> None:
    write(tmp_path, record("https://a.test/", "text"))
    with sqlite3.connect(tmp_path / "index.sqlite") as connection:
        connection.execute("PRAGMA user_version = 99")
    with pytest.raises(OutputError, match="schema version 99"):
        search(tmp_path, "text")
    with pytest.raises(OutputError, match="schema version 99"):
        IndexSink(tmp_path)


def test_writer_errors_surface_on_flush_and_close(tmp_path: Path) -> None:
    sink = IndexSink(tmp_path)
    # Another connection removes the table under the writer: its next batch fails.
    with sqlite3.connect(tmp_path / "index.sqlite") as other:
        other.execute("DROP TABLE skips")
    other.close()
    sink.skip(Skip("https://a.test/x", "out of scope: host"))
    with pytest.raises(OutputError, match=r"cannot write index .*: no such table: skips"):
        sink.flush(wait=True)
    sink.page(record("https://a.test/", "more"))
    with pytest.raises(OutputError, match="no such table: skips"):
        sink.close()
    sink.close()  # idempotent: the error was reported
    assert "closed" in repr(sink)


def test_batches_and_flushes_write_everything_once(tmp_path: Path) -> None:
    sink = IndexSink(tmp_path, batch_size=7, max_batches=2)
    for n in range(100):
        sink.page(record(f"https://a.test/{n}", f"page number{n} body", fetched_at=float(n)))
        if n % 3 == 0:
            sink.skip(Skip(f"https://b.test/{n}", "out of scope: host", "seed hosts only"))
        if n in (10, 11, 50):
            sink.flush()
    sink.close()
    assert [page["url"] for page in exported(tmp_path)] == [
        f"https://a.test/{n}" for n in range(100)
    ]
    assert urls(search(tmp_path, "number42")) == ["https://a.test/42"]
    with sqlite3.connect(tmp_path / "index.sqlite") as connection:
        assert connection.execute("SELECT count(*) FROM skips").fetchone() == (34,)
        assert connection.execute("SELECT count(*) FROM pages_fts").fetchone() == (100,)
    connection.close()


def test_skips_are_stored_once_per_url(tmp_path: Path) -> None:
    write(tmp_path, Skip("https://a.test/p", "disallowed by robots.txt", "line 2"))
    write(tmp_path, Skip("https://a.test/p", "disallowed by robots.txt", "line 3"))
    with sqlite3.connect(tmp_path / "index.sqlite") as connection:
        rows = connection.execute("SELECT url, reason, detail FROM skips").fetchall()
    connection.close()
    assert rows == [("https://a.test/p", "disallowed by robots.txt", "line 3")]


def test_export_fields_in_fetch_order(tmp_path: Path) -> None:
    write(
        tmp_path,
        record(
            "http://a.test/later",
            "some body text",
            final_url="https://a.test/later",
            fetched_at=20.123456,
            depth=2,
            content_type="text/html",
            title="Later",
            description="a page",
            language="en",
            links=("https://a.test/x",),
            nofollow_links=("https://ads.test/",),
            redirects=("http://a.test/later",),
            size=1234,
            follow=True,
            sections=3,
        ),
        record(
            "https://a.test/earlier",
            status=None,
            fetched_at=10.0,
            index=False,
            index_reason="no answer",
            error="connection refused",
        ),
    )
    earlier, later = exported(tmp_path)
    assert earlier["url"] == "https://a.test/earlier"
    assert (earlier["status"], earlier["error"], earlier["text"]) == (
        None,
        "connection refused",
        None,
    )
    assert later == {
        "url": "http://a.test/later",
        "final_url": "https://a.test/later",
        "status": 200,
        "fetched_at": 20.123,
        "depth": 2,
        "content_type": "text/html",
        "title": "Later",
        "description": "a page",
        "language": "en",
        "size": 1234,
        "truncated": False,
        "error": None,
        "index": True,
        "index_reason": None,
        "follow": True,
        "follow_reason": None,
        "sections": 3,
        "links": ["https://a.test/x"],
        "nofollow_links": ["https://ads.test/"],
        "redirects": ["http://a.test/later"],
        "etag": None,
        "last_modified": None,
        "digest": None,
        "lastmod": None,
        "change": "new",
        "first_seen": 20.123,
        "last_changed": 20.123,
        "times_fetched": 1,
        "times_changed": 0,
        "gone": False,
        "usage": [],
        # The times as dates too, beside the epoch seconds.
        "fetched_at_iso": "1970-01-01T00:00:20.123Z",
        "lastmod_iso": None,
        "first_seen_iso": "1970-01-01T00:00:20.123Z",
        "last_changed_iso": "1970-01-01T00:00:20.123Z",
        "main_fallback": None,
        "fields": None,  # none asked for (extract:)
        "text": "some body text",
        "nosnippet_text": "",
        "headings": "",
        "main_text": "",
        "markdown": "",
    }


ODD_TEXTS = [
    'quotes " and \\ backslashes',
    "[1, 2] looks like JSON",
    '{"a": 1}',
    "null",
    "true",
    "ünïcödé, 漢字 and 🦀",
    "line\u2028separator\nnewline\ttab",
    "",
]


@pytest.mark.parametrize("text", ODD_TEXTS)
def test_every_value_comes_back_as_written(tmp_path: Path, text: str) -> None:
    """A batch reaches SQLite as JSON (crawler/output/index_writes.py): no value may come back
    changed, not even a string that is itself JSON."""
    write(
        tmp_path,
        record(
            f"https://a.test/{text}",
            f"{text} body",
            title=text,
            description=text,
            language=text or None,
            index_reason=text,
            links=(text, f"https://a.test/{text}"),
            redirects=(text,),
            nosnippet_text=text,
            size=2**40,
            fetched_at=1.5,
        ),
        Skip(f"https://a.test/skip/{text}", text, text),
    )
    (page,) = exported(tmp_path)
    assert page["url"] == f"https://a.test/{text}"
    assert (page["title"], page["description"], page["index_reason"]) == (text, text, text)
    assert page["language"] == (text or None)
    assert page["links"] == [text, f"https://a.test/{text}"]
    assert page["redirects"] == [text]
    assert (page["text"], page["nosnippet_text"]) == (f"{text} body", text)
    assert (page["size"], page["fetched_at"]) == (2**40, 1.5)
    with sqlite3.connect(tmp_path / "index.sqlite") as connection:
        skips = connection.execute("SELECT url, reason, detail FROM skips").fetchall()
        types = connection.execute(
            "SELECT typeof(status), typeof(size), typeof(fetched_at), typeof(indexed), "
            "typeof(title) FROM pages"
        ).fetchall()
    connection.close()
    assert skips == [(f"https://a.test/skip/{text}", text, text)]
    assert types == [("integer", "integer", "real", "integer", "text")]


def test_the_writer_sets_the_fts_hash_size(tmp_path: Path) -> None:
    write(tmp_path, record("https://a.test/", "text"))
    with sqlite3.connect(tmp_path / "index.sqlite") as connection:
        rows = dict(connection.execute("SELECT k, v FROM pages_fts_config").fetchall())
    connection.close()
    assert rows.get("hashsize") == crawler.output.index.FTS_HASH_BYTES


def test_unknown_export_format_is_refused(tmp_path: Path) -> None:
    write(tmp_path, record("https://a.test/", "text"))
    with pytest.raises(ConfigError, match="unknown export format 'xml'"):
        export_pages(tmp_path, io.StringIO(), format="xml")


def test_records_reach_sqlite_only_through_the_writer_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened_on: list[int] = []
    connect = sqlite3.connect

    def spy(database: Path, **kwargs: Any) -> sqlite3.Connection:
        opened_on.append(threading.get_ident())
        connection: sqlite3.Connection = connect(database, **kwargs)
        return connection

    monkeypatch.setattr(sqlite3, "connect", spy)
    sink = IndexSink(tmp_path)
    monkeypatch.undo()
    # sqlite3 refuses a connection's use from any thread but its own, so the one connection,
    # opened off this thread, is only ever used off it.
    assert len(opened_on) == 1 and opened_on[0] != threading.get_ident()
    sink.page(record("https://a.test/", "pending words"))
    sink.skip(Skip("https://a.test/p", "disallowed by robots.txt"))
    assert search(tmp_path, "pending") == []  # still in the batch
    assert "2 pending" in repr(sink)
    sink.flush(wait=True)
    # Committed and readable while the sink stays open.
    assert urls(search(tmp_path, "pending")) == ["https://a.test/"]
    assert len(exported(tmp_path)) == 1
    sink.close()


def test_a_slow_writer_fills_the_bounded_queue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    writing = threading.Event()
    write_batch = crawler.output.index.write_batch

    def slow(connection: sqlite3.Connection, batch: list[PageRecord | Skip]) -> None:
        writing.set()
        release.wait(timeout=10)
        write_batch(connection, batch)

    monkeypatch.setattr(crawler.output.index, "write_batch", slow)
    sink = IndexSink(tmp_path, batch_size=1, max_batches=2)
    sink.page(record("https://a.test/0", "zero"))
    assert writing.wait(timeout=10)  # the writer holds batch 0
    sink.page(record("https://a.test/1", "one"))
    sink.page(record("https://a.test/2", "two"))
    # Two batches wait: a third hand-over would block the crawl until the writer catches up.
    assert "2 batches queued" in repr(sink)
    release.set()
    sink.close()
    assert len(exported(tmp_path)) == 3


# --- hostile input for search and export (issue 17) ---------------------------------------------


def test_a_query_of_too_many_words_is_refused_before_it_runs(tmp_path: Path) -> None:
    write(tmp_path, record("https://a.test/", "otters " * 50, title="Otters"), *filler())
    most = SEARCH.MAX_QUERY_WORDS
    assert urls(search(tmp_path, " ".join(["otters"] * most)))  # the bound itself is searched
    # Operators and column names are not words: 32 words and 31 ORs is within it.
    assert urls(search(tmp_path, " OR ".join(["title:otters"] * most)))
    with pytest.raises(SearchError, match=f"search query of {most + 1} words; at most {most}"):
        search(tmp_path, " ".join(["otters"] * (most + 1)))
    with pytest.raises(SearchError, match="search query of 69999 characters; at most"):
        search(tmp_path, " ".join(["otters"] * 10_000))


def test_a_query_of_too_many_characters_is_refused(tmp_path: Path) -> None:
    write(tmp_path, *filler())
    most = SEARCH.MAX_QUERY_CHARS
    with pytest.raises(SearchError, match=f"search query of {most + 1} characters"):
        search(tmp_path, '"' + "x" * (most - 1) + '"')


def test_a_search_past_its_time_stops_with_a_search_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, *[record(f"https://a.test/{n}", "otters swim " * 20) for n in range(500)])
    monkeypatch.setattr(SEARCH, "SEARCH_SECONDS", 0.0)
    with pytest.raises(SearchError, match="ran for more than 0 s and was stopped"):
        search(tmp_path, "otters swim")


@pytest.mark.parametrize("query", ["otters \udcff", "\udc80", "a\ud800b"])
def test_a_query_that_is_not_text_is_a_search_error(tmp_path: Path, query: str) -> None:
    # Bytes the command line could not decode come as lone surrogates (PEP 383).
    write(tmp_path, *filler())
    with pytest.raises(SearchError, match=r"(byte 0x[0-9a-f]{2}|U\+D800) at character \d+ is not"):
        search(tmp_path, query)


def _damage(directory: Path, statement: str) -> None:
    connection = sqlite3.connect(directory / "index.sqlite")
    connection.execute(statement)
    connection.commit()
    connection.close()


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE pages SET links = '[\"https://a.test/x\", tru'",
        "UPDATE pages SET title = CAST(x'ff41' AS TEXT)",
    ],
    ids=["bad-json", "not-utf8"],
)
def test_export_of_damaged_rows_says_the_index_is_damaged(tmp_path: Path, statement: str) -> None:
    write(tmp_path, record("https://a.test/", "otters"))
    _damage(tmp_path, statement)
    with pytest.raises(OutputError) as caught:
        export_pages(tmp_path, io.StringIO())
    message = str(caught.value)
    assert message.startswith(f"index {tmp_path / 'index.sqlite'} is damaged")
    assert "--fresh" in message


def test_search_of_a_damaged_row_says_the_index_is_damaged(tmp_path: Path) -> None:
    write(tmp_path, record("https://a.test/", "otters"))
    _damage(tmp_path, "UPDATE pages SET final_url = x'00'")  # a blob for text, as damage makes it
    with pytest.raises(OutputError, match=r"index .*index\.sqlite is damaged"):
        search(tmp_path, "otters")


def test_an_empty_index_file_is_named_as_such(tmp_path: Path) -> None:
    (tmp_path / "index.sqlite").write_bytes(b"")
    for read in (lambda: search(tmp_path, "otters"), lambda: export_pages(tmp_path, io.StringIO())):
        with pytest.raises(OutputError, match=r"index .*index\.sqlite is empty \(0 bytes\)"):
            read()
    assert (tmp_path / "index.sqlite").read_bytes() == b""


# --- schema 2: CJK, headings, stemming, the migration from 1 --------------------------------------

JAPANESE = "Debian システムを最新に保つには、パッケージを定期的に更新します。Python入門の章も参照。"


def test_cjk_words_of_one_or_more_characters_are_found_and_text_comes_back_as_written(
    tmp_path: Path,
) -> None:
    write(tmp_path, record("https://a.test/ja", JAPANESE, title="最新に保つ"), *filler())
    for word in ("最新", "保", "パッケージ", "Python入門", "python", "定期的に更新"):
        assert urls(search(tmp_path, word)) == ["https://a.test/ja"], word
    assert search(tmp_path, "最新")[0].snippet.count("[最新]") == 1
    assert search(tmp_path, "新最") == []  # the characters must stand together, in order
    (page,) = [page for page in exported(tmp_path) if page["url"] == "https://a.test/ja"]
    assert page["text"] == JAPANESE and page["title"] == "最新に保つ"


def test_the_page_whose_title_or_headings_name_the_words_ranks_first(tmp_path: Path) -> None:
    defining = record(
        "https://docs.test/frobnicate",
        "frobnicate takes a widget and returns it frobnicated. "
        + " ".join(
            f"paragraph {n} on widgets, gadgets, options and return values." for n in range(80)
        ),
        title="Widget reference",
        headings="frobnicate(widget) Parameters Return value",
    )
    mentions = [
        record(f"https://docs.test/m{n}", f"see frobnicate for details; {FILLER[n]}")
        for n in range(4)
    ]
    write(tmp_path, defining, *mentions, *filler())
    assert urls(search(tmp_path, "frobnicate"))[0] == "https://docs.test/frobnicate"
    # Without its headings the long page is buried under the short pages that mention the word.
    write(tmp_path / "flat", replace(defining, headings=""), *mentions, *filler())
    assert urls(search(tmp_path / "flat", "frobnicate"))[0] != "https://docs.test/frobnicate"


def test_headings_are_exported_and_snippets_come_from_the_text(tmp_path: Path) -> None:
    write(
        tmp_path,
        record("https://a.test/", "otters swim. Otter facts", headings="Otter facts"),
    )
    (page,) = exported(tmp_path)
    assert page["headings"] == "Otter facts"
    assert search(tmp_path, "swim")[0].snippet == "otters [swim]. Otter facts"


def test_english_stemming_is_chosen_when_the_index_is_made_and_kept(tmp_path: Path) -> None:
    with IndexSink(tmp_path, stemming="english") as sink:
        sink.page(record("https://a.test/", "the pages were connected and indexed"))
    assert urls(search(tmp_path, "connect")) == ["https://a.test/"]
    assert urls(search(tmp_path, "connecting index")) == ["https://a.test/"]
    with pytest.raises(OutputError, match=r"created with index\.stemming english") as caught:
        IndexSink(tmp_path, stemming="none")
    assert "--fresh" in str(caught.value)
    with pytest.raises(OutputError, match=r"created with index\.stemming english"):
        crawler.output.index.check_index(tmp_path, "none")
    crawler.output.index.check_index(tmp_path, "english")
    with IndexSink(tmp_path / "plain", stemming="none") as sink:
        sink.page(record("https://a.test/", "the pages were connected"))
    assert search(tmp_path / "plain", "connect") == []
    # auto, the default: a new index stems English; one made before keeps what it was made with.
    write(tmp_path / "new", record("https://a.test/", "the pages were connected"))
    assert urls(search(tmp_path / "new", "connect")) == ["https://a.test/"]
    crawler.output.index.check_index(tmp_path / "plain")
    write(tmp_path / "plain", record("https://a.test/2", "pages connected again"))
    assert search(tmp_path / "plain", "connect") == []


VERSION_1 = (
    """CREATE TABLE pages (id INTEGER PRIMARY KEY, url TEXT NOT NULL UNIQUE,
        final_url TEXT NOT NULL, status INTEGER, fetched_at REAL NOT NULL, depth INTEGER NOT NULL,
        content_type TEXT, title TEXT, description TEXT, language TEXT, size INTEGER NOT NULL,
        truncated INTEGER NOT NULL, error TEXT, indexed INTEGER NOT NULL, index_reason TEXT,
        follow INTEGER NOT NULL, follow_reason TEXT, sections INTEGER NOT NULL,
        links TEXT NOT NULL, nofollow_links TEXT NOT NULL, redirects TEXT NOT NULL)""",
    "CREATE INDEX pages_fetched_at ON pages (fetched_at)",
    """CREATE TABLE skips (id INTEGER PRIMARY KEY, url TEXT NOT NULL UNIQUE,
        reason TEXT NOT NULL, detail TEXT NOT NULL)""",
    """CREATE VIRTUAL TABLE pages_fts USING fts5 (
        title, text, nosnippet_text, tokenize = 'unicode61 remove_diacritics 2')""",
    """INSERT INTO pages VALUES (1, 'https://a.test/ja', 'https://a.test/ja', 200, 1.0, 0,
        'text/html', '最新', NULL, 'ja', 10, 0, NULL, 1, NULL, 1, NULL, 0, '[]', '[]', '[]')""",
    "INSERT INTO pages_fts (rowid, title, text, nosnippet_text) "
    f"VALUES (1, '最新', '{JAPANESE}', '')",
    "PRAGMA user_version = 1",
)


def test_an_index_of_schema_1_is_read_and_a_crawl_migrates_it(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "index.sqlite") as connection:
        for statement in VERSION_1:
            connection.execute(statement)
    connection.close()
    # Read as it is: Latin words are found; a word inside a run of Japanese is not, yet.
    assert urls(search(tmp_path, "python入門の章も参照")) == ["https://a.test/ja"]
    assert search(tmp_path, "更新") == []
    crawler.output.index.check_index(tmp_path, "none")
    write(tmp_path, record("https://a.test/zh", "软件包管理", title="软件"))
    with sqlite3.connect(tmp_path / "index.sqlite") as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    connection.close()
    assert urls(search(tmp_path, "更新")) == ["https://a.test/ja"]
    assert urls(search(tmp_path, "包")) == ["https://a.test/zh"]
    pages = {page["url"]: page for page in exported(tmp_path)}
    assert pages["https://a.test/ja"]["text"] == JAPANESE
    assert pages["https://a.test/ja"]["headings"] == ""


def test_pages_stored_before_a_kill_are_made_searchable_by_the_next_writer(tmp_path: Path) -> None:
    write(tmp_path, record("https://a.test/1", "otters swim"), record("https://a.test/2", "otters"))
    # What a kill between storing a batch and indexing it leaves: texts stored, not searchable.
    with sqlite3.connect(tmp_path / "index.sqlite") as connection:
        connection.execute(
            "INSERT INTO pages_fts (pages_fts, rowid, title, headings, text, nosnippet_text) "
            "SELECT 'delete', id, title, headings, text, nosnippet_text FROM texts"
        )
        connection.execute("INSERT INTO unindexed (id) SELECT id FROM texts")
    connection.close()
    assert search(tmp_path, "otters") == []
    assert SEARCH.not_yet_searchable(tmp_path) == 2
    assert len(exported(tmp_path)) == 2  # stored all the same
    IndexSink(tmp_path).close()
    assert sorted(urls(search(tmp_path, "otters"))) == ["https://a.test/1", "https://a.test/2"]
    assert SEARCH.not_yet_searchable(tmp_path) == 0


def test_flush_and_wait_makes_what_was_given_searchable(tmp_path: Path) -> None:
    with IndexSink(tmp_path, batch_size=2) as sink:
        for number in range(5):
            sink.page(record(f"https://a.test/{number}", f"otters number{number}"))
        sink.flush(wait=True)
        assert len(search(tmp_path, "otters", limit=10)) == 5
        assert SEARCH.not_yet_searchable(tmp_path) == 0
        sink.page(record("https://a.test/0", "beavers now"))  # a rerun replaces the words
        sink.flush(wait=True)
        assert urls(search(tmp_path, "beavers")) == ["https://a.test/0"]
        assert len(search(tmp_path, "otters", limit=10)) == 4


def test_a_title_that_begins_with_a_one_word_query_ranks_first(tmp_path: Path) -> None:
    # As in Python's documentation: the page named pickle, and a shorter one about a tool for it.
    write(
        tmp_path,
        record(
            "https://docs.test/pickletools",
            "pickletools holds tools for pickle developers: pickle opcodes, pickle dis.",
            title="pickletools — Tools for pickle developers",
            headings="pickletools — Tools for pickle developers Command line usage",
        ),
        record(
            "https://docs.test/pickle",
            "The pickle module implements binary protocols. " + " ".join(FILLER * 20),
            title="pickle — Python object serialization",
            headings="pickle — Python object serialization Relationship to other modules",
        ),
        *filler(),
    )
    assert urls(search(tmp_path, "pickle"))[:2] == [
        "https://docs.test/pickle",
        "https://docs.test/pickletools",
    ]
    # Two words are not a name a title begins with: BM25 and the headings decide.
    assert urls(search(tmp_path, "pickle developers"))[0] == "https://docs.test/pickletools"


def test_the_shards_of_a_shared_crawl_are_searched_as_one(tmp_path: Path) -> None:
    """Each worker of a shared crawl writes its own index: searched together, tiers stay first
    (a page titled by the word before pages that only mention it, whichever shard holds them),
    and a page two workers both stored (fetched again after a kill) comes once."""
    first, second = tmp_path / "w1", tmp_path / "w2"
    write(
        first,
        *filler(),
        record("https://a.test/mentions", "quayside lights and the quayside wall"),
        record("https://a.test/twice", "a quayside"),
    )
    write(
        second,
        *filler(),
        record("https://b.test/defines", "what it is", title="Quayside"),
        record("https://a.test/twice", "a quayside"),
    )
    hits = search_shards([first, second], "quayside", limit=10)
    assert urls(hits)[0] == "https://b.test/defines"
    assert sorted(urls(hits)) == sorted(
        ["https://b.test/defines", "https://a.test/mentions", "https://a.test/twice"]
    )
    assert urls(search_shards([first, second], "quayside", limit=1)) == ["https://b.test/defines"]
    assert search_shards([first], "quayside") == search(first, "quayside")


def test_the_shards_of_a_shared_crawl_export_as_one_file(tmp_path: Path) -> None:
    first, second = tmp_path / "w1", tmp_path / "w2"
    write(first, record("https://a.test/1", "one"), Skip("https://a.test/x", "disallowed", "d"))
    write(second, record("https://b.test/1", "two"), Skip("https://b.test/x", "disallowed", "d"))
    out = io.StringIO()
    counts = [
        export_pages(shard, out, format="csv", header=number == 0)
        for number, shard in enumerate((first, second))
    ]
    lines = out.getvalue().splitlines()
    assert counts == [1, 1] and len(lines) == 3 and lines[0].startswith("url,final_url,")
    assert [line.split(",")[0] for line in lines[1:]] == ["https://a.test/1", "https://b.test/1"]
    out = io.StringIO()
    for number, shard in enumerate((first, second)):
        export_skips(shard, out, format="csv", header=number == 0)
    assert out.getvalue().splitlines()[1:] == [
        "https://a.test/x,disallowed,d",
        "https://b.test/x,disallowed,d",
    ]


# --- main content (schema version 5) -------------------------------------------------------------


def markdown_export(directory: Path) -> list[dict[str, Any]]:
    out = io.StringIO()
    count = export_pages(directory, out, format="markdown")
    pages = [json.loads(line) for line in out.getvalue().split("\n") if line]
    assert count == len(pages)
    return pages


def test_main_content_is_searched_above_the_frame_and_exported(tmp_path: Path) -> None:
    # The word in one page's frame (a sidebar of "popular: quokka facts"), in the other's text.
    framed = record(
        "https://a.test/framed",
        "popular: quokka facts. The council met on Tuesday about the harbour plan.",
        main_text="The council met on Tuesday about the harbour plan.",
        markdown="The council met on Tuesday about the harbour plan.",
    )
    about = record(
        "https://a.test/about",
        "menu home news. A quokka is a small wallaby of Rottnest Island, near Perth.",
        main_text="A quokka is a small wallaby of Rottnest Island, near Perth.",
        markdown="A **quokka** is a small wallaby of Rottnest Island, near Perth.",
    )
    write(tmp_path, framed, about, *filler())
    assert urls(search(tmp_path, "quokka")) == ["https://a.test/about", "https://a.test/framed"]
    pages = {page["url"]: page for page in exported(tmp_path)}
    assert pages["https://a.test/about"]["main_text"] == about.main_text
    assert pages["https://a.test/about"]["markdown"] == about.markdown
    assert pages["https://a.test/about"]["main_fallback"] is None
    assert pages["https://a.test/about"]["text"] == about.text  # the visible text as it was
    markdown = {page["url"]: page for page in markdown_export(tmp_path)}
    assert markdown["https://a.test/about"] == {
        "url": "https://a.test/about",
        "final_url": "https://a.test/about",
        "title": None,
        "language": None,
        "fetched_at": 1.0,
        "fetched_at_iso": "1970-01-01T00:00:01.000Z",
        "main_fallback": None,
        "markdown": about.markdown,
    }
    assert len(markdown) == 2  # the filler pages have no Markdown


def test_a_page_without_main_content_of_its_own_weighs_as_its_text(tmp_path: Path) -> None:
    # A book's index names the term as often as the page that defines it; it has no main content
    # of its own, so its text is not weighed as one.
    hub_text = " ".join(f"frobnicate{n} frobnicate, see page {n}" for n in range(3))
    hub = record(
        "https://docs.test/genindex",
        hub_text,
        main_text=hub_text,
        markdown=hub_text,
        main_fallback="no block of text to choose",
    )
    defining = record(
        "https://docs.test/frob",
        "menu. To frobnicate a widget is to turn it, and frobnicate returns the widget.",
        main_text="To frobnicate a widget is to turn it, and frobnicate returns the widget.",
        markdown="To frobnicate a widget is to turn it, and frobnicate returns the widget.",
    )
    write(tmp_path, hub, defining, *filler())
    assert urls(search(tmp_path, "frobnicate"))[0] == "https://docs.test/frob"
    pages = {page["url"]: page for page in exported(tmp_path)}
    # Exported, its main text is its text: it falls back to it, and says so.
    assert pages["https://docs.test/genindex"]["main_text"] == hub_text
    assert pages["https://docs.test/genindex"]["main_fallback"] == "no block of text to choose"


def test_an_index_of_schema_4_is_migrated_and_searched_by_main_content(tmp_path: Path) -> None:
    write(tmp_path, record("https://a.test/old", "otters swim in the old index", main_text="x"))
    # Made as a crawler of schema version 4 made it: no main content columns.
    with sqlite3.connect(tmp_path / "index.sqlite") as connection:
        connection.execute("DROP TABLE pages_fts")
        connection.execute(
            "CREATE VIRTUAL TABLE pages_fts USING fts5 (title, headings, text, nosnippet_text, "
            "content = 'texts', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2')"
        )
        connection.execute("INSERT INTO pages_fts (pages_fts) VALUES ('rebuild')")
        connection.execute("DROP VIEW texts_fts")
        for column in ("main_text", "markdown", "frame_text"):
            connection.execute(f"ALTER TABLE texts DROP COLUMN {column}")
        connection.execute("ALTER TABLE pages DROP COLUMN main_fallback")
        connection.execute("ALTER TABLE pages DROP COLUMN fields")
        connection.execute("PRAGMA user_version = 4")
    connection.close()
    assert urls(search(tmp_path, "otters")) == ["https://a.test/old"]  # read as it is
    assert exported(tmp_path)[0]["main_text"] is None
    write(tmp_path, record("https://a.test/new", "beavers build", main_text="beavers build"))
    with sqlite3.connect(tmp_path / "index.sqlite") as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    connection.close()
    assert urls(search(tmp_path, "otters")) == ["https://a.test/old"]  # indexed again
    assert urls(search(tmp_path, "beavers")) == ["https://a.test/new"]
    pages = {page["url"]: page for page in exported(tmp_path)}
    assert pages["https://a.test/old"]["main_text"] == ""
    assert pages["https://a.test/new"]["main_text"] == "beavers build"


def test_a_page_is_searched_by_its_main_text_and_its_frame_each_once(tmp_path: Path) -> None:
    page = record(
        "https://a.test/story",
        "popular: quokka facts. The council met on Tuesday about the harbour plan.",
        main_text="The council met on Tuesday about the harbour plan.",
        frame_text="popular: quokka facts.",
    )
    write(tmp_path, page, *filler())
    assert urls(search(tmp_path, "quokka")) == ["https://a.test/story"]
    assert urls(search(tmp_path, "council")) == ["https://a.test/story"]
    # The text column holds the frame alone: the main content's words are main_text's only.
    assert urls(search(tmp_path, "text : council", fts=True)) == []
    assert urls(search(tmp_path, "main_text : council", fts=True)) == ["https://a.test/story"]
    assert search(tmp_path, "quokka")[0].snippet == "popular: [quokka] facts."
    assert search(tmp_path, "harbour")[0].snippet.endswith("about the [harbour] plan.")
    assert exported(tmp_path)[0]["text"] == page.text


def test_an_index_of_schema_5_is_migrated_to_search_the_frame(tmp_path: Path) -> None:
    old = record("https://a.test/old", "menu. otters swim", main_text="otters swim")
    write(tmp_path, old)
    # Made as a crawler of schema version 5 made it: pages_fts over texts itself, no frame.
    with sqlite3.connect(tmp_path / "index.sqlite") as connection:
        connection.execute("DROP TABLE pages_fts")
        connection.execute("DROP VIEW texts_fts")
        connection.execute("ALTER TABLE texts DROP COLUMN frame_text")
        connection.execute(
            "CREATE VIRTUAL TABLE pages_fts USING fts5 (title, headings, text, nosnippet_text, "
            "main_text, content = 'texts', content_rowid = 'id', "
            "tokenize = 'unicode61 remove_diacritics 2')"
        )
        connection.execute("INSERT INTO pages_fts (pages_fts) VALUES ('rebuild')")
        connection.execute("ALTER TABLE pages DROP COLUMN fields")
        connection.execute("PRAGMA user_version = 5")
    connection.close()
    assert urls(search(tmp_path, "menu")) == ["https://a.test/old"]  # read as it is
    new = record("https://a.test/new", "menu. beavers build", main_text="beavers build")
    write(tmp_path, replace(new, frame_text="menu."))
    with sqlite3.connect(tmp_path / "index.sqlite") as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    connection.close()
    # The old page, stored without a frame, is searched by its whole text as before.
    assert urls(search(tmp_path, "otters")) == ["https://a.test/old"]
    assert sorted(urls(search(tmp_path, "menu"))) == ["https://a.test/new", "https://a.test/old"]
    assert urls(search(tmp_path, "text : beavers", fts=True)) == []


def test_an_index_of_schema_6_is_migrated_and_keeps_fields(tmp_path: Path) -> None:
    write(tmp_path, record("https://a.test/old", "otters swim"))
    # Made as a crawler of schema version 6 made it: no fields.
    with sqlite3.connect(tmp_path / "index.sqlite") as connection:
        connection.execute("ALTER TABLE pages DROP COLUMN fields")
        connection.execute("PRAGMA user_version = 6")
    connection.close()
    assert "fields" not in exported(tmp_path)[0]  # read as it is
    write(
        tmp_path,
        replace(
            record("https://a.test/new", "beavers build"),
            fields={"price": "2.50", "tags": ["a", "b"]},
        ),
    )
    with sqlite3.connect(tmp_path / "index.sqlite") as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    connection.close()
    pages = {page["url"]: page for page in exported(tmp_path)}
    assert pages["https://a.test/old"]["fields"] is None
    assert pages["https://a.test/new"]["fields"] == {"price": "2.50", "tags": ["a", "b"]}
    out = io.StringIO()
    export_pages(tmp_path, out, format="csv")
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [(row["url"], row["fields.price"], row["fields.tags"]) for row in rows] == [
        ("https://a.test/old", "", ""),
        ("https://a.test/new", "2.50", '["a","b"]'),
    ]


def test_a_page_without_main_content_of_its_own_is_about_nothing(tmp_path: Path) -> None:
    # A table of contents names each term as a heading would (<dt>): without main content of its
    # own, it is in no tier of the pages about a term, and weighs half.
    toc = record(
        "https://docs.test/contents",
        "widgets frobnicate gadgets",
        headings="widgets frobnicate gadgets",
        main_text="widgets frobnicate gadgets",
        main_fallback="no block of text to choose",
    )
    defining = record(
        "https://docs.test/frob",
        "menu. To frobnicate a widget is to turn it over twice, and then once more, slowly.",
        main_text="To frobnicate a widget is to turn it over twice, and then once more, slowly.",
    )
    write(tmp_path, toc, defining, *filler())
    assert urls(search(tmp_path, "frobnicate")) == [
        "https://docs.test/frob",
        "https://docs.test/contents",
    ]
    write(tmp_path / "found", replace(toc, main_fallback=None), defining, *filler())
    assert urls(search(tmp_path / "found", "frobnicate"))[0] == "https://docs.test/contents"
