"""The fetcher against real servers: failures become values with a kind, caps hold, redirects are
returned, not followed."""

from __future__ import annotations

import asyncio
import time

import pytest
from aiohttp import web
from support.loopback import LoopbackWeb

from crawler.config import FetchConfig
from crawler.errors import ConfigError
from crawler.http.aiohttp_client import _stamping_connector, _StampingHandler
from crawler.http.answer import FetchFailure, Response
from crawler.http.fetcher import Fetcher, http1_available

pytestmark = pytest.mark.loopback

A = "127.0.1.1"
UA = "TestBot/1.0"

# Both clients the crawl may use must behave alike (crawler/http/fetcher.py).
clients = pytest.mark.parametrize("client", ["http1", "aiohttp"])


class FakeTransport(asyncio.Transport):
    """Enough of a transport for a protocol fed by hand."""

    def is_closing(self) -> bool:
        return False

    def get_extra_info(self, name: str, default: object = None) -> object:
        return default


@clients
async def test_failures_are_values_with_a_kind(client: str) -> None:
    async with LoopbackWeb(A) as net:

        async def slow(request: web.Request) -> web.Response:
            await asyncio.sleep(1.0)
            return web.Response(text="late")

        net[A].routes["/slow"] = slow
        config = FetchConfig(connect_timeout=1.0, read_timeout=0.2, client=client)
        async with Fetcher(config, UA) as fetcher:
            timeout = await fetcher.get(net[A].url("/slow"))
            refused = await fetcher.get("http://127.0.1.9:9/")
    assert isinstance(timeout, FetchFailure) and timeout.kind == "timeout"
    assert isinstance(refused, FetchFailure) and refused.kind == "connection"


@clients
async def test_redirects_are_returned_and_html_only_skips_other_bodies(client: str) -> None:
    async with LoopbackWeb(A) as net:
        net[A].redirect("/old", "/new", status=301)
        net[A].text("/file", "binary", content_type="application/octet-stream")
        net[A].page("/page")
        async with Fetcher(FetchConfig(client=client), UA) as fetcher:
            moved = await fetcher.get(net[A].url("/old"))
            other = await fetcher.get(net[A].url("/file"), html_only=True)
            page = await fetcher.get(net[A].url("/page"), html_only=True)
    assert isinstance(moved, Response) and moved.status == 301 and moved.location == "/new"
    assert isinstance(other, Response) and other.body == b""
    assert other.content_type == "application/octet-stream"
    assert isinstance(page, Response) and b"<title>/page</title>" in page.body
    assert page.content_type == "text/html" and page.charset == "utf-8"
    assert [hit.user_agent for hit in net.hits] == [UA, UA, UA]


@clients
async def test_body_cap_counts_decoded_bytes_even_when_compressed(client: str) -> None:
    async with LoopbackWeb(A) as net:

        def bomb(request: web.Request) -> web.Response:
            response = web.Response(body=b"a" * 5_000_000, content_type="text/html")
            response.enable_compression()
            return response

        net[A].routes["/bomb"] = bomb
        net[A].text("/small", "x" * 100, content_type="text/html")
        async with Fetcher(FetchConfig(max_body_bytes=1000, client=client), UA) as fetcher:
            capped = await fetcher.get(net[A].url("/bomb"))
            small = await fetcher.get(net[A].url("/small"))
    assert isinstance(capped, Response) and capped.truncated and len(capped.body) == 1000
    assert isinstance(small, Response) and not small.truncated and len(small.body) == 100


@clients
async def test_the_answer_is_stamped_when_its_first_bytes_arrive(client: str) -> None:
    """Politeness counts a host's interval from its answer: the stamp must fall between the request
    going out and the crawl seeing the answer, and be taken afresh for every request on a reused
    connection."""
    async with LoopbackWeb(A) as net:
        net[A].page("/one")
        net[A].page("/two")
        async with Fetcher(FetchConfig(client=client), UA) as fetcher:
            before = time.monotonic()
            one = await fetcher.get(net[A].url("/one"))
            between = time.monotonic()
            two = await fetcher.get(net[A].url("/two"))
            after = time.monotonic()
    assert isinstance(one, Response) and isinstance(two, Response)
    assert one.answered_at is not None and two.answered_at is not None
    assert before <= one.answered_at <= between <= two.answered_at <= after
    assert net.hits[0].at <= one.answered_at and net.hits[1].at <= two.answered_at


async def test_the_stamp_is_taken_by_the_protocol_before_the_task_resumes() -> None:
    """The stamp comes from `data_received`, which the loop calls as it polls; the request's task
    may resume much later. Fed by hand: stamped at the first bytes, kept through the rest of the
    answer, reset when the next request's parameters are set."""
    loop = asyncio.get_running_loop()
    connector = _stamping_connector()
    try:
        protocol = connector._factory()
    finally:
        await connector.close()
    assert isinstance(protocol, _StampingHandler)
    protocol.connection_made(FakeTransport())
    protocol.set_response_params()
    assert protocol.first_bytes_at is None
    protocol.data_received(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n")
    first = protocol.first_bytes_at
    assert first is not None and first <= time.monotonic()
    time.sleep(0.01)
    protocol.data_received(b"body")
    assert protocol.first_bytes_at == first
    protocol.set_response_params()
    assert protocol.first_bytes_at is None
    assert loop is asyncio.get_running_loop()


async def test_auto_takes_http1_where_httptools_is_installed() -> None:
    auto = Fetcher(FetchConfig(), UA)
    assert auto.client_name == ("http1" if http1_available() else "aiohttp")
    assert Fetcher(FetchConfig(client="aiohttp"), UA).client_name == "aiohttp"


async def test_http1_without_httptools_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("crawler.http.fetcher.http1_available", lambda: False)
    assert Fetcher(FetchConfig(), UA).client_name == "aiohttp"
    with pytest.raises(ConfigError, match=r"fetch\.client: http1 needs the httptools package"):
        await Fetcher(FetchConfig(client="http1"), UA).open()
