#!/usr/bin/env python3
"""Pacing: `crawl`, Scrapy and Crawlee on servers that are slow, refuse or drip, by their logs.

    python benchmarks/bench_pacing.py [--scenarios slow,limiter,...] [--tools ours,scrapy,...]
        [--cap 240] [--baseline PATH/TO/crawl] [--crawlee-python PATH] [--work DIR] [--json]

Issue 36, politeness that listens to the server: a crawl should pace each host by how it answers
(ours: the interval after an answer is politeness.response_factor, 4, times its answer time, the
lower median of its last 5 times to first byte), learn a rate from 429 and 503 (Retry-After a
floor), and not let slow answers hold the slots other hosts need (fetch.slow_after). Each scenario
is served by benchmarks/support/pacing_web.py (the slow and rate-limited sites are
tests/support/sites.py's), started afresh for every run and stopped after it; its log makes every
figure:

    slow                 one worker, 0.2 s a page, 1.0 s while busy over half of the last 5 s:
                         worker share (of the time from the first request to the last answer),
                         seconds in the slowed state, requests served slowed, pages of 40, span
    limiter              one request accepted per 2 s, 429 without Retry-After sooner: refused
                         share, refused, accepted, pages of 31, pace share (accepted after the
                         first, each worth 2 s, over their span: 1.0 is the pace the site allows)
    limiter-retry-after  the same with a Retry-After;  unavailable: the same with 503
    fast                 60 fast pages: the median gap between two request starts, pages
    drip                 5 control hosts of 20 fast pages and 70 hosts whose `/` drips a byte a
                         second for ever: the control hosts' median gap and pages, and that gap
                         over the same contender's on drip-control (the control hosts alone)

The contenders, each a subprocess, in turn for every scenario, all told the same least interval
of 0.1 s between two requests to a host:

    ours                 python -m crawler SEEDS --data DIR -s politeness.min_delay=0.1
                             -s output.format=jsonl
    ours-before          the same with --baseline's `crawl` (another checkout's build)
    scrapy-autothrottle  benchmarks/rivals/pacing_scrapy.py SEEDS --autothrottle (DOWNLOAD_DELAY
                         0.1 without jitter, one request at a time per host, 64 in all)
    scrapy               the same with AutoThrottle off
    crawlee              benchmarks/rivals/pacing_crawlee.py SEEDS, Crawlee's ParselCrawler, on
                         --crawlee-python (Crawlee has no per-host delay to give it)
    crawlee-throttling   the same with its ThrottlingRequestManager (429 backoff, Retry-After)

A run ends when the contender exits, or at --cap seconds, when it is killed (wall shows "cap").
A contender whose tool is missing is reported as not run. The bars, from the issue, are judged for
every contender (ours is the one they are for): slow: worker share at most 0.25 and no request
served slowed; limiter: at most 10% of requests refused, every page fetched, pace share at least
0.7; fast: median gap at most 0.15 s; drip: median gap at most 1.2x drip-control's, every control
page fetched. Wall is the contender's process start to exit.

Exit status: 0 when the benchmark ran (whatever the bars say), 1 when it could not (a scenario's
server did not start), 2 for bad arguments. Every process started is ended: the contenders in
their own sessions at the cap (and by coreutils' timeout a little later, should this script die),
the servers at the end of each run (and by their own --lifetime).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import json
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from support.machine import compile_bytecode, machine
from support.processes import END_STEPS, end_group, last_json_line, run_tool, tail

HERE = Path(__file__).resolve().parent
PACING_WEB = HERE / "support" / "pacing_web.py"
SCRAPY_RIVAL = HERE / "rivals" / "pacing_scrapy.py"
CRAWLEE_RIVAL = HERE / "rivals" / "pacing_crawlee.py"
CRAWLEE_PYTHON = HERE.parent.parent / "crawlee-venv" / "bin" / "python"
"""Crawlee in a venv of its own beside the checkout (its dependencies are not ours)."""
LIMITERS = ("limiter", "limiter-retry-after", "unavailable")
SCENARIOS = ("slow", *LIMITERS, "fast", "drip", "drip-control")
TOOLS = ("ours", "ours-before", "scrapy-autothrottle", "scrapy", "crawlee", "crawlee-throttling")
MIN_DELAY_S = 0.1
READY_TIMEOUT_S = 30.0

Bar = tuple[str, Callable[[dict[str, Any], dict[str, Any] | None], bool]]
BARS: dict[str, list[Bar]] = {
    "slow": [
        ("worker share <= 0.25", lambda f, _: f["worker_share"] <= 0.25),
        ("no request slowed", lambda f, _: f["requests_slowed"] == 0),
    ],
    "limiter": [
        ("refused share <= 0.10", lambda f, _: f["refused_share"] <= 0.10),
        ("every page fetched", lambda f, _: f["pages"] == f["pages_expected"]),
        ("pace share >= 0.7", lambda f, _: f["pace_share"] >= 0.7),
    ],
    "fast": [("median gap <= 0.15 s", lambda f, _: f["median_gap"] <= 0.15)],
    "drip": [
        ("gap <= 1.2x drip-control's", lambda f, c: f["median_gap"] <= 1.2 * c["median_gap"]),
        ("every control page fetched", lambda f, _: f["pages"] == f["pages_expected"]),
    ],
}


class ServeError(Exception):
    """A scenario's server did not come up."""


