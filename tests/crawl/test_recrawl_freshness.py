"""Freshness earned, over loopback (issue 42): a sitemap whose lastmod never moves hides no
change, a host whose lastmod is right earns the requests it spares (and loses them when a sampled
page proves it wrong), and pages come due by their revisit bound."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from support.crawling import make_config, run
from support.loopback import ADDRESSES, LoopbackWeb, Site

from crawler.cli.report import summary
from crawler.config import Config, StateConfig
from crawler.freshness import DISTRUSTED, TRUSTED, UNTRUSTED, LastmodTrust
from crawler.output.searching import search
from crawler.robots import RobotsOptions
from crawler.state import open_state

pytestmark = pytest.mark.loopback

A = ADDRESSES[0]
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
PAGES = ("/a", "/b", "/c")


class DatedSite:
    """Pages listed in a sitemap with the lastmod a test gives each (a date string)."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.words = {path: f"{path[1:]}first" for path in PAGES}
        self.lastmods = dict.fromkeys(PAGES, "2020-01-01")
        self.generated = 0
        site.robots("User-agent: *\nSitemap: /sitemap.xml\n")
        site.routes["/sitemap.xml"] = self._sitemap
        site.page("/")  # the seed: the pages are found through the sitemap robots.txt names
        for path in PAGES:
            site.routes[path] = self._page

    def _sitemap(self, request: web.Request) -> web.Response:
        # Made afresh on each request, as generated sitemaps are: never the same bytes (an
        # unchanged sitemap is not read again, and says nothing new of its pages).
        self.generated += 1
        entries = f"<!-- generated {self.generated} -->" + "".join(
            f"<url><loc>{self.site.url(path)}</loc><lastmod>{lastmod}</lastmod></url>"
            for path, lastmod in self.lastmods.items()
        )
        return web.Response(text=f"<urlset {NS}>{entries}</urlset>", content_type="text/xml")

    def _page(self, request: web.Request) -> web.Response:
        words = self.words[request.path]
        html = f"<html><title>{request.path}</title><body><p>{words}</p></body></html>"
        return web.Response(text=html, content_type="text/html")


def recrawl(**keys: Any) -> Config:
    return make_config(recrawl={"enabled": True, "after": 0.0, **keys})


def trust_of(data: Path, origin: str) -> LastmodTrust:
    state = open_state(data, StateConfig(), RobotsOptions())
    try:
        return state.freshness.trust(origin)
    finally:
        state.close()


def asked(net: LoopbackWeb) -> list[str]:
    return sorted(path for path in net.paths(A) if path in PAGES)


async def test_a_lastmod_that_never_moves_hides_no_change(tmp_path: Path) -> None:
    async with LoopbackWeb(A) as net:
        site = DatedSite(net[A])
        await run(make_config(), [site.site.url()], data_dir=tmp_path)
        assert asked(net) == list(PAGES)
        # The text changes; the sitemap's lastmod (a build date, say) stays where it was.
        site.words["/b"] = "bsecond"
        net.hits.clear()
        records, crawler = await run(recrawl(), [site.site.url()], data_dir=tmp_path)
        # Untrusted, the lastmod spared nothing: every page was asked for (conditionally).
        assert asked(net) == list(PAGES)
        changes = {record.url.removeprefix(site.site.origin): record.change for record in records}
        assert changes["/b"] == "changed"
        assert crawler.stats.lastmod_wrong == {site.site.origin: 1}
        assert [hit.url for hit in search(tmp_path, "bsecond")] == [site.site.url("/b")]
        trust = trust_of(tmp_path, site.site.origin)
        assert trust.level == DISTRUSTED and site.site.url("/b") in trust.reason
        text = summary(crawler.stats, [], [], max_wait=1.0, recrawl=(0.0, 0))
        assert f"lastmod proved wrong: {site.site.origin}: 1 page changed" in text
        status = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "crawler",
            "status",
            "--data",
            str(tmp_path),
            stdout=asyncio.subprocess.PIPE,
        )
        out, _ = await asyncio.wait_for(status.communicate(), timeout=60)
        assert f"lastmod {site.site.origin}: distrusted: {site.site.url('/b')} had changed" in (
            out.decode()
        )

        # Proved wrong, it still spares nothing: the next change is found too.
        site.words["/c"] = "csecond"
        net.hits.clear()
        records, _ = await run(recrawl(), [site.site.url()], data_dir=tmp_path)
        assert asked(net) == list(PAGES)
        assert [hit.url for hit in search(tmp_path, "csecond")] == [site.site.url("/c")]


