#!/usr/bin/env python3
"""The frontier at scale: enqueue and dequeue rates and resident memory, SQLite and memory.

    python benchmarks/bench_frontier.py [--urls 1000000] [--hosts 10000] [--stores sqlite,memory]
        [--working-set 32] [--json]

Each store runs in a subprocess of its own, so each one's resident memory is its own:

- enqueue: every URL is added to the seen set and, being new, pushed to its origin's queue, in
  the order a crawl discovers them (host after host, round and round); the state commits every
  0.5 s (state.commit_interval) as a crawl's would, and once at the end.
- RSS: VmRSS from /proc/self/status with every URL pending (the bar: under 300 MB for 1,000,000
  URLs over 10,000 hosts), and the process's peak (VmHWM).
- reopen (SQLite): closing the state and opening it again, as a resumed crawl does.
- dequeue: pop and done, origin after origin, round and round, until every queue is empty;
  commits as above. The bar for both rates: above 20,000 URLs a second, all the way: besides the
  mean, the table gives the slowest tenth of each phase (commits included).

URLs are made on the fly (about 80 bytes each), so the process holds only what the store holds.
The SQLite state goes to a temporary directory on the file system of `--dir` (default: the
system's temporary directory).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from support.machine import machine

from crawler.config import StateConfig
from crawler.frontier import QueuedUrl
from crawler.robots.txt import RobotsOptions
from crawler.state import CrawlState, MemoryCrawlState, open_state

STORES = ("sqlite", "memory")
COMMIT_INTERVAL_S = 0.5
BAR_RSS_MB = 300.0
BAR_RATE = 20_000.0


def rss_mb(field: str = "VmRSS") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def origin_of(host: int) -> str:
    return f"https://host-{host:05d}.example.org"


def discovered(urls: int, hosts: int) -> Iterator[tuple[str, str]]:
    """(origin, url) in the order a crawl finds them: one new page per host, round and round."""
    per_host = -(-urls // hosts)
    made = 0
    for page in range(per_host):
        for host in range(hosts):
            if made == urls:
                return
            made += 1
            origin = origin_of(host)
            yield origin, f"{origin}/articles/{page // 50}/a-page-about-something-{page}.html"


class Windows:
    """Rates over successive windows of `size` URLs."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._last = time.perf_counter()
        self.rates: list[float] = []

    def mark(self, count: int) -> None:
        now = time.perf_counter()
        self.rates.append(self._size / max(now - self._last, 1e-9))
        self._last = now

    def slowest(self) -> float:
        return min(self.rates, default=0.0)


def open_store(store: str, directory: Path, working_set: int) -> CrawlState:
    if store == "memory":
        return MemoryCrawlState()
    config = StateConfig(working_set=working_set)
    return open_state(directory, config, RobotsOptions())


