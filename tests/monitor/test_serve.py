"""`crawl SEEDS --serve` as a user runs it: a real crawl of a loopback site, its live status read
over HTTP while it runs (/status.json, /metrics parsed with Prometheus's own parser, counters
that grow), a port in use or a bad address refused with exit status 2, and the status page
loaded by a real browser (headless Chromium) that runs its script and draws its charts."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families
from support.commands import crawl_command
from support.keyvalue import StateServer
from support.loopback import LoopbackWeb

from crawler.cli.exits import EXIT_BAD_INPUT

pytestmark = pytest.mark.loopback

PAGES = 30


def _site(net: LoopbackWeb, ip: str, pages: int = PAGES) -> str:
    """A site of `pages` pages and `/`, one disallowed link and one missing page."""
    site = net[ip]
    site.robots("User-agent: *\nDisallow: /private/\n")
    site.page("/", *(f"/p{n}" for n in range(pages)), "/private/x", "/missing")
    for n in range(pages):
        site.page(f"/p{n}", "/", f"/p{(n + 1) % pages}")
    return site.url("/")


@asynccontextmanager
async def serving_crawl(seed: str, data: Path, *args: str) -> AsyncIterator[str]:
    """`crawl SEED --serve 0` running beside this process's servers: the URL it printed. The
    crawl is stopped (SIGINT) when the block ends, if it has not ended."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "crawler",
        seed,
        "--data",
        str(data),
        "--serve",
        "0",
        *args,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    said = []
    try:
        url = None
        while url is None:
            line = (await asyncio.wait_for(process.stderr.readline(), 30)).decode()
            said.append(line)
            if not line:
                raise AssertionError(f"crawl ended before serving: {''.join(said)}")
            found = re.search(r"live status at (http://127\.0\.0\.1:\d+/)", line)
            url = found.group(1) if found else None
        # The address comes first, before the crawl says anything else.
        assert len(said) == 1
        yield url
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGINT)
        await asyncio.wait_for(process.communicate(), 30)


async def _get(session: aiohttp.ClientSession, url: str) -> tuple[int, str, str]:
    async with session.get(url) as answer:
        return answer.status, answer.headers.get("Content-Type", ""), await answer.text()


async def _status(session: aiohttp.ClientSession, url: str, query: str = "") -> dict[str, Any]:
    status, kind, text = await _get(session, url + "status.json" + query)
    assert status == 200 and kind.startswith("application/json")
    document: dict[str, Any] = json.loads(text)
    return document


def _metrics(text: str) -> dict[str, Any]:
    return {family.name: family for family in text_string_to_metric_families(text)}


async def test_a_crawl_serves_its_live_status_and_metrics(tmp_path: Path) -> None:
    async with (
        LoopbackWeb("127.0.1.41") as net,
        serving_crawl(_site(net, "127.0.1.41"), tmp_path / "data", "--delay", "0.25") as url,
        aiohttp.ClientSession() as session,
    ):
        first = await _status(session, url)
        while first["figures"]["pages"] < 3:
            await asyncio.sleep(0.3)
            first = await _status(session, url)
        assert first["outcome"] == "running"
        # summary.json's figures, live.
        for part in ("figures", "statuses", "errors", "skips", "crawl", "run", "hosts"):
            assert part in first
        assert first["hosts"][0]["origin"] == "http://127.0.1.41:" + url_port(net)
        live = first["live"]
        assert live["hosts_total"] == 1
        row = live["host_rows"][0]
        assert row["origin"].startswith("http://127.0.1.41:")
        assert row["robots"] == "status 200" and row["requests"] >= 3
        assert live["projection"]["remaining"] == first["figures"]["queued"]

        status, kind, text = await _get(session, url + "metrics")
        assert status == 200 and kind.startswith("text/plain")
        before = _metrics(text)
        await asyncio.sleep(2.5)  # past the snapshot's freshness: a new one
        _, _, text = await _get(session, url + "metrics")
        after = _metrics(text)
        for name in ("crawler_pages", "crawler_requests", "crawler_urls_fetched"):
            assert after[name].samples[0].value > before[name].samples[0].value, name
        assert after["process_resident_memory_bytes"].samples[0].value > 0
        hosts = after["crawler_host_requests"].samples
        assert [sample.labels["host"] for sample in hosts] == [row["origin"]]

        later = await _status(session, url, "?sort=origin&limit=5")
        assert later["figures"]["pages"] > first["figures"]["pages"]
        assert len(later["live"]["history"]["pages"]) >= 2
        assert later["live"]["history"]["pages"][-1] >= first["figures"]["pages"]

        status, _, text = await _get(session, url + "status.json?sort=url")
        assert status == 400 and "sort" in json.loads(text)["error"]
        async with session.post(url + "status.json") as answer:
            assert answer.status == 405  # read-only
        status, _, _ = await _get(session, url + "anything")
        assert status == 404
        status, kind, page = await _get(session, url)
        assert status == 200 and kind.startswith("text/html") and "<svg" in page


