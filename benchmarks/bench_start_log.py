#!/usr/bin/env python3
"""What keeping every request start costs the crawl (crawler.state.starts, for `crawl report`).

    python benchmarks/bench_start_log.py [--starts 200000] [--hosts 1000] [--per-commit 500]
        [--repeat 5]

The scheduler's part of a request start, as it runs in a crawl on DIR/state.sqlite: the host's
timing moved (`Politeness.on_start`), its row put, and the state committed every --per-commit
starts (the crawl commits every state.commit_interval, 0.1 s; at 5,000 requests a second that is
500), once without the start log and once with it (the row added, with the pace in force, and
written at the commits), taking turns, --repeat times each. It prints the least microseconds a
start of each, the difference, and what the rows take on disk.
No server, no network: the figure is the crawl thread's time alone.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from crawler.config import PolitenessConfig, StateConfig
from crawler.politeness import HostTiming, Politeness
from crawler.robots.rules import RobotsOptions
from crawler.state import open_state


def run(directory: Path, starts: int, hosts: int, per_commit: int, log: bool) -> float:
    """Seconds for `starts` request starts over `hosts` origins, with or without the log."""
    state = open_state(directory, StateConfig(), RobotsOptions())
    politeness = Politeness(PolitenessConfig(min_delay=0.0))
    timings = [HostTiming(f"http://host{n}.test") for n in range(hosts)]
    try:
        began = time.perf_counter()
        for n in range(starts):
            timing = timings[n % hosts]
            now = 1e9 + n * 0.001
            politeness.on_start(timing, now)
            state.timings.put(timing)
            if log:
                state.starts.add(
                    timing.origin,
                    now,
                    timing.next_start - now,
                    politeness.host_interval(timing, now),
                )
            politeness.on_answer(timing, now)
            if n % per_commit == 0:
                state.commit()
        state.commit()
        return time.perf_counter() - began
    finally:
        state.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=200_000)
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--per-commit", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    figures: dict[bool, list[tuple[float, int]]] = {}
    for log in (False, True) * args.repeat:
        with tempfile.TemporaryDirectory() as name:
            took = run(Path(name), args.starts, args.hosts, args.per_commit, log)
            size = sum(path.stat().st_size for path in Path(name).iterdir())
        figures.setdefault(log, []).append((took, size))
    # The machine is shared: the least of each is the one least disturbed.
    (off, off_size), (on, on_size) = (min(figures[False]), min(figures[True]))
    per = 1e6 / args.starts
    print(
        f"{args.starts:,} starts over {args.hosts:,} hosts, a commit every {args.per_commit}, "
        f"the least of {args.repeat} runs each"
    )
    print(f"without the start log  {off * per:6.2f} us a start")
    print(f"with it                {on * per:6.2f} us a start")
    print(f"the log's cost         {(on - off) * per:6.2f} us a start")
    print(f"on disk                {(on_size - off_size) / args.starts:6.1f} bytes a start")


if __name__ == "__main__":
    main()
