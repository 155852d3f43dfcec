"""`crawl SEEDS --data DIR --keep-fresh` as a user runs it (issue 42): a crawl that never ends by
itself, asking for each page again as it comes due, against a loopback site whose pages change
between visits. Intervals are made short through the config; no test asserts a time (the
deadlines only stop a test that would otherwise wait for ever)."""

from __future__ import annotations

import asyncio
import re
import signal
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from aiohttp import web
from support.commands import crawl_command
from support.loopback import LoopbackWeb, Site

from crawler.cli.exits import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_TERMINATED
from crawler.output.searching import search
from crawler.state import STATE_NAME

A = "127.0.1.61"
PAGES = ("/a", "/b", "/c")
DEADLINE = 60.0
FAST = (
    "-s",
    "politeness.min_delay=0",
    "-s",
    "state.commit_interval=0.1",
    # Every page due again about every half second: the bounds and recrawl.after say so.
    "-s",
    "recrawl.after=0.5",
    "-s",
    "recrawl.min_interval=0.1",
    "-s",
    "recrawl.max_interval=1",
    "-s",
    "sitemaps.enabled=false",
)


class ChangingSite:
    """A front page linking to three pages whose words a test changes between visits."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.words = {path: f"{path[1:]}first" for path in PAGES}
        site.robots("User-agent: *\n")
        site.page("/", *PAGES)
        for path in PAGES:
            site.routes[path] = self._page

    def _page(self, request: web.Request) -> web.Response:
        words = self.words[request.path]
        html = f"<html><title>{request.path}</title><body><p>{words}</p></body></html>"
        return web.Response(text=html, content_type="text/html")


async def start(data: Path, seed: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "crawler",
        seed,
        "--data",
        str(data),
        "--keep-fresh",
        *FAST,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def until(ready: Callable[[], bool], process: asyncio.subprocess.Process) -> None:
    """Wait until `ready()`; fails if the crawl ends first (a crawl kept fresh does not end by
    itself), or after DEADLINE."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + DEADLINE
    while not ready():
        assert process.returncode is None, "the crawl kept fresh ended by itself"
        assert loop.time() < give_up, "the crawl kept fresh did not come to it"
        await asyncio.sleep(0.02)


async def finish(process: asyncio.subprocess.Process) -> tuple[int, str, str]:
    out, err = await asyncio.wait_for(process.communicate(), timeout=DEADLINE)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


def asked_since(net: LoopbackWeb, mark: int, path: str) -> int:
    return sum(1 for hit in net.hits[mark:] if hit.path == path)


def queued(data: Path) -> set[str]:
    state = sqlite3.connect(data / STATE_NAME)
    try:
        return {url for (url,) in state.execute("SELECT url FROM queue")}
    finally:
        state.close()


@pytest.mark.loopback
async def test_a_crawl_kept_fresh_finds_each_change_as_pages_come_due_until_stopped(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    async with LoopbackWeb(A) as net:
        site = ChangingSite(net[A])
        process = await start(data, site.site.url())
        # The crawl, then revisits without end: every page asked for again and again.
        await until(lambda: all(asked_since(net, 0, path) >= 3 for path in PAGES), process)
        site.words["/b"] = "bsecond"
        mark = len(net.hits)
        await until(lambda: asked_since(net, mark, "/b") >= 2, process)
        process.send_signal(signal.SIGINT)
        status, out, err = await finish(process)
    assert status == EXIT_INTERRUPTED, err
    assert "crawl: stopping" in err
    assert out.startswith("crawl stopped after "), out
    assert ", 1 changed, " in out, out
    assert [hit.url for hit in search(data, "bsecond")] == [site.site.url("/b")]
    assert search(data, "bfirst") == []


@pytest.mark.loopback
async def test_a_crawl_kept_fresh_killed_mid_pass_goes_on_with_nothing_lost(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    async with LoopbackWeb(A) as net:
        site = ChangingSite(net[A])
        process = await start(data, site.site.url())
        await until(lambda: all(asked_since(net, 0, path) >= 2 for path in PAGES), process)
        # Killed as a revisit is asked for: mid-pass, some URLs queued or in flight.
        mark = len(net.hits)
        await until(lambda: asked_since(net, mark, "/c") >= 1, process)
        process.kill()
        assert (await finish(process))[0] == -signal.SIGKILL
        left = queued(data)
        site.words["/c"] = "csecond"
        mark = len(net.hits)
        process = await start(data, site.site.url())
        # Whatever the kill left queued is asked for, and so is every page as it comes due.
        await until(
            lambda: (
                all(asked_since(net, mark, path) >= 2 for path in PAGES)
                and all(asked_since(net, mark, url.removeprefix(site.site.origin)) for url in left)
            ),
            process,
        )
        process.send_signal(signal.SIGTERM)
        status, out, err = await finish(process)
    assert status == EXIT_TERMINATED, err
    assert "resuming the crawl in" in err or "keeping the crawl in" in err, err
    # The books balance after the kill and the stop: met = fetched + skipped + queued.
    found = re.search(r"URLs: (\d+) met: (\d+) fetched, (\d+) skipped, (\d+) queued", out)
    assert found is not None, out
    met, *parts = map(int, found.groups())
    assert met == sum(parts), found.group(0)
    assert [hit.url for hit in search(data, "csecond")] == [site.site.url("/c")]
    for path in ("/a", "/b"):
        assert [hit.url for hit in search(data, f"{path[1:]}first")] == [site.site.url(path)]


def test_keep_fresh_needs_a_state_that_keeps_every_fetch(tmp_path: Path) -> None:
    status, _, err = crawl_command(
        "http://127.0.0.1:9/", "--data", str(tmp_path), "--keep-fresh", "-s", "state.durable=false"
    )
    assert status == EXIT_BAD_INPUT
    assert "needs state.durable true" in err
