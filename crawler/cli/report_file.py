"""`crawl report [--data DIR] [-o FILE]`: the report of the crawl in DIR as one HTML file (default
DIR/report.html), its path printed. What it shows is crawler.crawl_report's (pure); this reads
the crawl, as `crawl status` finds it (summary.json, or the state when there is none), and from
DIR/state.sqlite, read-only and without the directory's lock, the request starts and the fetch
times."""

from __future__ import annotations

import argparse
import itertools
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from crawler.cli.exits import EXIT_OK
from crawler.cli.status import find_status
from crawler.config import load_config
from crawler.crawl_report import ReportFigures, Start, report_figures, report_html
from crawler.errors import DiskFullError, StateError, no_room
from crawler.state import STATE_NAME
from crawler.state.starts import unpack_starts

__all__ = ["REPORT_NAME", "CrawlRead", "read_crawl", "report_command", "write_report"]

REPORT_NAME = "report.html"
_STARTS = (
    "SELECT start_origins.origin, starts.data FROM starts "
    "JOIN start_origins ON start_origins.id = starts.origin_id "
    "ORDER BY starts.origin_id, starts.rowid"
)
_FIRST_STARTS = "SELECT substr(data, 1, 24) FROM starts"
"""Each row's first start: its starts are in time order, so the crawl's first is among these."""


@dataclass(frozen=True, slots=True)
class CrawlRead:
    figures: ReportFigures
    source: str
    """The files read, as the report names them."""
    running: bool
    """The crawl is running now (the summary's process is alive)."""


def _connect(path: Path) -> sqlite3.Connection:
    wal = path.with_name(path.name + "-wal")
    # Without a WAL to read, immutable: a read-only connection would still create the -wal and
    # -shm files, and leave them behind (as crawler.cli.status does).
    options = "mode=ro" if wal.exists() else "mode=ro&immutable=1"
    return sqlite3.connect(f"{path.resolve().as_uri()}?{options}", uri=True)


def _tables(connection: sqlite3.Connection) -> set[str]:
    return {name for (name,) in connection.execute("SELECT name FROM sqlite_master")}


def _by_origin(rows: Iterator[tuple[str, bytes]]) -> Iterator[tuple[str, list[Start]]]:
    """Each origin's starts in time order (its rows are, one after the other)."""
    for origin, group in itertools.groupby(rows, key=lambda row: row[0]):
        yield origin, [start for _, data in group for start in unpack_starts(data)]


def _first_start(connection: sqlite3.Connection) -> float | None:
    firsts = [
        at for (data,) in connection.execute(_FIRST_STARTS) for at, _, _ in unpack_starts(data)
    ]
    return min(firsts, default=None)


def read_crawl(data_dir: Path, max_wait: float) -> CrawlRead:
    """What the report of the crawl in `data_dir` shows; StateError naming the directory or the
    file when there is no crawl there or it cannot be read."""
    if data_dir.exists() and not data_dir.is_dir():
        raise StateError(f"no crawl to report: {data_dir} is a file, not a data directory")
    status = find_status(data_dir, max_wait)
    path = data_dir / STATE_NAME
    if not path.is_file():
        figures = report_figures(status.document, None, [])
        return CrawlRead(figures, str(status.source), status.running)
    broken = f"crawl state {path} cannot be read"
    try:
        connection = _connect(path)
    except sqlite3.Error as error:
        raise StateError(f"{broken}: {error}") from error
    try:
        tables = _tables(connection)
        fetch_times = (
            [at for (at,) in connection.execute("SELECT fetched_at FROM fetches")]
            if "fetches" in tables
            else []
        )
        if "starts" in tables:
            began = _first_start(connection)
            figures = report_figures(
                status.document,
                _by_origin(connection.execute(_STARTS)),
                fetch_times,
                began=began if began is not None else 0.0,
            )
        else:
            figures = report_figures(status.document, None, fetch_times)
    except sqlite3.Error as error:
        raise StateError(f"{broken}: {error}") from error
    finally:
        connection.close()
    sources = str(status.source) if status.source == path else f"{status.source} and {path}"
    return CrawlRead(figures, sources, status.running)


def write_report(data_dir: Path, output: Path, max_wait: float) -> int:
    """Write the report of the crawl in `data_dir` to `output`; its size in bytes."""
    read = read_crawl(data_dir, max_wait)
    made_at = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    text = report_html(read.figures, source=read.source, made_at=made_at, running=read.running)
    data = text.encode("utf-8")
    temporary = output.with_name(f".{output.name}.{os.getpid()}.tmp")
    try:
        temporary.write_bytes(data)
        os.replace(temporary, output)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        reason = no_room(error)
        if reason is not None:
            raise DiskFullError(output, reason) from error
        raise StateError(f"cannot write the report to {output}: {error.strerror}") from error
    return len(data)


def report_command(args: argparse.Namespace) -> int:
    config = load_config(args.config, list(args.overrides))
    data_dir = Path(args.data) if args.data is not None else Path(config.output.data_dir)
    output = args.output if args.output is not None else data_dir / REPORT_NAME
    size = write_report(data_dir, output, config.politeness.max_wait)
    print(f"crawl report: wrote {output.resolve()} ({size / 1024:,.0f} KB)")
    return EXIT_OK
