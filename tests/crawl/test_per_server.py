"""politeness.per_server over loopback: five host names on one address (fetch.resolve pins them
there), each with its own Crawl-delay. The one server's log is the judge: with per_server on,
starts to the server are server_min_delay apart across all five names and each name's own delay
holds too; with it off, each name is paced alone and the server sees starts closer together."""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp import web
from support.crawling import make_config, run
from support.loopback import ADDRESSES, EPSILON

pytestmark = pytest.mark.loopback

ADDRESS = ADDRESSES[0]
NAMES = {f"n{number}.test": 0.05 * number for number in range(1, 6)}
"""Host name -> its robots.txt Crawl-delay."""
SERVER_DELAY = 0.12
PAGES = 3


@contextlib.asynccontextmanager
async def serving(
    handle: Callable[[web.Request], Awaitable[web.Response]], address: str
) -> AsyncIterator[int]:
    """One server on `address` answering every path with `handle`; its port."""
    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, address, 0)
    await site.start()
    server = site._server
    assert server is not None
    try:
        yield server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
    finally:
        await runner.cleanup()


async def crawl_five_names(*, per_server: bool) -> list[tuple[str, str, float]]:
    """(name, path, server-side start) of every request, in order."""
    log: list[tuple[str, str, float]] = []

    async def handle(request: web.Request) -> web.Response:
        name = request.host.partition(":")[0]
        log.append((name, request.path, time.monotonic()))
        if request.path == "/robots.txt":
            return web.Response(text=f"User-agent: *\nCrawl-delay: {NAMES[name]}\n")
        links = "".join(f'<a href="/p{n}">p</a>' for n in range(PAGES))
        return web.Response(text=f"<title>{name}</title>{links}", content_type="text/html")

    async with serving(handle, ADDRESS) as port:
        config = make_config(
            fetch={"resolve": tuple(f"{name}={ADDRESS}" for name in NAMES)},
            politeness={
                "min_delay": 0.0,
                "per_server": per_server,
                "server_min_delay": SERVER_DELAY,
                "server_concurrency": 1,
            },
        )
        records, crawler = await run(config, [f"http://{name}:{port}/" for name in NAMES])
    assert len(records) == len(NAMES) * (PAGES + 1)
    servers = {report.server for report in crawler.host_reports()}
    assert servers == ({ADDRESS} if per_server else {None})  # the report names the group
    return log


def gaps(times: list[float]) -> list[float]:
    return [later - earlier for earlier, later in itertools.pairwise(sorted(times))]


async def test_per_server_holds_the_servers_interval_and_each_names_own() -> None:
    log = await crawl_five_names(per_server=True)
    assert min(gaps([at for _, _, at in log])) >= SERVER_DELAY - EPSILON
    for name, delay in NAMES.items():
        assert min(gaps([at for host, _, at in log if host == name])) >= delay - EPSILON, name


async def test_without_per_server_each_name_is_paced_alone() -> None:
    log = await crawl_five_names(per_server=False)
    assert min(gaps([at for _, _, at in log])) < SERVER_DELAY / 2
    for name, delay in NAMES.items():
        assert min(gaps([at for host, _, at in log if host == name])) >= delay - EPSILON, name


async def test_a_name_not_pinned_is_looked_up_once_before_its_first_request() -> None:
    """`localhost` is neither pinned nor an address: its server is what the lookup gives."""
    hits: list[str] = []

    async def handle(request: web.Request) -> web.Response:
        hits.append(request.path)
        if request.path == "/robots.txt":
            return web.Response(text="User-agent: *\n")
        return web.Response(text='<title>t</title><a href="/next">n</a>', content_type="text/html")

    async with serving(handle, "127.0.0.1") as port:
        config = make_config(politeness={"min_delay": 0.0, "per_server": True})
        records, crawler = await run(config, [f"http://localhost:{port}/"])
    assert hits == ["/robots.txt", "/", "/next"]
    assert len(records) == 2
    [report] = crawler.host_reports()
    assert report.server in ("127.0.0.1", "::1")
