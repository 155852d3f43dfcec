"""`crawl SEEDS --state URL [--workers N]` as a user runs it: workers sharing a crawl through a
real Valkey server, judged by the test web's own request log; and bad input (a server that is
not there, a URL that is not one, a library of another version) exits 2 with what was expected.
"""

from __future__ import annotations

import importlib.util
import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
import valkey
from support.commands import crawl_command
from support.keyvalue import StateServer, free_port, start_server
from support.terminal import in_terminal, rows_drawn

from crawler.cli.exits import EXIT_BAD_INPUT, EXIT_OK
from crawler.cli.workers import worker_arguments, workers_summary
from crawler.state.shared.library import library_code

pytestmark = pytest.mark.loopback

TESTWEB = Path(__file__).resolve().parents[2] / "benchmarks" / "support" / "testweb.py"


def _testweb() -> ModuleType:
    """The benchmarks' test web (generator, server, log figures), under a name of its own."""
    spec = importlib.util.spec_from_file_location("bench_testweb", TESTWEB)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


testweb = _testweb()


@pytest.fixture
def web(tmp_path: Path) -> Iterator[tuple[Path, Path, dict[str, object]]]:
    """A generated test web of 12 hosts (Crawl-delay 0.3 s) served on loopback: (its root, the
    request log, web.json)."""
    root, log = tmp_path / "web", tmp_path / "requests.jsonl"
    subprocess.run(
        [
            sys.executable,
            str(TESTWEB),
            "generate",
            str(root),
            "--hosts",
            "12",
            "--pages",
            "5",
            "--crawl-delay",
            "0.3",
            "--port",
            str(free_port()),
        ],
        check=True,
        capture_output=True,
    )
    serving = subprocess.Popen(
        [sys.executable, str(TESTWEB), "serve", str(root), "--log", str(log)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert serving.stdout is not None
    assert serving.stdout.readline().strip() == "ready"
    try:
        yield root, log, json.loads((root / "web.json").read_text())
    finally:
        serving.terminate()
        serving.wait(10)


def test_two_workers_started_by_one_command_crawl_every_page_once_at_every_hosts_pace(
    server: StateServer, web: tuple[Path, Path, dict[str, object]], tmp_path: Path
) -> None:
    root, log, site = web
    status, out, err = crawl_command(
        str(root / "seeds.txt"),
        "--state",
        server.url,
        "--workers",
        "2",
        "--data",
        str(tmp_path / "data"),
        "-s",
        "politeness.min_delay=0",
        "-s",
        "state.key_prefix=cli-two/",
    )
    assert status == EXIT_OK, err
    assert "2 workers started" in err
    assert out.count("crawl finished") == 2
    assert out.count("met by this worker") == 2  # a worker's figures say they are its own
    together = out[out.index("all 2 workers: ") :]
    pages = testweb.completeness(testweb.read_log(log), site)["expected_pages"]
    assert together.startswith(f"all 2 workers: {pages} pages ("), together
    assert "12 robots.txt fetches" in together  # once per origin, for the crawl
    assert f"crawl search QUERY --data {tmp_path / 'data' / 'w1'} --data" in together
    entries = testweb.read_log(log)
    figures = testweb.politeness_figures(entries, 0.3)
    assert figures["hosts_below_delay"] == []
    assert figures["min_gap"] >= 0.3
    assert figures["duplicates"] == 0
    assert testweb.completeness(entries, site)["missing"] == 0
    robots = [entry for entry in entries if entry["path"] == "/robots.txt"]
    assert len(robots) == 12  # once per origin, for both workers
    shards = [str(tmp_path / "data" / worker) for worker in ("w1", "w2")]
    for shard in shards:
        assert (Path(shard) / "index.sqlite").exists()
    # The workers' indexes read as one: every page exported once, search merged.
    status, out, err = crawl_command("export", "--data", shards[0], "--data", shards[1])
    assert status == EXIT_OK, err
    exported = [json.loads(line)["url"] for line in out.splitlines()]
    assert (
        len(exported) == len(set(exported)) == testweb.completeness(entries, site)["expected_pages"]
    )  # every allowed page, the entry pages among them
    title = json.loads(out.splitlines()[0])["title"].split(": ")[-1].split()[0]
    status, out, err = crawl_command(
        "search", title, "--data", shards[0], "--data", shards[1], "--json", "--limit", "50"
    )
    assert status == EXIT_OK, err
    found = [json.loads(line)["url"] for line in out.splitlines()]
    assert found and len(found) == len(set(found))


def test_two_workers_on_a_terminal_draw_one_line_for_the_crawl_and_never_over_each_other(
    server: StateServer, web: tuple[Path, Path, dict[str, object]], tmp_path: Path
) -> None:
    root, log, site = web
    status, output = in_terminal(
        str(root / "seeds.txt"),
        "--state",
        server.url,
        "--workers",
        "2",
        "--data",
        str(tmp_path / "data"),
        "-s",
        "politeness.min_delay=0.3",  # a few seconds: the line is drawn again and again
        "-s",
        "state.key_prefix=cli-terminal/",
        columns=80,
        set_columns=False,
    )
    assert status == EXIT_OK, output
    rows = rows_drawn(output)
    live = [row for row in rows if "queued" in row and not row.startswith("URLs:")]
    assert len(live) >= 3, output
    # One line for the crawl, each drawing whole: no digits left from another line.
    line = re.compile(
        r"(2 workers  )?\d:\d\d:\d\d  \d+ pages? \(\d+\.\d/s\)  \d+ queued  \d+ errors?  "
        r"\d+ skipped(  \d+ in flight)?(  \d+ hosts? waiting)?"
    )
    assert all(line.fullmatch(row) for row in live), live
    assert all(len(row) < 80 for row in rows)
    # Each worker's summary under its name, starting a row of its own; then the crawl's.
    for name in ("w1", "w2"):
        at = rows.index(f"{name}:")
        assert rows[at + 1].startswith("crawl finished after "), rows[at : at + 2]
    pages = testweb.completeness(testweb.read_log(log), site)["expected_pages"]
    assert (
        [row for row in rows if row.startswith("all 2 workers: ")]
        == [row for row in rows if row.startswith(f"all 2 workers: {pages} pages (")]
        != []
    )
    # What a worker says comes above the line, after its name.
    assert sum(row.startswith("w1: crawl: obeying robots.txt") for row in rows) == 1


def test_options_that_do_not_go_together_exit_2(tmp_path: Path) -> None:
    status, _, err = crawl_command("http://127.0.1.1/", "--workers", "2", "--data", str(tmp_path))
    assert status == EXIT_BAD_INPUT
    assert "--workers N needs --state URL" in err
    status, _, err = crawl_command(
        "http://127.0.1.1/", "--state", "redis://127.0.0.1:1/0", "--fresh", "--data", str(tmp_path)
    )
    assert status == EXIT_BAD_INPUT
    assert "--fresh starts one data directory over" in err


@pytest.mark.parametrize(
    ("url", "complaint"),
    [
        ("http://127.0.0.1:6379/0", "state.url: state URL 'http://127.0.0.1:6379/0': scheme"),
        ("redis://127.0.0.1:6379/db", "database 'db' is not a number"),
    ],
)
def test_a_state_url_that_is_not_one_exits_2(url: str, complaint: str, tmp_path: Path) -> None:
    status, _, err = crawl_command("http://127.0.1.1/", "--state", url, "--data", str(tmp_path))
    assert status == EXIT_BAD_INPUT
    assert complaint in err and "expected redis://HOST:PORT/DB" in err


def test_a_server_that_is_not_there_exits_2_naming_it(tmp_path: Path) -> None:
    port = free_port()
    status, _, err = crawl_command(
        "http://127.0.1.1/", "--state", f"redis://127.0.0.1:{port}/0", "--data", str(tmp_path)
    )
    assert status == EXIT_BAD_INPUT
    assert f"cannot reach the state server redis://127.0.0.1:{port}/0" in err
    assert "Traceback" not in err


def test_a_server_running_another_version_of_the_crawl_exits_2(tmp_path: Path) -> None:
    other = start_server(tmp_path / "valkey")
    try:
        older = library_code("0-older")
        subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys, valkey; valkey.Valkey(port=int(sys.argv[1]))"
                ".function_load(sys.stdin.read())",
                str(other.port),
            ],
            input=older,
            text=True,
            check=True,
        )
        status, _, err = crawl_command(
            "http://127.0.1.1/", "--state", other.url, "--data", str(tmp_path / "data")
        )
    finally:
        other.stop()
    assert status == EXIT_BAD_INPUT
    assert "every worker of a crawl must run the same version" in err


