"""Ranking on real documentation (issues 19 and 38): eight pages of Python's documentation and
four of PostgreSQL's, crawled from loopback (tests/data/python-docs, postgresql-docs), each name
searched. The page that defines it ranks first; BM25 alone (the ranking before: title and text,
no headings, no tiers) did not for all of them."""

from __future__ import annotations

import gzip
import sqlite3
from pathlib import Path

import pytest
from support.crawling import make_config, run
from support.loopback import ADDRESSES, LoopbackWeb

from crawler.config import LimitsConfig
from crawler.output.query import fts_query
from crawler.output.ranking import NAME_IN_PROSE, TITLE_NEARNESS
from crawler.output.searching import search

pytestmark = pytest.mark.loopback

DEFINED_IN = {
    "pickle": "pickle.html",  # pickletools' title names it too, and its page is shorter
    "subprocess": "subprocess.html",  # asyncio-subprocess names it in its functions
    "os.path.join": "os.path.html",  # readline's example calls it
    "functools.lru_cache": "functools.html",  # fnmatch says it uses it
}


def first_by_bm25_alone(index: Path, query: str) -> str:
    """The first page as the index ranked before: BM25, title 10 times the text, no headings."""
    with sqlite3.connect(f"{index.resolve().as_uri()}?mode=ro", uri=True) as connection:
        row = connection.execute(
            "SELECT pages.final_url FROM pages_fts JOIN pages ON pages.id = pages_fts.rowid "
            "WHERE pages_fts MATCH ? ORDER BY bm25(pages_fts, 10.0, 0.0, 1.0, 1.0) LIMIT 1",
            (fts_query(query),),
        ).fetchone()
    connection.close()
    return str(row[0])


async def test_the_page_that_defines_a_name_ranks_first(test_data: Path, tmp_path: Path) -> None:
    library = test_data / "python-docs" / "library"
    async with LoopbackWeb(ADDRESSES[0]) as net:
        site = net[ADDRESSES[0]]
        site.robots("User-agent: *\nAllow: /\n")
        for page in library.glob("*.html"):
            site.html(f"/library/{page.name}", page.read_text(encoding="utf-8"))
        seeds = [site.url(f"/library/{page.name}") for page in sorted(library.glob("*.html"))]
        # The eight pages only: their links lead to the rest of the documentation, not here.
        await run(make_config(limits=LimitsConfig(max_depth=0)), seeds, data_dir=tmp_path)
    before = 0
    for name, page in DEFINED_IN.items():
        hits = search(tmp_path, name, limit=3)
        assert hits and hits[0].url.endswith(f"/library/{page}"), (name, [h.url for h in hits])
        before += first_by_bm25_alone(tmp_path / "index.sqlite", name).endswith(page)
    assert before < len(DEFINED_IN)  # what the tiers and the headings changed


POSTGRESQL_DEFINED_IN = {
    # the table of string functions gives its signature and points on to the section
    "regexp_replace": ("functions-matching.html", "functions-string.html"),
    # UUID Type and UUID Functions: both titles begin with the name
    "uuid": ("datatype-uuid.html", "functions-uuid.html"),
}
TITLE_NEARER = {
    # both speak of `json` in sentences; JSON Types says less beside the name than JSON
    # Functions and Operators
    "json": ("datatype-json.html", "functions-json.html"),
}


async def test_the_page_that_speaks_of_a_name_in_sentences_or_names_it_nearer_ranks_first(
    test_data: Path, tmp_path: Path
) -> None:
    pages = test_data / "postgresql-docs"
    async with LoopbackWeb(ADDRESSES[0]) as net:
        site = net[ADDRESSES[0]]
        site.robots("User-agent: *\nAllow: /\n")
        for page in pages.glob("*.html.gz"):
            site.html(f"/{page.stem}", gzip.decompress(page.read_bytes()).decode("utf-8"))
        seeds = [site.url(f"/{page.stem}") for page in sorted(pages.glob("*.html.gz"))]
        await run(make_config(limits=LimitsConfig(max_depth=0)), seeds, data_dir=tmp_path)
    for name, (defining, other) in POSTGRESQL_DEFINED_IN.items():
        hits = {hit.url.rsplit("/", 1)[-1]: hit for hit in search(tmp_path, name, limit=4)}
        assert next(iter(hits)) == defining, (name, list(hits))
        # The two are alike in every other tier, and BM25 put the other first.
        assert hits[defining].tier == hits[other].tier | NAME_IN_PROSE
        assert not hits[other].tier & NAME_IN_PROSE
        assert hits[other].score > hits[defining].score
    for name, (defining, other) in TITLE_NEARER.items():
        hits = {hit.url.rsplit("/", 1)[-1]: hit for hit in search(tmp_path, name, limit=4)}
        assert next(iter(hits)) == defining, (name, list(hits))
        assert hits[defining].tier & ~TITLE_NEARNESS == hits[other].tier & ~TITLE_NEARNESS
        assert hits[defining].tier & NAME_IN_PROSE
        assert hits[other].score > hits[defining].score
