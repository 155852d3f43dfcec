"""fetch.from_address: the From header goes out on every request of either client, robots.txt's
included, once; without the key, no From header at all. Against loopback servers that record
the headers they were sent."""

from __future__ import annotations

import pytest
from aiohttp import web
from support.crawling import make_config, run
from support.loopback import LoopbackWeb
from support.rawserver import RawServer

from crawler.config import FetchConfig
from crawler.http.answer import Response
from crawler.http.fetcher import Fetcher

pytestmark = pytest.mark.loopback

A = "127.0.1.1"
UA = "TestBot/1.0 (+https://test.invalid/bot)"
ADDRESS = "crawler-admin@example.org"

clients = pytest.mark.parametrize("client", ["http1", "aiohttp"])


@clients
async def test_every_get_carries_the_from_header_once(client: str) -> None:
    senders: list[list[str]] = []

    def record(request: web.Request) -> web.Response:
        senders.append(request.headers.getall("From", []))
        return web.Response(text="<title>t</title>", content_type="text/html")

    async with LoopbackWeb(A) as net:
        net[A].routes["/robots.txt"] = record
        net[A].routes["/page"] = record
        config = FetchConfig(client=client, from_address=ADDRESS)
        async with Fetcher(config, UA) as fetcher:
            for path in ("/robots.txt", "/page", "/page"):  # the last on a kept-alive connection
                answer = await fetcher.get(net[A].url(path))
                assert isinstance(answer, Response) and answer.status == 200
    assert senders == [[ADDRESS]] * 3
    assert [hit.user_agent for hit in net.hits] == [UA] * 3


@clients
async def test_without_the_key_no_from_header_goes_out(client: str) -> None:
    empty = b"HTTP/1.1 204 No Content\r\n\r\n"
    async with (
        RawServer(A, {"/": empty}) as server,
        Fetcher(FetchConfig(client=client), UA) as http,
    ):
        answer = await http.get(server.url("/"))
    assert isinstance(answer, Response) and answer.status == 204
    (head,) = server.requests
    assert b"\r\nuser-agent: " + UA.lower().encode() in head.lower()
    assert b"\r\nfrom:" not in head.lower()


@clients
async def test_a_crawl_sends_it_with_robots_txt_and_every_page(client: str) -> None:
    async with LoopbackWeb(A) as net:
        net[A].robots("User-agent: *\nDisallow: /private\n")
        net[A].page("/", "/a", "/private")
        net[A].page("/a", "/missing")
        config = make_config(fetch={"client": client, "from_address": ADDRESS})
        records, _ = await run(config, [net[A].url("/")])
    assert sorted(record.url for record in records) == [
        net[A].url(path) for path in ("/", "/a", "/missing")
    ]
    assert net.paths(A)[0] == "/robots.txt"
    assert [hit.sender for hit in net.hits] == [ADDRESS] * 4
