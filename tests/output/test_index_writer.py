"""The index written by its own process (crawler.output.index_writer): what it stores and makes
searchable is what the sink's thread would, the writing moves to it mid-crawl, and its death or
failure reaches the crawl as an OutputError, never a hang."""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
import threading
from pathlib import Path
from typing import NoReturn

import pytest

import crawler.output.index
from crawler.errors import OutputError
from crawler.output.index import IndexSink, process_after
from crawler.output.records import PageRecord, Skip, Unskip
from crawler.output.searching import export_pages, search
from crawler.runtime import BACKGROUND_NICENESS

WORDS = ["harbour", "lighthouse", "timetable", "bread", "weather"]


def record(n: int) -> PageRecord:
    return PageRecord(
        url=f"https://a.test/{n}",
        final_url=f"https://a.test/{n}",
        status=200,
        fetched_at=1.0 + n,
        depth=1,
        title=f"Page {n}",
        text=f"page {n} about the {WORDS[n % len(WORDS)]} and more words",
        main_text=f"about the {WORDS[n % len(WORDS)]}",
        markdown=f"about the **{WORDS[n % len(WORDS)]}**",
        index=True,
    )


def contents(directory: Path) -> tuple[list[str], list[tuple[str, ...]], int]:
    """(URLs found for each word, skips, pages exported): what a reader of the index sees."""
    found = [sorted(hit.url for hit in search(directory, word, limit=1000)) for word in WORDS]
    with sqlite3.connect(directory / "index.sqlite") as connection:
        skips = sorted(connection.execute("SELECT url, reason FROM skips"))
    with open(os.devnull, "w", encoding="utf-8") as out:
        exported = export_pages(directory, out)
    return [",".join(urls) for urls in found], skips, exported


def fill(sink: IndexSink, pages: int) -> None:
    for n in range(pages):
        sink.page(record(n))
        if n % 7 == 0:
            sink.skip(Skip(f"https://a.test/skip/{n}", "disallowed by robots.txt"))
        if n % 21 == 0:
            sink.unskip(Unskip(f"https://a.test/skip/{n}"))


@pytest.mark.parametrize("writer", ["process", "auto"])
def test_the_process_writes_what_the_thread_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writer: str
) -> None:
    # auto: the thread stores the first 30 records, the process the rest.
    monkeypatch.setattr(crawler.output.index, "PROCESS_AFTER_RECORDS", 30)
    with IndexSink(tmp_path / "thread", batch_size=10) as sink:
        fill(sink, 120)
    moved = IndexSink(tmp_path / "process", batch_size=10, writer=writer)  # type: ignore[arg-type]
    fill(moved, 120)
    moved.flush(wait=True)  # searchable while the sink stays open
    assert contents(tmp_path / "process") == contents(tmp_path / "thread")
    assert moved.stored == 120 + 120 // 7 + 1 + 120 // 21 + 1
    moved.close()
    assert contents(tmp_path / "process") == contents(tmp_path / "thread")
    assert len(contents(tmp_path / "thread")[0][0].split(",")) == 24


def test_auto_is_the_thread_on_one_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert (process_after("auto"), process_after("thread"), process_after("process")) == (
        None,
        None,
        0,
    )
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert process_after("auto") == crawler.output.index.PROCESS_AFTER_RECORDS


def _writer_process(sink: IndexSink) -> int:
    """The process id of the sink's writer process (a child of this process)."""
    tasks = list(Path(f"/proc/{os.getpid()}/task").glob("*/children"))
    if not tasks:
        pytest.skip("no /proc children lists here")
    children = [pid for task in tasks for pid in task.read_text().split()]
    for pid in children:
        if "crawler.output.index_writer" in Path(f"/proc/{pid}/cmdline").read_text():
            return int(pid)
    raise AssertionError(f"no writer process among {children}")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own priority: Linux")
