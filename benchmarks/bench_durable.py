#!/usr/bin/env python3
"""What durability costs: the same crawl with its state on disk and in memory, side by side.

    python benchmarks/bench_durable.py [--hosts 100] [--pages 100] [--repeat 3] [--concurrency 64]
        [--port 8789] [--json]

It generates a local web (benchmarks/support/testweb.py: --hosts hosts on 127.0.1.x, --pages allowed
pages each, 12 KB pages with 13 links, robots.txt without a Crawl-delay) so that the crawl runs as
fast as the two cores allow, not as fast as politeness lets it. Then it crawls it with `crawl`,
taking turns, --repeat times each:

    durable  crawl SEEDS --data DIR -s politeness.min_delay=0 -s concurrency=N
             (the default: DIR/state.sqlite, committed every state.commit_interval seconds)
    memory   the same with -s state.durable=false

Both write the full-text index (DIR/index.sqlite). Each run gets a fresh data directory and a
fresh server; pages/s is distinct pages fetched over the span the server saw (first request to
last), so process start-up and shutdown do not count. The figure to read is durable / memory,
the median of each; the bar is 0.8. The machine is shared and noisy: compare the ratio of one
run, not absolute figures across runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from support.machine import compile_bytecode, machine
from support.processes import run_tool, start_server, stop_server
from support.testweb import completeness, generate, politeness_figures, read_log

MODES = ("durable", "memory")
BAR = 0.8


def command(mode: str, seeds: Path, data: Path, concurrency: int) -> list[str]:
    crawl = Path(sys.executable).parent / "crawl"
    args = [str(crawl), str(seeds), "--data", str(data), "-s", "politeness.min_delay=0"]
    args += ["-s", f"concurrency={concurrency}"]
    if mode == "memory":
        args += ["-s", "state.durable=false"]
    return args


def measure(
    mode: str, repeat: int, root: Path, web: dict[str, Any], work: Path, concurrency: int
) -> dict[str, Any]:
    name = f"{mode}-{repeat + 1}"
    log = work / f"{name}.requests.jsonl"
    server = start_server(root, log, work / f"{name}.server.err")
    try:
        status, wall = run_tool(
            command(mode, root / "seeds.txt", work / f"{name}.data", concurrency), work, name, 600
        )
    finally:
        stop_server(server)
    entries = read_log(log) if log.exists() else []
    figures = politeness_figures(entries, 0.0)
    missing = completeness(entries, web)["missing"]
    return {
        "mode": mode,
        "repeat": repeat + 1,
        "exit_status": status,
        "wall_s": wall,
        "pages": figures["pages_fetched"],
        "missing": missing,
        "duplicates": figures["duplicates"],
        "span_s": figures["span"],
        "pages_per_s": figures["pages_per_s"],
    }


def table(info: dict[str, Any], runs: list[dict[str, Any]], pages: int, hosts: int) -> str:
    lines = [
        f"machine: {info['cpu']}, {info['cores']} cores, Python {info['python']}, "
        f"aiohttp {info['aiohttp']}",
        f"web: {hosts} hosts x {pages // hosts} pages, no Crawl-delay, politeness.min_delay 0",
        "",
        f"{'run':<12} {'exit':>4} {'pages':>6} {'missing':>7} {'dupes':>5} {'span s':>7} "
        f"{'pages/s':>8}",
        "-" * 55,
    ]
    lines.extend(
        f"{run['mode'] + ' #' + str(run['repeat']):<12} {run['exit_status']!s:>4} "
        f"{run['pages']:>6} {run['missing']:>7} {run['duplicates']:>5} "
        f"{run['span_s']:>7.2f} {run['pages_per_s'] or 0:>8.1f}"
        for run in runs
    )
    medians = {}
    lines.append("")
    for mode in MODES:
        rates = [run["pages_per_s"] for run in runs if run["mode"] == mode and run["pages_per_s"]]
        medians[mode] = statistics.median(rates) if rates else 0.0
        lines.append(f"median {mode}: {medians[mode]:.1f} pages/s")
    ratio = medians["durable"] / medians["memory"] if medians["memory"] else 0.0
    verdict = "holds" if ratio >= BAR else "DOES NOT HOLD"
    lines.append(f"durable / memory: {ratio:.3f} (bar {BAR}: {verdict})")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--port", type=int, default=8789)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    compile_bytecode()
    with tempfile.TemporaryDirectory(prefix="bench-durable-") as temporary:
        work = Path(temporary)
        root = work / "web"
        web = generate(
            root, hosts=args.hosts, pages_per_host=args.pages, crawl_delay=None, port=args.port
        )
        pages = sum(len(host["allowed"]) for host in web["hosts"])
        runs = [
            measure(mode, repeat, root, web, work, args.concurrency)
            for repeat in range(args.repeat)
            for mode in MODES
        ]
    info = machine("aiohttp")
    if args.json:
        print(json.dumps({"machine": info, "runs": runs}, indent=1))
    else:
        print(table(info, runs, pages, args.hosts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
