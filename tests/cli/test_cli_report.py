"""What the crawl tells its user (issue 18, "the first hour"), as a user meets it: `crawl` in a
subprocess, on a terminal (a pseudo-terminal of 40 or 80 columns) or on pipes. The live line and
the summary fit the terminal; counts read as English; DIR/summary.json holds the figures, kept
current while the crawl runs; `crawl status` reports the last run, or the one going on, without
taking the directory's lock."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from support.commands import crawl_command
from support.loopback import LoopbackWeb, Site
from support.terminal import in_terminal, wraps_on

from crawler.cli.exits import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_OK

pytestmark = pytest.mark.loopback

A = "127.0.1.61"

NO_FETCH = ("-s", "limits.max_pages=0")
"""A crawl that opens everything and fetches nothing: no network needed."""


def a_site(site: Site, pages: int) -> None:
    site.robots("User-agent: *\nDisallow: /private\n")
    for n in range(pages):
        site.page(f"/{n}", f"/{n + 1}", "/private/x")
    site.status(f"/{pages}", 404)


def seeds_file(tmp_path: Path, *urls: str) -> Path:
    path = tmp_path / "seeds.txt"
    path.write_text("".join(f"{url}\n" for url in urls), "utf-8")
    return path


# --- the live line and the summary on a terminal -------------------------------------------------


@pytest.mark.parametrize(("columns", "set_columns"), [(40, True), (80, False), (40, False)])
async def test_the_live_line_is_redrawn_on_one_row_and_everything_fits_the_terminal(
    tmp_path: Path, columns: int, set_columns: bool
) -> None:
    async with LoopbackWeb(A) as net:
        site = net[A]
        a_site(site, 14)
        seeds = seeds_file(tmp_path, site.url("/0"))
        status, output = await asyncio.to_thread(
            in_terminal,
            str(seeds),
            "--data",
            str(tmp_path / "data"),
            "-s",
            "politeness.min_delay=0.25",  # long enough for the line to be redrawn a few times
            "-s",
            "user_agent=TestBot/1.0 (+http://127.0.0.1/)",
            columns=columns,
            set_columns=set_columns,
        )
    assert status == EXIT_OK, output
    live, _, after = output.partition("crawl finished")
    # The line that says which name robots.txt is obeyed as comes first, wrapped to fit.
    said, _, live = live.rpartition("\n")
    assert " ".join(said.split()).startswith("crawl: obeying robots.txt, META robots and")
    redraws = [part for part in live.split("\r") if part.strip()]
    assert len(redraws) >= 2, output
    assert all(re.match(r"0:00:\d\d  \d+ page", redraw) for redraw in redraws), redraws
    assert "\n" not in live  # each redraw replaces the last: not one row added
    assert all(len(redraw) < columns for redraw in live.split("\r"))
    assert wraps_on(output, columns) == []  # the summary too: wrapped by the crawl, not the tty
    # Wrapped, not cut: every figure is there.
    summary = " ".join(after.split())
    assert "15 pages" in summary and "1 robots.txt fetch," in summary
    assert f"{site.origin}" in summary or columns < len(site.origin) + 4


async def test_status_fits_the_terminal_too(tmp_path: Path) -> None:
    data = tmp_path / "data"
    status, _, err = crawl_command(
        str(seeds_file(tmp_path, "http://a.test/")), "--data", str(data), *NO_FETCH
    )
    assert status == EXIT_OK, err
    status, output = await asyncio.to_thread(
        in_terminal, "status", "--data", str(data), columns=40, set_columns=False
    )
    assert status == EXIT_OK, output
    assert "crawl stopped at limits.max_pages" in output
    assert wraps_on(output, 40) == []


# --- counts in English ---------------------------------------------------------------------------


def test_one_of_a_thing_is_counted_in_the_singular(tmp_path: Path) -> None:
    seeds = seeds_file(tmp_path, "http://a.test/")
    data = str(tmp_path / "data")
    status, out, err = crawl_command(str(seeds), "--data", data, *NO_FETCH)
    assert status == EXIT_OK, err
    assert "left queued: 1 URL\n" in out
    assert "; 1 URL stays queued." in out
    status, out, err = crawl_command(str(seeds), "--data", data, *NO_FETCH)
    assert status == EXIT_OK, err
    assert (
        f"crawl: resuming the crawl in {data}: 1 URL pending on 1 host, 0 pages fetched in 1 run "
        "before; the last run ended cleanly"
    ) in err
    assert (
        "crawl stopped at limits.max_pages after" in out
        and "(run 2): 0 pages (0.0/s), 0 requests" in out
    )


# --- summary.json --------------------------------------------------------------------------------


def read_json(path: Path) -> dict[str, Any]:
    document = json.loads(path.read_text("utf-8"))
    assert isinstance(document, dict)
    return document


async def test_a_crawl_leaves_its_figures_in_summary_json(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with LoopbackWeb(A) as net:
        site = net[A]
        a_site(site, 2)
        seeds = seeds_file(tmp_path, site.url("/0"))
        # In a thread: the loopback web answers on this test's event loop.
        status, out, err = await asyncio.to_thread(
            crawl_command, str(seeds), "--data", str(data), "-s", "politeness.min_delay=0"
        )
    assert status == EXIT_OK, err
    written = read_json(data / "summary.json")
    assert written["outcome"] == "finished" and written["stopped_by"] is None
    assert written["format"] == 1 and written["crawler_version"]
    assert written["data_dir"] == str(data.resolve())
    assert written["figures"]["pages"] == 3
    assert written["figures"]["met"] == 4 and written["figures"]["queued"] == 0
    assert written["statuses"] == {"200": 2, "404": 1}
    assert written["skips"] == {"disallowed by robots.txt": 1}
    assert written["errors"] == {}
    assert written["figures"]["bytes"] > 0
    [host] = written["hosts"]
    assert host["origin"] == site.origin and host["requests"] == 4
    assert host["robots"] == "status 200"
    assert written["deferred"] == [] and written["given_up"] == {}
    assert set(written["ran_on"]) == {"page_walk", "http_client", "event_loop", "page_reader"}
    assert written["ran_on"]["page_reader"] == "loop"  # one host: page.reader auto reads here
    assert f"ran on: page walk {written['ran_on']['page_walk']}" in out
    run = written["run"]
    assert run["number"] == 1 and run["started_at"] <= run["updated_at"] == run["ended_at"]
    assert written["outputs"] == [
        str(data.resolve() / name) for name in ("index.sqlite", "state.sqlite", "summary.json")
    ]
    # Written whole and renamed into place: no temporary file is left behind.
    assert sorted(path.name for path in data.iterdir()) == [
        "index.sqlite",
        "lock",
        "state.sqlite",
        "summary.json",
    ]


async def start_crawl(seeds: Path, data: Path, output: int) -> asyncio.subprocess.Process:
    """`crawl SEEDS --data DATA` at a 0.2 s pace, started and left running; its stdout and
    stderr go to `output` (PIPE or DEVNULL)."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "crawler", str(seeds), "--data", str(data), "-s", "politeness.min_delay=0.2"),
        stdout=output,
        stderr=output,
    )


