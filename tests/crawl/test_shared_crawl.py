"""Workers of one crawl sharing a Valkey server (crawler.crawl.shared), judged by the sites'
logs: every host's Crawl-delay holds across the workers together, robots.txt is fetched once per
origin for the whole crawl, each page once, and the end is the cluster's."""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import pytest
from aiohttp import web
from support.crawling import make_config
from support.keyvalue import StateServer
from support.loopback import ADDRESSES, EPSILON, LoopbackWeb
from support.sites import RateLimitedSite, site_paths
from warcio.archiveiterator import ArchiveIterator

from crawler import Crawler
from crawler.config import Config
from crawler.crawl.shared import ClaimedFrontier, SharedHosts
from crawler.output.records import PageRecord
from crawler.output.warc import warc_files
from crawler.state.shared.schedule import SharedSchedule

pytestmark = pytest.mark.loopback

HOSTS = ADDRESSES[:4]
PAGES = 6
DELAY = 0.2
_prefixes = itertools.count()


def shared_config(server: StateServer, prefix: str, **changes: object) -> Config:
    return make_config(
        state={"backend": "redis", "url": server.url, "key_prefix": prefix, "heartbeat": 1.0},
        **changes,
    )


def build_web(net: LoopbackWeb, hosts: tuple[str, ...] = HOSTS) -> list[str]:
    for ip in hosts:
        site = net[ip]
        site.robots(f"User-agent: *\nCrawl-delay: {DELAY}\nDisallow: /private\n")
        site.page("/", *(f"/p{n}" for n in range(PAGES)), "/private/x")
        for n in range(PAGES):
            # Every page links to every other and to the next host: many offers of each URL.
            other = net[hosts[(hosts.index(ip) + 1) % len(hosts)]]
            site.page(f"/p{n}", *(f"/p{m}" for m in range(PAGES)), other.url("/"))
    return [net[ip].url("/") for ip in hosts]


async def work(config: Config, seeds: list[str], data: Path) -> list[PageRecord]:
    async with Crawler(config, data_dir=data) as crawler:
        return [record async for record in crawler.crawl(seeds)]


async def test_two_workers_share_one_crawl_and_every_hosts_delay(
    server: StateServer, tmp_path: Path
) -> None:
    prefix = f"two{next(_prefixes)}:"
    # Each worker archives what it fetched in its own DIR/warc.
    config = shared_config(server, prefix, output={"format": "jsonl", "warc": True})
    async with LoopbackWeb(*HOSTS) as net:
        seeds = build_web(net)
        first, second = await asyncio.wait_for(
            asyncio.gather(
                work(config, seeds[:2], tmp_path / "w0"), work(config, seeds[2:], tmp_path / "w1")
            ),
            timeout=60,
        )
        for ip in HOSTS:
            paths = net.paths(ip)
            assert Counter(paths)["/robots.txt"] == 1, paths
            assert sorted(paths) == sorted(
                ["/robots.txt", "/", *(f"/p{n}" for n in range(PAGES))]
            ), paths
            assert min(net.gaps(ip)) >= DELAY - EPSILON, (ip, net.gaps(ip))
        asked = Counter(net[hit.host].url(hit.path) for hit in net.hits)
    fetched = [record.url for record in first + second]
    assert len(fetched) == len(set(fetched)) == len(HOSTS) * (PAGES + 1)
    assert first and second  # both workers took part
    archived: Counter[str] = Counter()
    for worker in ("w0", "w1"):
        for path in warc_files(tmp_path / worker):
            with path.open("rb") as stream:
                archived.update(
                    record.rec_headers.get_header("WARC-Target-URI")
                    for record in ArchiveIterator(stream)
                    # Hosts serve the same robots.txt and home page: a worker's second is a revisit.
                    if record.rec_type in ("response", "revisit")
                )
    assert archived == asked  # every request of the crawl archived once, by the worker that asked


