"""The summary.json document (crawler.cli.summary_file writes and reads the file):
`summary_document` makes a run's figures a JSON-ready dict, and `report_from_document` makes one
back into what `crawl status` reports. Both are pure: the time is an argument, and no file is
touched.
"""

from __future__ import annotations

import math
import time
import typing
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from crawler._version import __version__
from crawler.cli.report import engine_text, walk_text
from crawler.output.warc import ArchiveFigures
from crawler.page.compiled_main import PAGE_STEP as WALK
from crawler.robots.entry import RobotsEntry
from crawler.runtime import event_loop_name
from crawler.stats import CrawlStats, DeferredHost, HostReport, Outcome

__all__ = [
    "SUMMARY_FORMAT",
    "RunFacts",
    "SummaryReport",
    "deferred_part",
    "epoch_of",
    "iso_time",
    "report_from_document",
    "robots_dated",
    "run_figures",
    "stats_parts",
    "summary_document",
]

SUMMARY_FORMAT = 1
"""The document's layout; a reader refuses a greater one (written by a newer crawler)."""


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
    earlier: CrawlStats | None = None
    """The crawl's figures as the runs before this one left them (None: this run's are all)."""
    recrawl: bool = False
    """recrawl.enabled: the summary says the recrawl pass's figures."""


def iso_time(epoch: float | None) -> str | None:
    """RFC 3339 in UTC; None for no time or one no calendar shows (a wait of 1e20 s)."""
    if epoch is None:
        return None
    try:
        return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds")
    except (OverflowError, OSError, ValueError):
        return None


