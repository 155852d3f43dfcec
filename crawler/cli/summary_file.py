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

`summary_document` (figures in, a JSON-ready dict out) and `report_from_document` (the reverse,
for `crawl status`) are pure; `write_summary`, `read_summary` and `SummaryWriter` do the I/O.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import time
import typing
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from crawler._version import __version__
from crawler.cli.report import engine_text, walk_text
from crawler.crawl.crawler import Crawler
from crawler.errors import StateError
from crawler.output.warc import ArchiveFigures
from crawler.page.compiled import WALK
from crawler.runtime import event_loop_name
from crawler.stats import CrawlStats, DeferredHost, HostReport, Outcome

__all__ = [
    "SUMMARY_FORMAT",
    "SUMMARY_INTERVAL",
    "SUMMARY_NAME",
    "RunFacts",
    "SummaryReport",
    "SummaryWriter",
    "deferred_part",
    "epoch_of",
    "iso_time",
    "read_summary",
    "report_from_document",
    "stats_parts",
    "summary_document",
    "write_summary",
]

log = logging.getLogger(__name__)

SUMMARY_NAME = "summary.json"
SUMMARY_FORMAT = 1
"""The document's layout; a reader refuses a greater one (written by a newer crawler)."""
SUMMARY_INTERVAL = 5.0
"""Seconds between refreshes while a run goes on, at least."""
MOST_TIME_SPENT = 0.02
"""The share of the crawl's time the refreshes may take: a write that took 0.2 s waits 10 s."""


# --- the document: pure --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunFacts:
    """What summary.json says of a run beside the crawl's figures."""

    process: int
    started_at: float
    """Epoch seconds this run began."""
    client: str
    """The HTTP client: 'http1' or 'aiohttp'."""
    max_wait: float
    """politeness.max_wait: the summary says deferred hosts wait longer than it."""
    seed_lines_skipped: int = 0
    data_dir: str = ""
    outputs: tuple[str, ...] = ()
    page_walk: str = WALK
    event_loop: str = field(default_factory=event_loop_name)


def iso_time(epoch: float | None) -> str | None:
    """RFC 3339 in UTC; None for no time or one no calendar shows (a wait of 1e20 s)."""
    if epoch is None:
        return None
    try:
        return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds")
    except (OverflowError, OSError, ValueError):
        return None


def _finite(value: float | None) -> float | None:
    # JSON has no infinity; a figure that is not a number is no figure.
    return value if value is not None and math.isfinite(value) else None


def summary_document(
    facts: RunFacts,
    stats: CrawlStats,
    hosts: Sequence[HostReport],
    deferred: Sequence[DeferredHost],
    *,
    now: float,
    given_up: Mapping[str, str],
    traps: Mapping[str, Mapping[str, int]],
    seed_moves: Sequence[tuple[str, str]],
    ended: bool = False,
    stopped_by: str | None = None,
    resume: Sequence[str] = (),
    archive: ArchiveFigures | None = None,
    pages_read_beside: bool = False,
) -> dict[str, Any]:
    """The summary of a run as of `now`, ready for `json.dumps`. `ended`: the run is over;
    `stopped_by`: the signal that stopped it; `resume`: what running it again would do;
    `archive`: what the run wrote to WARC files (output.warc); `pages_read_beside`: the page
    reader's process (page.reader) read pages in this run."""
    return {
        "format": SUMMARY_FORMAT,
        "crawler_version": __version__,
        "process": facts.process,
        "data_dir": facts.data_dir,
        "outcome": stats.outcome,
        "stopped_by": stopped_by,
        "run": {
            "number": stats.runs,
            "started_at": iso_time(facts.started_at),
            "updated_at": iso_time(now),
            "ended_at": iso_time(now) if ended else None,
            "elapsed_s": round(max(now - facts.started_at, 0.0), 3),
        },
        **stats_parts(stats),
        "hosts": [
            {
                "origin": host.origin,
                "requests": host.requests,
                "interval_s": _finite(host.interval),
                "crawl_delay_s": _finite(host.crawl_delay),
                "crawl_delay_capped": host.crawl_delay_capped,
                "shortest_gap_s": _finite(host.shortest_gap),
                "robots": host.robots,
                **({"server": host.server} if host.server is not None else {}),
            }
            for host in hosts
        ],
        "max_wait_s": _finite(facts.max_wait),
        "deferred": deferred_part(deferred),
        "given_up": dict(given_up),
        "traps": {origin: dict(counts) for origin, counts in traps.items()},
        "seed_moves": [{"seed": seed, "target": target} for seed, target in seed_moves],
        "seed_lines_skipped": facts.seed_lines_skipped,
        "ran_on": {
            "page_walk": facts.page_walk,
            "http_client": facts.client,
            "event_loop": facts.event_loop,
            "page_reader": "process" if pages_read_beside else "loop",
        },
        "outputs": list(facts.outputs),
        "resume": list(resume),
        **({"warc": asdict(archive)} if archive is not None else {}),
    }


