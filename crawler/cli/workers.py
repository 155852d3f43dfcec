"""`crawl SEEDS --state URL --workers N`: N worker processes of one shared crawl on this machine,
each the same `crawl` command with a data directory of its own (DIR/w1 ... DIR/wN: pages stay
with the worker that fetched them). Worth it while the page step holds a core: the workers share
every host's pace through the server, so more of them never asks a host sooner.

One live line for the whole crawl: each worker writes its figures, a JSON object a line, to a pipe
of its own (`--progress-fd`, `ProgressFeed`) and draws nothing; this process adds them up
(`combined_stats`) and draws the line. What a worker prints (its messages, its log, its summary)
comes through pipes too, and is printed above the line, each line after the worker's name: two
workers never draw over each other, and no summary starts in the middle of a progress line."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from crawler.cli.options import yaml_string
from crawler.cli.progress import Progress, Sayings
from crawler.cli.text import fit_for
from crawler.config import ServeAddress
from crawler.errors import ConfigError
from crawler.monitor import worker_address
from crawler.runtime import run
from crawler.stats import CrawlStats

__all__ = [
    "ProgressFeed",
    "combined_stats",
    "feed_figures",
    "run_workers",
    "worker_arguments",
    "workers_summary",
]

FEED_INTERVAL = 0.5
"""Seconds between a worker's figures."""
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals passed on to the workers: theirs to act on (SIGHUP, the terminal gone, ends
them as a kill does, which a crawl's state survives)."""


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


# --- the figures a worker sends, and their sum: pure ---------------------------------------------


def feed_figures(stats: CrawlStats) -> dict[str, Any]:
    """What a worker sends of its live figures."""
    return {
        "elapsed": round(stats.elapsed, 3),
        "pages": stats.pages,
        "queued": stats.queued,
        "in_flight": stats.in_flight,
        "hosts_waiting": stats.hosts_waiting,
        "hosts_throttled": stats.hosts_throttled,
        "errors": dict(stats.errors),
        "skips": dict(stats.skips),
    }


def combined_stats(
    figures: Sequence[Mapping[str, Any]], into: CrawlStats | None = None
) -> CrawlStats:
    """The crawl's live figures from each worker's last (`feed_figures`; an empty one from a
    worker not heard from yet), written into `into` (a progress line may hold it): pages, hosts
    and counts add up; the queue is the crawl's, which every worker reports, and the time the
    longest-running worker's."""
    stats = into if into is not None else CrawlStats()
    stats.elapsed = max((float(part.get("elapsed", 0.0)) for part in figures), default=0.0)
    stats.queued = max((int(part.get("queued", 0)) for part in figures), default=0)
    for name in ("pages", "in_flight", "hosts_waiting", "hosts_throttled"):
        setattr(stats, name, sum(int(part.get(name, 0)) for part in figures))
    errors: Counter[str] = Counter()
    skips: Counter[Any] = Counter()
    for part in figures:
        errors.update(part.get("errors") or {})
        skips.update(part.get("skips") or {})
    stats.errors, stats.skips = errors, skips
    return stats


class ProgressFeed:
    """A worker's side: its figures to the pipe `fd` every FEED_INTERVAL s, what `sayings` have
    to say to standard error (a pipe the command that started it reads); no line drawn."""

    def __init__(self, stats: CrawlStats, fd: int, sayings: Sayings | None = None) -> None:
        self._stats = stats
        try:
            self._pipe: TextIO = open(fd, "w", encoding="utf-8", closefd=True)  # noqa: SIM115
        except OSError as error:
            raise ConfigError(
                f"--progress-fd {fd}: {error.strerror} (it is for the workers --workers starts)"
            ) from error
        self._sayings = sayings

    async def run(self) -> None:
        try:
            while True:
                self.show()
                await asyncio.sleep(FEED_INTERVAL)
                if self._sayings is not None:
                    for message in self._sayings(time.time()):
                        self.say(message)
        finally:
            self.show()  # the last figures, which the crawl's line keeps

    def show(self) -> None:
        # The reader gone (the command killed) is no reason to stop the crawl.
        with contextlib.suppress(OSError, ValueError):
            self._pipe.write(json.dumps(feed_figures(self._stats)) + "\n")
            self._pipe.flush()

    def say(self, text: str, stream: TextIO | None = None) -> None:
        print(text, file=stream if stream is not None else sys.stderr, flush=True)

    def clear(self) -> None:
        """Nothing on the screen to clear: the command that started the worker draws the line."""


# --- the command that starts them: I/O ------------------------------------------------------------


async def _relay_lines(stream: asyncio.StreamReader, progress: Progress, name: str) -> None:
    """Each line a worker writes to standard error, above the line, after its name."""
    while line := await stream.readline():
        progress.say(f"{name}: {line.decode('utf-8', 'replace').rstrip()}")


async def _relay_summary(stream: asyncio.StreamReader, progress: Progress, name: str) -> None:
    """What a worker writes to standard output (its summary, at its end), in one piece, after
    a line with its name: two workers ending together do not mix their lines."""
    text = (await stream.read()).decode("utf-8", "replace").rstrip()
    if text:
        progress.say(f"{name}:\n{text}", sys.stdout)


async def _read_feed(
    fd: int, figures: list[dict[str, Any]], number: int, stats: CrawlStats
) -> None:
    reader = asyncio.StreamReader()
    loop = asyncio.get_running_loop()
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader),
        open(fd, "rb", closefd=True),  # noqa: SIM115
    )
    try:
        while line := await reader.readline():
            with contextlib.suppress(ValueError):
                figures[number] = json.loads(line)
                combined_stats(figures, stats)
    finally:
        transport.close()


