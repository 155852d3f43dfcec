"""`crawl SEEDS --state URL --workers N`: N worker processes of one shared crawl on this machine,
each the same `crawl` command with a data directory of its own (DIR/w1 ... DIR/wN: pages stay
with the worker that fetched them). Worth it while the page step holds a core: the workers share
every host's pace through the server, so more of them never asks a host sooner."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from crawler.cli.options import yaml_string
from crawler.config import ServeAddress
from crawler.errors import ConfigError
from crawler.monitor import worker_address

__all__ = ["run_workers", "worker_arguments", "workers_summary"]


def worker_arguments(argv: Sequence[str], data_dir: Path) -> list[str]:
    """The command line `argv` without --workers and --data, then --data `data_dir`."""
    kept: list[str] = []
    skip = False
    for argument in argv:
        if skip:
            skip = False
            continue
        if argument in ("--workers", "--data"):
            skip = True
            continue
        if argument.startswith(("--workers=", "--data=")):
            continue
        kept.append(argument)
    return [*kept, "--data", str(data_dir)]


def run_workers(
    count: int, data_dir: Path, argv: Sequence[str], serve: ServeAddress | None = None
) -> int:
    """Start `count` workers and wait for them; a signal to this process goes to each. The exit
    status is the first failing worker's, else 0. With `serve` (--serve), worker K serves its
    live status on PORT+K-1 (crawler.monitor.workers)."""
    if serve is not None and serve.port and serve.port + count - 1 > 65_535:
        raise ConfigError(
            f"--serve {serve} with --workers {count}: the workers serve on ports {serve.port} to "
            f"{serve.port + count - 1}, past 65535; give a lower port"
        )
    workers = []
    for number in range(1, count + 1):
        arguments = worker_arguments(argv, data_dir / f"w{number}")
        if serve is not None:
            # After the worker's own -s and flags: the last setting of a key wins.
            arguments += ["-s", f"monitor.serve={yaml_string(str(worker_address(serve, number)))}"]
        workers.append(subprocess.Popen([sys.executable, "-m", "crawler", *arguments]))
    ports = ""
    if serve is not None:
        ports = (
            f"; each serves its live status on port {serve.port}, {serve.port + 1}, ..."
            if serve.port
            else "; each serves its live status on a free port (crawl status --state URL: which)"
        )
    print(
        f"crawl: {count} workers started, writing {data_dir}/w1 ... {data_dir}/w{count}{ports}",
        file=sys.stderr,
    )

    def forward(number: int, frame: FrameType | None) -> None:
        for worker in workers:
            if worker.poll() is None:
                worker.send_signal(number)

    previous = {
        number: signal.signal(number, forward) for number in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        statuses = [worker.wait() for worker in workers]
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    summary = workers_summary([data_dir / f"w{number}" for number in range(1, count + 1)])
    if summary:
        print(summary, flush=True)
    return next((status for status in statuses if status != 0), 0)


def workers_summary(shards: Sequence[Path]) -> str:
    """One paragraph for the workers together, from each one's DIR/wK/summary.json (a worker
    that wrote none, killed say, is named), after their own summaries: what they fetched
    between them, and how to search their pages as one."""
    figures: dict[str, float] = {}
    skips = errors = 0
    longest = 0.0
    missing = []
    for shard in shards:
        try:
            document = json.loads((shard / "summary.json").read_text(encoding="utf-8"))
            counts = document["figures"]
            longest = max(longest, float(document["crawl"]["elapsed_s"]))
            skips += sum(document["skips"].values())
            errors += sum(document["errors"].values())
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            missing.append(shard.name)
            continue
        for key in ("pages", "requests", "robots_fetches", "tdmrep_fetches", "bytes"):
            figures[key] = figures.get(key, 0) + float(counts.get(key, 0))
    if len(missing) == len(shards):
        return ""
    pages = int(figures["pages"])
    rate = pages / longest if longest > 0 else 0.0
    lines = [
        f"all {len(shards)} workers: {pages} pages ({rate:.1f}/s over {longest:.1f} s), "
        f"{int(figures['requests'])} requests, {int(figures['robots_fetches'])} robots.txt "
        "fetches, "
        + (f"{int(figures['tdmrep_fetches'])} tdmrep.json, " if figures["tdmrep_fetches"] else "")
        + f"{figures['bytes'] / 1e6:.1f} MB, {skips} skipped, {errors} errors"
    ]
    if missing:
        lines.append(f"no summary from {', '.join(missing)} (stopped before it wrote one)")
    flags = " ".join(f"--data {shard}" for shard in shards)
    lines.append(f"search them as one: crawl search QUERY {flags}")
    return "\n".join(lines)
