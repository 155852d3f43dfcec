"""Recrawls of a shared crawl (crawler.crawl.shared_recrawl, crawler.state.shared.fresh): two
workers sharing a real Valkey server go over a loopback web whose pages change between passes,
judged by the sites' logs: each page asked for once a pass across the workers, conditionally
(If-None-Match, If-Modified-Since); what changed found changed and stored again, the rest
answered 304; a crawl kept fresh by two workers finds a change."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from aiohttp import web
from support.commands import run_crawl
from support.crawling import make_config
from support.keyvalue import StateServer
from support.loopback import ADDRESSES, EPSILON, LoopbackWeb, Site

from crawler import Crawler
from crawler.cli.exits import EXIT_OK
from crawler.config import Config
from crawler.output.records import PageRecord

pytestmark = pytest.mark.loopback

HOSTS = ADDRESSES[:3]
PAGES = tuple(f"/p{n}" for n in range(4))
DELAY = 0.1
DEADLINE = 60.0
_prefixes = itertools.count()


class ChangingSite:
    """A front page and PAGES whose words a test changes. Even pages carry an ETag, odd ones a
    Last-Modified, each moved by a change; a request whose validator matches is answered 304,
    as a real server does."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.words = {path: f"{path[1:]}first" for path in PAGES}
        self.versions = dict.fromkeys(PAGES, 1)
        self.answers: list[tuple[str, int]] = []
        site.robots(f"User-agent: *\nCrawl-delay: {DELAY}\n")
        site.page("/", *PAGES)
        for path in PAGES:
            site.routes[path] = self._page

    def change(self, path: str, words: str) -> None:
        self.words[path] = words
        self.versions[path] += 1

    def _page(self, request: web.Request) -> web.Response:
        path = request.path
        headers: dict[str, str] = {}
        if int(path[2:]) % 2 == 0:
            etag = '"' + hashlib.sha1(self.words[path].encode()).hexdigest()[:12] + '"'
            headers["ETag"] = etag
            matched = request.headers.get("If-None-Match") == etag
        else:
            headers["Last-Modified"] = f"Tue, 0{self.versions[path]} Nov 2026 10:00:00 GMT"
            matched = request.headers.get("If-Modified-Since") == headers["Last-Modified"]
        if matched:
            self.answers.append((path, 304))
            return web.Response(status=304, headers=headers)
        self.answers.append((path, 200))
        html = f"<html><title>{path}</title><body><p>{self.words[path]}</p></body></html>"
        return web.Response(text=html, content_type="text/html", headers=headers)


def shared_config(server: StateServer, prefix: str, **recrawl: object) -> Config:
    return make_config(
        state={"backend": "redis", "url": server.url, "key_prefix": prefix, "heartbeat": 1.0},
        output={"format": "jsonl"},
        sitemaps={"enabled": False},
        recrawl=recrawl,
    )


async def two_workers(config: Config, seeds: list[str], tmp_path: Path) -> list[list[PageRecord]]:
    """Two workers, both joined before either claims (the first would take every host)."""
    async with contextlib.AsyncExitStack() as stack:
        workers = [
            await stack.enter_async_context(Crawler(config, data_dir=tmp_path / f"w{index}"))
            for index in (0, 1)
        ]

        async def work(crawler: Crawler, seeds: list[str]) -> list[PageRecord]:
            return [record async for record in crawler.crawl(seeds)]

        return list(
            await asyncio.wait_for(
                asyncio.gather(work(workers[0], seeds[:1]), work(workers[1], seeds[1:])),
                timeout=DEADLINE,
            )
        )


