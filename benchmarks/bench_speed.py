#!/usr/bin/env python3
"""Speed: `crawl` without delays beside a bare aiohttp loop and Scrapy, on one local web.

    python benchmarks/bench_speed.py [--rounds 3] [--hosts 20] [--pages 250] [--port 8795]
        [--concurrency 64] [--per-host 4] [--nginx-workers 1] [--no-extras] [--warc] [--serve]
        [--only NAMES] [--work DIR] [--json]

The web (benchmarks/support/speedweb.py): --hosts hosts on 127.0.1.1, 127.0.1.2, ... with --pages
allowed pages each (about 12.5 KB, about 16 links of which about 13 to pages of the same host, some
to URLs robots.txt disallows), robots.txt with Disallow and Allow rules and no Crawl-delay, served
as static files by a private nginx (Debian's; one worker process by default, so the crawlers keep a
core). Before anything is timed, every host is walked as our page step and robots.txt engine read
it, and as a bare parse reads it: all allowed pages must be reachable from `/`.

The contenders, each a subprocess, in turns, --rounds times (the order rotates every round):

    ours, index   crawl SEEDS --data DIR -s politeness.min_delay=0 -s concurrency=64
                      -s politeness.per_host_concurrency=4     (the index, the durable state)
    ours, JSONL   the same with -s output.format=jsonl
    bare loop     benchmarks/rivals/speed_bare.py: aiohttp + selectolax + urljoin + text, 64
                  workers, no robots.txt, no politeness, no output; uvloop when installed
    Scrapy        benchmarks/rivals/speed_scrapy.py: ROBOTSTXT_OBEY, no delay, CONCURRENT_REQUESTS
                  64 and CONCURRENT_REQUESTS_PER_DOMAIN 64, text and LinkExtractor on every page
    ours, WARC    with --warc: ours, index with --warc too (output.warc: every answer archived in
                  DIR/warc/*.warc.gz), to give the cost of archiving beside ours, index (issue 22):
                  pages/s both ways, and the WARC files' compressed bytes beside the bodies' bytes
    ours, served  with --serve: ours, index with --serve 127.0.0.1:8799 (--serve-port), its
                  live status read while it runs as a browser and Prometheus would (the page's
                  /status.json and /metrics once a second each, benchmarks/support/watcher.py):
                  what watching a crawl costs it (issue 39), beside ours, index
    extras        ours, index with -s state.durable=false; ours, JSONL on asyncio's own loop
                  (CRAWLER_EVENT_LOOP=asyncio; ours runs on uvloop where installed); the bare
                  loop on asyncio's own loop (--no-extras leaves them out)

Every figure comes from nginx's access log, which each run's requests are told apart in by time:
pages is distinct URLs answered 200 (robots.txt aside; the bare loop's include the disallowed
URLs it fetched, since it parsed them too); span is the first request to the last as nginx
logged them; pages/s is pages / span, so start-up and shutdown do not count (wall, the process's
start to its exit, is there too). A run counts when it exits 0 and fetched every allowed page,
nothing else (for ours and Scrapy: no disallowed URL). The figure of a contender is the median of
its rounds. Bars: ours with the index at least 10x Scrapy's pages/s by wall time, the user's wait
from start to exit (issue 38; 8x in issue 19), its wall at most 1.2x the JSONL crawl's (issue 38:
the writer keeps pace; try --hosts 20 --pages 5000 --only ours-index,ours-jsonl), with a peak RSS
at most 1.5x the JSONL crawl's (issue 19); with JSONL only at
least 10x Scrapy's and at least 0.6 of the bare loop's (of the faster of its two loops, when the
extras ran), over nginx's span (issue 6). RSS is each process's own peak, as the kernel reports it
when the process is reaped. CPU s is the machine's busy CPU during the run in core-seconds, all
of it (nginx's, the kernel's writeback of what the tool wrote), and busy its share of all the
cores' time: near 100%, the run was bound by the machine's cores, and only less CPU in all, not
less waiting, makes it faster. The header names the crawler's commit: the figures are of that code.

Exit status: 0 when the benchmark ran (whatever the bars say), 1 when it could not (no nginx, the
port in use, a web that fails its check), 2 for bad arguments, 130 and 143 when interrupted
(SIGINT, SIGTERM; the contender running, nginx and the temporary files go with it).
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from support.machine import busy_share, busy_times, compile_bytecode, machine
from support.processes import last_json_line, run_tool_measured, tail
from support.speedweb import (
    ROBOTS_TXT,
    Hit,
    Nginx,
    WebError,
    allowed_paths,
    generate,
    nginx_binary,
    nginx_version,
    port_free,
    read_access_log,
    verify,
)
from support.testweb import host_ips
from support.watcher import SERVE_PORT, Watcher

RIVALS = Path(__file__).resolve().parent / "rivals"
# (ours, the others, the bar, judged by): the ratio is taken to the fastest of the others that
# ran, of pages/s over nginx's span ("span") or over the process's start to exit ("wall").
BARS = (
    ("ours-index", ("scrapy",), 10.0, "wall"),
    # The writer keeps pace: the index crawl's wall at most 1.2 times the JSONL crawl's (issue 38).
    ("ours-index", ("ours-jsonl",), 1 / 1.2, "wall"),
    ("ours-jsonl", ("scrapy",), 10.0, "span"),
    ("ours-jsonl", ("bare", "bare-asyncio"), 0.6, "span"),
)
RSS_BAR = ("ours-index", "ours-jsonl", 1.5)
"""(ours, the reference, the bar): ours' peak RSS at most `bar` times the reference's (issue 19:
pages waiting for the index writer must not pile up in memory)."""
LABELS = {
    "ours-index": "ours, index",
    "ours-jsonl": "ours, JSONL only",
    "bare": "bare loop",
    "scrapy": "Scrapy",
    "ours-index-memory": "ours, index, state in memory",
    "ours-jsonl-asyncio": "ours, JSONL, asyncio loop",
    "bare-asyncio": "bare loop, asyncio loop",
    "baseline-index": "baseline, index",
    "baseline-jsonl": "baseline, JSONL only",
    "ours-warc": "ours, index + WARC",
    "ours-serve": "ours, index, --serve watched",
    "ours-index-thread": "ours, index, writer thread",
    "ours-index-process": "ours, index, writer process",
}
AGAINST_BASELINE = (("ours-index", "baseline-index"), ("ours-jsonl", "baseline-jsonl"))
DATA = "{data}"  # in a command: the run's own data directory
OBEYS_ROBOTS = {
    "ours-index",
    "ours-serve",
    "ours-index-thread",
    "ours-index-process",
    "ours-warc",
    "ours-jsonl",
    "ours-index-memory",
    "ours-jsonl-asyncio",
    "scrapy",
    "baseline-index",
    "baseline-jsonl",
}


@dataclass
class Run:
    contender: str
    round: int
    exit_status: int | None
    wall_s: float
    started: float  # epoch seconds, to find the run's lines in the access log
    own: dict[str, Any]  # what the tool itself reported
    peak_rss_mib: float = 0.0  # the process's own peak resident memory
    busy_core_s: float | None = None  # the machine's busy CPU during the run, nginx's included
    busy_share: float | None = None  # ... as a share of all its cores' time
    requests: int = 0
    robots: int = 0
    pages: int = 0
    missing: int = 0
    disallowed: int = 0
    other: int = 0
    duplicates: int = 0
    connections: int = 0
    span_s: float = 0.0
    pages_per_s: float = 0.0
    wall_pages_per_s: float = 0.0
    error: str = ""

    @property
    def valid(self) -> bool:
        robots_ok = self.disallowed == 0 or self.contender not in OBEYS_ROBOTS
        clean = self.exit_status == 0 and self.missing == 0 and self.other == 0
        return clean and robots_ok and self.span_s > 0


def commands(args: argparse.Namespace, seeds: Path) -> dict[str, list[str]]:
    crawl = [str(Path(sys.executable).parent / "crawl"), str(seeds), "--data", DATA]
    crawl += ["-s", "politeness.min_delay=0", "-s", f"concurrency={args.concurrency}"]
    crawl += ["-s", f"politeness.per_host_concurrency={args.per_host}"]
    bare = [sys.executable, str(RIVALS / "speed_bare.py"), str(seeds)]
    bare += ["--workers", str(args.concurrency)]
    scrapy = [sys.executable, str(RIVALS / "speed_scrapy.py"), str(seeds)]
    scrapy += ["--concurrency", str(args.concurrency), "--per-domain", str(args.concurrency)]
    chosen = {
        "ours-index": crawl,
        "ours-jsonl": [*crawl, "-s", "output.format=jsonl"],
        "bare": bare,
        "scrapy": scrapy,
    }
    if args.warc:
        chosen["ours-warc"] = [*crawl, "--warc"]
    if args.serve:
        chosen["ours-serve"] = [*crawl, "--serve", f"127.0.0.1:{args.serve_port}"]
    if args.baseline is not None:
        # Another build of the crawler (its own checkout and venv), with the same settings.
        base = [str(args.baseline), *crawl[1:]]
        chosen["baseline-index"] = base
        chosen["baseline-jsonl"] = [*base, "-s", "output.format=jsonl"]
    # Only when asked for: the index written by the writer thread, or process, all along
    # (index.writer).
    chosen["ours-index-thread"] = [*crawl, "-s", "index.writer=thread"]
    chosen["ours-index-process"] = [*crawl, "-s", "index.writer=process"]
    if args.only:
        return {name: command for name, command in chosen.items() if name in args.only}
    del chosen["ours-index-thread"], chosen["ours-index-process"]
    if args.extras:
        chosen["ours-index-memory"] = [*crawl, "-s", "state.durable=false"]
        asyncio_loop = ["env", "CRAWLER_EVENT_LOOP=asyncio"]  # crawler/runtime.py
        chosen["ours-jsonl-asyncio"] = [*asyncio_loop, *chosen["ours-jsonl"]]
        chosen["bare-asyncio"] = [*bare, "--loop", "asyncio"]
    return chosen


def own_figures(contender: str, data: Path, out: Path) -> dict[str, Any]:
    """What the tool says it did: rows in the index, lines of pages.jsonl, or its JSON line."""
    if contender.startswith(("ours", "baseline")):
        figures: dict[str, Any] = {}
        with open(out, encoding="utf-8", errors="replace") as lines:
            figures["summary"] = next(lines, "").strip()
        if (data / "pages.jsonl").exists():
            with open(data / "pages.jsonl", "rb") as pages:
                figures["pages"] = sum(1 for _ in pages)
        elif (data / "index.sqlite").exists():
            with sqlite3.connect(data / "index.sqlite") as index:
                query = "SELECT count(*), sum(indexed) FROM pages WHERE status = 200"
                figures["pages"], figures["indexed"] = index.execute(query).fetchone()
        archive = sorted((data / "warc").glob("*.warc.gz"))
        if archive:
            figures["warc_bytes"] = sum(path.stat().st_size for path in archive)
            figures["warc_files"] = len(archive)
        return figures
    return last_json_line(out) or {}


def warm_up(command: list[str], work: Path, timeout: float) -> None:
    """One short crawl by the baseline, before the timed ones, that leaves its modules compiled
    to bytecode (as `compile_bytecode` does for ours): where PYTHONDONTWRITEBYTECODE is set, as
    on these machines, every run of a checkout never run without it compiled its modules from
    source, 0.2 s of its start, and seemed that much slower. Its page reader and index writer
    run too, so that theirs are compiled."""
    data = work / "baseline-warm-up.data"
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    command = [str(data) if part == DATA else part for part in command]
    extra = ["--max-pages", "300", "-s", "page.reader=process", "-s", "index.writer=process"]
    subprocess.run(
        [*command, *extra],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=timeout,
        check=False,
    )
    shutil.rmtree(data, ignore_errors=True)


def measure(contender: str, command: list[str], round_: int, work: Path, timeout: float) -> Run:
    name = f"{contender}-{round_ + 1}"
    data = work / f"{name}.data"
    started = time.time()
    command = [str(data) if part == DATA else part for part in command]
    cpu_before = busy_times()
    wals = {data / f"{file}.sqlite-wal": 0 for file in ("state", "index")}
    if "--serve" in command:
        address = command[command.index("--serve") + 1]
        with Watcher(f"http://{address}/") as watcher:
            status, wall, peak_mib = run_tool_measured(command, work, name, timeout, wals)
    else:
        status, wall, peak_mib = run_tool_measured(command, work, name, timeout, wals)
    busy = busy_share(cpu_before, busy_times())
    own = own_figures(contender, data, work / f"{name}.out")
    if contender.startswith(("ours", "baseline")):
        own["state_wal_peak_mb"], own["index_wal_peak_mb"] = (peak / 1e6 for peak in wals.values())
        with contextlib.suppress(OSError):
            own["state_mb"] = (data / "state.sqlite").stat().st_size / 1e6
    if "--serve" in command:
        own["watched_reads"] = watcher.reads
    shutil.rmtree(data, ignore_errors=True)  # an index is 70 MB
    error = "" if status == 0 else tail(work / f"{name}.err", 5)
    run = Run(contender, round_ + 1, status, wall, started, own, peak_mib, error=error)
    if busy is not None:
        run.busy_core_s, run.busy_share = busy
    return run


def read_runs(runs: list[Run], hits: list[Hit], web: dict[str, Any]) -> None:
    """Give each run its figures from the access log lines logged between its start and the
    next run's."""
    allowed = {(h["ip"], path) for h in web["hosts"] for path in h["allowed"]}
    disallowed = {(h["ip"], path) for h in web["hosts"] for path in h["disallowed"]}
    known = allowed | disallowed
    ordered = sorted(runs, key=lambda run: run.started)
    bounds = [run.started for run in ordered[1:]] + [float("inf")]
    hits = sorted(hits, key=lambda hit: hit.t)
    times = [hit.t for hit in hits]
    for run, end in zip(ordered, bounds, strict=True):
        mine = hits[bisect.bisect_left(times, run.started) : bisect.bisect_left(times, end)]
        pages = [hit for hit in mine if hit.path != "/robots.txt"]
        fetched = {(hit.ip, hit.path) for hit in pages if hit.status == 200}
        run.requests = len(mine)
        run.robots = len(mine) - len(pages)
        run.pages = len(fetched)
        run.missing = len(allowed - fetched)
        run.disallowed = len({(hit.ip, hit.path) for hit in pages} & disallowed)
        run.other = sum((hit.ip, hit.path) not in known for hit in pages)
        run.other += sum(hit.status != 200 for hit in mine)
        run.duplicates = len(pages) - len({(hit.ip, hit.path) for hit in pages})
        run.connections = len({hit.connection for hit in mine})
        run.span_s = mine[-1].t - mine[0].t if mine else 0.0
        run.pages_per_s = run.pages / run.span_s if run.span_s > 0 else 0.0
        run.wall_pages_per_s = run.pages / run.wall_s if run.wall_s > 0 else 0.0