def test_workers_get_the_same_arguments_and_a_directory_each() -> None:
    argv = [
        "seeds.txt",
        "--workers",
        "3",
        "--data",
        "crawl",
        "-s",
        "x=1",
        "--workers=3",
        "--data=d",
    ]
    assert worker_arguments(argv, Path("crawl/w2")) == [
        "seeds.txt",
        "-s",
        "x=1",
        "--data",
        "crawl/w2",
    ]


def test_the_workers_summary_adds_theirs_up_and_names_one_that_wrote_none(tmp_path: Path) -> None:
    for name, pages in (("w1", 3), ("w2", 5)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "summary.json").write_text(
            json.dumps(
                {
                    "figures": {"pages": pages, "requests": pages + 1, "robots_fetches": 1},
                    "crawl": {"elapsed_s": pages},
                    "skips": {"disallowed by robots.txt": 2},
                    "errors": {"timeout": 1},
                }
            )
        )
    shards = [tmp_path / name for name in ("w1", "w2", "w3")]
    lines = workers_summary(shards).splitlines()
    assert lines[0] == (
        "all 3 workers: 8 pages (1.6/s over 5.0 s), 10 requests, 2 robots.txt fetches, "
        "0.0 MB, 4 skipped, 2 errors"
    )
    assert lines[1] == "no summary from w3 (stopped before it wrote one)"
    assert lines[2].endswith(f"--data {shards[1]} --data {shards[2]}")
    assert workers_summary([tmp_path / "none"]) == ""


