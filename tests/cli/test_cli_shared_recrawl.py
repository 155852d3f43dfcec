"""`crawl SEEDS --state URL --recrawl` as a user runs it, two workers on a real Valkey server: a
worker killed (SIGKILL) mid-pass, and the pass finished by the other, loses no revisit. Judged by
the loopback sites' own request log."""

from __future__ import annotations

import asyncio
import itertools
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import valkey
from aiohttp import web
from support.commands import run_crawl
from support.keyvalue import StateServer
from support.loopback import EPSILON, LoopbackWeb, Site

from crawler.cli.exits import EXIT_OK

pytestmark = pytest.mark.loopback

HOSTS = ("127.0.1.81", "127.0.1.82", "127.0.1.83", "127.0.1.84")
PAGES = tuple(f"/p{n}" for n in range(6))
DELAY = 0.2
DEADLINE = 60.0
PREFIX = "cli-recrawl-kill/"


class ChangingSite:
    """A front page and PAGES, each with an ETag that moves when its words do (304 when it
    matches)."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.words = {path: f"{path[1:]}first" for path in PAGES}
        site.robots(f"User-agent: *\nCrawl-delay: {DELAY}\n")
        site.page("/", *PAGES)
        for path in PAGES:
            site.routes[path] = self._page

    def _page(self, request: web.Request) -> web.Response:
        words = self.words[request.path]
        etag = f'"{words}"'
        if request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers={"ETag": etag})
        html = f"<html><title>{request.path}</title><body><p>{words}</p></body></html>"
        return web.Response(text=html, content_type="text/html", headers={"ETag": etag})


def worker_args(server: StateServer, seeds: Path, data: Path, *extra: str) -> list[str]:
    return [
        str(seeds),
        "--state",
        server.url,
        "--data",
        str(data),
        "-s",
        f"state.key_prefix={PREFIX}",
        "-s",
        "state.heartbeat=1",
        "-s",
        "politeness.min_delay=0",
        "-s",
        "sitemaps.enabled=false",
        *extra,
    ]


async def start(args: list[str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "crawler",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def until(ready: Callable[[], bool], process: asyncio.subprocess.Process) -> None:
    give_up = asyncio.get_running_loop().time() + DEADLINE
    while not ready():
        assert process.returncode is None, "the worker ended before it"
        assert asyncio.get_running_loop().time() < give_up, "it did not come to it"
        await asyncio.sleep(0.02)


async def test_a_worker_killed_mid_pass_loses_no_revisit(
    server: StateServer, tmp_path: Path
) -> None:
    seeds = tmp_path / "seeds.txt"
    async with LoopbackWeb(*HOSTS) as net:
        sites = [ChangingSite(net[ip]) for ip in HOSTS]
        seeds.write_text("".join(f"{net[ip].url('/')}\n" for ip in HOSTS))
        status, _, err = await run_crawl(*worker_args(server, seeds, tmp_path / "w0"))
        assert status == EXIT_OK, err
        for site in sites:
            site.words["/p4"] = "p4second"
        mark = len(net.hits)
        recrawl = ("--recrawl", "-s", "recrawl.after=0")
        first = await start(worker_args(server, seeds, tmp_path / "w1", *recrawl))
        # The first worker holds every host (it claims ahead the hosts it last held).
        await until(lambda: len(net.hits) - mark >= 2, first)
        second = await start(worker_args(server, seeds, tmp_path / "w2", *recrawl))
        try:
            # Mid-pass: some revisits asked for, most still queued or leased to the first.
            await until(lambda: len(net.hits) - mark >= 8, first)
            first.kill()
            await first.wait()
            before_kill = len(net.hits) - mark
            out, err = await asyncio.wait_for(second.communicate(), timeout=DEADLINE)
        finally:
            for process in (first, second):
                if process.returncode is None:
                    process.kill()
                    await process.wait()
        assert second.returncode == EXIT_OK, err.decode()
        assert first.returncode == -signal.SIGKILL
    assert "crawl finished" in out.decode(), out.decode()
    asked = net.hits[mark:]
    assert len(asked) > before_kill  # the second worker finished what the first left
    for ip in HOSTS:
        paths = [hit.path for hit in asked if hit.host == ip and hit.path != "/robots.txt"]
        # Every revisit of the pass asked for (a URL in flight at the kill may be asked twice).
        assert set(paths) == {"/", *PAGES}, (ip, paths)
        assert all(
            hit.conditions == (("If-None-Match", f'"{hit.path[1:]}first"'),)
            for hit in asked
            if hit.host == ip and hit.path in PAGES
        )
        times = [hit.at for hit in asked if hit.host == ip]
        assert all(b - a >= DELAY - EPSILON for a, b in itertools.pairwise(times))
    # What the recrawl keeps in the server goes with the rest at `crawl reset`.
    client = valkey.Valkey(port=server.port)
    try:
        kept = {key.decode() for key in client.keys(f"{PREFIX}*")}
        assert {f"{PREFIX}fetched", f"{PREFIX}changes"} <= kept, kept
        status, _, err = await run_crawl(
            "reset", "--state", server.url, "-s", f"state.key_prefix={PREFIX}", "--yes"
        )
        assert status == EXIT_OK, err
        assert client.keys(f"{PREFIX}*") == []
    finally:
        client.close()
