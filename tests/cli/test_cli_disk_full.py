"""A crawl into a data directory on a small filesystem (a tmpfs of a few MB the test mounts; it
needs root, as CI runs, and is skipped with its reason elsewhere): the disk fills, the crawl
stops as SIGTERM stops it, and once there is room the same command resumes it."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from support.commands import crawl_command, run_crawl
from support.loopback import LoopbackWeb
from support.warc_check import warcio_checks
from warcio.archiveiterator import ArchiveIterator

from crawler.cli.exits import EXIT_DISK_FULL, EXIT_OK
from crawler.config import OutputConfig, StateConfig
from crawler.errors import DiskFullError, StateDiskFullError, no_room
from crawler.frontier import QueuedUrl
from crawler.output.reserve import RESERVE_NAME, DiskReserve
from crawler.output.warc import WARC_DIR, ArchivedAnswer, ArchivedPage, warc_files
from crawler.output.warc_writer import Archiver
from crawler.robots import RobotsOptions
from crawler.state import open_state

pytestmark = pytest.mark.loopback

A, B = "127.0.1.1", "127.0.1.2"
PAGES = 400
CONCURRENCY = 32
OPTIONS = (
    "-s",
    "politeness.min_delay=0",
    "-s",
    f"concurrency={CONCURRENCY}",
    "-s",
    "politeness.per_host_concurrency=16",
    "-s",
    "output.min_free_space=0",
)
ROOM = 2_000_000
"""Bytes the crawl finds free beside its reserve (output.disk_reserve, the default's): it fills
them in a few hundred pages."""
URLS_LINE = re.compile(r"URLs: (\d+) met: (\d+) fetched, (\d+) skipped, (\d+) queued")


def books_balanced(out: str) -> None:
    """The summary's `URLs:` line adds up: met = fetched + skipped + queued."""
    found = URLS_LINE.search(out)
    assert found is not None, out
    met, fetched, skipped, queued = map(int, found.groups())
    assert met == fetched + skipped + queued, found.group(0)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MB tmpfs at tmp_path/disk, unmounted after the test."""
    if os.geteuid() != 0:
        pytest.skip("mounting a size-limited tmpfs needs root (CI runs as root)")
    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(path: Path) -> None:
    """Take every byte left on `path`'s filesystem."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        for size in (65536, 4096, 512, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"x" * size)
    finally:
        os.close(fd)


def resize(disk: Path, size: str) -> None:
    subprocess.run(["mount", "-o", f"remount,size={size}", str(disk)], check=True)


def leave_free(disk: Path, free: int) -> None:
    """Take all but `free` bytes of `disk`'s filesystem."""
    resize(disk, "64m")
    room = os.statvfs(disk)
    (disk / "filler").write_bytes(b"x" * (room.f_bavail * room.f_frsize - free))


def build_web(net: LoopbackWeb) -> list[str]:
    body = " ".join(f"word{n}" for n in range(400))  # about 3 KB of text a page
    for ip in (A, B):
        site = net[ip]
        site.robots("User-agent: *\nDisallow: /private\n")
        for n in range(PAGES):
            site.page(f"/{n}", f"/{(n + 1) % PAGES}", f"/private/{n}", body=body)
    return [net[ip].url("/0") for ip in (A, B)]


def fetched(net: LoopbackWeb) -> Counter[str]:
    return Counter(f"{hit.host}{hit.path}" for hit in net.hits if hit.path != "/robots.txt")


@pytest.mark.parametrize(
    ("extra", "full"),
    [
        ((), "data"),
        (("--warc",), "data"),
        (("--output", "jsonl"), "data"),
        (("-s", "index.writer=process"), "data"),
        (("--warc",), "warc"),
    ],
)
async def test_a_full_disk_stops_the_crawl_and_the_same_command_resumes_it(
    tmp_path: Path, small_disk: Path, extra: tuple[str, ...], full: str
) -> None:
    """`full`: the directory on the small disk: the data directory, or its WARC directory only."""
    if full == "data":
        data = small_disk / "data"
        leave_free(small_disk, OutputConfig().disk_reserve + ROOM)
    else:
        data = tmp_path / "data"
        data.mkdir()
        (data / "warc").symlink_to(small_disk)
        (small_disk / "filler").write_bytes(b"x" * 3_800_000)  # the WARC files fill the rest
    seeds = tmp_path / "seeds.txt"
    async with LoopbackWeb(A, B) as net:
        seeds.write_text("\n".join(build_web(net)) + "\n", "utf-8")
        command = (str(seeds), "--data", str(data), *OPTIONS, *extra)
        status, out, err = await run_crawl(*command)
        assert status == EXIT_DISK_FULL, err
        # One line names the file and says what to do; no traceback, no warning.
        said = re.search(r"crawl: disk full writing (\S+) \((.+)\): stopped; free space", err)
        assert said is not None, err
        assert Path(said.group(1)).is_relative_to(data)
        assert "Traceback" not in err and "Warning" not in err and "never awaited" not in err
        assert "crawl stopped" in out
        books_balanced(out)
        summary = json.loads((data / "summary.json").read_text("utf-8"))
        assert summary["stopped_by"] == "disk full"
        assert summary["run"]["ended"] == {"clean": False, "reason": "disk full"}
        first = fetched(net)
        assert first, "the disk filled before any page"

        status, said_status, _ = await run_crawl("status", "--data", str(data))
        assert status == EXIT_OK
        assert said_status.splitlines()[0].endswith("; it stopped because the disk was full")

        (small_disk / "filler").unlink(missing_ok=True)  # room again
        resize(small_disk, "64m")
        status, out, err = await run_crawl(*command)
        assert status == EXIT_OK, err
        assert "resuming the crawl" in err
        assert "the last run stopped because the disk was full" in err
        assert "crawl finished" in out
        books_balanced(out)
    pages = fetched(net)
    expected = {f"{ip}/{n}" for ip in (A, B) for n in range(PAGES)}
    assert set(pages) == expected  # nothing lost, nothing disallowed
    again = sum(times - 1 for times in pages.values())
    # Fetched twice: at most the requests in flight at the fault. What the sinks held in memory
    # then is written at the stop, in the room the crawl kept (output.disk_reserve; on the WARC
    # directory's own filesystem too).
    assert again <= CONCURRENCY, again
    if full == "warc":
        assert said.group(1).endswith(".warc.gz")  # the file the writer could not write
        assert not (small_disk / RESERVE_NAME).exists()  # given back
    if "--warc" in extra:
        every_page_archived_whole(data, expected)


def every_page_archived_whole(data: Path, pages: set[str]) -> None:
    """warcio's checker passes every WARC file, warcio reads each to its end, no record cut
    short, and every page fetched has a response (or revisit) record."""
    files = warc_files(data)
    warcio_checks(files)
    archived = set()
    for path in files:
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream, check_digests=True):
                record.content_stream().read()
                # The same page on both hosts: the second a revisit of the first's payload.
                if record.rec_type in ("response", "revisit"):
                    url = urlsplit(record.rec_headers.get_header("WARC-Target-URI"))
                    archived.add(f"{url.hostname}{url.path}")
        # warcio reads a last record cut short without a word: its gzip member must end.
        assert gzip.decompress(path.read_bytes()).startswith(b"WARC/1.1")
    assert pages <= archived, sorted(pages - archived)[:5]


