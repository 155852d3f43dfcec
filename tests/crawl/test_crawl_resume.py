"""A crawl with a data directory keeps its state there and resumes it: in process, against real
servers on loopback. (Kills and signals, in a subprocess: tests/test_cli_resume.py.)"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from aiohttp import web
from support.crawling import make_config
from support.loopback import EPSILON, LoopbackWeb

from crawler import Crawler
from crawler.config import Config
from crawler.errors import StateError
from crawler.output.records import PageRecord
from crawler.state import STATE_NAME

pytestmark = pytest.mark.loopback

A, B = "127.0.1.1", "127.0.1.2"


def chain(net: LoopbackWeb, ip: str, pages: int, robots: str) -> None:
    """`/0` links to `/1`, ... to `/{pages - 1}`: one page leads to the next."""
    site = net[ip]
    site.robots(robots)
    for n in range(pages):
        site.page(f"/{n}", f"/{n + 1}" if n + 1 < pages else "/0")


async def crawl_until(
    config: Config, seeds: list[str], data_dir: Path, stop_after: int | None = None
) -> tuple[list[PageRecord], Crawler]:
    """One run; with `stop_after`, `stop()` once that many records came."""
    records = []
    async with Crawler(config, data_dir=data_dir) as crawler:
        async for record in crawler.crawl(seeds):
            records.append(record)
            if stop_after is not None and len(records) == stop_after:
                crawler.stop()
    return records, crawler


def duplicates(paths: list[str]) -> list[str]:
    return sorted({path for path in paths if paths.count(path) > 1})


async def test_a_stopped_crawl_resumes_where_it_was_fetching_nothing_twice(
    tmp_path: Path,
) -> None:
    async with LoopbackWeb(A, B) as net:
        chain(net, A, 12, "User-agent: *\nCrawl-delay: 0.02\n")
        chain(net, B, 12, "User-agent: *\nDisallow: /5\n")
        seeds = [net[A].url("/0"), net[B].url("/0")]
        first, crawler = await crawl_until(make_config(), seeds, tmp_path, stop_after=5)
        assert crawler.stats.outcome == "stopped" and crawler.stats.queued > 0
        second, crawler = await crawl_until(make_config(), seeds, tmp_path)
    assert crawler.stats.outcome == "finished"
    for ip, expected in ((A, 12), (B, 5)):
        paths = net.paths(ip)
        assert paths.count("/robots.txt") == 1  # the cache with its fetch time came back
        assert duplicates(paths) == []
        assert len(paths) == expected + 1
    assert "/5" not in net.paths(B)
    assert len(first) + len(second) == 17
    assert crawler.stats.pages == 17 and crawler.stats.runs == 2
    assert crawler.stats.skips["disallowed by robots.txt"] == 1
    assert crawler.stats.statuses[200] == 17


async def test_the_first_request_after_a_resume_keeps_the_delay(tmp_path: Path) -> None:
    async with LoopbackWeb(A) as net:
        chain(net, A, 5, "User-agent: *\nCrawl-delay: 0.2\n")
        seeds = [net[A].url("/0")]
        await crawl_until(make_config(), seeds, tmp_path, stop_after=2)
        resumed_at = len(net.hits)
        await crawl_until(make_config(), seeds, tmp_path)
    assert 2 <= resumed_at < len(net.hits)
    assert min(net.gaps(A)) >= 0.2 - EPSILON  # the gap across the restart included
    assert duplicates(net.paths(A)) == []


async def test_seeds_given_again_are_merged_not_duplicated(tmp_path: Path) -> None:
    async with LoopbackWeb(A, B) as net:
        chain(net, A, 3, "User-agent: *\n")
        chain(net, B, 3, "User-agent: *\n")
        _, crawler = await crawl_until(make_config(), [net[A].url("/0")], tmp_path)
        assert crawler.stats.pages == 3
        records, crawler = await crawl_until(
            make_config(), [net[A].url("/0"), net[B].url("/0")], tmp_path
        )
        assert crawler.state.run.seeds() == (net[A].url("/0"), net[B].url("/0"))
    assert sorted(record.url for record in records) == [net[B].url(f"/{n}") for n in range(3)]
    assert duplicates(net.paths(A)) == [] and duplicates(net.paths(B)) == []
    assert crawler.stats.pages == 6


async def test_scope_comes_from_every_seed_given_so_far(tmp_path: Path) -> None:
    async with LoopbackWeb(A, B) as net:
        chain(net, A, 6, "User-agent: *\nCrawl-delay: 0.02\n")
        net[B].robots("User-agent: *\n")
        net[B].page("/", net[A].url("/3"))
        await crawl_until(make_config(), [net[A].url("/0")], tmp_path, stop_after=2)
        # The second run names only B; A's URLs left queued stay in scope.
        _, crawler = await crawl_until(make_config(), [net[B].url("/")], tmp_path)
    assert crawler.stats.outcome == "finished"
    assert sorted(set(net.paths(A)) - {"/robots.txt"}) == [f"/{n}" for n in range(6)]
    assert duplicates(net.paths(A)) == []


async def test_a_second_crawler_on_the_directory_is_refused_and_the_first_goes_on(
    tmp_path: Path,
) -> None:
    async with LoopbackWeb(A) as net:
        chain(net, A, 4, "User-agent: *\n")
        async with Crawler(make_config(), data_dir=tmp_path) as first:
            with pytest.raises(StateError, match="is in use by another crawl"):
                async with Crawler(make_config(), data_dir=tmp_path):
                    pass
            records = [record async for record in first.crawl([net[A].url("/0")])]
        assert len(records) == 4
        # Released on exit: the next crawl may have it.
        async with Crawler(make_config(), data_dir=tmp_path):
            pass


async def test_limits_count_across_runs(tmp_path: Path) -> None:
    config = make_config(limits={"max_pages": 5})
    async with LoopbackWeb(A) as net:
        chain(net, A, 10, "User-agent: *\nCrawl-delay: 0.02\n")
        await crawl_until(config, [net[A].url("/0")], tmp_path, stop_after=3)
        _, crawler = await crawl_until(config, [net[A].url("/0")], tmp_path)
    assert crawler.stats.outcome == "page limit"
    assert crawler.stats.pages == 5
    assert len(net.paths(A)) == 6


async def test_a_deferred_host_stays_deferred_and_queued_across_runs(tmp_path: Path) -> None:
    # 12:00 UTC; the host may only be visited from 22:00 on.
    noon = 1_704_067_200 + 12 * 3600.0
    config = make_config(politeness={"max_wait": 60.0})
    async with LoopbackWeb(A) as net:
        chain(net, A, 3, "User-agent: *\nVisit-time: 2200-2300\n")
        for _ in range(2):
            async with Crawler(config, data_dir=tmp_path, start_time=noon) as crawler:
                assert [r async for r in crawler.crawl([net[A].url("/0")])] == []
            assert crawler.stats.outcome == "deferred"
            (deferred,) = crawler.deferred
            assert deferred.pending == 1 and "Visit-time" in deferred.reason
            assert crawler.state.run.deferred() == (deferred,)
    assert net.paths(A) == ["/robots.txt"]


async def test_a_memory_crawl_keeps_nothing_but_still_locks(tmp_path: Path) -> None:
    config = make_config(state={"durable": False})
    async with LoopbackWeb(A) as net:
        chain(net, A, 2, "User-agent: *\n")
        async with Crawler(config, data_dir=tmp_path) as crawler:
            assert not crawler.state.durable
            with pytest.raises(StateError):
                async with Crawler(config, data_dir=tmp_path):
                    pass
            records = [record async for record in crawler.crawl([net[A].url("/0")])]
    assert len(records) == 2
    assert not (tmp_path / STATE_NAME).exists()


async def test_every_url_marked_done_has_its_page_in_the_index(tmp_path: Path) -> None:
    async with LoopbackWeb(A) as net:
        chain(net, A, 20, "User-agent: *\nCrawl-delay: 0.01\n")
        await crawl_until(make_config(), [net[A].url("/0")], tmp_path, stop_after=7)
    state = sqlite3.connect(tmp_path / STATE_NAME)
    seen = {url for (url,) in state.execute("SELECT url FROM seen")}
    queued = {url for (url,) in state.execute("SELECT url FROM queue")}
    index = sqlite3.connect(tmp_path / "index.sqlite")
    stored = {url for (url,) in index.execute("SELECT url FROM pages")}
    assert seen - queued == stored
    assert len(stored) >= 7


async def test_a_request_still_in_flight_after_the_grace_goes_back_to_the_queue(
    tmp_path: Path,
) -> None:
    config = make_config(state={"stop_grace": 0.05}, fetch={"read_timeout": 30.0})
    answered = asyncio.Event()  # set only once the first run is over: its request never ends

    async def slow_then_fast(request: web.Request) -> web.StreamResponse:
        if not answered.is_set():
            await answered.wait()
        return web.Response(text="<title>slow</title>", content_type="text/html")

    async with LoopbackWeb(A) as net:
        net[A].robots("User-agent: *\n")
        net[A].page("/", "/slow")
        net[A].routes["/slow"] = slow_then_fast
        seeds = [net[A].url("/")]
        async with Crawler(config, data_dir=tmp_path) as crawler:
            async for _ in crawler.crawl(seeds):
                while "/slow" not in net.paths(A):
                    await asyncio.sleep(0.005)
                crawler.stop()
        assert crawler.stats.outcome == "stopped"
        assert crawler.stats.queued == 1  # given back, not lost
        answered.set()
        records, crawler = await asyncio.wait_for(crawl_until(config, seeds, tmp_path), 10)
    assert [record.url for record in records] == [net[A].url("/slow")]
    assert records[0].title == "slow"
    assert net.paths(A) == ["/robots.txt", "/", "/slow", "/slow"]