def stats_parts(stats: CrawlStats) -> dict[str, Any]:
    """The document's parts the crawl's figures make: `crawl`, `figures`, `statuses`, `errors`,
    `skips`, `page_rules` and `changes` (`crawl status` builds them from the state alike)."""
    return {
        "crawl": {
            "started_at": iso_time(stats.started_at or None),
            "elapsed_s": round(stats.elapsed, 3),
            "runs": stats.runs,
        },
        "figures": {
            "pages": stats.pages,
            "pages_per_second": round(stats.pages_per_second, 3),
            "requests": stats.requests,
            "robots_fetches": stats.robots_fetches,
            "sitemaps": stats.sitemaps,
            "sitemap_urls": stats.sitemap_urls,
            "bytes": stats.bytes,
            "retries": stats.retries,
            "met": stats.met,
            "fetched": stats.fetched,
            "skipped": sum(stats.skips.values()),
            "queued": stats.queued,
            "in_flight": stats.in_flight,
            "hosts_waiting": stats.hosts_waiting,
        },
        "statuses": {str(status): count for status, count in sorted(stats.statuses.items())},
        "errors": dict(stats.errors.most_common()),
        "skips": dict(stats.skips.most_common()),
        "page_rules": dict(stats.page_rules),
        "changes": dict(stats.changes),
    }


def deferred_part(deferred: Sequence[DeferredHost]) -> list[dict[str, Any]]:
    return [
        {
            "origin": host.origin,
            "until": iso_time(host.until),
            "pending": host.pending,
            "reason": host.reason,
        }
        for host in deferred
    ]


def epoch_of(iso: object) -> float | None:
    """Epoch seconds of a time as the document writes it; None for none."""
    if iso is None:
        return None
    if not isinstance(iso, str):
        raise TypeError(f"a time is a string, not {iso!r}")
    return datetime.fromisoformat(iso).timestamp()


@dataclass(frozen=True, slots=True)
class SummaryReport:
    """What `crawler.cli.report.summary` takes, rebuilt from a document."""

    stats: CrawlStats
    hosts: list[HostReport]
    deferred: list[DeferredHost]
    max_wait: float
    outputs: list[Path]
    problems: int
    ran_on: str | None
    seed_moves: list[tuple[str, str]]
    given_up: dict[str, str]
    traps: dict[str, dict[str, int]]
    resume: list[str]
    archive: ArchiveFigures | None = None


def _counts(value: object) -> dict[str, int]:
    if not isinstance(value, dict):
        raise TypeError(f"counts are an object, not {value!r}")
    return {str(key): int(count) for key, count in value.items()}


def _float(value: object) -> float | None:
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise TypeError(f"a number, not {value!r}")
    return float(value)


