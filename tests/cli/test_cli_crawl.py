"""`crawl SEEDS` as a user runs it, in a subprocess, against hosts on loopback."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

import pytest
from aiohttp import web
from support.loopback import LoopbackWeb

from crawler.cli.command import main
from crawler.cli.exits import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_NOTHING_CRAWLED, EXIT_OK

pytestmark = pytest.mark.loopback

A, B = "127.0.1.1", "127.0.1.2"


async def crawl_command(*args: str, interrupt_after: float | None = None) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "crawler",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    if interrupt_after is not None:
        await asyncio.sleep(interrupt_after)
        process.send_signal(signal.SIGINT)
    out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_crawl_writes_pages_reports_bad_seed_lines_and_sums_up(tmp_path: Path) -> None:
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("User-agent: *\nDisallow: /private\nCrawl-delay: 0.05\n")
        site.page("/", "/a", "/private/x")
        site.page("/a")
        seeds = tmp_path / "seeds.txt"
        seeds.write_text(f"# seeds\n\n{site.url('/')}\nnot a url\nftp://x.org/\n", "utf-8")
        data = tmp_path / "data"
        status, out, err = await crawl_command(
            str(seeds),
            "--data",
            str(data),
            "-s",
            "politeness.min_delay=0",
            "-s",
            "output.format=both",
        )
    assert status == EXIT_OK, err
    assert f"{seeds} line 4: skipped 'not a url'" in err
    assert f"{seeds} line 5: skipped 'ftp://x.org/'" in err
    pages = [json.loads(line) for line in (data / "pages.jsonl").read_text().splitlines()]
    assert [page["url"] for page in pages] == [site.url("/"), site.url("/a")]
    assert "crawl finished" in out and "2 pages" in out
    assert "skips: disallowed by robots.txt 1" in out
    assert f"{site.origin}  requests 3  interval 0.05 s" in out
    assert "seed lines skipped: 2" in out
    assert "ran on: page walk " in out and ", HTTP client http1, event loop " in out


async def test_the_summary_says_where_pages_were_read(tmp_path: Path) -> None:
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("")
        site.page("/", "/a")
        site.page("/a")
        said = {}
        for reader in ("process", "loop"):
            status, out, err = await crawl_command(
                site.url("/"), "--data", str(tmp_path / reader), "-s", f"page.reader={reader}"
            )
            assert status == EXIT_OK, err
            assert "2 pages" in out
            said[reader] = next(line for line in out.splitlines() if line.startswith("ran on:"))
    assert said["process"].startswith("ran on: page walk ")
    assert ", in a process of its own, HTTP client " in said["process"]
    assert "in a process" not in said["loop"]
    # summary.json keeps it, for `crawl status`
    for reader in ("process", "loop"):
        written = json.loads((tmp_path / reader / "summary.json").read_text())
        assert written["ran_on"]["page_reader"] == reader


async def test_the_summary_says_where_a_seed_redirected(tmp_path: Path) -> None:
    async with LoopbackWeb(A, B) as net:
        a, b = net[A], net[B]
        a.robots("")
        b.robots("")
        a.redirect("/", b.url("/"), status=301)
        b.page("/", "/next")
        b.page("/next")
        seeds = tmp_path / "seeds.txt"
        seeds.write_text(a.url("/") + "\n", "utf-8")
        status, out, err = await crawl_command(
            str(seeds),
            "--data",
            str(tmp_path / "data"),
            "-s",
            "politeness.min_delay=0",
            # B, not a seed's host, stands for a public one.
            "-s",
            f"fetch.allow_addresses=[{B}]",
        )
    assert status == EXIT_OK, err
    assert "crawl finished" in out and "2 pages" in out
    moved = "seeds that redirect to another host (the host joins the scope):"
    assert f"{moved}\n  {a.url('/')} -> {b.url('/')}" in out


async def test_a_crawl_whose_every_seed_host_failed_exits_1_naming_them(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://nowhere.invalid/\nhttp://nowhere-either.invalid/a\n", "utf-8")
    status, out, err = await crawl_command(
        str(seeds), "--data", str(tmp_path / "data"), "-s", "robots.retry_initial=0.05"
    )
    assert status == EXIT_NOTHING_CRAWLED, err
    assert "crawl: nothing could be crawled: every seed's host was given up: " in err
    assert "http://nowhere.invalid (robots.txt unreachable: dns: cannot resolve" in err
    assert "http://nowhere-either.invalid (" in err
    assert "errors: dns 4" in out
    assert "skips: host given up 2" in out
    assert "given up: 2 hosts whose robots.txt could not be had" in out


def test_bad_config_exits_2_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://127.0.1.1:1/\n", "utf-8")
    config = tmp_path / "crawler.yaml"
    config.write_text("politeness:\n  min_delay: soon\n", "utf-8")
    assert main([str(seeds), "-c", str(config)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert f"{config} line 2: politeness.min_delay must be a number >= 0, not 'soon'" in err
    assert main([str(seeds), "-s", "limits.max_pages=-1"]) == EXIT_BAD_INPUT
    assert "limits.max_pages must be a whole number or null >= 0" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read seeds file"),
        ("# nothing\n\n", "no URL to crawl"),
        ("mailto:x@y.org\n", "no URL to crawl (1 line skipped)"),
    ],
)
def test_unusable_seeds_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    seeds = tmp_path / "seeds.txt"
    if content is not None:
        seeds.write_text(content, "utf-8")
    assert main([str(seeds), "--data", str(tmp_path / "data")]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert str(seeds) in err and message in err
    assert not (tmp_path / "data").exists()  # nothing half-started


def test_no_arguments_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == EXIT_BAD_INPUT
    assert "crawl SEEDS" in capsys.readouterr().err


async def test_sigint_stops_gracefully_with_status_130(tmp_path: Path) -> None:
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("User-agent: *\nCrawl-delay: 0.1\n")
        for n in range(200):
            site.page(f"/{n}", f"/{n + 1}")

        async def slow(request: web.Request) -> web.Response:
            await asyncio.sleep(0.3)
            return web.Response(text="<a href='/1'>1</a>", content_type="text/html")

        site.routes["/0"] = slow
        seeds = tmp_path / "seeds.txt"
        seeds.write_text(site.url("/0") + "\n", "utf-8")
        status, out, err = await crawl_command(
            str(seeds),
            "--data",
            str(tmp_path / "data"),
            "-s",
            "politeness.min_delay=0",
            interrupt_after=1.5,
        )
    assert status == EXIT_INTERRUPTED, err
    assert "stopping" in err
    assert "crawl stopped" in out and "left queued: 1 URL\n" in out
