"""Sitemaps in a crawl, over loopback, judged by the servers' logs: the sitemaps robots.txt names
are fetched in their hosts' slots, indexes lead to their sitemaps (gzipped, text), the URLs they
list are crawled at the host's pace, entries a sitemap may not list are skips, and files past the
caps are read up to them."""

from __future__ import annotations

import gzip
import json
import logging
from pathlib import Path

import pytest
from aiohttp import web
from support.crawling import by_url, make_config, run
from support.loopback import ADDRESSES, EPSILON, LoopbackWeb, Site

from crawler.stats import CrawlStats

pytestmark = pytest.mark.loopback

A, B = ADDRESSES[:2]
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
DELAY = 0.1


def serve_bytes(site: Site, path: str, body: bytes, content_type: str) -> None:
    site.routes[path] = lambda request: web.Response(body=body, content_type=content_type)


def urlset(*urls: str, lastmod: str | None = None) -> bytes:
    when = f"<lastmod>{lastmod}</lastmod>" if lastmod else ""
    entries = "".join(f"<url><loc>{url}</loc>{when}</url>" for url in urls)
    return f'<?xml version="1.0"?><urlset {NS}>{entries}</urlset>'.encode()


def index(*urls: str) -> bytes:
    entries = "".join(f"<sitemap><loc>{url}</loc></sitemap>" for url in urls)
    return f'<?xml version="1.0"?><sitemapindex {NS}>{entries}</sitemapindex>'.encode()


def skip_lines(data_dir: Path) -> dict[str, dict[str, str]]:
    text = (data_dir / "skips.jsonl").read_text(encoding="utf-8")
    lines = [json.loads(line) for line in text.splitlines()]
    return {line["url"]: line for line in lines}


def adds_up(stats: CrawlStats) -> bool:
    return stats.met == stats.fetched + sum(stats.skips.values()) + stats.queued


async def test_an_index_gzipped_and_text_sitemaps_lead_to_pages_no_link_reaches(
    tmp_path: Path,
) -> None:
    async with LoopbackWeb(A) as net:
        a = net[A]
        # A relative Sitemap line is read against robots.txt's URL.
        a.robots(f"User-agent: *\nCrawl-delay: {DELAY}\nSitemap: /sitemap_index.xml\n")
        a.page("/", title="home")
        serve_bytes(
            a,
            "/sitemap_index.xml",
            index(a.url("/maps/pages.xml.gz"), a.url("/maps/more.txt"), a.url("/maps/inner.xml")),
            "application/xml",
        )
        # Under /maps/, listing pages outside it: robots.txt of their own origin named the index
        # that led here, so the protocol lets it.
        pages = urlset(a.url("/orphan-1"), a.url("/orphan-2"), lastmod="2026-01-02")
        serve_bytes(a, "/maps/pages.xml.gz", gzip.compress(pages), "application/gzip")
        a.text("/maps/more.txt", f"{a.url('/orphan-3')}\n{a.url('/')}\n")
        # An index in an index in an index: level 3, past sitemaps.max_depth 2.
        serve_bytes(a, "/maps/inner.xml", index(a.url("/maps/deepest.xml")), "application/xml")
        serve_bytes(a, "/maps/deepest.xml", urlset(a.url("/never")), "application/xml")
        for n in (1, 2, 3):
            a.page(f"/orphan-{n}", title=f"orphan {n}")
        config = make_config(sitemaps={"max_depth": 2}, output={"format": "jsonl"})
        records, crawler = await run(config, [a.url("/")], data_dir=tmp_path)

    paths = net.paths(A)
    assert paths[:2] == ["/robots.txt", "/"]
    assert sorted(paths[2:]) == sorted(
        [
            "/sitemap_index.xml",
            "/maps/pages.xml.gz",
            "/maps/more.txt",
            "/maps/inner.xml",
            "/orphan-1",
            "/orphan-2",
            "/orphan-3",
        ]
    )
    # One host, one pace: sitemaps take their turn in its slot like pages.
    assert min(net.gaps(A)) >= DELAY - EPSILON
    found = by_url(records)
    assert found[a.url("/orphan-2")].depth == 1
    assert found[a.url("/sitemap_index.xml")].index_reason == "a sitemap index: 3 entries"
    gzipped = found[a.url("/maps/pages.xml.gz")]
    assert gzipped.index_reason == "a sitemap: 2 entries"
    assert gzipped.links == (a.url("/orphan-1"), a.url("/orphan-2"))
    assert found[a.url("/maps/more.txt")].index_reason == "a text sitemap: 2 entries"
    deepest = skip_lines(tmp_path)[a.url("/maps/deepest.xml")]
    assert deepest["reason"] == "over sitemaps.max_depth"
    assert "level 3" in deepest["detail"]
    stats = crawler.stats
    assert stats.sitemaps == 4
    assert stats.sitemap_urls == 3 + 2 + 2 + 1
    assert adds_up(stats)