@dataclass
class Run:
    scenario: str
    tool: str
    command: list[str] = field(default_factory=list)
    not_run: str = ""  # why, when the contender's tool is missing
    exit_status: int | None = None  # None: killed at the cap
    wall_s: float | None = None
    figures: dict[str, Any] = field(default_factory=dict)
    bars: dict[str, bool | None] = field(default_factory=dict)
    server: dict[str, Any] = field(default_factory=dict)  # the server's report, its log aside
    tool_report: dict[str, Any] | None = None  # the rival's own last JSON line
    stderr_tail: str = ""


# ---------------------------------------------------------------------------------------------
# Contenders


def missing_tools(tools: Sequence[str], args: argparse.Namespace) -> dict[str, str]:
    """For each tool of `tools` that cannot run here, why."""
    missing: dict[str, str] = {}
    for tool in tools:
        if tool == "ours" and importlib.util.find_spec("crawler") is None:
            missing[tool] = f"no crawler package in {sys.executable}"
        elif tool == "ours-before" and not (args.baseline and args.baseline.is_file()):
            missing[tool] = f"no executable {args.baseline}"
        elif tool.startswith("scrapy") and importlib.util.find_spec("scrapy") is None:
            missing[tool] = f"no scrapy in {sys.executable}"
        elif tool.startswith("crawlee") and not crawlee_version(args.crawlee_python)[0]:
            missing[tool] = crawlee_version(args.crawlee_python)[1]
    return missing