def run_one(store: str, urls: int, hosts: int, working_set: int, directory: Path) -> dict[str, Any]:
    """One store, in this process: the figures as a dict."""
    state = open_store(store, directory, working_set)
    result: dict[str, Any] = {"store": store, "rss_start_mb": rss_mb()}
    seen, frontier = state.seen, state.frontier
    commits = 0
    tenth = max(1, urls // 10)
    windows = Windows(tenth)
    began = last = time.perf_counter()
    for number, (origin, url) in enumerate(discovered(urls, hosts), 1):
        if seen.add(url):
            frontier.push(origin, QueuedUrl(url, 1))
        now = time.perf_counter()
        if now - last >= COMMIT_INTERVAL_S:
            state.commit()
            commits += 1
            last = now
        if number % tenth == 0:
            windows.mark(number)
    state.commit()
    enqueue_s = time.perf_counter() - began
    result["enqueue_per_s"] = urls / enqueue_s
    result["enqueue_slowest_tenth_per_s"] = windows.slowest()
    result["pending"] = len(frontier)
    result["rss_pending_mb"] = rss_mb()
    if store == "sqlite":
        state.close()
        del state, seen, frontier
        began = time.perf_counter()
        state = open_store(store, directory, working_set)
        result["reopen_s"] = time.perf_counter() - began
        result["rss_reopened_mb"] = rss_mb()
        frontier = state.frontier
        if len(frontier) != urls:
            raise SystemExit(f"reopened with {len(frontier)} URLs pending, not {urls}")
    origins = [origin_of(host) for host in range(hosts)]
    popped = 0
    windows = Windows(tenth)
    began = last = time.perf_counter()
    while origins:
        left = []
        for origin in origins:
            item = frontier.pop(origin)
            if item is None:
                continue
            frontier.done(item)
            popped += 1
            if popped % tenth == 0:
                windows.mark(popped)
            left.append(origin)
        origins = left
        now = time.perf_counter()
        if now - last >= COMMIT_INTERVAL_S:
            state.commit()
            commits += 1
            last = now
    state.commit()
    dequeue_s = time.perf_counter() - began
    result["dequeue_per_s"] = popped / dequeue_s
    result["dequeue_slowest_tenth_per_s"] = windows.slowest()
    if popped != urls or len(frontier):
        raise SystemExit(f"dequeued {popped} of {urls}; {len(frontier)} left")
    result["rss_end_mb"] = rss_mb()
    result["rss_peak_mb"] = rss_mb("VmHWM")
    result["commits"] = commits
    state.close()
    files = list(directory.glob("state.sqlite*"))
    result["disk_mb"] = sum(file.stat().st_size for file in files) / 1e6 if files else 0.0
    return result


def run_in_subprocess(
    store: str, urls: int, hosts: int, working_set: int, base: Path
) -> dict[str, Any]:
    directory = Path(tempfile.mkdtemp(prefix=f"bench-frontier-{store}-", dir=base))
    try:
        command = [
            sys.executable,
            __file__,
            "--child",
            store,
            "--urls",
            str(urls),
            "--hosts",
            str(hosts),
            "--working-set",
            str(working_set),
            "--dir",
            str(directory),
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"{store} failed:\n{done.stderr}")
        result: dict[str, Any] = json.loads(done.stdout)
        return result
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def table(results: list[dict[str, Any]], urls: int, hosts: int, working_set: int) -> str:
    info = machine()
    lines = [
        f"machine: {info['cpu']}, {info['cores']} cores, Python {info['python']}",
        f"frontier: {urls:,} URLs over {hosts:,} hosts, working set {working_set} per host, "
        f"commit every {COMMIT_INTERVAL_S:g} s",
        "",
        f"{'store':<8} {'enqueue/s':>10} {'slowest':>10} {'dequeue/s':>10} {'slowest':>10} "
        f"{'RSS pending MB':>15} {'peak MB':>8} {'reopen s':>9} {'disk MB':>8}",
        "-" * 96,
    ]
    for result in results:
        reopen = result.get("reopen_s")
        lines.append(
            f"{result['store']:<8} {result['enqueue_per_s']:>10,.0f} "
            f"{result['enqueue_slowest_tenth_per_s']:>10,.0f} "
            f"{result['dequeue_per_s']:>10,.0f} {result['dequeue_slowest_tenth_per_s']:>10,.0f} "
            f"{result['rss_pending_mb']:>15.1f} {result['rss_peak_mb']:>8.1f} "
            f"{'-' if reopen is None else f'{reopen:.2f}':>9} {result['disk_mb']:>8.1f}"
        )
    lines.append("(slowest: the slowest tenth of the URLs, commits included)")
    for result in results:
        if result["store"] == "sqlite":
            holds = (
                result["rss_peak_mb"] < BAR_RSS_MB
                and result["enqueue_slowest_tenth_per_s"] > BAR_RATE
                and result["dequeue_slowest_tenth_per_s"] > BAR_RATE
            )
            lines.append(
                f"\nbar (SQLite: peak RSS < {BAR_RSS_MB:g} MB, both rates > {BAR_RATE:,.0f}/s "
                "in every tenth): " + ("holds" if holds else "DOES NOT HOLD")
            )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--hosts", type=int, default=10_000)
    parser.add_argument("--stores", default=",".join(STORES))
    parser.add_argument("--working-set", type=int, default=StateConfig().working_set)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", choices=STORES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(args.child, args.urls, args.hosts, args.working_set, args.dir)))
        return 0
    stores = [store.strip() for store in args.stores.split(",") if store.strip()]
    unknown = sorted(set(stores) - set(STORES))
    if unknown:
        parser.error(f"unknown store {unknown[0]}; expected one of {', '.join(STORES)}")
    results = [
        run_in_subprocess(store, args.urls, args.hosts, args.working_set, args.dir)
        for store in stores
    ]
    if args.json:
        print(json.dumps({"machine": machine(), "results": results}, indent=1))
    else:
        print(table(results, args.urls, args.hosts, args.working_set))
    return 0


if __name__ == "__main__":
    sys.exit(main())