async def test_two_workers_recrawl_a_site_each_page_once_a_pass_conditionally(
    server: StateServer, tmp_path: Path
) -> None:
    prefix = f"recrawl{next(_prefixes)}:"
    async with LoopbackWeb(*HOSTS) as net:
        sites = {ip: ChangingSite(net[ip]) for ip in HOSTS}
        seeds = [net[ip].url("/") for ip in HOSTS]
        await two_workers(shared_config(server, prefix), seeds, tmp_path)
        assert Counter(hit.path for hit in net.hits if hit.path in PAGES) == dict.fromkeys(
            PAGES, len(HOSTS)
        )
        for site in sites.values():
            site.change("/p0", "p0second")
            site.change("/p1", "p1second")
        recrawl = shared_config(server, prefix, enabled=True, after=0.0)
        for changed in (True, False):  # a pass that finds changes, then one that finds none
            net.hits.clear()
            for site in sites.values():
                site.answers.clear()
            passes = await two_workers(recrawl, seeds, tmp_path)
            assert all(passes), "both workers took part"
            records = [record for records in passes for record in records]
            for ip in HOSTS:
                paths = [path for path in net.paths(ip) if path != "/robots.txt"]
                assert sorted(paths) == sorted(["/", *PAGES]), paths  # each once, for the crawl
                assert min(net.gaps(ip)) >= DELAY - EPSILON, (ip, net.gaps(ip))
            for hit in net.hits:
                if hit.path in PAGES:
                    wanted = "If-None-Match" if int(hit.path[2:]) % 2 == 0 else "If-Modified-Since"
                    assert [name for name, _ in hit.conditions] == [wanted], hit
            found = {record.url: record for record in records}
            assert len(found) == len(records) == len(HOSTS) * (len(PAGES) + 1)
            for ip, site in sites.items():
                for path in PAGES:
                    record = found[net[ip].url(path)]
                    new = changed and path in ("/p0", "/p1")
                    assert record.change == ("changed" if new else "unchanged"), (path, record)
                    if new:
                        assert f"{path[1:]}second" in record.text
                assert sorted(site.answers) == sorted(
                    (path, 200 if changed and path in ("/p0", "/p1") else 304) for path in PAGES
                )


async def test_two_workers_keep_a_changing_page_fresh(server: StateServer, tmp_path: Path) -> None:
    prefix = f"fresh{next(_prefixes)}:"
    config = shared_config(
        server,
        prefix,
        enabled=True,
        keep_fresh=True,
        after=0.5,
        min_interval=0.2,
        max_interval=1.0,
    )
    async with LoopbackWeb(*HOSTS) as net:
        sites = {ip: ChangingSite(net[ip]) for ip in HOSTS}
        seeds = [net[ip].url("/") for ip in HOSTS]
        records: list[list[PageRecord]] = [[], []]
        stack = contextlib.AsyncExitStack()
        # Both joined before either claims (the first would take every host).
        crawlers = [
            await stack.enter_async_context(Crawler(config, data_dir=tmp_path / f"w{index}"))
            for index in (0, 1)
        ]

        async def keep(index: int) -> None:
            async for record in crawlers[index].crawl(seeds[index : index + 2]):
                records[index].append(record)

        def asked(path: str, since: int = 0) -> int:
            return sum(1 for hit in net.hits[since:] if hit.path == path)

        async def until(ready: Callable[[], bool]) -> None:
            give_up = asyncio.get_running_loop().time() + DEADLINE
            while not ready():
                assert not any(task.done() for task in tasks), "a worker ended by itself"
                assert asyncio.get_running_loop().time() < give_up, "it did not come to it"
                await asyncio.sleep(0.02)

        tasks = [asyncio.create_task(keep(index)) for index in (0, 1)]
        try:
            # Every page of every host asked for again and again.
            await until(lambda: all(asked(path) >= 3 * len(HOSTS) for path in PAGES))
            changed = net[HOSTS[1]].url("/p2")
            sites[HOSTS[1]].change("/p2", "p2second")
            mark = len(net.hits)
            await until(
                lambda: any(
                    record.url == changed and record.change == "changed"
                    for record in records[0] + records[1]
                )
            )
            assert asked("/p2", mark) >= 1
        finally:
            for crawler in crawlers:
                crawler.stop()
            try:
                await asyncio.wait_for(asyncio.gather(*tasks), timeout=DEADLINE)
            finally:
                await stack.aclose()
    assert all(records), "both workers took part"
    visits = sorted(
        (record for record in records[0] + records[1] if record.url == changed),
        key=lambda record: record.fetched_at,
    )
    found = [record for record in visits if record.change == "changed"]
    assert len(found) == 1 and "p2second" in found[0].text  # found changed once, stored again
    # Asked for conditionally after as before: 304s, no change.
    assert {record.change for record in visits[visits.index(found[0]) + 1 :]} <= {"unchanged"}
    for ip in HOSTS:
        # The hosts' pace holds across the workers, and no page is asked for twice at once:
        # two asks of a page are at least the shortest revisit interval apart.
        assert min(net.gaps(ip)) >= DELAY - EPSILON, (ip, net.gaps(ip))
        for path in PAGES:
            times = [hit.at for hit in net.hits if hit.host == ip and hit.path == path]
            gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
            assert min(gaps) >= 0.2 - EPSILON, (ip, path, gaps)