async def test_a_right_lastmod_earns_trust_spares_requests_and_loses_it_when_wrong(
    tmp_path: Path,
) -> None:
    earned = {"lastmod_confirmations": 3, "lastmod_sample": 0.0}
    async with LoopbackWeb(A) as net:
        site = DatedSite(net[A])
        seeds = [site.site.url()]
        await run(make_config(), seeds, data_dir=tmp_path)
        assert trust_of(tmp_path, site.site.origin).level == UNTRUSTED

        # The first pass checks what the lastmod claims: three right answers earn trust.
        net.hits.clear()
        await run(recrawl(**earned), seeds, data_dir=tmp_path)
        assert asked(net) == list(PAGES)
        trust = trust_of(tmp_path, site.site.origin)
        assert trust.level == TRUSTED and "proved right 3 times" in trust.reason

        # Trusted: what its lastmod dates before our fetch costs no request; a page whose
        # lastmod moved is asked for.
        site.words["/a"] = "asecond"
        site.lastmods["/a"] = "2100-01-01"
        net.hits.clear()
        _, crawler = await run(recrawl(**earned), seeds, data_dir=tmp_path)
        assert asked(net) == ["/a"]
        assert crawler.stats.changes["not due by lastmod"] == 2

        # A page changes without its lastmod moving: the sample (all of them here) finds it,
        # and the host's lastmod is trusted no more.
        site.words["/b"] = "bsecond"
        net.hits.clear()
        _, crawler = await run(
            recrawl(lastmod_confirmations=3, lastmod_sample=1.0), seeds, data_dir=tmp_path
        )
        assert asked(net) == list(PAGES)
        assert crawler.stats.lastmod_wrong == {site.site.origin: 1}
        assert trust_of(tmp_path, site.site.origin).level == DISTRUSTED
        net.hits.clear()
        await run(recrawl(**earned), seeds, data_dir=tmp_path)
        assert asked(net) == list(PAGES)  # no sample needed: distrusted, it spares nothing


async def test_pages_come_due_within_the_revisit_bounds(tmp_path: Path) -> None:
    async with LoopbackWeb(A) as net:
        site = DatedSite(net[A])
        seeds = [site.site.url()]
        await run(make_config(), seeds, data_dir=tmp_path)
        net.hits.clear()
        # Fetched moments ago, with no history: each waits recrawl.after.
        await run(make_config(recrawl={"enabled": True, "after": 600.0}), seeds, data_dir=tmp_path)
        assert asked(net) == []
        # Give every page a history; then a budget of one request a day, far less than the
        # pages need: every page waits the longest interval, and no longer.
        await run(recrawl(), seeds, data_dir=tmp_path)
        site.words["/b"] = "bsecond"
        await asyncio.sleep(0.6)  # past the longest interval
        net.hits.clear()
        starved = {
            "after": 0.5,
            "min_interval": 0.0,
            "max_interval": 0.5,
            "budget_per_host_per_day": 1.0,
            "lastmod_trust": "never",
        }
        await run(make_config(recrawl={"enabled": True, **starved}), seeds, data_dir=tmp_path)
        assert asked(net) == list(PAGES)
        assert [hit.url for hit in search(tmp_path, "bsecond")] == [site.site.url("/b")]


async def test_a_trusted_lastmod_that_moved_brings_a_page_forward(tmp_path: Path) -> None:
    # A budget of one request a day for three pages: each waits the longest interval, two
    # hours (the sitemap is due every pass: recrawl.after 0).
    starved = {"max_interval": 7200.0, "budget_per_host_per_day": 1.0}
    async with LoopbackWeb(A) as net:
        site = DatedSite(net[A])
        seeds = [site.site.url()]
        await run(make_config(), seeds, data_dir=tmp_path)
        # A pass gives every page a history (and the lastmod three right claims of five).
        await run(recrawl(), seeds, data_dir=tmp_path)
        # Untrusted yet: a lastmod after our fetch brings nothing forward, and no page is due.
        site.words["/a"] = "asecond"
        site.lastmods["/a"] = "2100-01-01"
        net.hits.clear()
        _, crawler = await run(recrawl(**starved), seeds, data_dir=tmp_path)
        assert asked(net) == []
        assert crawler.stats.changes["due by lastmod"] == 0
        assert search(tmp_path, "asecond") == []
        # Trusted: a pass where every page is due, its lastmod no later than our fetch (/a's
        # changed: its claim proves nothing), makes the right claims enough.
        site.words["/a"] = "afirst"
        site.lastmods["/a"] = "2020-01-01"
        await run(recrawl(lastmod_confirmations=3), seeds, data_dir=tmp_path)
        assert trust_of(tmp_path, site.site.origin).level == TRUSTED
        # Its lastmod saying /c changed after our last fetch, /c is due now, though its
        # interval has two hours to run; the others wait.
        site.words["/c"] = "csecond"
        site.lastmods["/c"] = "2100-01-01"
        net.hits.clear()
        _, crawler = await run(
            recrawl(lastmod_confirmations=3, **starved), seeds, data_dir=tmp_path
        )
        assert asked(net) == ["/c"]
        assert crawler.stats.changes["due by lastmod"] == 1
        assert [hit.url for hit in search(tmp_path, "csecond")] == [site.site.url("/c")]
        text = summary(crawler.stats, [], [], max_wait=1.0, recrawl=(0.0, 0))
        assert "1 brought forward by a trusted lastmod" in text


async def test_no_page_is_asked_for_sooner_than_the_shortest_interval(tmp_path: Path) -> None:
    async with LoopbackWeb(A) as net:
        site = DatedSite(net[A])
        seeds = [site.site.url()]
        await run(make_config(), seeds, data_dir=tmp_path)
        # Every page changes at every visit: its rate is as high as the history can say.
        for second in ("second", "third"):
            for path in PAGES:
                site.words[path] = f"{path[1:]}{second}"
            await run(recrawl(lastmod_trust="never"), seeds, data_dir=tmp_path)
        net.hits.clear()
        # However fast they change, and however large the budget, not sooner than an hour.
        shortest = {"min_interval": 3600.0, "budget_per_host_per_day": 1e6}
        await run(recrawl(lastmod_trust="never", **shortest), seeds, data_dir=tmp_path)
        assert asked(net) == []
        assert "/sitemap.xml" in net.paths(A)  # the pass ran: its sitemap was due