def start_worker(root: Path, server: StateServer, data: Path, prefix: str) -> subprocess.Popen[str]:
    """One worker of the crawl under `prefix`, started as a user would, its heartbeat 1 s."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "crawler",
            str(root / "seeds.txt"),
            "--state",
            server.url,
            "--data",
            str(data),
            "-s",
            "politeness.min_delay=0",
            "-s",
            f"state.key_prefix={prefix}",
            "-s",
            "state.heartbeat=1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_workers(server: StateServer, prefix: str, count: int, deadline: float) -> None:
    """Until `count` workers have joined the crawl under `prefix`."""
    client = valkey.Valkey(port=server.port)
    try:
        while len(client.hkeys(f"{prefix}workers")) < count:
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        client.close()


def robots_read(log: Path) -> int:
    """robots.txt requests in the test web's log so far."""
    if not log.exists():
        return 0
    return sum('"/robots.txt"' in line for line in log.read_text().splitlines())


def leases_of(server: StateServer, prefix: str, pid: int) -> int:
    """URLs leased to the worker of process `pid`, read on the server."""
    client = valkey.Valkey(port=server.port)
    try:
        for worker in client.hkeys(f"{prefix}workers"):
            if worker.decode().split(":")[1] == str(pid):
                return int(client.hlen(f"{prefix}leases:{worker.decode()}"))
        return 0
    finally:
        client.close()