async def test_sitemaps_are_read_once_for_the_crawl_and_their_urls_fetched_once(
    server: StateServer, tmp_path: Path
) -> None:
    """A sitemap is a queued URL like any other: its level and the origin that named it travel
    with it through the server, whichever worker reads it."""
    prefix = f"sitemaps{next(_prefixes)}:"
    config = shared_config(server, prefix, output={"format": "jsonl"})
    hosts = HOSTS[:2]
    ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
    async with LoopbackWeb(*hosts) as net:
        for ip in hosts:
            site = net[ip]
            site.robots(f"User-agent: *\nCrawl-delay: {DELAY}\nSitemap: /maps/index.xml\n")
            site.page("/")
            index = f"<sitemapindex {ns}><sitemap><loc>{site.url('/maps/a.xml')}</loc></sitemap>"
            site.text("/maps/index.xml", index + "</sitemapindex>", content_type="text/xml")
            # Outside /maps/, allowed: the origin's own robots.txt named the index.
            entries = "".join(f"<url><loc>{site.url(f'/o{n}')}</loc></url>" for n in range(4))
            site.text("/maps/a.xml", f"<urlset {ns}>{entries}</urlset>", content_type="text/xml")
            for n in range(4):
                site.page(f"/o{n}")
        seeds = [net[ip].url("/") for ip in hosts]
        first, second = await asyncio.wait_for(
            asyncio.gather(
                work(config, seeds, tmp_path / "w0"), work(config, seeds, tmp_path / "w1")
            ),
            timeout=60,
        )
        for ip in hosts:
            paths = net.paths(ip)
            expected = ["/robots.txt", "/", "/maps/index.xml", "/maps/a.xml"]
            assert sorted(paths) == sorted([*expected, *(f"/o{n}" for n in range(4))]), paths
            assert min(net.gaps(ip)) >= DELAY - EPSILON, (ip, net.gaps(ip))
    records = {record.url: record for record in first + second}
    assert records[net[hosts[0]].url("/maps/a.xml")].index_reason == "a sitemap: 4 entries"
    assert records[net[hosts[1]].url("/o3")].depth == 1


async def test_per_host_concurrency_holds_for_the_crawl_not_for_each_worker(
    server: StateServer, tmp_path: Path
) -> None:
    """politeness.per_host_concurrency 2, two workers, slow pages: each host has up to 2
    requests in flight at once, whichever workers sent them, and never 3 or 4."""
    prefix = f"perhost{next(_prefixes)}:"
    config = shared_config(
        server,
        prefix,
        output={"format": "jsonl"},
        # Without the response interval: slow answers would space the requests out.
        politeness={"min_delay": 0.02, "per_host_concurrency": 2, "response_factor": 0},
    )
    hosts = HOSTS[:2]
    in_flight: Counter[str] = Counter()
    most: Counter[str] = Counter()

    def slow(ip: str, path: str) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def answer(request: web.Request) -> web.StreamResponse:
            in_flight[ip] += 1
            most[ip] = max(most[ip], in_flight[ip])
            try:
                await asyncio.sleep(0.25)
            finally:
                in_flight[ip] -= 1
            links = "".join(f'<a href="/s{n}">{n}</a>' for n in range(8))
            return web.Response(text=f"<title>{path}</title>{links}", content_type="text/html")

        return answer

    async with LoopbackWeb(*hosts) as net:
        for ip in hosts:
            net[ip].robots("User-agent: *\nAllow: /\n")
            for path in ("/", *(f"/s{n}" for n in range(8))):
                net[ip].sequence(path, slow(ip, path))
        seeds = [net[ip].url("/") for ip in hosts]
        first, second = await asyncio.wait_for(
            asyncio.gather(
                work(config, seeds, tmp_path / "w0"), work(config, seeds, tmp_path / "w1")
            ),
            timeout=60,
        )
        for ip in hosts:
            assert Counter(net.paths(ip))["/robots.txt"] == 1
            # Not the gaps: with two in flight, a request stamped later can reach the server a
            # millisecond or two sooner than the one before it (that one had a connection to
            # open), in a single process too: a known limit of per_host_concurrency above 1.
            # This test is about how many are in flight.
    fetched = [record.url for record in first + second]
    assert len(fetched) == len(set(fetched)) == len(hosts) * 9
    assert dict(most) == dict.fromkeys(hosts, 2), most


async def test_a_worker_joining_a_finished_crawl_finds_nothing_to_do(
    server: StateServer, tmp_path: Path
) -> None:
    prefix = f"done{next(_prefixes)}:"
    config = shared_config(server, prefix, output={"format": "jsonl"})
    async with LoopbackWeb(*HOSTS[:1]) as net:
        seeds = build_web(net, HOSTS[:1])
        records = await asyncio.wait_for(work(config, seeds, tmp_path / "w0"), timeout=60)
        assert len(records) == 1 + PAGES
        again = await asyncio.wait_for(work(config, seeds, tmp_path / "w1"), timeout=60)
        assert again == []
        assert Counter(net.paths(HOSTS[0]))["/"] == 1