def url_port(net: LoopbackWeb) -> str:
    return str(net["127.0.1.41"].port)


def test_a_port_in_use_stops_the_crawl_before_it_begins(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        status, _, err = crawl_command(
            "http://127.0.1.42:9/", "--data", str(tmp_path / "d"), "--serve", str(port)
        )
    assert status == EXIT_BAD_INPUT
    assert f"--serve 127.0.0.1:{port}: the port is in use" in err
    assert "Traceback" not in err
    assert not (tmp_path / "d" / "state.sqlite").exists()


@pytest.mark.parametrize("value", ["abc", "70000", "::1:80", "host:port"])
def test_a_bad_serve_value_says_what_is_expected(tmp_path: Path, value: str) -> None:
    status, _, err = crawl_command(
        "http://127.0.1.42:9/", "--data", str(tmp_path), "--serve", value
    )
    assert status == EXIT_BAD_INPUT
    assert "monitor.serve (--serve)" in err and "expected [HOST:]PORT" in err
    assert "Traceback" not in err


# --- a real browser ------------------------------------------------------------------------------

CHROMIUM = next(
    (path for name in ("chromium", "chromium-browser") if (path := shutil.which(name))), None
)


@pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium binary (Debian: apt-get install chromium)"
)
async def test_a_browser_shows_the_live_page_with_its_charts_and_figures(tmp_path: Path) -> None:
    assert CHROMIUM is not None
    async with (
        LoopbackWeb("127.0.1.43") as net,
        serving_crawl(_site(net, "127.0.1.43", 100), tmp_path / "data", "--delay", "0.25") as url,
        aiohttp.ClientSession() as session,
    ):
        while (await _status(session, url))["figures"]["pages"] < 3:
            await asyncio.sleep(0.3)
        await asyncio.sleep(2.5)  # a few samples for the charts
        dom = await asyncio.to_thread(_dump_dom, CHROMIUM, url, tmp_path / "profile")
        shown = await _status(session, url)
    # The script ran: it fetched /status.json and drew what it read.
    assert re.search(r'data-loaded="\d+"', dom), dom[:2000]
    pages = int(re.search(r'id="pages">([\d,]+)<', dom).group(1).replace(",", ""))  # type: ignore[union-attr]
    assert 3 <= pages <= shown["figures"]["pages"]
    for series in ("pages", "queued", "pages_per_s"):
        path = re.search(rf'<path d="(M[^"]+)"[^>]*data-series="{series}"', dom)
        assert path is not None, series
        assert path.group(1).count("L") >= 1  # a line of two points or more
    assert 'data-origin="http://127.0.1.43:' in dom
    assert re.search(r'id="statuses".*?<td>200</td>', dom, re.DOTALL)


def _dump_dom(chromium: str, url: str, profile: Path) -> str:
    """The page's DOM after its scripts ran, as headless Chromium leaves it."""
    done = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",  # as root, as in a container
            "--disable-gpu",
            f"--user-data-dir={profile}",
            "--virtual-time-budget=5000",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


# --- a shared crawl's workers --------------------------------------------------------------------


async def test_each_worker_serves_its_own_and_crawl_status_says_where(
    server: StateServer, tmp_path: Path
) -> None:
    prefix = "serve-two/"
    async with LoopbackWeb("127.0.1.44", "127.0.1.45") as net:
        seeds = [_site(net, "127.0.1.44", 40), _site(net, "127.0.1.45", 40)]
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "crawler",
            *seeds,
            "--state",
            server.url,
            "--workers",
            "2",
            "--serve",
            "0",
            "--data",
            str(tmp_path / "data"),
            "--delay",
            "0.3",
            "-s",
            f"state.key_prefix={prefix}",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            serving: dict[str, str] = {}
            for _ in range(40):
                status, out, _ = await asyncio.to_thread(
                    crawl_command,
                    "status",
                    "--state",
                    server.url,
                    "-s",
                    f"state.key_prefix={prefix}",
                    "--json",
                )
                if status == 0:
                    serving = json.loads(out)["serving"]
                    if len(serving) == 2:
                        break
                await asyncio.sleep(0.5)
            assert len(serving) == 2, serving
            status, text, _ = await asyncio.to_thread(
                crawl_command, "status", "--state", server.url, "-s", f"state.key_prefix={prefix}"
            )
            assert "live status (--serve) of 2 workers:" in text
            async with aiohttp.ClientSession() as session:
                for url in serving.values():
                    assert url in text
                    document = await _status(session, url)
                    # Each worker's own figures: its data directory, its own process.
                    assert document["data_dir"].endswith(("/w1", "/w2"))
                assert len({(await _status(session, u))["process"] for u in serving.values()}) == 2
        finally:
            if process.returncode is None:
                process.send_signal(signal.SIGINT)
            _, err_bytes = await asyncio.wait_for(process.communicate(), 60)
    said = err_bytes.decode()
    assert "each serves its live status on a free port" in said
    assert said.count("live status at http://127.0.0.1:") == 2
