"""`crawl SEEDS --state URL --workers N`: N worker processes of one shared crawl on this machine,
each the same `crawl` command with a data directory of its own (DIR/w1 ... DIR/wN: pages stay
with the worker that fetched them). Worth it while the page step holds a core: the workers share
every host's pace through the server, so more of them never asks a host sooner."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

__all__ = ["run_workers", "worker_arguments"]


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


def run_workers(count: int, data_dir: Path, argv: Sequence[str]) -> int:
    """Start `count` workers and wait for them; a signal to this process goes to each. The exit
    status is the first failing worker's, else 0."""
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "crawler", *worker_arguments(argv, data_dir / f"w{number}")]
        )
        for number in range(1, count + 1)
    ]
    print(
        f"crawl: {count} workers started, writing {data_dir}/w1 ... {data_dir}/w{count}",
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
    return next((status for status in statuses if status != 0), 0)
