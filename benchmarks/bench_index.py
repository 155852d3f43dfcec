#!/usr/bin/env python3
"""The index writer alone: documents a second into DIR/index.sqlite, and where its time goes.

    python benchmarks/bench_index.py [--pages 5000] [--rounds 3] [--seed 0] [--only NAME,...]
        [--json]

The documents are the speed web's pages (benchmarks/support/pagegen.py, article shape, about
12 KB of HTML and 11 KB of text each), read by our page step into page records once, before any
timing, as the crawl would hand them to the index. Each option below writes all of them into a
fresh directory: `IndexSink.page()` for each record, then `close()`, which returns once every
batch is committed. Docs/s = records / that time. Rounds are interleaved; the best round counts.

    shipped          IndexSink as the crawl uses it
    no text          the same records marked not indexed: the page table and its upserts alone,
                     no FTS row (what FTS5 costs is the difference)
    no CJK marks     IndexSink without crawler.output.cjk's marking (what marking costs)
    hash 1 MiB       FTS5's default hashsize instead of FTS_HASH_BYTES
    automerge 0      no merging while writing (segments pile up; a search reads them all)
    crisismerge 64   merges put off until 64 segments of a level, not 16
    pgsz 16000       FTS5 pages of 16,000 bytes, not 4,050
    synchronous OFF  no fsync at all (what durability costs; not a choice the crawl may make)
    checkpoint 10000 the WAL checkpointed every 10,000 pages (40 MB), not SQLite's 1,000
    stemming         index.stemming english (the porter tokenizer before unicode61)

Stages: one more run of `shipped`, its time split: storing (the page rows' upsert, the texts'
insert, their ids queued in `unindexed`, the marking of CJK, the commit with its WAL writes: what
the crawl waits for before it marks URLs done) and making FTS5's entries after (tokenising,
segments, merges), and the page step's own time per record for comparison.

Run with another build's python (another checkout's venv: `../old/.venv/bin/python
benchmarks/bench_index.py`) it measures that build's writer: the options it knows, the same pages.

Exit status: 0 when it ran, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest import mock

from support.machine import machine
from support.pagegen import ARTICLE, generate_pages

from crawler.output import index as index_module
from crawler.output.index import IndexSink
from crawler.output.records import PageRecord
from crawler.page.read import PageRules, read_page

try:
    from crawler.output import index_open, index_writes
except ImportError:  # an older build: the writer in one module, its functions private
    index_open = index_writes = index_module

Records = Sequence[PageRecord]


def writer_function(name: str) -> str:
    """The name index_module calls the writer's function `name` by: `_name` in an older build."""
    return name if hasattr(index_module, name) else f"_{name}"


def make_records(count: int, seed: int) -> tuple[list[PageRecord], float]:
    """`count` page records of the speed web's pages, and the page step's seconds per page."""
    pages = generate_pages(count, seed, ARTICLE)
    rules = PageRules(token="crawler")
    records = []
    started = time.perf_counter()
    for number, page in enumerate(pages):
        result = read_page(page.body, page.url, charset="utf-8", x_robots_tag=(), rules=rules)
        records.append(
            PageRecord(
                url=f"{page.url}?n={number}",
                final_url=f"{page.url}?n={number}",
                status=200,
                fetched_at=1.7e9 + number / 1000,
                depth=1,
                content_type="text/html",
                title=result.title,
                description=result.description,
                language=result.language,
                text=result.text,
                nosnippet_text=result.nosnippet_text,
                links=tuple(result.links),
                size=len(page.body),
                index=True,
                follow=True,
                # An older build (run with --baseline's python) keeps no headings, no main
                # content, no frame.
                **{
                    name: getattr(result, name)
                    for name in ("headings", "main_text", "markdown", "main_fallback", "frame_text")
                    if hasattr(result, name)
                },
            )
        )
    return records, (time.perf_counter() - started) / count


def write(records: Records, directory: Path, **options: Any) -> float:
    started = time.perf_counter()
    with IndexSink(directory, **options) as sink:
        for record in records:
            sink.page(record)
    return time.perf_counter() - started


@contextlib.contextmanager
def fts_option(name: str, value: int) -> Iterator[None]:
    """Every index opened meanwhile gets the FTS5 option `name` = `value` after its own tuning."""
    tune = index_open._tune_fts

    def tuned(connection: sqlite3.Connection) -> None:
        tune(connection)
        connection.execute("INSERT INTO pages_fts (pages_fts, rank) VALUES (?, ?)", (name, value))

    with mock.patch.object(index_open, "_tune_fts", tuned):
        yield


@contextlib.contextmanager
def pragma(name: str, value: int | str) -> Iterator[None]:
    """Every index opened meanwhile gets `PRAGMA name = value` once open."""
    name = writer_function("open_for_writing")
    open_for_writing = getattr(index_module, name)

    def opened(*args: Any) -> sqlite3.Connection:
        connection = open_for_writing(*args)
        connection.execute(f"PRAGMA {name} = {value}")
        return connection

    with mock.patch.object(index_module, name, opened):
        yield