def median_of(values: Sequence[float | None]) -> float | None:
    """The median of the values there are; None when there are none."""
    known = [value for value in values if value is not None]
    return statistics.median(known) if known else None


def summarise(runs: list[Run], contenders: Sequence[str]) -> dict[str, dict[str, Any]]:
    summary = {}
    for contender in contenders:
        mine = [run for run in runs if run.contender == contender]
        good = [run for run in mine if run.valid]
        summary[contender] = {
            "runs": len(mine),
            "valid_runs": len(good),
            "exit_statuses": [run.exit_status for run in mine],
            "pages": min((run.pages for run in mine), default=0),
            "own_pages": min((run.own.get("pages") or 0 for run in mine), default=0),
            "missing": max((run.missing for run in mine), default=0),
            "disallowed": max((run.disallowed for run in mine), default=0),
            "other": max((run.other for run in mine), default=0),
            "duplicates": max((run.duplicates for run in mine), default=0),
            "connections": statistics.median(run.connections for run in mine) if mine else 0,
            "wall_s": statistics.median(run.wall_s for run in good) if good else None,
            "span_s": statistics.median(run.span_s for run in good) if good else None,
            "pages_per_s": statistics.median(run.pages_per_s for run in good) if good else None,
            "wall_pages_per_s": (
                statistics.median(run.wall_pages_per_s for run in good) if good else None
            ),
            "peak_rss_mib": statistics.median(run.peak_rss_mib for run in good) if good else None,
            "busy_core_s": median_of([run.busy_core_s for run in good]),
            "busy_share": median_of([run.busy_share for run in good]),
            "rounds_pages_per_s": [round(run.pages_per_s) for run in mine],
            "warc_bytes": (
                statistics.median(run.own.get("warc_bytes", 0) for run in good) if good else None
            ),
            "watched_reads": (
                statistics.median(run.own.get("watched_reads", 0) for run in mine) if mine else 0
            ),
            **{
                figure: median_of([run.own.get(figure) for run in good])
                for figure in ("state_mb", "state_wal_peak_mb", "index_wal_peak_mb")
            },
        }
    return summary