@pytest.mark.slow
def test_a_worker_killed_mid_crawl_loses_nothing_and_no_host_is_asked_too_soon(
    server: StateServer, web: tuple[Path, Path, dict[str, object]], tmp_path: Path
) -> None:
    """kill -9 one of two workers: the other takes its hosts once its heartbeat lapses (each
    waiting a full interval), its leased URLs are fetched again, and nothing else twice."""
    root, log, site = web
    prefix = "cli-kill/"

    # The victim first, alone: it takes every host, and holds some when killed.
    victim = start_worker(root, server, tmp_path / "victim", prefix)
    leased = leases_of(server, prefix, victim.pid)
    deadline = time.monotonic() + 20
    # Until the kill finds work in hand, and hosts whose robots.txt the victim has read and whose
    # first page it has not started: kept through robots.txt, never released, their rules known
    # to the server only by what the victim told it (a taker that missed them broke the delay).
    while not (leased and robots_read(log) == len(site["hosts"])) and time.monotonic() < deadline:
        time.sleep(0.01)
        leased = leases_of(server, prefix, victim.pid)
    survivor = start_worker(root, server, tmp_path / "survivor", prefix)
    wait_for_workers(server, prefix, 2, deadline)
    leased = leases_of(server, prefix, victim.pid)
    victim.kill()
    victim.wait()
    _, err = survivor.communicate(timeout=60)
    assert survivor.returncode == EXIT_OK, err
    entries = testweb.read_log(log)
    figures = testweb.politeness_figures(entries, 0.3)
    assert figures["hosts_below_delay"] == [], figures["hosts_below_delay"]
    assert testweb.completeness(entries, site)["missing"] == 0
    assert leased > 0
    assert figures["duplicates"] <= leased, (figures["duplicate_urls"], leased)


@pytest.mark.slow
def test_the_server_restarting_mid_crawl_pauses_the_workers_and_no_host_is_asked_too_soon(
    web: tuple[Path, Path, dict[str, object]], tmp_path: Path
) -> None:
    """kill -9 the server (its append-only file on) with two workers crawling, and start it again
    on its port: the workers start nothing meanwhile, come back, and the crawl ends complete,
    every gap at least the delay (each host waits an interval after the restart)."""
    root, log, site = web
    server = start_server(tmp_path / "valkey", persist=True)
    prefix = "cli-restart/"
    workers = [start_worker(root, server, tmp_path / name, prefix) for name in ("w1", "w2")]
    try:
        deadline = time.monotonic() + 20
        # Both in the crawl and past joining it (a heartbeat, then a moment), and URLs in hand:
        # mid-crawl. Which worker holds them at a given moment is the server's to decide.
        wait_for_workers(server, prefix, len(workers), deadline)
        time.sleep(0.3)
        assert sum(leases_of(server, prefix, w.pid) for w in workers)
        server.stop(kill=True)
        time.sleep(0.5)
        server = start_server(tmp_path / "valkey", persist=True, port=server.port)
        errors = [worker.communicate(timeout=90)[1] for worker in workers]
    finally:
        for worker in workers:
            worker.kill()
        server.stop()
    assert [worker.returncode for worker in workers] == [EXIT_OK, EXIT_OK], errors
    # A worker between two calls to the server for the whole outage (a page step, on a loaded
    # machine) may not have met it; one at least did, and the gaps below say none broke a delay.
    # One that met it came back either way: it saw the server lost, or (its heartbeat having
    # lapsed meanwhile, the outage and the restart past the 1 s heartbeat) was told it lapsed;
    # both drop what they held and rejoin.
    recovered = ("the state server is back", "dropping what it held, and rejoining the crawl")
    assert any(said in err for err in errors for said in recovered), errors
    entries = testweb.read_log(log)
    figures = testweb.politeness_figures(entries, 0.3)
    assert figures["hosts_below_delay"] == [], figures["hosts_below_delay"]
    assert testweb.completeness(entries, site)["missing"] == 0


def test_reset_deletes_the_crawls_keys_and_refuses_while_a_worker_lives(
    server: StateServer,
) -> None:
    prefix = "cli-reset/"
    client = valkey.Valkey(port=server.port)
    try:
        client.set(f"{prefix}run", "x")
        client.set("other/run", "kept")
        client.hset(f"{prefix}workers", "alive:1:a", "w")
        client.set(f"{prefix}hb:alive:1:a", "w", px=20_000)
        status, _, err = crawl_command(
            "reset", "--state", server.url, "-s", f"state.key_prefix={prefix}", "--yes"
        )
        assert status == EXIT_BAD_INPUT
        assert "has 1 live worker: stop it first" in err
        status, _, err = crawl_command(
            "reset", "--state", server.url, "-s", f"state.key_prefix={prefix}"
        )
        assert status == EXIT_BAD_INPUT  # still alive, whatever the answer would be
        client.delete(f"{prefix}hb:alive:1:a")
        status, _, err = crawl_command(
            "reset", "--state", server.url, "-s", f"state.key_prefix={prefix}"
        )
        assert status == EXIT_BAD_INPUT
        assert "give --yes" in err  # no terminal to ask on
        status, _, err = crawl_command(
            "reset", "--state", server.url, "-s", f"state.key_prefix={prefix}", "--yes"
        )
        assert status == EXIT_OK, err
        assert "deleted 2 keys" in err
        assert client.keys(f"{prefix}*") == [] and client.get("other/run") == b"kept"
    finally:
        client.close()