async def _supervise(
    count: int, data_dir: Path, argv: Sequence[str], interval: float, serve: ServeAddress | None
) -> list[int]:
    stats = CrawlStats()
    figures: list[dict[str, Any]] = [{} for _ in range(count)]
    progress = Progress(stats, sys.stderr, interval, label=f"{count} workers")
    processes, relays = [], []
    for number in range(count):
        name = f"w{number + 1}"
        read_end, write_end = os.pipe()
        arguments = worker_arguments(argv, data_dir / name)
        if serve is not None:
            # After the worker's own -s and flags: the last setting of a key wins.
            address = worker_address(serve, number + 1)
            arguments += ["-s", f"monitor.serve={yaml_string(str(address))}"]
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "crawler",
            *arguments,
            "--progress-fd",
            str(write_end),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            pass_fds=(write_end,),
            # A process group of its own: Ctrl-C on the terminal reaches this process alone,
            # which passes it on once (a worker given two would stop at once, without grace).
            preexec_fn=os.setpgrp,
        )
        os.close(write_end)
        assert process.stdout is not None and process.stderr is not None
        processes.append(process)
        relays += [
            asyncio.create_task(_relay_lines(process.stderr, progress, name)),
            asyncio.create_task(_relay_summary(process.stdout, progress, name)),
            asyncio.create_task(_read_feed(read_end, figures, number, stats)),
        ]
    ports = ""
    if serve is not None:
        ports = (
            f"; each serves its live status on port {serve.port}, {serve.port + 1}, ..."
            if serve.port
            else "; each serves its live status on a free port (crawl status --state URL: which)"
        )
    progress.say(
        f"crawl: {count} workers started, writing {data_dir}/w1 ... {data_dir}/w{count}{ports}"
    )

    def forward(number: int) -> None:
        for process in processes:
            if process.returncode is None:
                process.send_signal(number)

    loop = asyncio.get_running_loop()
    for number in FORWARDED:
        loop.add_signal_handler(number, forward, number)
    ticker = asyncio.create_task(progress.run())
    try:
        await asyncio.gather(*relays)
        return [await process.wait() for process in processes]
    finally:
        ticker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ticker
        progress.clear()
        for number in FORWARDED:
            loop.remove_signal_handler(number)


def run_workers(
    count: int,
    data_dir: Path,
    argv: Sequence[str],
    interval: float = 10.0,
    serve: ServeAddress | None = None,
) -> int:
    """Start `count` workers, draw one progress line for them all, and wait for them; a signal
    to this process goes to each. The exit status is the first failing worker's, else 0.
    `interval`: output.progress_interval, for a standard error that is no terminal. With
    `serve` (--serve), worker K serves its live status on PORT+K-1 (crawler.monitor.workers)."""
    if serve is not None and serve.port and serve.port + count - 1 > 65_535:
        raise ConfigError(
            f"--serve {serve} with --workers {count}: the workers serve on ports {serve.port} to "
            f"{serve.port + count - 1}, past 65535; give a lower port"
        )
    statuses = run(_supervise(count, data_dir, argv, interval, serve))
    summary = workers_summary([data_dir / f"w{number}" for number in range(1, count + 1)])
    if summary:
        print(fit_for(sys.stdout, summary), flush=True)
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