def verdicts(summary: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    found = []
    for ours, others, bar, judged_by in BARS:
        if ours not in summary or not any(name in summary for name in others):
            continue
        ran = [name for name in others if summary.get(name, {}).get("pages_per_s")]
        other = max(ran, key=lambda name: summary[name]["pages_per_s"], default=others[0])
        mine, theirs = summary[ours]["pages_per_s"], summary[other]["pages_per_s"]
        ratio = mine / theirs if mine and theirs else None
        walls = summary[ours]["wall_pages_per_s"], summary[other]["wall_pages_per_s"]
        wall_ratio = walls[0] / walls[1] if all(walls) else None
        judged = wall_ratio if judged_by == "wall" else ratio
        verdict = "NO FIGURE" if judged is None else "PASS" if judged >= bar else "FAIL"
        found.append(
            {
                "ours": ours,
                "other": other,
                "bar": bar,
                "judged_by": judged_by,
                "ratio": ratio,
                "wall_ratio": wall_ratio,
                "verdict": verdict,
            }
        )
    ours, reference, bar = RSS_BAR
    if ours in summary and reference in summary:
        peaks = summary[ours]["peak_rss_mib"], summary[reference]["peak_rss_mib"]
        ratio = peaks[0] / peaks[1] if all(peaks) else None
        verdict = "NO FIGURE" if ratio is None else "PASS" if ratio <= bar else "FAIL"
        found.append(
            {
                "ours": ours,
                "other": reference,
                "bar": bar,
                "judged_by": "peak RSS",
                "ratio": ratio,
                "verdict": verdict,
            }
        )
    return found


def number(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def percent(share: float | None) -> str:
    return "-" if share is None else f"{share:.0%}"


def report(
    info: dict[str, Any],
    setup: dict[str, Any],
    summary: dict[str, dict[str, Any]],
    bars: list[dict[str, Any]],
) -> str:
    web = setup["web"]
    lines = [
        f"machine: {info['cpu']}, {info['cores']} cores, Python {info['python']}, aiohttp "
        f"{info['aiohttp']}, selectolax {info['selectolax']}, Scrapy {info['scrapy']}, "
        f"uvloop {info['uvloop']}",
        f"server: nginx {setup['nginx']}, {setup['nginx_workers']} worker process(es), one server "
        f"per host on 127.0.1.x:{web['port']}, static files",
        f"web: {web['hosts']} hosts x {web['pages']} pages = {web['allowed']:,} allowed (+ "
        f"{web['disallowed']} disallowed URLs), {web['mean_page_kb']:.1f} KB and "
        f"{web['links_per_page']:.1f} links a page ({web['followed_links_per_page']:.1f} followed "
        "by ours), robots.txt Disallow + Allow, no Crawl-delay",
        f"ours: crawler at {setup['crawler_commit']}, {setup['ours_loop']}: crawl SEEDS --data DIR "
        + " ".join(setup["ours_settings"]),
        f"bare: {setup['concurrency']} workers, {setup['bare_loop']}; Scrapy: "
        f"CONCURRENT_REQUESTS {setup['concurrency']}, CONCURRENT_REQUESTS_PER_DOMAIN "
        f"{setup['concurrency']}, ROBOTSTXT_OBEY, no delay",
        f"{setup['rounds']} rounds, interleaved; each figure is the median of the valid rounds; "
        "pages/s = distinct pages / span (first to last request, nginx's log)",
        "",
        f"{'contender':<28} {'ok':>5} {'pages':>5} {'miss':>4} {'disal':>5} {'dupes':>5} "
        f"{'own':>5} {'conns':>5} {'wall s':>6} {'span s':>6} {'pages/s':>7} {'wall p/s':>8} "
        f"{'RSS MiB':>7} {'CPU s':>6} {'busy':>5}  by round",
        "-" * 133,
    ]
    for contender, row in summary.items():
        lines.append(
            f"{LABELS[contender]:<28} {row['valid_runs']:>2}/{row['runs']:<2} {row['pages']:>5} "
            f"{row['missing']:>4} {row['disallowed']:>5} {row['duplicates']:>5} "
            f"{row['own_pages']:>5} {row['connections']:>5.0f} {number(row['wall_s'], 2):>6} "
            f"{number(row['span_s'], 2):>6} {number(row['pages_per_s'], 0):>7} "
            f"{number(row['wall_pages_per_s'], 0):>8} {number(row['peak_rss_mib'], 0):>7} "
            f"{number(row['busy_core_s'], 1):>6} {percent(row['busy_share']):>5}  "
            + " ".join(f"{rate:,}" for rate in row["rounds_pages_per_s"])
        )
    lines.append("")
    for bar in bars:
        name = f"{LABELS[bar['ours']]} / {LABELS[bar['other']]}:"
        if bar["judged_by"] == "peak RSS":
            lines.append(
                f"{name:<43} {number(bar['ratio'], 2):>6}x  peak RSS (bar at most "
                f"{bar['bar']:g}x: {bar['verdict']})"
            )
        elif bar["judged_by"] == "wall":
            lines.append(
                f"{name:<43} {number(bar['wall_ratio'], 2):>6}x  by wall time (bar "
                f"{bar['bar']:g}x: {bar['verdict']}; over nginx's span {number(bar['ratio'], 2)}x)"
            )
        else:
            lines.append(
                f"{name:<43} {number(bar['ratio'], 2):>6}x  (bar {bar['bar']:g}x: "
                f"{bar['verdict']}; by wall time {number(bar['wall_ratio'], 2)}x)"
            )
    for ours, base in AGAINST_BASELINE:
        if ours in summary and base in summary:
            mine, theirs = summary[ours]["pages_per_s"], summary[base]["pages_per_s"]
            ratio = mine / theirs if mine and theirs else None
            name = f"{LABELS[ours]} / {LABELS[base]}:"
            lines.append(f"{name:<43} {number(ratio, 2):>6}x")
    if "ours-serve" in summary and "ours-index" in summary:
        served, index = summary["ours-serve"], summary["ours-index"]
        walls = served["wall_pages_per_s"], index["wall_pages_per_s"]
        spans = served["pages_per_s"], index["pages_per_s"]
        name = f"{LABELS['ours-serve']} / {LABELS['ours-index']}:"
        lines.append(
            f"{name:<43} {number(walls[0] / walls[1] if all(walls) else None, 3):>6}x  by wall "
            f"time; over nginx's span {number(spans[0] / spans[1] if all(spans) else None, 3)}x "
            f"({served['watched_reads']} reads of its status while it ran, medians)"
        )
    if "ours-warc" in summary and "ours-index" in summary:
        warc, index = summary["ours-warc"], summary["ours-index"]
        walls = warc["wall_pages_per_s"], index["wall_pages_per_s"]
        spans = warc["pages_per_s"], index["pages_per_s"]
        name = f"{LABELS['ours-warc']} / {LABELS['ours-index']}:"
        lines.append(
            f"{name:<43} {number(walls[0] / walls[1] if all(walls) else None, 2):>6}x  by wall "
            f"time; over nginx's span {number(spans[0] / spans[1] if all(spans) else None, 2)}x"
        )
        body_mb = web["allowed"] * web["mean_page_kb"] / 1e3
        lines.append(
            f"{'WARC files, compressed:':<43} {number((warc['warc_bytes'] or 0) / 1e6, 1):>6} MB "
            f"for about {body_mb:,.1f} MB of page bodies (request, response and metadata records)"
        )
    lines.append("")
    for contender, row in summary.items():
        if row["state_mb"] is not None:
            lines.append(
                f"{LABELS[contender] + ':':<28} state {number(row['state_mb'])} MB; its WAL at "
                f"most {number(row['state_wal_peak_mb'])} MB, the index's "
                f"{number(row['index_wal_peak_mb'])} MB (medians; sampled every 20 ms)"
            )
    lines.append("")
    lines.extend(checks(summary, web))
    return "\n".join(lines)


def checks(summary: dict[str, dict[str, Any]], web: dict[str, Any]) -> list[str]:
    notes = []
    for contender, row in summary.items():
        if row["valid_runs"] < row["runs"]:
            notes.append(
                f"{LABELS[contender]}: {row['runs'] - row['valid_runs']} run(s) not counted (exit "
                f"{row['exit_statuses']}, missing {row['missing']}, disallowed "
                f"{row['disallowed']}, other {row['other']})"
            )
    if not notes:
        notes.append(
            f"every run fetched all {web['allowed']:,} allowed pages; ours and Scrapy no "
            f"disallowed URL; the bare loop (no robots.txt) also the {web['disallowed']} "
            "disallowed ones"
        )
    return notes


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--pages", type=int, default=250, help="allowed pages per host")
    parser.add_argument("--port", type=int, default=8795)
    parser.add_argument("--concurrency", type=int, default=64, help="requests in flight, each")
    parser.add_argument("--per-host", type=int, default=4, help="ours: per_host_concurrency")
    parser.add_argument("--nginx-workers", type=int, default=1)
    parser.add_argument("--no-extras", dest="extras", action="store_false")
    parser.add_argument(
        "--warc", action="store_true", help="also run ours with --warc: the cost of archiving"
    )
    parser.add_argument(
        "--serve",
        action="store_true",
        help="also run ours with --serve, its status read once a second as it runs: the cost "
        "of watching a crawl",
    )
    parser.add_argument("--serve-port", type=int, default=SERVE_PORT, help="for --serve")
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="CRAWL",
        help="also run this `crawl` executable (another checkout's venv) with ours' settings, "
        "interleaved, and give ours / baseline; a short crawl of its own first compiles its "
        "modules",
    )
    parser.add_argument(
        "--only",
        type=lambda text: set(text.split(",")),
        help="run only these contenders, comma-separated (ours-index,ours-jsonl: the index's "
        "cost at 100,000 pages without Scrapy's 20 minutes)",
    )
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--work", type=Path, help="keep the web and logs here (default: a temp)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not 1 <= args.hosts <= 254 or args.rounds < 1 or args.concurrency < 1 or args.per_host < 1:
        parser.error("--hosts must be 1..254; --rounds, --concurrency, --per-host at least 1")
    return args


def crawler_commit() -> str:
    """The commit the crawler's source is at, '+changes' when crawler/ differs from it."""
    git = ["git", "-C", str(RIVALS.parent.parent)]
    try:
        head = subprocess.run(
            [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        changes = subprocess.run(
            [*git, "status", "--porcelain", "--", "crawler"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "an unknown commit"
    return head + ("+changes" if changes else "")


def made_before(root: Path, args: argparse.Namespace) -> dict[str, Any] | None:
    """The web a run with --work made in `root` before, when it is the one asked for (the web of
    100,000 pages takes minutes to make)."""
    try:
        web: dict[str, Any] = json.loads((root / "web.json").read_text())
    except (OSError, ValueError):
        return None
    if (
        web.get("port") != args.port
        or len(web.get("hosts", ())) != args.hosts
        or web.get("pages_per_host") != len(allowed_paths(args.pages))
    ):
        return None
    print(f"the web made before in {root}", file=sys.stderr)
    return web


def bench(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    nginx = nginx_binary()
    busy = [ip for ip in host_ips("127.0.1.1", args.hosts) if not port_free(ip, args.port)]
    if busy:  # before the minute the web takes to generate
        raise WebError(f"port {args.port} is in use on {busy[0]}: choose --port")
    root = work / "web"
    web = made_before(root, args)
    if web is None:
        print(f"generating the web: {args.hosts} hosts x {args.pages} pages ...", file=sys.stderr)
        web = generate(root, hosts=args.hosts, pages=args.pages, port=args.port)
    shape = verify(root, web)
    chosen = commands(args, root / "seeds.txt")
    commit = crawler_commit()
    runs: list[Run] = []
    with Nginx(work / "nginx", root, web, args.nginx_workers) as server:
        if "baseline-index" in chosen or "baseline-jsonl" in chosen:
            warm_up(chosen.get("baseline-index") or chosen["baseline-jsonl"], work, args.timeout)
        for round_ in range(args.rounds):
            names = list(chosen)
            names = names[round_ % len(names) :] + names[: round_ % len(names)]
            for name in names:
                print(f"round {round_ + 1}/{args.rounds}: {LABELS[name]} ...", file=sys.stderr)
                runs.append(measure(name, chosen[name], round_, work, args.timeout))
        server.stop()  # writes out the access log's buffer
        read_runs(runs, read_access_log(server.access_log), web)
    summary = summarise(runs, list(chosen))
    loops = {run.own.get("loop") for run in runs if run.contender == "bare"} - {None}
    try:
        from crawler.runtime import event_loop_name

        ours_loop = event_loop_name()
    except ImportError:
        ours_loop = "asyncio"
    allowed = sum(len(h["allowed"]) for h in web["hosts"])
    setup = {
        "nginx": nginx_version(nginx),
        "nginx_workers": args.nginx_workers,
        "rounds": args.rounds,
        "concurrency": args.concurrency,
        "ours_settings": chosen["ours-index"][4:],
        "ours_loop": ours_loop,
        "crawler_commit": commit if commit == crawler_commit() else f"{commit} (changed meanwhile)",
        "bare_loop": ", ".join(sorted(loops)) or "unknown loop",
        "robots_txt": ROBOTS_TXT,
        "web": {
            "hosts": args.hosts,
            "pages": args.pages,
            "port": args.port,
            "allowed": allowed,
            "disallowed": sum(len(h["disallowed"]) for h in web["hosts"]),
            "mean_page_kb": shape["mean_page_bytes"] / 1000,
            "links_per_page": shape["links_per_page"],
            "followed_links_per_page": shape["followed_links_per_page"],
        },
    }
    return {"setup": setup, "runs": runs, "summary": summary, "bars": verdicts(summary)}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    compile_bytecode()
    # SIGTERM unwinds like Ctrl-C, so nginx is stopped and the temporary directory removed.
    stopped_by = [signal.SIGINT]

    def on_sigterm(number: int, frame: object) -> None:
        stopped_by[0] = signal.SIGTERM
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        if args.work is not None:
            args.work.mkdir(parents=True, exist_ok=True)
            result = bench(args, args.work.resolve())
        else:
            with tempfile.TemporaryDirectory(prefix="bench-speed-") as temporary:
                result = bench(args, Path(temporary))
    except WebError as error:
        print(f"bench_speed: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("bench_speed: interrupted; nginx stopped, files removed", file=sys.stderr)
        return 128 + stopped_by[0]
    info = machine("aiohttp", "selectolax", "scrapy", "uvloop")
    if args.json:
        result["runs"] = [asdict(run) | {"valid": run.valid} for run in result["runs"]]
        print(json.dumps({"machine": info, **result}, indent=1))
    else:
        print(report(info, result["setup"], result["summary"], result["bars"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
