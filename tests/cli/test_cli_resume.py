"""`crawl SEEDS --data DIR` killed, interrupted and run twice: in a subprocess, against hosts on
loopback whose request log is the judge.

What counts as in flight at a kill is read from the state the kill left: a URL the server was
asked for and that is still queued in DIR/state.sqlite. Those, and only those, may be fetched
again; every URL the state no longer holds must have its page in DIR/index.sqlite.
"""

from __future__ import annotations

import asyncio
import re
import signal
import sqlite3
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from support.loopback import EPSILON, Hit, LoopbackWeb

from crawler.cli.exits import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED
from crawler.state import STATE_NAME

pytestmark = pytest.mark.loopback

A, B, C = "127.0.1.1", "127.0.1.2", "127.0.1.3"
FAST_DELAY = 0.05
SLOW_DELAY = 1.0
"""Longer than a restart takes (a new Python process): a resumed crawl that forgot when it last
asked the host would ask again too soon."""
OPTIONS = (
    "-s",
    "politeness.min_delay=0",
    "-s",
    f"politeness.max_crawl_delay={SLOW_DELAY}",
    "-s",
    "state.commit_interval=0.1",
)


async def start_crawl(*args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "crawler",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def finish(process: asyncio.subprocess.Process) -> tuple[int, str, str]:
    out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def crawl_command(*args: str) -> tuple[int, str, str]:
    return await finish(await start_crawl(*args))


async def signal_when(
    process: asyncio.subprocess.Process,
    net: LoopbackWeb,
    ready: Callable[[Sequence[Hit]], bool],
    number: int,
) -> bool:
    """Send `number` once `ready(hits since now)`; False if the crawl ended first."""
    start = len(net.hits)
    while process.returncode is None:
        if ready(net.hits[start:]):
            process.send_signal(number)
            return True
        await asyncio.sleep(0.002)
    return False


PAGES = 16


def build_web(net: LoopbackWeb) -> list[str]:
    """A and B: pages linking ahead and to disallowed ones, fast. C, when the web has it: two
    pages, slow. Returns the seeds."""
    for ip in (A, B):
        site = net[ip]
        site.robots(f"User-agent: *\nDisallow: /private\nCrawl-delay: {FAST_DELAY}\n")
        for n in range(PAGES):
            site.page(f"/{n}", f"/{(n + 1) % PAGES}", f"/{(n + 2) % PAGES}", f"/private/{n}")
    if C in net.sites:
        net[C].robots(f"User-agent: *\nCrawl-delay: {SLOW_DELAY}\n")
        net[C].page("/0", "/1")
        net[C].page("/1")
    return [net[ip].url("/0") for ip in net.sites]


def expected_pages(net: LoopbackWeb) -> set[tuple[str, str]]:
    pages = {(ip, f"/{n}") for ip in (A, B) for n in range(PAGES)}
    return pages | ({(C, "/0"), (C, "/1")} if C in net.sites else set())


def fetched(hits: Sequence[Hit], net: LoopbackWeb) -> Counter[str]:
    """Page URLs requested (robots.txt aside), with how often."""
    return Counter(net[hit.host].url(hit.path) for hit in hits if hit.path != "/robots.txt")


def queued_and_stored(data: Path) -> tuple[set[str], set[str]]:
    state = sqlite3.connect(data / STATE_NAME)
    index = sqlite3.connect(data / "index.sqlite")
    try:
        queued = {url for (url,) in state.execute("SELECT url FROM queue")}
        stored = {url for (url,) in index.execute("SELECT url FROM pages")}
    finally:
        state.close()
        index.close()
    return queued, stored


URLS_LINE = re.compile(r"URLs: (\d+) met: (\d+) fetched, (\d+) skipped, (\d+) queued")


def books_balanced(out: str) -> None:
    """The summary's `URLs:` line adds up, whatever stopped the runs before: met = fetched +
    skipped + queued."""
    found = URLS_LINE.search(out)
    assert found is not None, out
    met, fetched, skipped, queued = map(int, found.groups())
    assert met == fetched + skipped + queued, found.group(0)


def after(count: int, host: str | None = None) -> Callable[[Sequence[Hit]], bool]:
    return lambda hits: sum(1 for hit in hits if host in (None, hit.host)) >= count


@pytest.mark.slow
async def test_killed_at_any_moment_the_crawl_resumes_and_fetches_only_in_flight_urls_twice(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    seeds = tmp_path / "seeds.txt"
    # Kill points: with robots.txt requests in flight; in the middle of the fast hosts' pages;
    # right after a request to the slow host; then run to the end.
    kills = [after(1), after(12), after(1, C)]
    async with LoopbackWeb(A, B, C) as net:
        seeds.write_text("\n".join(build_web(net)) + "\n", "utf-8")
        may_repeat: Counter[str] = Counter()
        runs = 0
        while True:
            runs += 1
            assert runs <= 10, "the crawl does not finish"
            process = await start_crawl(str(seeds), "--data", str(data), *OPTIONS)
            killed = bool(kills) and await signal_when(process, net, kills[0], signal.SIGKILL)
            status, out, err = await finish(process)
            if not killed:
                assert status == EXIT_OK, err
                break
            kills.pop(0)
            assert status == -signal.SIGKILL
            await asyncio.sleep(0.1)  # requests sent before the kill reach the log
            queued, stored = queued_and_stored(data)
            asked = set(fetched(net.hits, net))
            assert asked - queued <= stored  # done only once stored
            may_repeat.update(asked & queued)  # in flight when killed
        assert "crawl finished" in out
        books_balanced(out)
        assert "resuming the crawl" in err and "did not end cleanly" in err
    pages = fetched(net.hits, net)
    got = {(hit.host, hit.path) for hit in net.hits if hit.path != "/robots.txt"}
    assert got == expected_pages(net)  # every page, nothing disallowed
    for url, times in pages.items():
        assert times - 1 <= may_repeat[url], f"{url} fetched {times} times"
    assert not kills  # every kill happened
    for ip, delay in ((A, FAST_DELAY), (B, FAST_DELAY), (C, SLOW_DELAY)):
        # Across every restart too: the first request after a resume respects the delay.
        assert min(net.gaps(ip)) >= delay - EPSILON, ip


async def test_sigint_stops_gracefully_and_the_next_run_fetches_nothing_twice(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    seeds = tmp_path / "seeds.txt"
    async with LoopbackWeb(A, B) as net:
        seeds.write_text("\n".join(build_web(net)) + "\n", "utf-8")
        process = await start_crawl(str(seeds), "--data", str(data), *OPTIONS)
        assert await signal_when(process, net, after(10), signal.SIGINT)
        status, out, err = await finish(process)
        assert status == EXIT_INTERRUPTED, err
        assert "stopping" in err and "crawl stopped" in out
        assert "resume: the same command goes on from here" in out
        queued, stored = queued_and_stored(data)
        assert set(fetched(net.hits, net)) <= stored  # everything fetched was stored and done
        assert not set(fetched(net.hits, net)) & queued
        status, out, err = await crawl_command(str(seeds), "--data", str(data), *OPTIONS)
        assert status == EXIT_OK, err
        assert "resuming the crawl" in err and "the last run was stopped by SIGINT" in err
        urls = "1 URL" if len(queued) == 1 else f"{len(queued)} URLs"
        assert f"{urls} pending on" in err
    pages = fetched(net.hits, net)
    assert max(pages.values()) == 1
    assert {(hit.host, hit.path) for hit in net.hits if hit.path != "/robots.txt"} == (
        expected_pages(net)
    )
    assert [hit.path for hit in net.hits].count("/robots.txt") == 2
    assert min(net.gaps(A)) >= FAST_DELAY - EPSILON


async def test_sigterm_stops_gracefully_with_status_143(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    async with LoopbackWeb(A, B) as net:
        seeds.write_text("\n".join(build_web(net)) + "\n", "utf-8")
        process = await start_crawl(str(seeds), "--data", str(tmp_path / "data"), *OPTIONS)
        assert await signal_when(process, net, after(5), signal.SIGTERM)
        status, out, err = await finish(process)
    assert status == EXIT_TERMINATED, err
    assert "crawl stopped" in out


async def test_a_second_crawl_on_the_directory_refuses_and_the_first_finishes(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    seeds = tmp_path / "seeds.txt"
    async with LoopbackWeb(A, B) as net:
        seeds.write_text("\n".join(build_web(net)) + "\n", "utf-8")
        # Slow enough to be still crawling when the second one, a new process, tries.
        slow = ("-s", "politeness.min_delay=0.15")
        first = await start_crawl(str(seeds), "--data", str(data), *OPTIONS, *slow)
        assert await signal_when(first, net, after(3), signal.SIGCONT)  # it is crawling
        status, out, err = await crawl_command(str(seeds), "--data", str(data), *OPTIONS)
        assert status == EXIT_BAD_INPUT
        assert f"crawl: data directory {data} is in use by another crawl (process {first.pid})" in (
            err
        )
        assert out == ""
        status, out, err = await finish(first)
    assert status == EXIT_OK, err
    assert max(fetched(net.hits, net).values()) == 1
    assert {(hit.host, hit.path) for hit in net.hits if hit.path != "/robots.txt"} == (
        expected_pages(net)
    )


async def test_fresh_says_what_it_deletes_then_starts_over(tmp_path: Path) -> None:
    data = tmp_path / "data"
    seeds = tmp_path / "seeds.txt"
    async with LoopbackWeb(A) as net:
        net[A].robots("User-agent: *\n")
        net[A].page("/", "/a")
        net[A].page("/a")
        seeds.write_text(net[A].url("/") + "\n", "utf-8")
        args = (str(seeds), "--data", str(data), *OPTIONS, "-s", "output.format=both")
        status, _, err = await crawl_command(*args, "--fresh")
        assert status == EXIT_OK, err
        assert f"crawl: --fresh: starting over in {data} (nothing to delete)" in err
        status, out, err = await crawl_command(*args)
        assert status == EXIT_OK, err
        assert "has nothing pending (2 pages fetched in 1 run before)" in err
        # This run fetched nothing; the crawl has its 2 pages.
        assert "crawl finished after" in out and "(run 2): 0 pages" in out
        assert "the crawl in all, 2 runs since " in out and " s, 2 pages (" in out
        status, out, err = await crawl_command(*args, "--fresh")
    assert status == EXIT_OK, err
    assert (
        f"crawl: --fresh: starting over in {data}; deleting state.sqlite, index.sqlite, "
        "pages.jsonl, skips.jsonl" in err
    )
    assert "resuming" not in err and "nothing pending" not in err
    assert "crawl finished" in out and ": 2 pages" in out and "(2 runs)" not in out
    assert net.paths(A) == ["/robots.txt", "/", "/a"] * 2
    assert len((data / "pages.jsonl").read_text().splitlines()) == 2


async def test_after_the_page_limit_the_next_run_says_how_to_go_on(tmp_path: Path) -> None:
    data, seeds = tmp_path / "data", tmp_path / "seeds.txt"
    options = ("-s", "politeness.min_delay=0", "-s", "limits.max_pages=2")
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("")
        site.page("/", "/1", "/2", "/3")
        for path in ("/1", "/2", "/3"):
            site.page(path, "/deep")
        site.page("/deep")
        seeds.write_text(site.url("/") + "\n", "utf-8")
        status, out, err = await crawl_command(str(seeds), "--data", str(data), *options)
        assert status == EXIT_OK, err
        assert "crawl stopped at limits.max_pages" in out and "2 pages" in out
        assert "resume: limits.max_pages (2) is reached, counting the runs before; 3 URLs" in out
        assert "(-s limits.max_pages=N), or start over with --fresh" in out
        assert "the same command goes on" not in out
        status, out, err = await crawl_command(str(seeds), "--data", str(data), *options)
        assert status == EXIT_OK, err
        assert "limits.max_pages (2) is reached already: nothing more is fetched" in err
        assert len(net.paths(A)) == 3  # robots.txt and two pages, not one more
        status, out, err = await crawl_command(
            str(seeds), "--data", str(data), "-s", "politeness.min_delay=0"
        )
        assert status == EXIT_OK, err
    assert sorted(net.paths(A)) == ["/", "/1", "/2", "/3", "/deep", "/robots.txt"]
    assert "URLs: 5 met: 5 fetched, 0 skipped, 0 queued" in out


async def test_links_past_the_depth_are_kept_for_a_run_with_a_greater_one(tmp_path: Path) -> None:
    data, seeds = tmp_path / "data", tmp_path / "seeds.txt"
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("")
        site.page("/", "/1")
        site.page("/1", "/2")
        site.page("/2")
        seeds.write_text(site.url("/") + "\n", "utf-8")
        status, out, err = await crawl_command(
            str(seeds), "--data", str(data), "-s", "limits.max_depth=1"
        )
        assert status == EXIT_OK, err
        assert "skips: over limits.max_depth 1" in out
        assert "URLs: 3 met: 2 fetched, 1 skipped, 0 queued" in out
        assert "resume: 1 URL found past limits.max_depth (1) is kept: run again" in out
        status, out, err = await crawl_command(
            str(seeds), "--data", str(data), "-s", "limits.max_depth=2"
        )
        assert status == EXIT_OK, err
    assert "1 URL held past limits.max_depth before is within limits.max_depth (2)" in err
    assert net.paths(A) == ["/robots.txt", "/", "/1", "/2"]
    assert "URLs: 3 met: 3 fetched, 0 skipped, 0 queued" in out
    assert "resume:" not in out


async def test_recrawl_from_the_command_line_asks_conditionally_and_says_what_changed(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    seeds = tmp_path / "seeds.txt"
    async with LoopbackWeb(A) as net:
        net[A].robots("User-agent: *\n")
        net[A].page("/", "/a", "/b")
        net[A].page("/a", title="kept")
        net[A].page("/b", title="before")
        seeds.write_text(net[A].url("/") + "\n", "utf-8")
        args = (str(seeds), "--data", str(data), *OPTIONS)
        status, _, err = await crawl_command(*args)
        assert status == EXIT_OK, err
        net[A].page("/b", title="after")
        net.hits.clear()
        again = (*args, "--recrawl", "-s", "recrawl.after=0s")
        status, out, err = await crawl_command(*again)
        assert status == EXIT_OK, err
        assert "recrawling the crawl in" in err and "recrawl.after (0 s)" in err
        # The pass's figures, this run's, and the crawl's apart: not 6 pages for a 3-page site.
        lines = out.splitlines()
        assert re.fullmatch(r"crawl finished after [\d.]+ s \(run 2\): 3 pages \(.*", lines[0])
        assert re.fullmatch(
            r"the crawl in all, 2 runs since .* UTC: [\d.]+ s, 6 pages .*", lines[1]
        )
        [recrawl] = [line for line in lines if line.startswith("recrawl pass begun ")]
        assert recrawl.endswith(" UTC: 3 pages: 2 unchanged, 1 changed, 0 new, 0 gone, 0 failed")
        status, shown, err = await crawl_command("status", "--data", str(data))
        assert status == EXIT_OK, err
        # crawl status says the same (the rate aside: the file keeps times to the millisecond)
        assert lines[0][: lines[0].index(" pages (") + 6] in shown and recrawl in shown
        assert sorted(net.paths(A)) == ["/", "/a", "/b"]
        status, out, err = await crawl_command(
            "export", "--data", str(data), "--changed-since", "2000-01-01"
        )
        assert status == EXIT_OK, err
        assert len(out.splitlines()) == 3 and "exported 3 pages changed since" in err
        # Bad input: exit status 2, and a message that says what was expected.
        status, _, err = await crawl_command(*again, "--fresh")
        assert status == EXIT_BAD_INPUT and "give one or the other" in err
        status, _, err = await crawl_command(*args, "-s", "recrawl.after=soon")
        assert status == EXIT_BAD_INPUT
        assert "recrawl.after must be seconds (or a duration like 12h or 7d)" in err
        status, _, err = await crawl_command("export", "--data", str(data), "--changed-since", "x")
        assert status == EXIT_BAD_INPUT and "is not a date" in err


@pytest.mark.slow
async def test_a_recrawl_killed_at_any_moment_goes_on_and_fetches_only_in_flight_urls_twice(
    tmp_path: Path,
) -> None:
    """Killed with -9 twice in a recrawl, given --recrawl again each time: each run goes on with
    the pass the first began (recrawl.after 0 would make every URL due again in a new one)."""
    data = tmp_path / "data"
    seeds = tmp_path / "seeds.txt"
    kills = [after(1), after(12)]
    async with LoopbackWeb(A, B) as net:
        seeds.write_text("\n".join(build_web(net)) + "\n", "utf-8")
        status, _, err = await crawl_command(str(seeds), "--data", str(data), *OPTIONS)
        assert status == EXIT_OK, err
        net.hits.clear()
        may_repeat: Counter[str] = Counter()
        runs = 0
        while True:
            runs += 1
            assert runs <= 10, "the recrawl does not finish"
            process = await start_crawl(
                str(seeds), "--data", str(data), *OPTIONS, "--recrawl", "-s", "recrawl.after=0"
            )
            killed = bool(kills) and await signal_when(process, net, kills[0], signal.SIGKILL)
            status, out, err = await finish(process)
            if not killed:
                assert status == EXIT_OK, err
                break
            kills.pop(0)
            assert status == -signal.SIGKILL
            await asyncio.sleep(0.1)  # requests sent before the kill reach the log
            queued, _ = queued_and_stored(data)
            may_repeat.update(set(fetched(net.hits, net)) & queued)  # in flight when killed
        assert "going on with the recrawl begun" in err or "resuming the crawl" in err
        books_balanced(out)
    assert not kills
    pages = fetched(net.hits, net)
    assert {(hit.host, hit.path) for hit in net.hits if hit.path != "/robots.txt"} == (
        expected_pages(net)
    )
    for url, times in pages.items():
        assert times - 1 <= may_repeat[url], f"{url} fetched {times} times"
    assert "0 changed, 0 new, 0 gone, 0 failed" in out, out
    for ip in (A, B):
        assert min(net.gaps(ip)) >= FAST_DELAY - EPSILON, ip