async def test_a_full_disk_under_the_log_file_stops_the_crawl(
    tmp_path: Path, small_disk: Path
) -> None:
    fill(small_disk / "filler")  # the disk full before the crawl begins
    log = small_disk / "crawl.log"
    data = tmp_path / "data"
    async with LoopbackWeb(A, B) as net:
        seeds = build_web(net)
        net[A].status("/busy", 503)  # its retries are logged
        seeds.append(net[A].url("/busy"))
        status, out, err = await run_crawl(
            *seeds, "--data", str(data), *OPTIONS, "-v", "--log-file", str(log)
        )
    assert status == EXIT_DISK_FULL, err
    assert f"crawl: disk full writing {log} (No space left on device): stopped" in err
    assert "Traceback" not in err and "Logging error" not in err
    books_balanced(out)
    summary = json.loads((data / "summary.json").read_text("utf-8"))
    assert summary["run"]["ended"] == {"clean": False, "reason": "disk full"}


async def test_too_little_free_space_refuses_to_start(small_disk: Path) -> None:
    status, _, err = await run_crawl("http://127.0.1.1:9/", "--data", str(small_disk / "data"))
    assert status == EXIT_DISK_FULL
    assert f"data directory {small_disk / 'data'} has" in err
    assert "less than output.min_free_space (100.0 MB)" in err
    assert not (small_disk / "data").exists()


def test_no_room_reads_the_errors_of_a_full_disk() -> None:
    import errno
    import sqlite3

    assert no_room(OSError(errno.ENOSPC, "No space left on device")) == os.strerror(errno.ENOSPC)
    assert no_room(OSError(errno.EDQUOT, "quota")) == os.strerror(errno.EDQUOT)
    assert no_room(OSError(errno.EACCES, "denied")) is None
    full = sqlite3.OperationalError("database or disk is full")
    assert no_room(full) == "database or disk is full"
    wrapped = RuntimeError("writing")
    wrapped.__cause__ = OSError(errno.EROFS, "ro")
    assert no_room(wrapped) == os.strerror(errno.EROFS)
    assert no_room("the index writer said: database or disk is full") is not None
    assert no_room(DiskFullError("/x/index.sqlite", "No space left on device")) is not None
    assert str(DiskFullError("/x/index.sqlite", "No space left on device")) == (
        "disk full writing /x/index.sqlite (No space left on device)"
    )