async def test_off_by_config_no_sitemap_is_fetched_and_the_default_is_tried_when_asked(
    tmp_path: Path,
) -> None:
    async with LoopbackWeb(A, B) as net:
        a, b = net[A], net[B]
        a.robots("Sitemap: /listed.xml\n")
        b.robots("User-agent: *\nAllow: /\n")
        for site in (a, b):
            site.page("/")
            serve_bytes(site, "/sitemap.xml", urlset(site.url("/from-default")), "text/xml")
            serve_bytes(site, "/listed.xml", urlset(site.url("/from-listed")), "text/xml")
            site.page("/from-default")
            site.page("/from-listed")
        seeds = [a.url("/"), b.url("/")]
        await run(make_config(sitemaps={"enabled": False}), seeds)
        assert sorted(net.paths(A)) == ["/", "/robots.txt"]
        net.hits.clear()
        await run(make_config(sitemaps={"try_default": True}), seeds)
    # A names a sitemap: only that one is read; B names none: /sitemap.xml is tried.
    assert sorted(net.paths(A)) == ["/", "/from-listed", "/listed.xml", "/robots.txt"]
    assert sorted(net.paths(B)) == ["/", "/from-default", "/robots.txt", "/sitemap.xml"]


async def test_entries_a_sitemap_may_not_list_are_skips_until_a_page_links_to_them(
    tmp_path: Path,
) -> None:
    async with LoopbackWeb(A, B) as net:
        a, b = net[A], net[B]
        # A's sitemap lists B's URLs: B's robots.txt never named it.
        a.robots("Sitemap: /a.xml\n")
        serve_bytes(
            a,
            "/a.xml",
            urlset(a.url("/mine"), b.url("/claimed-by-a"), b.url("/linked-later")),
            "application/xml",
        )
        # B's robots.txt names a sitemap on A: that one may list B's URLs (cross-submission).
        b.robots(f"Sitemap: {a.url('/for-b/sitemap.xml')}\n")
        serve_bytes(a, "/for-b/sitemap.xml", urlset(b.url("/cross")), "application/xml")
        a.page("/")
        a.page("/mine")
        b.page("/", "/slow-way")
        b.page("/slow-way", "/deeper")
        b.page("/deeper", "/linked-later")
        for path in ("/cross", "/claimed-by-a", "/linked-later"):
            b.page(path)
        config = make_config(output={"format": "jsonl"})
        _records, crawler = await run(config, [a.url("/"), b.url("/")], data_dir=tmp_path)

    assert "/mine" in net.paths(A)
    assert "/cross" in net.paths(B)
    assert "/claimed-by-a" not in net.paths(B)
    assert net.paths(B).count("/linked-later") == 1
    skips = skip_lines(tmp_path)
    claimed = skips[b.url("/claimed-by-a")]
    assert claimed["reason"] == "outside the sitemap's location"
    assert claimed["detail"] == (
        f"outside the sitemap's location ({a.url('/')}); listed in {a.url('/a.xml')}"
    )
    # Refused from the sitemap, then queued by a link: its skip is withdrawn.
    stats = crawler.stats
    assert stats.skips["outside the sitemap's location"] == 1
    assert adds_up(stats)


async def test_a_gzip_bomb_and_a_million_entries_are_read_up_to_the_caps(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # 100 MB of XML once inflated, about 100 KB on the wire.
    bomb = gzip.compress(
        f'<?xml version="1.0"?><urlset {NS}>'.encode() + b" " * (100 * 1024 * 1024), 9
    )
    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("Sitemap: /bomb.xml.gz\nSitemap: /million.xml.gz\n")
        a.page("/")
        serve_bytes(a, "/bomb.xml.gz", bomb, "application/gzip")
        million = "".join(f"<url><loc>{a.url(f'/p{n}')}</loc></url>" for n in range(1_000_000))
        body = gzip.compress(f"<urlset {NS}>{million}</urlset>".encode(), 1)
        serve_bytes(a, "/million.xml.gz", body, "application/gzip")
        # Pages past the first few are not served: a 404 is as good as a page for this test,
        # and the crawl stops at max_pages.
        config = make_config(limits={"max_pages": 20})
        with caplog.at_level(logging.WARNING, logger="crawler"):
            records, crawler = await run(config, [a.url("/")])

    found = by_url(records)
    bombed = found[a.url("/bomb.xml.gz")]
    assert bombed.cut == f"more than {50 * 1024 * 1024} bytes"
    assert bombed.index_reason == "a sitemap: 0 entries"
    listed = found[a.url("/million.xml.gz")]
    assert listed.cut == "more than 50000 URLs"
    assert len(listed.links) == 50_000
    assert crawler.stats.sitemap_urls == 50_000
    warned = [r.getMessage() for r in caplog.records if "sitemap" in r.getMessage()]
    assert any("bomb.xml.gz" in line and "the rest is not read" in line for line in warned)
    assert any("million.xml.gz" in line and "50000 URLs" in line for line in warned)


async def test_a_robots_txt_naming_thousands_of_sitemaps_is_read_up_to_max_files(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("".join(f"Sitemap: /s{n}.xml\n" for n in range(20_000)))
        a.page("/")
        with caplog.at_level(logging.WARNING, logger="crawler"):
            _, crawler = await run(make_config(sitemaps={"max_files": 5}), [a.url("/")])
    assert sorted(net.paths(A)) == sorted(["/robots.txt", "/", *(f"/s{n}.xml" for n in range(5))])
    assert any(
        "names 20000 sitemaps; the first 5 are read" in r.getMessage() for r in caplog.records
    )
    assert adds_up(crawler.stats)
