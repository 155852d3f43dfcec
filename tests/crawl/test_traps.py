"""Crawler traps and hostile URLs, crawl by crawl against loopback servers whose own logs say
what was asked: paths that grow without end, URLs too long to keep, endless calendars, and
robots.txt redirect loops, each bounded by a limit that exists by default and reported."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import pytest
from support.crawling import make_config, run
from support.loopback import ADDRESSES, EPSILON, LoopbackWeb

from crawler.config import LimitsConfig

pytestmark = pytest.mark.loopback

A, B = ADDRESSES[:2]


async def test_a_path_that_grows_a_segment_per_link_ends_at_the_repeat_rule() -> None:
    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("")
        a.page("/", "a/", "x/y/")

        def grow(request: object) -> object:
            from aiohttp import web

            return web.Response(text='<a href="a/">deeper</a>', content_type="text/html")

        for path in ("/a/", "/a/a/", "/a/a/a/", "/x/y/", "/x/y/x/y/", "/x/y/x/y/x/y/"):
            a.routes[path] = grow  # type: ignore[assignment]
        a.page("/x/y/a/", "../../../x/y/x/y/a/")
        _records, crawler = await run(make_config(), [a.url("/")])
    assert "/a/a/a/" not in net.paths(A)
    assert "/a/a/" in net.paths(A)
    assert crawler.stats.skips["over limits.max_path_repeats"] >= 1
    assert crawler.traps == {a.origin: {"over limits.max_path_repeats": 1}}


async def test_urls_over_the_length_limit_are_skips_under_a_short_name(tmp_path: Path) -> None:
    long_link = "/long?" + "x" * 3000
    huge_target = "/huge?" + "y" * 6_000
    async with LoopbackWeb(A) as net:
        a = net[A]
        a.robots("")
        a.page("/", long_link, long_link, "/go", "/go-again")
        a.redirect("/go", huge_target)
        a.redirect("/go-again", huge_target)
        config = make_config(output={"format": "index"})
        records, crawler = await run(config, [a.url("/")], data_dir=tmp_path)
    assert sorted(net.paths(A)) == ["/", "/go", "/go-again", "/robots.txt"]
    assert crawler.stats.skips == {"over limits.max_url_length": 2}
    assert crawler.stats.met == crawler.stats.fetched + 2
    with sqlite3.connect(tmp_path / "index.sqlite") as connection:
        rows = connection.execute("SELECT url, detail FROM skips").fetchall()
    assert len(rows) == 2 and all(len(url) < 300 and "#sha256:" in url for url, _ in rows)
    assert {detail.split(";")[0] for _, detail in rows} == {
        f"{len(a.url(long_link))} characters",
        f"{len(a.url(huge_target))} characters",
    }
    errors = {record.url: record.error for record in records}
    assert "over limits.max_url_length" in (errors[a.url("/go")] or "")


async def test_an_endless_calendar_ends_at_the_host_page_budget_and_is_reported() -> None:
    async with LoopbackWeb(A, B) as net:
        a, b = net[A], net[B]
        a.robots("")
        b.robots("")
        a.page("/", "/cal?month=1")

        def month(request: object) -> object:
            from aiohttp import web

            number = int(request.query["month"])  # type: ignore[attr-defined]
            links = f'<a href="/cal?month={number + 1}">next</a>'
            links += f'<a href="/cal?month={number - 1}">previous</a>'
            return web.Response(text=links, content_type="text/html")

        a.routes["/cal"] = month  # type: ignore[assignment]
        b.page("/", "/1")
        b.page("/1")
        config = make_config(limits=LimitsConfig(max_pages_per_host=20))
        _records, crawler = await run(config, [a.url("/"), b.url("/")])
    assert len(net.paths(A)) == 1 + 20  # robots.txt and the budget
    assert net.paths(B) == ["/robots.txt", "/", "/1"]
    assert crawler.stats.outcome == "finished"
    assert crawler.stats.queued >= 1  # kept for a greater budget, not skipped
    assert crawler.traps == {a.origin: {"reached limits.max_pages_per_host": 1}}


async def test_every_hop_of_a_robots_txt_redirect_loop_waits_the_host_interval() -> None:
    async with LoopbackWeb(A) as net:
        a = net[A]
        a.redirect("/robots.txt", "/r1")
        a.redirect("/r1", "/r2")
        a.redirect("/r2", "/robots.txt")
        a.page("/")
        config = make_config(politeness={"min_delay": 0.2})
        _records, crawler = await run(config, [a.url("/")])
    paths = net.paths(A)
    assert paths[:6] == ["/robots.txt", "/r1", "/r2", "/robots.txt", "/r1", "/r2"]
    assert paths[-1] == "/"
    assert min(net.gaps(A)) >= 0.2 - EPSILON
    report = {host.origin: host for host in crawler.host_reports()}[a.origin]
    assert report.requests == len(paths)


async def test_slow_servers_hold_no_more_slots_than_the_crawl_has_again() -> None:
    """As many hosts that accept and never answer as the crawl has slots: once their requests
    are older than fetch.slow_after they no longer count, and the control host is crawled while
    they hang, not after their timeouts."""
    hung: list[asyncio.StreamWriter] = []
    closed_at: list[float] = []

    async def never_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        hung.append(writer)
        await reader.read()  # until the crawler gives up and closes
        closed_at.append(time.monotonic())
        writer.close()

    servers = [await asyncio.start_server(never_answer, f"127.0.4.{n}", 0) for n in range(1, 5)]
    slow = [
        f"http://127.0.4.{n}:{s.sockets[0].getsockname()[1]}/" for n, s in enumerate(servers, 1)
    ]
    try:
        async with LoopbackWeb(A) as net:
            a = net[A]
            a.robots("")
            a.page("/", *(f"/{n}" for n in range(8)))
            for n in range(8):
                a.page(f"/{n}")
            config = make_config(
                concurrency=4,
                fetch={"read_timeout": 3.0, "slow_after": 0.2, "max_retries": 0},
                robots={"retry_initial": 0.05, "give_up_after": 0.01},
            )
            _records, crawler = await run(config, [*slow, a.url("/")])
    finally:
        for server in servers:
            server.close()
    assert len(net.paths(A)) == 10  # robots.txt and every page
    assert len(closed_at) == 4
    assert max(net.times(A)) < min(closed_at)  # all of it while the slow ones hung
    assert len(crawler.given_up) == 4