async def test_a_worker_whose_wall_clock_is_an_hour_off_keeps_the_servers_time(
    server: StateServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers send the server durations only, and take their epoch (Visit-time and Request-rate
    windows) from its TIME: a machine whose clock is an hour fast crawls on the crawl's time, and
    every host's delay holds."""
    import time as real_time

    import crawler.crawl.clock

    truth = real_time.time
    monkeypatch.setattr(crawler.crawl.clock.time, "time", lambda: truth() + 3600.0)
    config = shared_config(server, f"skew{next(_prefixes)}:", output={"format": "jsonl"})
    async with LoopbackWeb(*HOSTS[:2]) as net:
        seeds = build_web(net, HOSTS[:2])
        async with Crawler(config, data_dir=tmp_path / "w0") as crawler:
            records = [record async for record in crawler.crawl(seeds)]
            started = crawler.stats.started_at
        for ip in HOSTS[:2]:
            assert min(net.gaps(ip)) >= DELAY - EPSILON
    assert len(records) == 2 * (1 + PAGES)
    assert started is not None and abs(started - truth()) < 60  # not an hour ahead


async def test_where_a_seeds_redirect_leads_is_in_every_workers_scope(
    server: StateServer, tmp_path: Path
) -> None:
    """A seed redirects to a host no seed names (as to www.): its host joins the scope of the
    worker that saw the redirect, and through the server every other worker's, so whichever
    reads its pages follows their links."""
    start, moved, other = HOSTS[:3]
    config = shared_config(server, f"moved{next(_prefixes)}:", output={"format": "jsonl"})
    chain = 12
    async with LoopbackWeb(start, moved, other) as net:
        net[start].redirect("/", net[moved].url("/"))
        # A delay: the host comes due while both workers wait, not only to the one releasing it.
        net[moved].robots("User-agent: *\nCrawl-delay: 0.1\n")
        net[moved].page("/", "/c0")
        for n in range(chain):
            net[moved].page(f"/c{n}", f"/c{n + 1}" if n + 1 < chain else "/")
        net[other].page("/", *(f"/o{n}" for n in range(chain)))
        for n in range(chain):
            net[other].page(f"/o{n}")
        await asyncio.wait_for(
            asyncio.gather(
                work(config, [net[start].url("/")], tmp_path / "w0"),
                work(config, [net[other].url("/")], tmp_path / "w1"),
            ),
            timeout=60,
        )
        assert sorted(net.paths(moved)) == sorted(
            ["/robots.txt", "/", *(f"/c{n}" for n in range(chain))]
        )


async def test_a_worker_that_lost_its_server_starts_nothing_not_even_a_host_claimed_ahead(
    server: StateServer,
) -> None:
    """A host claimed ahead waits on the worker's own timer; were the server lost meanwhile,
    that timer must not start it (the server, back, would not know of the request)."""
    schedule = await SharedSchedule.open(
        server.url,
        prefix=f"lost{next(_prefixes)}:",
        heartbeat_ttl=10.0,
        lease=60.0,
        default_interval=1.0,
    )
    config = make_config()
    absent = cast(Any, None)  # what may_launch never reads
    hosts = SharedHosts(
        schedule,
        ClaimedFrontier(schedule),
        config=config,
        politeness=absent,
        hosts=absent,
        robots_store=absent,
        clock=absent,
    )
    try:
        assert hosts.may_launch()
        schedule.crawl.connection.close()  # as when the server goes away
        assert not hosts.may_launch()
    finally:
        await schedule.close()


async def test_two_workers_learn_one_rate_limiters_pace_together(
    server: StateServer, tmp_path: Path
) -> None:
    """A server that accepts one request per 0.3 s and refuses sooner ones (429, no Retry-After),
    crawled by two workers: the pace its refusals taught travels with the host between them
    (crawler.crawl.claimed), so it is refused a few times at the start, then no more."""
    prefix = f"limiter{next(_prefixes)}:"
    config = shared_config(
        server,
        prefix,
        output={"format": "jsonl"},
        politeness={"min_delay": 0.05, "backoff_max": 60.0},
    )
    site = RateLimitedSite(pages=14, period=0.3)
    ip = HOSTS[0]
    async with LoopbackWeb(ip) as net:
        for path in ("/robots.txt", *site_paths(site.pages)):
            net[ip].routes[path] = site.handle
        seeds = [net[ip].url("/")]
        first, second = await asyncio.wait_for(
            asyncio.gather(
                work(config, seeds, tmp_path / "w0"), work(config, seeds, tmp_path / "w1")
            ),
            timeout=90,
        )
    fetched = [record.url for record in first + second if record.status == 200]
    assert sorted(fetched) == sorted(net[ip].url(path) for path in site_paths(site.pages))
    assert len(site.accepted) == 1 + site.pages
    assert 1 <= len(site.refused) <= 5, site.refused
    # Settled, not oscillating: one refusal at most once the first pages came.
    assert sum(at > site.accepted[2] for at in site.refused) <= 1, (site.accepted, site.refused)
