"""DIR/summary.json: what a run of `crawl` did, for programs and for `crawl status`.

`crawl` writes it as a run starts, every `SUMMARY_INTERVAL` seconds while it runs, and as the run
ends, finished or stopped (Ctrl-C, SIGTERM, a second signal). A kill leaves the last refresh:
`"outcome": "running"` with the id of a process that is gone, which `crawl status` reports as a
run that did not end cleanly. Each write goes to a temporary file beside it and then replaces it
(`os.replace`), so a reader sees one whole version or the next, never half of one.

Refreshed on a timer of its own, not at each checkpoint: checkpoints come every
`state.commit_interval` (0.5 s), too often for a file that lists every host; and a write that
takes long (hundreds of thousands of hosts) waits longer before the next, so the file never costs
the crawl more than `MOST_TIME_SPENT` of its event loop's time.

What the document holds, and reading it back, is crawler.cli.summary_document's (pure; its names
are importable from here too); `write_summary`, `read_summary` and `SummaryWriter` do the I/O.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from crawler.cli.summary_document import (
    SUMMARY_FORMAT,
    RunFacts,
    SummaryReport,
    deferred_part,
    epoch_of,
    iso_time,
    report_from_document,
    robots_dated,
    stats_parts,
    summary_document,
)
from crawler.crawl.crawler import Crawler
from crawler.errors import StateError, no_room
from crawler.stats import CrawlStats, HostReport

__all__ = [
    "SUMMARY_FORMAT",
    "SUMMARY_INTERVAL",
    "SUMMARY_NAME",
    "RunFacts",
    "SummaryReport",
    "SummaryWriter",
    "deferred_part",
    "epoch_of",
    "host_reports",
    "iso_time",
    "read_summary",
    "report_from_document",
    "stats_parts",
    "summary_document",
    "write_summary",
]

log = logging.getLogger(__name__)

SUMMARY_NAME = "summary.json"
SUMMARY_INTERVAL = 5.0
"""Seconds between refreshes while a run goes on, at least."""
MOST_TIME_SPENT = 0.02
"""The share of the crawl's time the refreshes may take: a write that took 0.2 s waits 10 s."""


def write_summary(path: Path, document: Mapping[str, Any]) -> None:
    """Replace `path` with `document` in one step: a reader never sees half of it."""
    text = json.dumps(document, indent=2) + "\n"  # ASCII: any byte of a URL stays readable
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


MAX_SUMMARY_BYTES = 256 * 1024 * 1024
"""A summary.json larger than this is not one a crawl wrote (a million hosts take about 250 MB)."""


def read_summary(path: Path) -> dict[str, Any]:
    """The document at `path`; StateError naming the file when it cannot be read or is not one."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_SUMMARY_BYTES + 1)
    except OSError as error:
        raise StateError(f"cannot read {path}: {error.strerror}") from error
    if len(data) > MAX_SUMMARY_BYTES:
        raise StateError(f"{path} is over {MAX_SUMMARY_BYTES // 2**20} MiB: not a crawl's summary")
    try:
        document = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise StateError(
            f"{path} is damaged: not JSON ({error}); the next crawl rewrites it"
        ) from error
    if not isinstance(document, dict):
        raise StateError(f"{path} is damaged: not a JSON object; the next crawl rewrites it")
    version = document.get("format")
    if isinstance(version, int) and version > SUMMARY_FORMAT:
        raise StateError(
            f"{path} has format {version}, from a newer crawler; this one reads {SUMMARY_FORMAT}"
        )
    return document


def host_reports(crawler: Crawler, run_started: float) -> list[HostReport]:
    """How each host was paced; a robots.txt this run (begun at `run_started`) did not fetch,
    said with when it was."""
    robots = crawler.state.robots
    return [
        robots_dated(host, robots.get(host.origin), run_started) for host in crawler.host_reports()
    ]


class SummaryWriter:
    """Keeps DIR/summary.json current for one run of `crawl` on `crawler`."""

    def __init__(self, path: Path, crawler: Crawler, facts: RunFacts) -> None:
        self.path = path
        self._crawler = crawler
        self._facts = facts
        self._warned = False

    @classmethod
    def for_run(
        cls,
        data_dir: Path,
        crawler: Crawler,
        *,
        max_wait: float,
        seed_lines_skipped: int,
        outputs: Sequence[Path],
        earlier: CrawlStats | None = None,
        recrawl: bool = False,
    ) -> SummaryWriter:
        """The writer of DIR/summary.json for the run beginning now; `earlier`: the figures of
        the crawl's runs before it, to tell this run's own."""
        facts = RunFacts(
            process=os.getpid(),
            started_at=time.time(),
            client=crawler.client_name,
            max_wait=max_wait,
            seed_lines_skipped=seed_lines_skipped,
            data_dir=os.path.abspath(data_dir),
            # Absolute: the file is read from anywhere.
            outputs=tuple(os.path.abspath(path) for path in outputs),
            earlier=earlier,
            recrawl=recrawl,
        )
        return cls(data_dir / SUMMARY_NAME, crawler, facts)

    @property
    def started_at(self) -> float:
        """Epoch seconds this run began."""
        return self._facts.started_at

    def document(
        self,
        *,
        ended: bool = False,
        stopped_by: str | None = None,
        resume: Sequence[str] = (),
        hosts: Sequence[HostReport] | None = None,
    ) -> dict[str, Any]:
        """The summary as of now; with `hosts`, of those hosts only (the live status's)."""
        crawler = self._crawler
        return summary_document(
            self._facts,
            crawler.stats,
            host_reports(crawler, self._facts.started_at) if hosts is None else hosts,
            crawler.deferred,
            now=time.time(),
            given_up=crawler.given_up,
            traps=crawler.traps,
            seed_moves=crawler.seed_moves,
            ended=ended,
            stopped_by=stopped_by,
            resume=resume,
            archive=crawler.archive_figures,
            pages_read_beside=crawler.pages_read_beside,
            recrawl=crawler.state.run.recrawl_began() if self._facts.recrawl else None,
        )

    def write(
        self, *, ended: bool = False, stopped_by: str | None = None, resume: Sequence[str] = ()
    ) -> bool:
        """Write the summary as of now; False (and a warning, once) when it cannot be written:
        the crawl goes on without it. A refresh that finds the disk full says nothing: the
        crawl's own writes find it too and stop the crawl, which then writes the last summary
        in the room it kept (crawler.output.reserve)."""
        try:
            write_summary(
                self.path, self.document(ended=ended, stopped_by=stopped_by, resume=resume)
            )
        except OSError as error:
            if not ended and no_room(error) is not None:
                return False
            if not self._warned:
                self._warned = True
                log.warning("cannot write %s: %s", self.path, error.strerror or error)
            return False
        return True

    async def refresh(self) -> None:
        """Write now, then again and again while the run goes on (cancel to stop). The writes
        are on the event loop: a write in a thread could land after the final one."""
        while True:
            began = time.perf_counter()
            self.write()
            took = time.perf_counter() - began
            await asyncio.sleep(max(SUMMARY_INTERVAL, took / MOST_TIME_SPENT))

    def __repr__(self) -> str:
        return f"SummaryWriter({self.path}, {self._crawler.stats.outcome})"
