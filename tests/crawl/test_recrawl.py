"""Recrawls over loopback, judged by the server's log: a site whose pages change between runs is
gone over again with conditional requests; unchanged pages cost a 304 (or come back as they were),
changed ones are indexed again (search finds the new words, not the old), deleted ones are marked
gone, and `crawl export --changed-since` lists exactly what changed."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from support.crawling import make_config, run
from support.loopback import ADDRESSES, EPSILON, LoopbackWeb, Site

from crawler.config import Config
from crawler.output.searching import export_changes, export_pages, search

pytestmark = pytest.mark.loopback

A = ADDRESSES[0]
DELAY = 0.05
LAST_MODIFIED = "Tue, 03 Nov 2026 10:00:00 GMT"


class ChangingSite:
    """Pages a test edits between crawls. `/etag` and `/dated` answer a conditional request
    with 304 when it matches, as a real server does; the others never do."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.texts: dict[str, str] = {}
        site.robots(f"User-agent: *\nCrawl-delay: {DELAY}\n")
        for path in ("/", "/etag", "/dated", "/plain", "/edited", "/deleted", "/added"):
            site.routes[path] = self._answer

    def page(self, path: str, words: str, *links: str) -> None:
        anchors = "".join(f'<a href="{link}">{link}</a> ' for link in links)
        self.texts[path] = f"<html><title>{path}</title><body><p>{words}</p>{anchors}</body>"

    def _answer(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        if path not in self.texts:
            return web.Response(status=404, text="gone")
        headers: dict[str, str] = {}
        if path == "/etag":
            headers["ETag"] = '"v1"'
            if request.headers.get("If-None-Match") == '"v1"':
                return web.Response(status=304, headers=headers)
        if path == "/dated":
            headers["Last-Modified"] = LAST_MODIFIED
            if request.headers.get("If-Modified-Since") == LAST_MODIFIED:
                return web.Response(status=304, headers=headers)
        return web.Response(text=self.texts[path], content_type="text/html", headers=headers)


def recrawl_config(**changes: Any) -> Config:
    return make_config(
        output={"format": "both"}, recrawl={"enabled": True, "after": 0.0}, **changes
    )


async def test_a_recrawl_asks_conditionally_and_finds_what_changed(tmp_path: Path) -> None:
    async with LoopbackWeb(A) as net:
        site = ChangingSite(net[A])
        links = ("/etag", "/dated", "/plain", "/edited", "/deleted")
        site.page("/", "home", *links)
        site.page("/etag", "etagword")
        site.page("/dated", "datedword")
        site.page("/plain", "plainword")
        site.page("/edited", "oldword")
        site.page("/deleted", "deletedword")
        first, _ = await run(
            make_config(output={"format": "both"}), [site.site.url()], data_dir=tmp_path
        )
        assert len(first) == 6
        between = max(record.fetched_at for record in first) + 1e-3

        site.page("/edited", "newword", "/added")
        site.page("/added", "addedword")
        del site.texts["/deleted"]
        net.hits.clear()
        second, crawler = await run(recrawl_config(), [site.site.url()], data_dir=tmp_path)

    hits = {hit.path: hit for hit in net.hits}
    # robots.txt is still fresh in the cache (robots.cache_ttl): not asked for again.
    assert sorted(hits) == sorted(["/", *links, "/added"])
    assert [hit.path for hit in net.hits].count("/etag") == 1  # each URL once
    assert hits["/etag"].conditions == (("If-None-Match", '"v1"'),)
    assert hits["/dated"].conditions == (("If-Modified-Since", LAST_MODIFIED),)
    assert hits["/plain"].conditions == ()  # it gave no validators: asked in full
    assert hits["/added"].conditions == ()
    assert min(net.gaps(A)) >= DELAY - EPSILON
    found = {record.url.removeprefix(site.site.origin): record for record in second}
    assert {path: record.change for path, record in found.items()} == {
        "/": "unchanged",
        "/etag": "unchanged",
        "/dated": "unchanged",
        "/plain": "unchanged",
        "/edited": "changed",
        "/deleted": "gone",
        "/added": "new",
    }
    assert found["/etag"].status == 304
    changes = crawler.stats.changes
    assert (changes["unchanged"], changes["changed"], changes["gone"], changes["new"]) == (
        4,
        1,
        1,
        1,
    )

    # The index: the new words found, the old ones not; the gone page not found, kept.
    assert [hit.url for hit in search(tmp_path, "newword")] == [site.site.url("/edited")]
    assert search(tmp_path, "oldword") == []
    assert search(tmp_path, "deletedword") == []
    assert [hit.url for hit in search(tmp_path, "etagword")] == [site.site.url("/etag")]
    out = io.StringIO()
    export_pages(tmp_path, out)
    pages = {page["url"]: page for page in map(json.loads, out.getvalue().splitlines())}
    etag = pages[site.site.url("/etag")]
    assert (etag["times_fetched"], etag["times_changed"], etag["change"]) == (2, 0, "unchanged")
    assert etag["text"] == "etagword"  # a 304 keeps what the page said
    deleted = pages[site.site.url("/deleted")]
    assert (deleted["gone"], deleted["status"], deleted["times_changed"]) == (True, 404, 1)

    # What changed since the first crawl: exactly these three.
    out = io.StringIO()
    assert export_changes(tmp_path, out, between) == 3
    listed = [json.loads(line) for line in out.getvalue().splitlines()]
    assert sorted(
        (line["url"].removeprefix(site.site.origin), line["change"]) for line in listed
    ) == [
        ("/added", "new"),
        ("/deleted", "gone"),
        ("/edited", "changed"),
    ]


async def test_a_recrawl_leaves_what_is_not_due_and_resumes_a_pass_begun(tmp_path: Path) -> None:
    async with LoopbackWeb(A) as net:
        site = ChangingSite(net[A])
        site.page("/", "home", "/plain")
        site.page("/plain", "plainword")
        await run(make_config(), [site.site.url()], data_dir=tmp_path)
        net.hits.clear()
        # Fetched moments ago, due after a day: nothing to ask for.
        records, _ = await run(
            make_config(recrawl={"enabled": True, "after": 86_400.0}),
            [site.site.url()],
            data_dir=tmp_path,
        )
        assert records == [] and net.paths(A) == []
        # A pass stopped after its first page: the next run goes on with it, no new pass.
        config = recrawl_config(limits={"max_pages": 1})
        await run(config, [site.site.url()], data_dir=tmp_path)
        assert net.paths(A) == ["/"]
        net.hits.clear()
        records, _ = await run(recrawl_config(), [site.site.url()], data_dir=tmp_path)
    assert net.paths(A) == ["/plain"]
    assert [record.change for record in records] == ["unchanged"]


async def test_a_sitemap_lastmod_no_later_than_the_last_fetch_spares_the_request(
    tmp_path: Path,
) -> None:
    ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
    async with LoopbackWeb(A) as net:
        site = ChangingSite(net[A])
        site.site.robots(f"User-agent: *\nCrawl-delay: {DELAY}\nSitemap: /sitemap.xml\n")
        site.page("/", "home")
        site.page("/plain", "plainword")
        site.page("/edited", "oldword")

        def sitemap(edited: str) -> None:
            entries = (
                f"<url><loc>{site.site.url('/plain')}</loc><lastmod>2020-01-01</lastmod></url>"
                f"<url><loc>{site.site.url('/edited')}</loc><lastmod>{edited}</lastmod></url>"
            )
            site.site.text(
                "/sitemap.xml", f"<urlset {ns}>{entries}</urlset>", content_type="text/xml"
            )

        sitemap("2020-01-01")
        await run(make_config(), [site.site.url()], data_dir=tmp_path)
        assert "/plain" in net.paths(A)
        sitemap("2100-01-01")  # the sitemap says /edited changed since (the future, for the test)
        site.page("/edited", "newword")
        net.hits.clear()
        # recrawl.lastmod_trust always: every host's lastmod trusted, as before issue 42
        # (tests/crawl/test_recrawl_freshness.py has trust earned).
        always = make_config(
            output={"format": "both"},
            recrawl={"enabled": True, "after": 0.0, "lastmod_trust": "always"},
        )
        records, crawler = await run(always, [site.site.url()], data_dir=tmp_path)
    paths = net.paths(A)
    assert "/sitemap.xml" in paths and "/edited" in paths
    assert "/plain" not in paths  # its lastmod is older than our fetch
    assert crawler.stats.changes["not due by lastmod"] == 1
    assert {record.url.removeprefix(site.site.origin): record.change for record in records}[
        "/edited"
    ] == "changed"