async def test_export_search_and_report_on_a_full_disk_leave_the_data_as_it_was(
    small_disk: Path,
) -> None:
    data = small_disk / "data"
    async with LoopbackWeb(A) as net:
        site = net[A]
        for n in range(20):
            site.page(f"/{n}", f"/{(n + 1) % 20}", body=f"lighthouse keeper {n}")
        status, _, err = await run_crawl(site.url("/0"), "--data", str(data), *OPTIONS)
    assert status == EXIT_OK, err
    exported = small_disk / "pages.jsonl"
    status, _, err = crawl_command("export", "--data", str(data), "-o", str(exported))
    assert status == EXIT_OK, err
    before = exported.read_bytes()
    index = {path.name: path.read_bytes() for path in data.glob("index.sqlite*")}
    fill(small_disk / "filler")

    status, _, err = crawl_command("export", "--data", str(data), "-o", str(exported))
    assert status == EXIT_DISK_FULL
    assert err.startswith(f"crawl: disk full writing {exported} (No space left on device): ")
    assert exported.read_bytes() == before  # the last export stays whole
    status, _, err = crawl_command("report", "--data", str(data), "-o", str(small_disk / "r.html"))
    assert status == EXIT_DISK_FULL
    assert err.startswith(f"crawl: disk full writing {small_disk / 'r.html'} (No space left")
    assert not (small_disk / "r.html").exists()
    assert sorted(path.name for path in small_disk.iterdir()) == ["data", "filler", "pages.jsonl"]
    # Searching only reads: it works on a full disk, and the index is left as it was.
    status, out, err = crawl_command("search", "--data", str(data), "lighthouse")
    assert status == EXIT_OK, err
    assert site.url("/") in out
    assert "Traceback" not in err
    assert {path.name: path.read_bytes() for path in data.glob("index.sqlite*")} == index


def test_a_state_that_found_the_disk_full_stays_as_its_last_commit_left_it(
    small_disk: Path,
) -> None:
    """Whatever SQLite undid of the failed transaction (a statement, or all of it), nothing after
    it is written: a later commit would mark done pages whose links it lost."""
    origin = "http://a.test"
    state = open_state(small_disk, StateConfig(), RobotsOptions())
    try:
        state.frontier.push(origin, QueuedUrl(f"{origin}/first"))
        state.commit()
        fill(small_disk / "filler")
        with pytest.raises(StateDiskFullError):
            for n in range(200_000):  # until a commit finds no room
                state.frontier.push(origin, QueuedUrl(f"{origin}/{n}/" + "x" * 200))
                if n % 1000 == 0:
                    state.commit()
        (small_disk / "filler").unlink()  # room again: still nothing is written
        state.frontier.push(origin, QueuedUrl(f"{origin}/after"))
        state.commit()
    finally:
        state.close()
    reopened = open_state(small_disk, StateConfig(), RobotsOptions())
    try:
        assert len(reopened.frontier) == 1
    finally:
        reopened.close()


def test_a_state_that_found_the_disk_full_stores_it_all_once_there_is_room(
    small_disk: Path,
) -> None:
    """The crawl makes room at its stop (the reserve) and asks the state to write again: the
    transaction the full disk undid is stored with what came after, nothing lost or doubled."""
    origin = "http://a.test"
    state = open_state(small_disk, StateConfig(), RobotsOptions())
    pushed = 1
    try:
        state.frontier.push(origin, QueuedUrl(f"{origin}/first"))
        state.seen.add(f"{origin}/first")
        state.commit()
        fill(small_disk / "filler")
        with pytest.raises(StateDiskFullError):
            for n in range(200_000):  # until a commit finds no room
                url = f"{origin}/{n}/" + "x" * 200
                state.seen.add(url)
                state.frontier.push(origin, QueuedUrl(url))
                pushed += 1
                if n % 1000 == 999:
                    state.commit()
        state.frontier.push(origin, QueuedUrl(f"{origin}/while-full"))  # kept in memory
        state.commit()  # nothing written yet: the disk is still full
        (small_disk / "filler").unlink()
        state.write_again()
        state.frontier.push(origin, QueuedUrl(f"{origin}/after"))
        state.commit()
        pushed += 2
    finally:
        state.close()
    reopened = open_state(small_disk, StateConfig(), RobotsOptions())
    try:
        assert len(reopened.frontier) == pushed
        assert len(reopened.seen) == pushed - 2
        urls = []
        while (item := reopened.frontier.pop(origin)) is not None:
            urls.append(item.url)
        assert len(set(urls)) == len(urls) == pushed > 1000
        assert urls[-2:] == [f"{origin}/while-full", f"{origin}/after"]
    finally:
        reopened.close()


