"""fetch.cookies in a shared crawl: one jar for all the workers, kept in the Valkey server
(crawler.state.shared.cookies). Judged from the sites' logs, each worker known by a header of its
own (fetch.headers X-Worker): a login cookie one worker's answer set is sent by the others, in
the same run and in a later run of the crawl."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest
from aiohttp import web
from support.crawling import make_config
from support.keyvalue import StateServer
from support.loopback import ADDRESSES, Handler, LoopbackWeb

from crawler import Crawler
from crawler.config import Config
from crawler.output.records import PageRecord

pytestmark = pytest.mark.loopback

LOGIN = "login.shop.test"
MEMBERS = tuple(f"m{n}.shop.test" for n in range(1, 7))
FINAL = tuple(f"f{n}.shop.test" for n in range(1, 5))
NAMES = (LOGIN, *MEMBERS, *FINAL)
SLOW = 0.15
"""Seconds each member and final page takes: a worker holding one is busy, the other claims."""


def worker_config(server: StateServer, prefix: str, worker: str, max_pages: int = 0) -> Config:
    """A worker of the crawl, which says who it is in a header of its own."""
    return make_config(
        state={"backend": "redis", "url": server.url, "key_prefix": prefix, "heartbeat": 1.0},
        concurrency=1,
        limits={"max_pages": max_pages or None},
        scope={"allow_domains": ("shop.test",)},
        fetch={
            "cookies": True,
            "headers": (("X-Worker", worker),),
            "resolve": tuple(f"{name}={ip}" for name, ip in zip(NAMES, ADDRESSES, strict=False)),
            "allow_addresses": ("127.0.0.0/8",),
            "connect_timeout": 2.0,
            "read_timeout": 2.0,
        },
    )


def url(net: LoopbackWeb, name: str, path: str) -> str:
    return f"http://{name}:{net[ADDRESSES[NAMES.index(name)]].port}{path}"


def build(net: LoopbackWeb, seen: list[tuple[str, str, str, str | None]]) -> None:
    """login.shop.test/ sets session (for all of shop.test) and links to each member host's
    /members, which needs it; m1's sets step too, and links to the final pages, which need
    both."""

    def home(request: web.Request) -> web.Response:
        seen.append((LOGIN, "/", request.headers["X-Worker"], request.headers.get("Cookie")))
        answer = web.Response(
            text="<html><body>"
            + "".join(f'<a href="{url(net, name, "/members")}">m</a>' for name in MEMBERS)
            + "</body></html>",
            content_type="text/html",
        )
        answer.set_cookie("session", "abc42", domain="shop.test", path="/")
        return answer

    def page(name: str, path: str) -> Handler:
        async def handle(request: web.Request) -> web.Response:
            seen.append((name, path, request.headers["X-Worker"], request.headers.get("Cookie")))
            await asyncio.sleep(SLOW)
            body = "<p>welcome</p>"
            if name == MEMBERS[0]:
                body += "".join(f'<a href="{url(net, final, "/final")}">f</a>' for final in FINAL)
            answer = web.Response(
                text=f"<html><body>{body}</body></html>", content_type="text/html"
            )
            if name == MEMBERS[0]:
                answer.set_cookie("step", "2", domain="shop.test", path="/")
            return answer

        return handle

    for ip in ADDRESSES[: len(NAMES)]:
        net[ip].robots("")
    net[ADDRESSES[0]].routes["/"] = home
    for name in MEMBERS:
        net[ADDRESSES[NAMES.index(name)]].routes["/members"] = page(name, "/members")
    for name in FINAL:
        net[ADDRESSES[NAMES.index(name)]].routes["/final"] = page(name, "/final")


async def work(config: Config, seeds: Sequence[str], data: Path) -> list[PageRecord]:
    async with Crawler(config, data_dir=data) as crawler:
        return [record async for record in crawler.crawl(seeds)]


async def test_the_workers_share_one_jar_and_a_later_run_keeps_it(
    server: StateServer, tmp_path: Path
) -> None:
    prefix = "cookies0:"
    seen: list[tuple[str, str, str, str | None]] = []
    async with LoopbackWeb(*ADDRESSES[: len(NAMES)]) as net:
        build(net, seen)
        seed = url(net, LOGIN, "/")
        # The first run: worker A alone, stopped at the crawl's first page (limits.max_pages):
        # the login page, whose answer set the session. A is gone after it, its jar with it.
        first = worker_config(server, prefix, "A", max_pages=1)
        records = await asyncio.wait_for(work(first, [seed], tmp_path / "a"), timeout=30)
        assert [record.url for record in records] == [seed]
        assert [(name, path) for name, path, _, _ in seen] == [(LOGIN, "/")]
        # The second run: workers B and C together, neither of which saw the login.
        second = await asyncio.wait_for(
            asyncio.gather(
                work(worker_config(server, prefix, "B"), [seed], tmp_path / "b"),
                work(worker_config(server, prefix, "C"), [seed], tmp_path / "c"),
            ),
            timeout=60,
        )
    fetched = sorted(record.url for records in second for record in records)
    assert fetched == sorted(
        [url(net, name, "/members") for name in MEMBERS]
        + [url(net, name, "/final") for name in FINAL]
    )
    members = [entry for entry in seen if entry[1] == "/members"]
    finals = [entry for entry in seen if entry[1] == "/final"]
    # The session A's answer set, read from the server by B and C as they joined.
    # (Those after m1's answer send its cookie too.)
    assert all("session=abc42" in _cookies(cookie) for _, _, _, cookie in members), members
    assert {worker for _, _, worker, _ in members} == {"B", "C"}
    # The cookie m1's answer set, to whichever worker fetched it, went to the other through the
    # server while both crawled: every final page sent it, and the other worker sent some.
    (setter,) = {worker for name, _, worker, _ in members if name == MEMBERS[0]}
    assert {_cookies(cookie) for _, _, _, cookie in finals} == {
        frozenset({"session=abc42", "step=2"})
    }
    assert any(worker != setter for _, _, worker, _ in finals), finals


def _cookies(header: str | None) -> frozenset[str]:
    return frozenset(part.strip() for part in (header or "").split(";") if part.strip())
