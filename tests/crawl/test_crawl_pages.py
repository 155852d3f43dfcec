"""End to end over loopback: what pages say about indexing and following is what the crawl does,
seen from the server's request log and from the index (`crawl search` and `crawl export`)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from support.crawling import by_url, make_config, run
from support.loopback import LoopbackWeb

from crawler import Crawler
from crawler.crawl.answers import OFF_LOOP_BYTES
from crawler.output.searching import export_pages, search

pytestmark = pytest.mark.loopback

A = "127.0.1.1"
# Pages speak to the crawler by its product token, PoliteBot (from the default user_agent).

HOME = """<html lang="en"><head><title>Home of zebras</title>
<meta name="description" content="A page about   zebras.">
<script>var secret = "scriptword";</script><style>.x{content:"styleword"}</style></head>
<body><h1>Zebras everywhere</h1>
<p>Visible zebra text with <a href="/plain">a plain link</a>.</p>
<!-- robots content="noindex" --><div class="nav">navword <a href="/from-noindex">nav</a></div>
<!-- /robots -->
<!-- robots content="nofollow" --><p>followless zebra <a href="/from-nofollow">x</a></p>
<!-- /robots -->
<!--googleoff: index--><p>gsaword</p><!--googleon: index-->
<!--googleoff: snippet--><p>quietword</p><!--googleon: snippet-->
<p>Yandex: <noindex><span>yandexword</span><div>blockword</div></noindex> after.</p>
<p><a href="/sponsored" rel="sponsored">ad</a> <a href="/ugc" rel="UGC nofollow">c</a></p>
<p><a href="/meta-noindex">m1</a> <a href="/meta-nofollow">m2</a> <a href="/header-noindex">h1</a>
<a href="/header-other">h2</a> <a href="/header-ours-nofollow">h3</a> <a href="/image.png">i</a>
<a href="/missing">404</a></p>
<!-- robots content="none" --><p>unterminated noneword <a href="/from-unterminated">u</a></p>
"""


def page(words: str, *links: str, head: str = "") -> str:
    anchors = " ".join(f'<a href="{link}">{link}</a>' for link in links)
    return f"<html><head>{head}<title>{words}</title></head><body><p>{words}</p>{anchors}</body>"


async def crawl_site(tmp_path: Path, **changes: Any) -> tuple[LoopbackWeb, Path]:
    net, data, _crawler = await crawl_site_with(tmp_path, **changes)
    return net, data


async def crawl_site_with(tmp_path: Path, **changes: Any) -> tuple[LoopbackWeb, Path, Crawler]:
    data = tmp_path / "data"
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("")
        site.html("/", HOME)
        for path in ("/plain", "/from-noindex", "/sponsored", "/ugc", "/from-nofollow"):
            site.html(path, page(f"{path[1:]}page"))
        site.html(
            "/meta-noindex",
            page(
                "metanoindexword",
                "/behind-meta-noindex",
                head='<META NAME="Robots" CONTENT="NOINDEX">',
            ),
        )
        site.html("/behind-meta-noindex", page("behindword"))
        site.html(
            "/meta-nofollow",
            page(
                "metanofollowword",
                "/behind-meta-nofollow",
                head='<meta name="politebot" content="nofollow">',
            ),
        )
        site.html("/header-noindex", page("headernoindexword"), {"X-Robots-Tag": "noindex"})
        site.html("/header-other", page("headerotherword"), {"X-Robots-Tag": "otherbot: noindex"})
        site.html(
            "/header-ours-nofollow",
            page("headeroursword", "/behind-header"),
            {"X-Robots-Tag": "PoliteBot: nofollow"},
        )
        site.text("/image.png", "not really a png", content_type="image/png")
        site.status("/missing", 404)
        # Every link tried: the site's image.png is one of the answers its tests read.
        changes.setdefault("scope", {"skip_extensions": ()})
        config = make_config(output={"format": "both"}, **changes)
        _records, crawler = await run(config, [site.url("/")], data_dir=data)
    return net, data, crawler


def hits(data: Path, query: str) -> list[str]:
    return [hit.url for hit in search(data, query, limit=50)]


def exported(data: Path) -> dict[str, dict[str, Any]]:
    out = io.StringIO()
    export_pages(data, out)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    return {row["url"].rsplit(":", 1)[1].partition("/")[2]: row for row in rows}


async def test_links_the_page_forbids_are_never_requested(tmp_path: Path) -> None:
    net, _data = await crawl_site(tmp_path)
    paths = set(net.paths(A))
    followed = {"/plain", "/from-noindex", "/meta-noindex", "/behind-meta-noindex", "/missing"}
    followed |= {"/meta-nofollow", "/header-noindex", "/header-other", "/header-ours-nofollow"}
    assert followed <= paths
    never = {"/from-nofollow", "/from-unterminated", "/sponsored", "/ugc"}
    never |= {"/behind-meta-nofollow", "/behind-header"}
    assert not never & paths, sorted(never & paths)


async def test_rel_nofollow_links_are_followed_when_configured(tmp_path: Path) -> None:
    net, _data = await crawl_site(tmp_path, page={"follow_rel_nofollow": True})
    assert {"/sponsored", "/ugc"} <= set(net.paths(A))
    assert "/from-nofollow" not in net.paths(A)


async def test_hidden_text_is_neither_searchable_nor_exported(tmp_path: Path) -> None:
    _net, data = await crawl_site(tmp_path)
    home = f"http://{A}:"
    assert [url.startswith(home) for url in hits(data, "zebra")] == [True]
    for word in ("navword", "gsaword", "yandexword", "blockword", "noneword"):
        assert hits(data, word) == [], word
    for word in ("scriptword", "styleword"):
        assert hits(data, word) == [], word
    assert len(hits(data, "followless")) == 1
    # googleoff: snippet: found by search, never shown in a snippet.
    (quiet,) = search(data, "quietword")
    assert "quietword" not in quiet.snippet
    row = exported(data)[""]
    assert row["index"] is True and row["title"] == "Home of zebras"
    assert row["description"] == "A page about zebras." and row["language"] == "en"
    for word in ("navword", "gsaword", "yandexword", "blockword", "noneword", "scriptword"):
        assert word not in row["text"], word
    assert "Visible zebra text" in row["text"] and "after." in row["text"]
    assert row["sections"] >= 5


async def test_noindex_pages_are_fetched_but_not_searchable(tmp_path: Path) -> None:
    _net, data = await crawl_site(tmp_path)
    assert hits(data, "metanoindexword") == []
    assert hits(data, "headernoindexword") == []
    assert len(hits(data, "behindword")) == 1  # a noindex page's links are followed
    assert len(hits(data, "headerotherword")) == 1  # another robot's X-Robots-Tag
    assert len(hits(data, "metanofollowword")) == 1  # nofollow pages are indexed
    rows = exported(data)
    meta_noindex = rows["meta-noindex"]
    assert meta_noindex["status"] == 200 and meta_noindex["index"] is False
    assert meta_noindex.get("text") in (None, "")
    assert "meta robots" in meta_noindex["index_reason"]
    assert "X-Robots-Tag" in rows["header-noindex"]["index_reason"]
    assert rows["header-ours-nofollow"]["follow"] is False
    assert rows["meta-nofollow"]["nofollow_links"] == [
        f"http://{A}:{_port(rows)}/behind-meta-nofollow"
    ]
    assert rows["image.png"]["index"] is False and "not HTML" in rows["image.png"]["index_reason"]
    assert rows["missing"]["status"] == 404 and rows["missing"]["index_reason"] == "status 404"
    home = rows[""]
    assert f"http://{A}:{_port(rows)}/from-nofollow" in home["nofollow_links"]
    assert f"http://{A}:{_port(rows)}/sponsored" in home["nofollow_links"]
    assert f"http://{A}:{_port(rows)}/from-noindex" in home["links"]


def _port(rows: dict[str, dict[str, Any]]) -> str:
    return str(rows[""]["url"].split(":")[2].partition("/")[0])


async def test_the_crawl_counts_what_pages_allowed(tmp_path: Path) -> None:
    _net, _data, crawler = await crawl_site_with(tmp_path)
    rules = crawler.stats.page_rules
    assert rules["noindex"] == 2  # /meta-noindex and /header-noindex
    assert rules["nofollow"] == 2  # /meta-nofollow and /header-ours-nofollow
    assert rules["with sections"] == 1 and rules["links not followed"] >= 6
    # Every 200 answer but /image.png was an HTML page, read once.
    assert rules["indexed"] + rules["noindex"] == crawler.stats.statuses[200] - 1


async def test_a_page_too_big_for_one_turn_is_read_off_the_loop_like_any_other(
    tmp_path: Path,
) -> None:
    """A page over OFF_LOOP_BYTES is parsed on the worker thread (crawler.crawl.turns): its
    rules, text and links are what they would be on the loop, and the pages queued beside it
    are crawled too."""
    filler = "<p>" + "filler " * (OFF_LOOP_BYTES // 7) + "</p>"
    big = page("bigword", "/after-big", head='<meta name="robots" content="noindex">') + filler
    assert len(big) > OFF_LOOP_BYTES
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("")
        site.html("/", page("homeword", "/big", "/small"))
        site.html("/big", big)
        site.html("/small", page("smallword"))
        site.html("/after-big", page("afterword"))
        records, _crawler = await run(make_config(), [site.url("/")], data_dir=tmp_path / "d")
    found = by_url(records)
    assert {"/", "/big", "/small", "/after-big"} <= set(net.paths(A))
    record = found[site.url("/big")]
    assert record.status == 200 and not record.index and record.text == ""
    assert site.url("/after-big") in record.links


async def test_pages_read_in_the_reader_process_are_read_as_on_the_loop(tmp_path: Path) -> None:
    """page.reader: process sends every page to crawler.crawl.page_reader's process; the crawl
    requests, indexes and exports exactly what it does reading them on the loop."""
    found = {}
    for reader in ("loop", "process"):
        net, data, crawler = await crawl_site_with(tmp_path / reader, page={"reader": reader})
        assert crawler._parts.reader.started == (reader == "process")
        rows = exported(data)
        for row in rows.values():
            for moment in ("fetched_at", "first_seen", "last_changed"):
                row.pop(moment)
                row.pop(f"{moment}_iso")
        # Each run's server has a port of its own.
        origin = net[A].origin
        seen = json.dumps([rows, hits(data, "zebra"), hits(data, "behindword")], sort_keys=True)
        found[reader] = (sorted(net.paths(A)), seen.replace(origin, "ORIGIN"))
        assert "ORIGIN/plain" in found[reader][1]
    assert found["process"] == found["loop"]


async def test_a_link_nested_past_the_depth_bound_is_fetched(tmp_path: Path) -> None:
    """100,000 nested <div>s that end in a link: read flat past depth 512, as a browser's tree
    holds it (crawler.page.bounds), so the link is followed and the deep text indexed."""
    deep = "<div>" * 100_000 + '<p>deepword <a href="/deep-link">on</a></p>' + "</div>" * 100_000
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("")
        site.html("/", page("homeword", "/deep"))
        site.html("/deep", deep)
        site.html("/deep-link", page("reachedword"))
        records, _crawler = await run(make_config(), [site.url("/")], data_dir=tmp_path / "d")
    found = by_url(records)
    assert "/deep-link" in net.paths(A)
    record = found[site.url("/deep")]
    assert record.status == 200 and record.cut is None and "deepword" in record.text
    assert found[site.url("/deep-link")].status == 200