def test_the_process_runs_at_the_crawls_priority_not_the_writer_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The writer thread lowers its own priority (crawler.runtime.background_thread) and the
    # thread storing the first 20 records is the one that hands the writing over; a child it
    # started itself would run at its priority, a core only when the crawl leaves one.
    monkeypatch.setattr(crawler.output.index, "PROCESS_AFTER_RECORDS", 20)
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    with IndexSink(tmp_path, batch_size=5, writer="auto") as sink:
        fill(sink, 60)
        sink.flush(wait=True)
        writer = _writer_process(sink)
        thread = next(t for t in threading.enumerate() if t.name == "index-writer").native_id
        assert thread is not None
        assert os.getpriority(os.PRIO_PROCESS, thread) == min(ours + BACKGROUND_NICENESS, 19)
        assert os.getpriority(os.PRIO_PROCESS, writer) == ours
    assert contents(tmp_path)[0][0].count(",") == 11  # every page 0, 5, ..., 55 stored


def test_a_crawl_shorter_than_the_move_ends_the_process_started_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # auto starts the process as the sink opens, so that it is ready when the writing moves;
    # a crawl that ends first must not leave it behind, nor let it touch the index.
    monkeypatch.setattr(crawler.output.index, "PROCESS_AFTER_RECORDS", 1_000)
    with IndexSink(tmp_path / "thread", batch_size=10, writer="thread") as sink:
        fill(sink, 40)
    sink = IndexSink(tmp_path / "auto", batch_size=10, writer="auto")
    fill(sink, 40)
    sink.flush(wait=True)
    sink._process_started.wait()  # the starting thread's work, done beside the writer's
    writer = _writer_process(sink)
    sink.close()
    assert not Path(f"/proc/{writer}").exists()  # killed and reaped
    assert contents(tmp_path / "auto") == contents(tmp_path / "thread")
    assert not [t for t in threading.enumerate() if t.name.startswith("index-writer")]


def test_a_process_that_cannot_start_leaves_the_writing_to_the_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(module: str) -> NoReturn:
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(crawler.output.index, "start_child", refused)
    monkeypatch.setattr(crawler.output.index, "PROCESS_AFTER_RECORDS", 20)
    with IndexSink(tmp_path / "thread", batch_size=10) as sink:
        fill(sink, 120)
    with IndexSink(tmp_path / "refused", batch_size=10, writer="auto") as sink:
        fill(sink, 120)
    assert sink.stored == 120 + 120 // 7 + 1 + 120 // 21 + 1
    assert contents(tmp_path / "refused") == contents(tmp_path / "thread")
    assert not [t for t in threading.enumerate() if t.name.startswith("index-writer")]


def test_a_killed_writer_process_is_an_output_error_and_no_hang(tmp_path: Path) -> None:
    sink = IndexSink(tmp_path, batch_size=5, writer="process")
    fill(sink, 10)
    sink.flush(wait=True)
    stored = sink.stored
    os.kill(_writer_process(sink), signal.SIGKILL)
    fill(sink, 40)  # more batches than the queue holds: none blocks for ever
    with pytest.raises(OutputError, match="index writer process stopped answering"):
        sink.flush(wait=True)
    assert sink.stored == stored  # nothing after the death counted stored
    with pytest.raises(OutputError):
        sink.close()
    assert len(search(tmp_path, "harbour")) == 2  # what it stored before stays


def test_a_failure_in_the_process_is_an_output_error(tmp_path: Path) -> None:
    sink = IndexSink(tmp_path, batch_size=5, writer="process")
    fill(sink, 5)
    sink.flush(wait=True)
    stored = sink.stored
    # A text SQLite cannot take (a lone surrogate is no UTF-8): the process's batch fails.
    sink.page(PageRecord("https://a.test/x", "https://a.test/x", 200, 1.0, 1, title="\ud800"))
    with pytest.raises(OutputError, match=r"cannot write index .*UnicodeEncodeError"):
        sink.flush(wait=True)
    fill(sink, 5)
    with pytest.raises(OutputError):
        sink.close()
    assert sink.stored == stored  # after a failure, nothing more is counted stored
    assert len(search(tmp_path, "harbour")) == 1
