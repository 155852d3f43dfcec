#!/usr/bin/env python3
"""Instructions a crawl executes, counted by valgrind, ours beside another build of the crawler.

    python benchmarks/bench_instructions.py --baseline PATH/TO/crawl [--hosts 20] [--pages 30]
        [--port 8797] [--json]

Why instructions: on a shared machine timed figures swing by a fifth from run to run, while
callgrind counts the same work the same way whatever else the machine does. So this is the
benchmark to tell whether a change made the crawl's own work larger, to a fraction of a percent.

It generates a local web (support/testweb.py: --hosts hosts on 127.0.1.x, --pages pages each, no
Crawl-delay), serves it in a process of its own (not counted), and runs each build's `crawl` on it
under `valgrind --tool=callgrind` twice, writing JSONL with the state in memory, and writing the
index with the durable state; then `python -c "import crawler.cli"` under callgrind for the
start-up. A crawl's own work is its count less the start-up's. valgrind comes from the system's
packages (Debian: valgrind); under it a crawl runs about fifty times slower, so the web is small.

Each thread is counted apart too. The loop's thread (the main one: the crawl's own work, less the
start-up) is the figure a change to the crawl moves. The other threads are the index writer's
and the WAL checkpoints': how much FTS5 merges there depends on when the writer finds its queue
empty, which is thread timing, so their count swings by a few percent from run to run of one
build (the same build against itself gave 1.011 for the index crawl in all), while the loop's
moves by a fraction of a percent.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from support.machine import machine
from support.processes import start_server, stop_server
from support.testweb import generate

MODES = {
    "jsonl": ["-s", "output.format=jsonl", "-s", "state.durable=false"],
    "index": [],
}
COLLECTED = re.compile(r"Collected : (\d+)")
TOTALS = re.compile(r"^totals: (\d+)", re.MULTILINE)


def callgrind(command: list[str], work: Path, name: str) -> tuple[int, list[int]]:
    """Instructions `command` executed: all its threads', and each thread's (the main one
    first)."""
    out = work / f"{name}.callgrind"
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--separate-threads=yes", f"--callgrind-out-file={out}",
         *command],
        capture_output=True,
        text=True,
        check=False,
        cwd=work,  # not the repository's root: `python -c` would import the package found there
    )  # fmt: skip
    found = COLLECTED.search(done.stderr)
    if found is None:
        raise RuntimeError(f"{name}: valgrind gave no count:\n{done.stderr[-2000:]}")
    (work / f"{name}.out").write_text(done.stdout)
    files = sorted(work.glob(f"{out.name}-*"), key=lambda path: int(path.name.rsplit("-", 1)[1]))
    threads = []
    for path in files:
        totals = TOTALS.search(path.read_text(errors="replace"))
        if totals is None:
            raise RuntimeError(f"{path}: no totals line")
        threads.append(int(totals.group(1)))
    return int(found.group(1)), threads


def count(crawl: Path, seeds: Path, work: Path, label: str) -> dict[str, Any]:
    python = crawl.parent / "python"
    start_up, _ = callgrind([str(python), "-c", "import crawler.cli"], work, f"{label}-import")
    figures: dict[str, Any] = {"start-up": start_up}
    for mode, options in MODES.items():
        command = [str(python), str(crawl), str(seeds), "--data", str(work / f"{label}-{mode}")]
        command += ["-s", "politeness.min_delay=0", "-s", "fetch.read_timeout=300", *options]
        total, threads = callgrind(command, work, f"{label}-{mode}")
        summary = (work / f"{label}-{mode}.out").read_text().splitlines()[:1]
        figures[mode] = {
            "total": total,
            "crawl": total - start_up,
            "loop": threads[0] - start_up,
            "others": sum(threads[1:]),
            "threads": len(threads),
            "summary": summary[0] if summary else "",
        }
    return figures


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--baseline", type=Path, required=True, metavar="CRAWL")
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--pages", type=int, default=30)
    parser.add_argument("--port", type=int, default=8797)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    builds = {"ours": Path(sys.executable).parent / "crawl", "baseline": args.baseline}
    with tempfile.TemporaryDirectory(prefix="bench-instructions-") as directory:
        work = Path(directory)
        root = work / "web"
        generate(root, hosts=args.hosts, pages_per_host=args.pages, crawl_delay=None,
                 port=args.port, seed=args.seed)  # fmt: skip
        server = start_server(root, work / "requests.jsonl", work / "server.err")
        try:
            figures = {name: count(crawl, root / "seeds.txt", work, name) for name, crawl in
                       builds.items()}  # fmt: skip
        finally:
            stop_server(server)
    if args.json:
        print(json.dumps({"machine": machine(), "figures": figures}, indent=1))
        return 0
    info = machine()
    print(f"machine: {info['cpu']}, {info['cores']} cores, Python {info['python']}")
    print(f"web: {args.hosts} hosts x {args.pages} pages, no Crawl-delay\n")
    print(f"{'instructions, millions':<34} {'ours':>10} {'baseline':>10} {'ours / baseline':>16}")
    rows = [("start-up (import crawler.cli)", "start-up", None)]
    for mode in MODES:
        rows += [
            (f"crawl, {mode}, less start-up", mode, "crawl"),
            ("  the loop's thread", mode, "loop"),
            ("  the other threads", mode, "others"),
        ]
    for label, key, part in rows:
        ours, base = (
            figures[name][key] if part is None else figures[name][key][part]
            for name in ("ours", "baseline")
        )
        ratio = f"{ours / base:>16.4f}" if base else f"{'':>16}"
        print(f"{label:<34} {ours / 1e6:>10,.1f} {base / 1e6:>10,.1f} {ratio}")
    for mode in MODES:
        print(f"\nours, {mode}: {figures['ours'][mode]['summary']}")
        print(f"baseline, {mode}: {figures['baseline'][mode]['summary']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