def test_a_reserve_larger_than_the_disk_has_free_holds_three_quarters_of_it(
    small_disk: Path,
) -> None:
    """A crawl resumed on the disk it filled, with little freed, still keeps room for its stop."""
    free = os.statvfs(small_disk).f_bavail * os.statvfs(small_disk).f_frsize
    reserve = DiskReserve(small_disk, 32_000_000)
    try:
        assert reserve.held
        assert free * 3 // 4 - 4096 <= reserve.size <= free * 3 // 4
        assert (small_disk / RESERVE_NAME).stat().st_blocks * 512 >= reserve.size
        assert DiskReserve(small_disk, 1_000).size == 1_000  # it fits: as asked
    finally:
        reserve.release()
    assert not (small_disk / RESERVE_NAME).exists()


def test_a_reserve_is_held_on_the_warc_directorys_own_filesystem(
    tmp_path: Path, small_disk: Path
) -> None:
    """Given back whole with the sinks' share; none on the data directory's filesystem twice."""
    data = tmp_path / "data"
    (data / "warc").mkdir(parents=True)
    same = DiskReserve(data, 100_000, sinks_directories=[data / "warc"])
    assert same.elsewhere == []
    same.release()
    reserve = DiskReserve(data, 100_000, sinks_directories=[small_disk])
    try:
        assert [other.path for other in reserve.elsewhere] == [small_disk / RESERVE_NAME]
        assert (small_disk / RESERVE_NAME).stat().st_blocks * 512 >= 100_000
        reserve.give_sinks_share()
        assert not (small_disk / RESERVE_NAME).exists()
        assert (data / RESERVE_NAME).stat().st_size == 25_000  # the state's quarter
    finally:
        reserve.release()
    assert not (data / RESERVE_NAME).exists()


def _answer(n: int, body: bytes) -> ArchivedAnswer:
    head = f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {len(body)}\r\n\r\n"
    request = f"GET /{n} HTTP/1.1\r\nHost: a.test\r\n\r\n".encode()
    url = f"http://a.test/{n}"
    return ArchivedAnswer(
        url, 1.8e9, 200, head.encode() + body, request, None, False, None, None, True
    )


def _page(n: int) -> ArchivedPage:
    url = f"http://a.test/{n}"
    return ArchivedPage(url, url, 1.8e9, 200, None, True, None, True, None, 0, None, (), (), ())


@pytest.mark.parametrize("file_bytes", [1_000_000_000, 30_000])
def test_a_warc_batch_that_finds_the_disk_full_is_undone_and_written_once_there_is_room(
    small_disk: Path, file_bytes: int
) -> None:
    """No half record left in a file, no file begun left, nothing learned kept: the batch,
    written again, gives the records it would have given (`file_bytes` 30 KB: it began files)."""
    (small_disk / WARC_DIR).mkdir()
    archiver = Archiver(small_disk, {"software": "test"}, file_bytes)
    bodies = [os.urandom(2000) for _ in range(40)]  # incompressible: the batch needs room
    archiver.write([_answer(0, bodies[0])])  # its page comes with the next batch
    written = [(path, path.stat().st_size) for path in archiver.files]
    figures = archiver.figures
    fill(small_disk / "filler")
    # /40 has /1's payload: a revisit of a response of the same batch.
    batch = [_page(0)] + [item for n in range(1, 40) for item in (_answer(n, bodies[n]), _page(n))]
    batch += [_answer(40, bodies[1]), _page(40)]
    with pytest.raises(OSError) as failed:
        archiver.write(batch)
    assert no_room(failed.value) is not None
    assert [(path, path.stat().st_size) for path in archiver.files] == written
    assert sorted(path.name for path in (small_disk / WARC_DIR).glob("*.warc.gz")) == [
        path.name for path in archiver.files
    ]
    assert archiver.figures == figures
    (small_disk / "filler").unlink()
    archiver.write(batch)
    archiver.close()
    kinds: Counter[tuple[str, str]] = Counter()
    ids = set()
    for path in archiver.files:
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream, check_digests="raise"):
                record.content_stream().read()
                headers = record.rec_headers
                ids.add(headers.get_header("WARC-Record-ID"))
                uri = headers.get_header("WARC-Target-URI") or ""
                kinds[record.rec_type, uri.rpartition("/")[2]] += 1
                if record.rec_type == "revisit":
                    assert headers.get_header("WARC-Refers-To-Target-URI").endswith("/1")
        assert gzip.decompress(path.read_bytes())  # every member ends
    for n in range(41):
        kind = "revisit" if n == 40 else "response"
        assert kinds[kind, str(n)] == kinds["request", str(n)] == kinds["metadata", str(n)] == 1
    assert archiver.figures[0] == sum(kinds.values())
