"""Chinese and Japanese written by people, crawled from loopback and searched: every page holding a
word of one or two characters is found by it (issue 19). The pages are Debian's FAQ in Japanese and
Simplified Chinese (tests/data/debian-faq, verbatim from the debian-faq-ja and debian-faq-zh-cn
packages)."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from support.crawling import make_config, run
from support.loopback import ADDRESSES, LoopbackWeb

from crawler.output.searching import export_pages, search

pytestmark = pytest.mark.loopback

WORDS = {
    # Japanese: kanji, kana, one and two characters, and longer words for good measure.
    "ja": ["版", "更新", "最新", "日本", "削除", "パッケージ", "カーネル", "を"],
    # Simplified Chinese.
    "zh-cn": ["包", "软件", "安装", "内核", "版本", "升级", "的"],
}


async def crawl_faq(test_data: Path, data: Path) -> list[dict[str, Any]]:
    """Crawl both FAQs into an index in `data`; the pages as exported."""
    faq = test_data / "debian-faq"
    async with LoopbackWeb(ADDRESSES[0]) as net:
        site = net[ADDRESSES[0]]
        site.robots("User-agent: *\nAllow: /\n")
        for page in faq.glob("*/*.html"):
            site.html(f"/{page.parent.name}/{page.name}", page.read_text(encoding="utf-8"))
        seeds = [site.url("/ja/index.ja.html"), site.url("/zh-cn/index.zh-cn.html")]
        await run(make_config(), seeds, data_dir=data)
    out = io.StringIO()
    export_pages(data, out)
    return [json.loads(line) for line in out.getvalue().split("\n") if line]


def holding(pages: list[dict[str, Any]], word: str) -> set[str]:
    """The pages whose indexed text holds `word`, by plain substring search."""
    found = set()
    for page in pages:
        searchable = " ".join(
            page[field] or "" for field in ("title", "headings", "text", "nosnippet_text")
        )
        if page["index"] and word in searchable:
            found.add(page["final_url"])
    return found


def found_by_word_tokens(pages: list[dict[str, Any]], word: str) -> set[str]:
    """What FTS5's unicode61 alone (schema 1's index) finds: a run of CJK is one token there."""
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE VIRTUAL TABLE t USING fts5 (url UNINDEXED, text)")
    for page in pages:
        if page["index"]:
            connection.execute("INSERT INTO t VALUES (?, ?)", (page["final_url"], page["text"]))
    rows = connection.execute("SELECT url FROM t WHERE t MATCH ?", (f'"{word}"',))
    return {row[0] for row in rows}


async def test_every_page_holding_a_cjk_word_is_found_by_it(
    test_data: Path, tmp_path: Path
) -> None:
    pages = await crawl_faq(test_data, tmp_path)
    by_language = {
        language: [page for page in pages if f"/{language}/" in page["final_url"]]
        for language in WORDS
    }
    assert {language: len(found) for language, found in by_language.items()} == {
        "ja": 17,
        "zh-cn": 17,
    }
    missed_by_word_tokens = 0
    for language, words in WORDS.items():
        for word in words:
            expected = holding(pages, word)  # Han characters are shared: in either FAQ
            assert holding(by_language[language], word), f"{word!r}: in no page of {language}"
            assert len(expected) < len(pages), f"{word!r} is in every page: it tests little"
            hits = search(tmp_path, word, limit=100)
            assert {hit.url for hit in hits} == expected, word
            assert all(f"[{word}]" in hit.snippet for hit in hits if word in hit.snippet), word
            missed_by_word_tokens += len(expected - found_by_word_tokens(pages, word))
    # The same words through unicode61's tokens alone miss pages: what this index fixes.
    assert missed_by_word_tokens > 0


async def test_a_cjk_query_and_its_snippet(test_data: Path, tmp_path: Path) -> None:
    await crawl_faq(test_data, tmp_path)
    hits = search(tmp_path, "カーネル", limit=3)
    assert hits and all("[カーネル]" in hit.snippet for hit in hits)
    # Words in two scripts with no space between them: each is found, and together.
    (page,) = [hit for hit in search(tmp_path, "Debian 日本", limit=100)][:1]
    assert "/ja/" in page.url