def robots_dated(host: HostReport, entry: RobotsEntry | None, run_started: float) -> HostReport:
    """`host`, its robots.txt said with when it was fetched where this run (begun at
    `run_started`) did not fetch it: a copy still fresh, from an earlier run or another worker
    (`entry`, the state's)."""
    if entry is None or entry.fetched_at >= run_started:
        return host
    if host.robots not in ("not fetched", entry.reason):
        return host
    try:
        fetched = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(entry.fetched_at))
    except (OverflowError, OSError, ValueError):
        fetched = "at an unknown time"
    return replace(host, robots=f"{entry.reason}, fetched {fetched} (before this run)")


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
    recrawl: tuple[float, int] | None = None,
) -> dict[str, Any]:
    """The summary of a run as of `now`, ready for `json.dumps`. `ended`: the run is over;
    `stopped_by`: the signal that stopped it; `resume`: what running it again would do;
    `archive`: what the run wrote to WARC files (output.warc); `pages_read_beside`: the page
    reader's process (page.reader) read pages in this run; `recrawl`: when the recrawl pass began
    and the pages before it."""
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
            # This run's own figures; those under "figures" are the crawl's, all runs.
            **({"figures": run_figures(stats, facts.earlier)} if facts.earlier is not None else {}),
        },
        **(
            {"recrawl": {"began_at": iso_time(recrawl[0]), "pages_before": recrawl[1]}}
            if recrawl is not None
            else {}
        ),
        **stats_parts(stats),
        "hosts": [
            {
                "origin": host.origin,
                "requests": host.requests,
                "interval_s": _finite(host.interval),
                "interval_reason": host.reason,
                "least_interval_s": _finite(host.least_interval),
                "answer_time_s": _finite(host.answer_time),
                "whole_answer_time_s": _finite(host.whole_time),
                "refusals": host.refusals,
                "backed_off_s": _finite(host.backed_off),
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


RUN_FIGURES = (
    "pages",
    "requests",
    "robots_fetches",
    "tdmrep_fetches",
    "bytes",
    "retries",
    "throttled",
)
"""What summary.json says of a run's own figures, beside the crawl's."""


def run_figures(stats: CrawlStats, earlier: CrawlStats) -> dict[str, Any]:
    """This run's figures: the crawl's (`stats`) less those of the runs before (`earlier`)."""
    return {
        "elapsed_s": round(max(stats.elapsed - earlier.elapsed, 0.0), 3),
        **{name: getattr(stats, name) - getattr(earlier, name) for name in RUN_FIGURES},
    }


REQUISITE_FATES = ("fetched", "skipped", "failed")


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
            "tdmrep_fetches": stats.tdmrep_fetches,
            "sitemaps": stats.sitemaps,
            "sitemap_urls": stats.sitemap_urls,
            "bytes": stats.bytes,
            "retries": stats.retries,
            "throttled": stats.throttled,
            "met": stats.met,
            "fetched": stats.fetched,
            "skipped": sum(stats.skips.values()),
            "queued": stats.queued,
            "in_flight": stats.in_flight,
            "hosts_waiting": stats.hosts_waiting,
            "hosts_throttled": stats.hosts_throttled,
        },
        "statuses": {str(status): count for status, count in sorted(stats.statuses.items())},
        "errors": dict(stats.errors.most_common()),
        "skips": dict(stats.skips.most_common()),
        "page_rules": dict(stats.page_rules),
        "changes": dict(stats.changes),
        # Page requisites (fetch.page_requisites): no pages, so in no figure above but requests.
        "requisites": {
            **{fate: stats.requisites[fate] for fate in REQUISITE_FATES},
            "skips": dict(stats.requisite_skips.most_common()),
        },
        # Pages whose owners refuse the crawl's purpose, by the kind of signal that did.
        "usage": {"purpose": stats.purpose, "refused": dict(stats.usage_refused.most_common())},
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
    run: CrawlStats | None = None
    """This run's own figures, where the document holds them."""
    recrawl: tuple[float, int] | None = None


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
        "tdmrep_fetches",
        "sitemaps",
        "sitemap_urls",
        "bytes",
        "retries",
        "throttled",
        "in_flight",
        "hosts_waiting",
        "hosts_throttled",
        "queued",
    ):
        setattr(stats, name, int(figures.get(name, 0)))
    stats.statuses.update({int(key): count for key, count in _counts(document["statuses"]).items()})
    stats.errors.update(_counts(document["errors"]))
    skips: dict[Any, int] = _counts(document["skips"])  # reasons as a newer crawler may name them
    stats.skips.update(skips)
    stats.page_rules.update(_counts(document.get("page_rules") or {}))
    stats.changes.update(_counts(document.get("changes") or {}))
    requisites = dict(document.get("requisites") or {})
    stats.requisite_skips.update(_counts(requisites.pop("skips", None) or {}))
    stats.requisites.update({fate: n for fate, n in _counts(requisites).items() if n})
    usage = document.get("usage") or {}
    stats.purpose = str(usage.get("purpose") or "search")
    stats.usage_refused.update(_counts(usage.get("refused") or {}))
    hosts = [
        HostReport(
            origin=str(host["origin"]),
            requests=int(host["requests"]),
            interval=_float(host["interval_s"]) or 0.0,
            reason=str(host.get("interval_reason") or "min_delay"),
            least_interval=_float(host.get("least_interval_s")),
            answer_time=_float(host.get("answer_time_s")),
            whole_time=_float(host.get("whole_answer_time_s")),
            refusals=int(host.get("refusals") or 0),
            backed_off=_float(host.get("backed_off_s")) or 0.0,
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
        run=_run_of(stats, run.get("figures")),
        recrawl=_recrawl_of(document.get("recrawl")),
    )


def _run_of(crawl: CrawlStats, figures: object) -> CrawlStats | None:
    """A run's own figures as `run_figures` wrote them, the live ones the crawl's."""
    if figures is None:
        return None
    if not isinstance(figures, dict):
        raise TypeError(f"a run's figures are an object, not {figures!r}")
    run = CrawlStats(
        elapsed=_float(figures.get("elapsed_s")) or 0.0,
        runs=crawl.runs,
        outcome=crawl.outcome,
        updated_at=crawl.updated_at,
    )
    for name in RUN_FIGURES:
        setattr(run, name, int(figures.get(name, 0)))
    return run


def _recrawl_of(part: object) -> tuple[float, int] | None:
    if part is None:
        return None
    if not isinstance(part, dict):
        raise TypeError(f"the recrawl is an object, not {part!r}")
    return epoch_of(part["began_at"]) or 0.0, int(part["pages_before"])