def report_from_document(document: Mapping[str, Any]) -> SummaryReport:
    """The report a document holds. TypeError, ValueError, KeyError or AttributeError when it is
    not of the shape `summary_document` writes (the caller names the file)."""
    outcomes = typing.get_args(Outcome)
    outcome = document["outcome"]
    if outcome not in outcomes:
        raise ValueError(f"outcome {outcome!r} is none of {', '.join(outcomes)}")
    figures, crawl, run = document["figures"], document["crawl"], document.get("run") or {}
    stats = CrawlStats(
        started_at=epoch_of(crawl.get("started_at")) or 0.0,
        elapsed=_float(crawl.get("elapsed_s")) or 0.0,
        updated_at=epoch_of(run.get("updated_at")) or 0.0,
        runs=int(crawl.get("runs", 1)),
        outcome=outcome,
    )
    for name in (
        "pages",
        "met",
        "fetched",
        "requests",
        "robots_fetches",
        "sitemaps",
        "sitemap_urls",
        "bytes",
        "retries",
        "in_flight",
        "hosts_waiting",
        "queued",
    ):
        setattr(stats, name, int(figures.get(name, 0)))
    stats.statuses.update({int(key): count for key, count in _counts(document["statuses"]).items()})
    stats.errors.update(_counts(document["errors"]))
    skips: dict[Any, int] = _counts(document["skips"])  # reasons as a newer crawler may name them
    stats.skips.update(skips)
    stats.page_rules.update(_counts(document.get("page_rules") or {}))
    stats.changes.update(_counts(document.get("changes") or {}))
    hosts = [
        HostReport(
            origin=str(host["origin"]),
            requests=int(host["requests"]),
            interval=_float(host["interval_s"]) or 0.0,
            crawl_delay=_float(host["crawl_delay_s"]),
            crawl_delay_capped=bool(host["crawl_delay_capped"]),
            shortest_gap=_float(host["shortest_gap_s"]),
            robots=str(host["robots"]),
            server=str(host["server"]) if host.get("server") is not None else None,
        )
        for host in document.get("hosts") or []
    ]
    deferred = [
        DeferredHost(
            origin=str(host["origin"]),
            until=epoch_of(host["until"]) or math.inf,
            pending=int(host["pending"]),
            reason=str(host["reason"]),
        )
        for host in document.get("deferred") or []
    ]
    ran_on = document.get("ran_on")
    return SummaryReport(
        stats=stats,
        hosts=hosts,
        deferred=deferred,
        max_wait=_float(document.get("max_wait_s")) or math.inf,
        outputs=[Path(str(path)) for path in document.get("outputs") or []],
        problems=int(document.get("seed_lines_skipped") or 0),
        ran_on=(
            engine_text(
                walk_text(str(ran_on["page_walk"]), reader=ran_on.get("page_reader") == "process"),
                str(ran_on["http_client"]),
                str(ran_on["event_loop"]),
            )
            if ran_on
            else None
        ),
        seed_moves=[
            (str(move["seed"]), str(move["target"])) for move in document.get("seed_moves") or []
        ],
        given_up={
            str(origin): str(why) for origin, why in (document.get("given_up") or {}).items()
        },
        traps={
            str(origin): _counts(counts) for origin, counts in (document.get("traps") or {}).items()
        },
        resume=[str(line) for line in document.get("resume") or []],
        archive=(
            ArchiveFigures(**{name: int(value) for name, value in document["warc"].items()})
            if document.get("warc")
            else None
        ),
    )


# --- the file ------------------------------------------------------------------------------------


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
    ) -> SummaryWriter:
        """The writer of DIR/summary.json for the run beginning now."""
        facts = RunFacts(
            process=os.getpid(),
            started_at=time.time(),
            client=crawler.client_name,
            max_wait=max_wait,
            seed_lines_skipped=seed_lines_skipped,
            data_dir=os.path.abspath(data_dir),
            # Absolute: the file is read from anywhere.
            outputs=tuple(os.path.abspath(path) for path in outputs),
        )
        return cls(data_dir / SUMMARY_NAME, crawler, facts)

    def document(
        self, *, ended: bool = False, stopped_by: str | None = None, resume: Sequence[str] = ()
    ) -> dict[str, Any]:
        crawler = self._crawler
        return summary_document(
            self._facts,
            crawler.stats,
            crawler.host_reports(),
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
        )

    def write(
        self, *, ended: bool = False, stopped_by: str | None = None, resume: Sequence[str] = ()
    ) -> bool:
        """Write the summary as of now; False (and a warning, once) when it cannot be written:
        the crawl goes on without it."""
        try:
            write_summary(
                self.path, self.document(ended=ended, stopped_by=stopped_by, resume=resume)
            )
        except OSError as error:
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