def option_runs() -> dict[str, Callable[[Records, Path], float]]:
    def shipped(records: Records, directory: Path) -> float:
        return write(records, directory)

    def no_text(records: Records, directory: Path) -> float:
        return write([replace(record, index=False) for record in records], directory)

    def no_marks(records: Records, directory: Path) -> float:
        with mock.patch.object(index_writes, "marked", lambda text: text):
            return write(records, directory)

    def with_option(name: str, value: int) -> Callable[[Records, Path], float]:
        def run(records: Records, directory: Path) -> float:
            with fts_option(name, value):
                return write(records, directory)

        return run

    def with_pragma(name: str, value: int | str) -> Callable[[Records, Path], float]:
        def run(records: Records, directory: Path) -> float:
            with pragma(name, value):
                return write(records, directory)

        return run

    def stemming(records: Records, directory: Path) -> float:
        return write(records, directory, stemming="english")

    runs = {
        "shipped": shipped,
        "no text": no_text,
        "no CJK marks": no_marks,
        "hash 1 MiB": with_option("hashsize", 1024 * 1024),
        "automerge 0": with_option("automerge", 0),
        "crisismerge 64": with_option("crisismerge", 64),
        "pgsz 16000": with_option("pgsz", 16000),
        "synchronous OFF": with_pragma("synchronous", "OFF"),
        "checkpoint 10000": with_pragma("wal_autocheckpoint", 10000),
        "stemming": stemming,
    }
    if not hasattr(index_writes, "marked"):  # an older build: neither marks nor stemming
        del runs["no CJK marks"], runs["stemming"]
    return runs


def stages(records: Records, directory: Path) -> dict[str, float]:
    """Seconds spent in each kind of statement of the shipped writer, and in marking."""
    spent: dict[str, float] = {}
    run_statement = index_writes.write_rows

    def timed_rows(connection: sqlite3.Connection, sql: str, rows: Any, width: int) -> None:
        kind = sql.split()[0] + " " + sql.split()[2]  # "INSERT pages", "DELETE pages_fts", ...
        started = time.perf_counter()
        try:
            run_statement(connection, sql, rows, width)
        finally:
            spent[kind] = spent.get(kind, 0.0) + time.perf_counter() - started

    def timed(module: ModuleType, name: str, kind: str) -> Callable[..., Any]:
        """`module`'s `name`, its seconds added to `spent[kind]`."""
        function = getattr(module, name)

        def run(*args: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args)
            finally:
                spent[kind] = spent.get(kind, 0.0) + time.perf_counter() - started

        return run

    with contextlib.ExitStack() as patches:
        patches.enter_context(mock.patch.object(index_writes, "write_rows", timed_rows))
        write_batch = writer_function("write_batch")
        whole = timed(index_module, write_batch, "whole batches")
        patches.enter_context(mock.patch.object(index_module, write_batch, whole))
        if hasattr(index_writes, "marked"):  # an older build has neither
            index_chunk = writer_function("index_chunk")
            for module, name, kind in (
                (index_writes, "marked", "CJK marks"),
                (index_module, index_chunk, "FTS5 entries (later)"),
            ):
                patches.enter_context(mock.patch.object(module, name, timed(module, name, kind)))
        spent["all"] = write(records, directory)
    accounted = sum(
        value
        for key, value in spent.items()
        if key not in ("all", "whole batches", "FTS5 entries (later)")
    )
    spent["commit and the rest"] = spent["whole batches"] - accounted
    return spent


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--pages", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", help="comma-separated option names (default: all)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.pages < 1 or args.rounds < 1:
        parser.error("--pages and --rounds must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    runs = option_runs()
    if args.only:
        wanted = [name.strip() for name in args.only.split(",")]
        unknown = [name for name in wanted if name not in runs]
        if unknown:
            print(f"bench_index: unknown option {unknown[0]!r} (known: {', '.join(runs)})")
            return 2
        runs = {name: runs[name] for name in wanted}
    print(f"reading {args.pages} pages with the page step ...", file=sys.stderr)
    records, page_step_s = make_records(args.pages, args.seed)
    text_kb = statistics.mean(len(record.text.encode()) for record in records) / 1000
    timings: dict[str, list[float]] = {name: [] for name in runs}
    with tempfile.TemporaryDirectory(prefix="bench-index-") as temporary:
        root = Path(temporary)
        for round_ in range(args.rounds):
            for name, run in runs.items():
                directory = root / f"{len(timings[name])}-{name.replace(' ', '-')}"
                print(f"round {round_ + 1}/{args.rounds}: {name} ...", file=sys.stderr)
                timings[name].append(run(records, directory))
        spent = stages(records, root / "stages")
    rates = {name: len(records) / min(seconds) for name, seconds in timings.items()}
    if args.json:
        print(
            json.dumps(
                {
                    "machine": machine(),
                    "pages": len(records),
                    "text_kb": text_kb,
                    "page_step_us": page_step_s * 1e6,
                    "docs_per_s": rates,
                    "rounds_s": timings,
                    "stages_s": spent,
                },
                indent=1,
            )
        )
        return 0
    info = machine()
    print(
        f"machine: {info['cpu']}, {info['cores']} cores, Python {info['python']}, SQLite "
        f"{sqlite3.sqlite_version}"
    )
    print(
        f"{len(records):,} records of {text_kb:.1f} KB of text each (the speed web's pages); "
        f"best of {args.rounds} rounds, interleaved"
    )
    print()
    print(f"{'option':<18} {'docs/s':>8} {'vs shipped':>10}  rounds (s)")
    base = rates.get("shipped")
    for name, rate in rates.items():
        ratio = f"{rate / base:.2f}x" if base else "-"
        rounds = " ".join(f"{seconds:.2f}" for seconds in timings[name])
        print(f"{name:<18} {rate:>8,.0f} {ratio:>10}  {rounds}")
    print()
    print(f"where the shipped writer's {spent['all']:.2f} s go ({len(records):,} records):")
    for kind, seconds in spent.items():
        if kind in ("all", "whole batches"):
            continue
        print(f"  {kind:<22} {seconds:6.2f} s  {seconds / len(records) * 1e6:7.0f} us a record")
    print(
        f"  {'(the page step)':<22} {page_step_s * len(records):6.2f} s  "
        f"{page_step_s * 1e6:7.0f} us a record, on the loop's core"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