async def test_summary_json_is_current_while_a_crawl_runs_and_final_after_ctrl_c(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    async with LoopbackWeb(A) as net:
        site = net[A]
        a_site(site, 200)
        seeds = seeds_file(tmp_path, site.url("/0"))
        process = await start_crawl(seeds, data, asyncio.subprocess.PIPE)
        # Written as the run starts: wait for it (and for a page, so there is a figure to see).
        while not (data / "summary.json").exists() or not site_hits(net, site):
            assert process.returncode is None
            await asyncio.sleep(0.05)
        running = await asyncio.to_thread(crawl_command, "status", "--data", str(data), "--json")
        text = await asyncio.to_thread(crawl_command, "status", "--data", str(data))
        process.send_signal(signal.SIGINT)
        _, err = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == EXIT_INTERRUPTED, err.decode()
    status, out, status_err = running
    assert status == EXIT_OK, status_err
    live = json.loads(out)
    assert live["running"] is True and live["outcome"] == "running"
    assert live["process"] == process.pid and live["run"]["ended_at"] is None
    status, out, status_err = text
    assert status == EXIT_OK, status_err
    assert out.startswith(f"a crawl is running in {data}: run 1, process {process.pid}, started ")
    assert "crawl running after" in out
    # The crawl went on beside `crawl status` (it took no lock), and wrote its end.
    final = read_json(data / "summary.json")
    assert final["outcome"] == "stopped" and final["stopped_by"] == "SIGINT"
    assert final["run"]["ended_at"] is not None
    assert final["figures"]["pages"] >= live["figures"]["pages"]
    status, out, status_err = crawl_command("status", "--data", str(data))
    assert status == EXIT_OK, status_err
    assert out.splitlines()[0].endswith("; it was stopped by SIGINT")
    assert out.splitlines()[1].startswith("crawl stopped after")
    assert "resume: the same command goes on from here (--fresh starts over)" in out
    assert json.loads(crawl_command("status", "--data", str(data), "--json")[1])["running"] is False


def site_hits(net: LoopbackWeb, site: Site) -> list[str]:
    return [path for path in net.paths(site.ip) if path != "/robots.txt"]


async def test_status_after_a_kill_says_the_run_did_not_end_cleanly(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with LoopbackWeb(A) as net:
        site = net[A]
        a_site(site, 200)
        seeds = seeds_file(tmp_path, site.url("/0"))
        process = await start_crawl(seeds, data, asyncio.subprocess.DEVNULL)
        while not (data / "summary.json").exists():
            assert process.returncode is None
            await asyncio.sleep(0.05)
        process.kill()
        await process.wait()
    status, out, err = crawl_command("status", "--data", str(data))
    assert status == EXIT_OK, err
    assert out.startswith(
        f"run 1 in {data} did not end cleanly (killed?): process {process.pid} is gone"
    )
    assert "resume: the same command goes on from here" in out


# --- crawl status --------------------------------------------------------------------------------


def test_status_after_a_finished_crawl(tmp_path: Path) -> None:
    data = tmp_path / "data"
    status, crawled, err = crawl_command(
        str(seeds_file(tmp_path, "http://a.test/")), "--data", str(data), *NO_FETCH
    )
    assert status == EXIT_OK, err
    before = {path.name: path.stat().st_mtime_ns for path in data.iterdir()}
    status, out, err = crawl_command("status", "--data", str(data))
    assert status == EXIT_OK, err
    lines = out.splitlines()
    assert lines[0].startswith(f"the last run in {data}: run 1, ")
    # The summary the crawl printed, as it printed it.
    assert lines[1:] == crawled.splitlines()
    status, out, err = crawl_command("status", "--data", str(data), "--json")
    assert status == EXIT_OK, err
    shown = json.loads(out)
    assert shown.pop("running") is False
    assert shown == read_json(data / "summary.json")
    # Read only: nothing in the directory changed, the lock file included.
    assert {path.name: path.stat().st_mtime_ns for path in data.iterdir()} == before


def test_status_reads_the_state_when_there_is_no_summary_json(tmp_path: Path) -> None:
    data = tmp_path / "data"
    seeds = seeds_file(tmp_path, "http://a.test/", "http://b.test/")
    status, _, err = crawl_command(str(seeds), "--data", str(data), *NO_FETCH)
    assert status == EXIT_OK, err
    (data / "summary.json").unlink()
    status, out, err = crawl_command("status", "--data", str(data))
    assert status == EXIT_OK, err
    assert out.startswith(f"no summary.json in {data} (a crawl run from Python writes none)")
    assert "URLs: 2 met: 0 fetched, 0 skipped, 2 queued" in out
    shown = json.loads(crawl_command("status", "--data", str(data), "--json")[1])
    assert shown["source"] == "state.sqlite" and shown["pending"] == {"urls": 2, "hosts": 2}
    assert sorted(path.name for path in data.iterdir()) == ["index.sqlite", "lock", "state.sqlite"]


def test_status_of_a_damaged_summary_json_reads_the_state_and_says_so(tmp_path: Path) -> None:
    data = tmp_path / "data"
    status, _, err = crawl_command(
        str(seeds_file(tmp_path, "http://a.test/")), "--data", str(data), *NO_FETCH
    )
    assert status == EXIT_OK, err
    (data / "summary.json").write_text('{"format": 1, "outc', "utf-8")
    status, out, err = crawl_command("status", "--data", str(data))
    assert status == EXIT_OK, err
    assert f"crawl status: {data / 'summary.json'} is damaged: not JSON" in err
    assert "URLs: 1 met: 0 fetched, 0 skipped, 1 queued" in out
    (data / "state.sqlite").unlink()
    status, out, err = crawl_command("status", "--data", str(data))
    assert status == EXIT_BAD_INPUT and out == ""
    assert err.startswith(f"crawl: {data / 'summary.json'} is damaged: not JSON")


@pytest.mark.parametrize("make", [False, True])
def test_status_of_a_directory_without_a_crawl_exits_2(tmp_path: Path, make: bool) -> None:
    data = tmp_path / "empty"
    if make:
        data.mkdir()
    status, out, err = crawl_command("status", "--data", str(data))
    assert status == EXIT_BAD_INPUT and out == ""
    where = f"nothing in {data}" if make else f"{data} does not exist"
    assert err == (
        f"crawl: no crawl to report: {where} (neither summary.json nor state.sqlite); "
        f"`crawl SEEDS --data {data}` starts one\n"
    )
    # Nothing made: no directory, no lock file.
    assert (list(data.iterdir()) == []) if make else not data.exists()


def test_fresh_deletes_summary_json_and_says_so(tmp_path: Path) -> None:
    data = tmp_path / "data"
    seeds = str(seeds_file(tmp_path, "http://a.test/"))
    assert crawl_command(seeds, "--data", str(data), *NO_FETCH)[0] == EXIT_OK
    status, _, err = crawl_command(seeds, "--data", str(data), "--fresh", *NO_FETCH)
    assert status == EXIT_OK, err
    assert "summary.json" in err.split("deleting", 1)[1].splitlines()[0]
    assert read_json(data / "summary.json")["run"]["number"] == 1