@pytest.mark.slow
def test_a_worker_paused_past_its_heartbeat_drops_what_it_held_and_rejoins(
    server: StateServer, web: tuple[Path, Path, dict[str, object]], tmp_path: Path
) -> None:
    """SIGSTOP one of two workers for longer than its heartbeat (a laptop asleep, a VM frozen):
    the other takes its hosts; woken, it starts nothing it held, rejoins, and the crawl ends
    complete with no gap below the delay."""
    root, log, site = web
    prefix = "cli-pause/"
    # The sleeper first, alone, so that it holds hosts when it stops: a worker that joins a
    # crawl under way takes hosts only as the others let them come due.
    sleeper = start_worker(root, server, tmp_path / "sleeper", prefix)
    other = None
    try:
        deadline = time.monotonic() + 20
        while not leases_of(server, prefix, sleeper.pid):
            assert time.monotonic() < deadline
            time.sleep(0.02)
        other = start_worker(root, server, tmp_path / "other", prefix)
        wait_for_workers(server, prefix, 2, deadline)
        sleeper.send_signal(signal.SIGSTOP)
        time.sleep(2.5)  # the heartbeat (1 s) lapses, and the other worker reaps it
        sleeper.send_signal(signal.SIGCONT)
        errors = [worker.communicate(timeout=90)[1] for worker in (sleeper, other)]
    finally:
        for worker in (sleeper, other):
            if worker is not None:
                worker.kill()
    assert [sleeper.returncode, other.returncode] == [EXIT_OK, EXIT_OK], errors
    assert "rejoining the crawl" in errors[0]
    entries = testweb.read_log(log)
    figures = testweb.politeness_figures(entries, 0.3)
    assert figures["hosts_below_delay"] == [], figures["hosts_below_delay"]
    assert testweb.completeness(entries, site)["missing"] == 0


def test_status_shows_the_crawl_as_its_server_holds_it(server: StateServer) -> None:
    """`crawl status --state URL` reads the server only: figures of the crawl under the prefix,
    as text and JSON; a prefix holding no crawl exits 2 saying so."""
    prefix = "cli-status/"
    client = valkey.Valkey(port=server.port)
    try:
        client.function_load(library_code(), replace=True)
        client.hset(f"{prefix}run", "format", "1")
        client.set(f"{prefix}pending", 7)
        client.set(f"{prefix}leased", 2)
        client.zadd(f"{prefix}due", {"http://a.test": 1, "http://b.test": 2})
        client.hset(f"{prefix}workers", "w:1:a", "w")
        client.set(f"{prefix}hb:w:1:a", "w", px=20_000)
        status, out, err = crawl_command(
            "status", "--state", server.url, "-s", f"state.key_prefix={prefix}"
        )
        assert status == EXIT_OK, err
        assert "URLs: 7 queued, 2 leased to workers" in out
        assert "hosts: 2 scheduled, 2 due now" in out and "workers: 1 alive" in out
        status, out, err = crawl_command(
            "status", "--state", server.url, "-s", f"state.key_prefix={prefix}", "--json"
        )
        assert status == EXIT_OK, err
        figures = json.loads(out)
        assert (figures["pending"], figures["live_workers"]) == (7, 1)
        status, _, err = crawl_command(
            "status", "--state", server.url, "-s", "state.key_prefix=nothing-here/"
        )
        assert status == EXIT_BAD_INPUT
        assert "no crawl with the key prefix 'nothing-here/'" in err
    finally:
        client.close()