@functools.cache
def crawlee_version(python: Path) -> tuple[str, str]:
    """(Crawlee's version, '') when `python` imports its ParselCrawler, else ('', why not)."""
    probe = "import crawlee, parsel; from crawlee.crawlers import ParselCrawler; "
    try:
        done = subprocess.run(
            [str(python), "-c", probe + "print(crawlee.__version__)"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return "", f"cannot run {python}: {error}"
    why = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return (done.stdout.strip(), "") if done.returncode == 0 else ("", f"{python}: {why}")


def command(tool: str, seeds: Path, run_dir: Path, args: argparse.Namespace) -> list[str]:
    ours = ["-s", f"politeness.min_delay={MIN_DELAY_S:g}", "-s", "output.format=jsonl"]
    data = ["--data", str(run_dir / "data")]
    if tool == "ours":
        line = [sys.executable, "-m", "crawler", str(seeds), *data, *ours]
    elif tool == "ours-before":
        line = [str(args.baseline), str(seeds), *data, *ours]
    elif tool.startswith("scrapy"):
        autothrottle = ["--autothrottle"] if tool == "scrapy-autothrottle" else []
        line = [sys.executable, str(SCRAPY_RIVAL), str(seeds), *autothrottle]
    else:
        throttling = ["--throttling"] if tool == "crawlee-throttling" else []
        storage = ["--storage", str(run_dir / "crawlee-storage")]
        line = [str(args.crawlee_python), str(CRAWLEE_RIVAL), str(seeds), *throttling, *storage]
    # Should this script die, coreutils' timeout still ends the contender a little after the cap.
    timeout = shutil.which("timeout")
    return [timeout, "--kill-after=5", f"{args.cap + 30:g}", *line] if timeout else line


# ---------------------------------------------------------------------------------------------
# One run


def start_server(
    scenario: str, report: Path, errors: Path, lifetime: float
) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    line = [sys.executable, str(PACING_WEB), "--scenario", scenario, "--report", str(report)]
    with errors.open("w") as err:
        server = subprocess.Popen(
            [*line, "--lifetime", f"{lifetime:g}"],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            start_new_session=True,
        )
    assert server.stdout is not None
    readable, _, _ = select.select([server.stdout], [], [], READY_TIMEOUT_S)
    line = server.stdout.readline() if readable else ""
    with contextlib.suppress(ValueError):
        return server, json.loads(line)
    end_group(server)
    raise ServeError(f"{scenario} server did not start: {tail(errors, 5) or 'no output'}")


def stop_server(server: subprocess.Popen[str]) -> None:
    """SIGTERM (the server writes its report), then SIGKILL if it hangs."""
    end_group(server, ((signal.SIGTERM, 20.0), *END_STEPS[1:]))
    if server.stdout:
        server.stdout.close()


def measure(scenario: str, tool: str, work: Path, args: argparse.Namespace) -> Run:
    run_dir = work / scenario / tool
    run_dir.mkdir(parents=True, exist_ok=True)
    report_path = run_dir / "server.json"
    server, hello = start_server(scenario, report_path, run_dir / "server.err", args.cap + 60.0)
    run = Run(scenario, tool)
    try:
        seeds = run_dir / "seeds.txt"
        seeds.write_text("".join(f"{url}\n" for url in hello["seeds"]))
        run.command = command(tool, seeds, run_dir, args)
        run.exit_status, run.wall_s = run_tool(run.command, run_dir, tool, args.cap)
    finally:
        stop_server(server)
    if run.exit_status != 0:
        run.stderr_tail = tail(run_dir / f"{tool}.err")
    if not tool.startswith("ours"):
        run.tool_report = last_json_line(run_dir / f"{tool}.out")
    try:
        report = json.loads(report_path.read_text())
    except (OSError, ValueError) as error:
        run.stderr_tail += f"\nno server report: {error}"
        return run
    report.pop("log", None)
    run.server = report
    run.figures = figures_of(scenario, report)
    return run


def figures_of(scenario: str, report: dict[str, Any]) -> dict[str, Any]:
    roles, site = report["roles"], report.get("site", {})
    role = roles.get({"slow": "slow", "fast": "fast"}.get(scenario, "control"), {})
    if scenario in LIMITERS:
        role = roles["limiter"]
    figures = {
        "pages": role.get("pages_fetched", 0),
        "pages_expected": role.get("pages_expected"),
        "requests": role.get("requests", 0),
        "median_gap": role.get("median_gap"),
        "span": role.get("span"),
    }
    if scenario == "slow" or scenario in LIMITERS:
        figures |= site
    if "drip" in report:
        figures["drip_hosts_asked"] = report["drip"]["hosts_asked"]
        figures["drip_held_s"] = report["drip"]["held_seconds_total"]
    return figures


def judge(runs: Sequence[Run]) -> None:
    """Each run's bars, where its scenario has any (drip's against the same tool's drip-control)."""
    control = {r.tool: r.figures for r in runs if r.scenario == "drip-control" and r.figures}
    for run in runs:
        if run.scenario == "drip" and run.figures.get("median_gap") and run.tool in control:
            base = control[run.tool].get("median_gap")
            run.figures["gap_ratio"] = run.figures["median_gap"] / base if base else None
        for name, holds in BARS.get(run.scenario, []):
            try:
                run.bars[name] = bool(holds(run.figures, control.get(run.tool)))
            except (KeyError, TypeError):  # a figure missing: no requests, no drip-control
                run.bars[name] = None


# ---------------------------------------------------------------------------------------------
# The table


def number(value: Any, digits: int) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def wall(run: Run) -> str:
    if run.not_run:
        return "not run"
    if run.wall_s is None:
        return "-"
    if run.exit_status is None:
        return f"{run.wall_s:.1f} cap"
    return f"{run.wall_s:.1f}" + (f" exit {run.exit_status}" if run.exit_status else "")


def rows(scenario: str) -> list[tuple[str, Callable[[dict[str, Any]], str]]]:
    pages = ("pages", lambda f: f"{f.get('pages', 0)}/{f.get('pages_expected')}")
    span = ("span s", lambda f: number(f.get("span"), 1))
    if scenario == "slow":
        return [
            ("worker share", lambda f: number(f.get("worker_share"), 3)),
            ("requests slowed", lambda f: str(f.get("requests_slowed", "-"))),
            ("slowed s", lambda f: number(f.get("slowed_seconds"), 1)),
            pages,
            span,
        ]
    if scenario in LIMITERS:
        return [
            ("refused share", lambda f: number(f.get("refused_share"), 3)),
            ("refused / accepted", lambda f: f"{f.get('refused', '-')}/{f.get('accepted', '-')}"),
            pages,
            ("pace share", lambda f: number(f.get("pace_share"), 3)),
            span,
        ]
    gap = [("median gap s", lambda f: number(f.get("median_gap"), 3)), pages, span]
    if scenario == "drip":
        gap += [
            ("gap / drip-control's", lambda f: number(f.get("gap_ratio"), 2)),
            ("dripping hosts asked", lambda f: str(f.get("drip_hosts_asked", "-"))),
            ("held by drips s", lambda f: number(f.get("drip_held_s"), 0)),
        ]
    return gap


def table(info: dict[str, Any], runs: Sequence[Run], tools: Sequence[str], cap: float) -> str:
    lines = [
        f"machine: {info['cpu']}, {info['cores']} cores, Python {info['python']}, "
        f"aiohttp {info['aiohttp']}, Scrapy {info['scrapy']}, Crawlee {info['crawlee']}",
        f"crawler: {info['commit']}; least interval {MIN_DELAY_S:g} s for every contender; "
        f"cap {cap:g} s a run",
    ]
    cell = max(12, *(len(tool) for tool in tools))
    for scenario in dict.fromkeys(run.scenario for run in runs):
        by_tool = {run.tool: run for run in runs if run.scenario == scenario}
        named: list[tuple[str, Callable[[Run], str]]] = [
            (name, lambda run, show=show: show(run.figures) if run.figures else "-")
            for name, show in rows(scenario)
        ]
        named.append(("wall s", wall))
        named += [
            (
                f"bar: {bar}",
                lambda run, bar=bar: {True: "yes", False: "NO"}.get(run.bars.get(bar), "-"),
            )
            for bar, _ in BARS.get(scenario, [])
        ]
        width = max(len(scenario), *(len(name) + 2 for name, _ in named))
        lines += ["", f"{scenario:<{width}}" + "".join(f"  {t:>{cell}}" for t in tools)]
        lines.append("-" * len(lines[-1]))
        for name, show in named:
            cells = [wall(by_tool[t]) if by_tool[t].not_run else show(by_tool[t]) for t in tools]
            lines.append(f"  {name:<{width - 2}}" + "".join(f"  {c:>{cell}}" for c in cells))
    lines.append("")
    ours = [run for run in runs if run.tool == "ours" and run.bars]
    for run in ours:
        verdicts = ", ".join(
            f"{bar} {'-' if holds is None else 'PASS' if holds else 'FAIL'}"
            for bar, holds in run.bars.items()
        )
        lines.append(f"ours, {run.scenario}: {verdicts}")
    for run in runs:
        if run.not_run:
            lines.append(f"{run.tool} on {run.scenario}: not run ({run.not_run})")
        elif run.exit_status not in (0, None) and run.stderr_tail:
            lines.append(f"{run.tool} on {run.scenario}: exit {run.exit_status}; stderr tail:")
            lines += [f"    {line}" for line in run.stderr_tail.splitlines()[-5:]]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Command line


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help="comma-separated")
    parser.add_argument("--tools", help="comma-separated (default: all; ours-before: --baseline)")
    parser.add_argument("--cap", type=float, default=240.0, help="seconds a run may last")
    parser.add_argument("--baseline", type=Path, metavar="CRAWL", help="run as ours-before")
    parser.add_argument("--crawlee-python", type=Path, default=CRAWLEE_PYTHON)
    parser.add_argument("--work", type=Path, help="keep the logs, reports and outputs here")
    parser.add_argument("--json", action="store_true", help="print the whole result as JSON")
    args = parser.parse_args(argv)
    args.scenarios = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    default_tools = [t for t in TOOLS if t != "ours-before" or args.baseline]
    args.tools = [t.strip() for t in (args.tools or ",".join(default_tools)).split(",")]
    args.tools = [t for t in args.tools if t]
    bad = [s for s in args.scenarios if s not in SCENARIOS] or [
        t for t in args.tools if t not in TOOLS
    ]
    if bad or not args.scenarios or not args.tools:
        parser.error(f"unknown or no scenarios or tools: {','.join(bad) or 'none given'}")
    if "ours-before" in args.tools and args.baseline is None:
        parser.error("ours-before needs --baseline PATH/TO/crawl")
    if args.cap <= 0:
        parser.error("--cap must be above 0")
    return args


def commit() -> str:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        described = subprocess.run(
            ["git", "-C", str(HERE.parent), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        return described.stdout.strip() or "unknown"
    return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    compile_bytecode()
    work = args.work.resolve() if args.work else Path(tempfile.mkdtemp(prefix="bench-pacing-"))
    work.mkdir(parents=True, exist_ok=True)
    # SIGTERM unwinds like Ctrl-C does, so that the finally clauses end what was started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    missing = missing_tools(args.tools, args)
    first_commit = commit()  # the tree may change while the benchmark runs: named at both ends
    runs: list[Run] = []
    try:
        for scenario in args.scenarios:
            for tool in args.tools:
                if tool in missing:
                    runs.append(Run(scenario, tool, not_run=missing[tool]))
                    continue
                print(f"bench_pacing: {scenario}, {tool}", file=sys.stderr, flush=True)
                runs.append(measure(scenario, tool, work, args))
    except ServeError as error:
        print(f"bench_pacing: {error}", file=sys.stderr)
        return 1
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    judge(runs)
    last_commit = commit()
    info = machine("aiohttp", "scrapy") | {"commit": last_commit}
    if last_commit != first_commit:
        info["commit"] = f"{first_commit} at the start, {last_commit} at the end"
    crawlee = any(t.startswith("crawlee") and t not in missing for t in args.tools)
    info["crawlee"] = crawlee_version(args.crawlee_python)[0] if crawlee else "not run"
    if args.json:
        result = {"machine": info, "cap": args.cap, "min_delay": MIN_DELAY_S}
        result["runs"] = [asdict(run) for run in runs]
        result["table"] = table(info, runs, args.tools, args.cap).splitlines()
        print(json.dumps(result, indent=1))
    else:
        print(table(info, runs, args.tools, args.cap))
    return 0


if __name__ == "__main__":
    sys.exit(main())