def sitemaps(net: LoopbackWeb, changed: str = "") -> None:
    """Each host's robots.txt names its sitemap, which dates every page in 2020 but `changed`,
    dated in the future (a change since any fetch, for the test). Made afresh on each request, as
    generated sitemaps are: never the same bytes (an unchanged sitemap is not read again)."""
    ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
    made = itertools.count()
    for ip in HOSTS:
        site = net[ip]
        site.robots(f"User-agent: *\nCrawl-delay: {DELAY}\nSitemap: /sitemap.xml\n")
        entries = "".join(
            f"<url><loc>{site.url(path)}</loc><lastmod>"
            f"{'2100-01-01' if path == changed else '2020-01-01'}</lastmod></url>"
            for path in PAGES
        )

        def sitemap(request: web.Request, entries: str = entries) -> web.Response:
            text = f"<urlset {ns}><!-- {next(made)} -->{entries}</urlset>"
            return web.Response(text=text, content_type="text/xml")

        site.routes["/sitemap.xml"] = sitemap


def with_sitemaps(config: Config) -> Config:
    return replace(config, sitemaps=make_config().sitemaps)


def pages_asked(net: LoopbackWeb, ip: str) -> list[str]:
    return sorted(path for path in net.paths(ip) if path != "/robots.txt")


async def crawled_with_sitemaps(
    net: LoopbackWeb, server: StateServer, prefix: str, tmp_path: Path
) -> tuple[dict[str, ChangingSite], list[str]]:
    """Every host a ChangingSite with a sitemap, crawled once by two workers: the sites and
    the seeds."""
    sites = {ip: ChangingSite(net[ip]) for ip in HOSTS}
    sitemaps(net)
    seeds = [net[ip].url("/") for ip in HOSTS]
    await two_workers(with_sitemaps(shared_config(server, prefix)), seeds, tmp_path)
    return sites, seeds


def p1_changed_and_listed_so(net: LoopbackWeb, sites: dict[str, ChangingSite]) -> None:
    """/p1 changes on every host, its sitemap lastmod with it; the request log starts afresh."""
    sitemaps(net, "/p1")
    for site in sites.values():
        site.change("/p1", "p1second")
    net.hits.clear()


async def test_a_sitemap_lastmod_spares_requests_whichever_worker_reads_the_pages(
    server: StateServer, tmp_path: Path
) -> None:
    prefix = f"lastmod{next(_prefixes)}:"
    async with LoopbackWeb(*HOSTS) as net:
        sites, seeds = await crawled_with_sitemaps(net, server, prefix, tmp_path)
        p1_changed_and_listed_so(net, sites)
        # recrawl.lastmod_trust always: every host's lastmod trusted.
        recrawl = shared_config(server, prefix, enabled=True, after=0.0, lastmod_trust="always")
        passes = await two_workers(with_sitemaps(recrawl), seeds, tmp_path)
    assert all(passes), "both workers took part"
    for ip in HOSTS:
        assert pages_asked(net, ip) == ["/", "/p1", "/sitemap.xml"], ip
    changed = [
        record.url
        for records in passes
        for record in records
        if record.change == "changed" and not record.url.endswith("/sitemap.xml")
    ]
    assert sorted(changed) == sorted(net[ip].url("/p1") for ip in HOSTS)


async def test_a_hosts_lastmod_trust_is_earned_for_the_crawl_and_shown_in_its_status(
    server: StateServer, tmp_path: Path
) -> None:
    prefix = f"earned{next(_prefixes)}:"
    async with LoopbackWeb(*HOSTS) as net:
        sites, seeds = await crawled_with_sitemaps(net, server, prefix, tmp_path)
        earned = with_sitemaps(
            shared_config(
                server,
                prefix,
                enabled=True,
                after=0.0,
                lastmod_confirmations=len(PAGES),
                lastmod_sample=0.0,
            )
        )
        # Not trusted yet: every page the lastmod claims unchanged is asked for, and each 304
        # proves it right.
        net.hits.clear()
        await two_workers(earned, seeds, tmp_path)
        for ip in HOSTS:
            assert pages_asked(net, ip) == sorted(["/", "/sitemap.xml", *PAGES]), ip
        status, out, err = await run_crawl(
            "status", "--state", server.url, "-s", f"state.key_prefix={prefix}"
        )
        assert status == EXIT_OK, err
        for ip in HOSTS:
            assert f"lastmod {net[ip].origin}: trusted" in out, out
        # Trusted, whichever worker earned it: its claims spare the requests.
        p1_changed_and_listed_so(net, sites)
        await two_workers(earned, seeds, tmp_path)
        for ip in HOSTS:
            assert pages_asked(net, ip) == ["/", "/p1", "/sitemap.xml"], ip
