"""What the `crawl` command shows: a live progress line, periodic log lines, the final summary, and
what it runs on (`--version`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from crawler._version import __version__
from crawler.config import FetchConfig, LimitsConfig
from crawler.http.fetcher import Fetcher
from crawler.page.compiled import WALK
from crawler.runtime import event_loop_name
from crawler.state import CrawlState
from crawler.stats import CrawlStats, DeferredHost, HostReport

__all__ = ["Progress", "engine", "resume_advice", "resume_note", "summary", "version_text"]

HOSTS_SHOWN = 20


class Progress:
    """On a terminal, one line redrawn in place; elsewhere, a plain line every `interval` s."""

    def __init__(self, stats: CrawlStats, stream: TextIO, interval: float) -> None:
        self._stats = stats
        self._stream = stream
        self._tty = stream.isatty()
        self._interval = 0.5 if self._tty else interval
        self._width = 0

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            self.show()

    def show(self) -> None:
        line = self._stats.progress_line()
        if self._tty:
            self._stream.write("\r" + line.ljust(self._width))
            self._width = len(line)
        else:
            stamp = time.strftime("%H:%M:%S")
            self._stream.write(f"{stamp} crawl: {line}\n")
        self._stream.flush()

    def clear(self) -> None:
        if self._tty and self._width:
            self._stream.write("\r" + " " * self._width + "\r")
            self._stream.flush()


def _when(epoch: float, now: float) -> str:
    try:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))
    except (OverflowError, OSError, ValueError):
        return f"{epoch - now:.3g} s from now"
    wait = epoch - now
    span = f"{wait / 3600:.1f} h" if wait >= 3600 else f"{wait / 60:.1f} min"
    return f"{stamp} (in {span})" if wait >= 60 else f"{stamp} (in {wait:.0f} s)"


def _host_lines(lines: Sequence[str]) -> list[str]:
    """One indented line per host, the first HOSTS_SHOWN, and how many more."""
    shown = [f"  {line}" for line in lines[:HOSTS_SHOWN]]
    if len(lines) > HOSTS_SHOWN:
        shown.append(f"  ... and {len(lines) - HOSTS_SHOWN} more hosts")
    return shown


def _counts(counter: Mapping[Any, int]) -> str:
    items = sorted(counter.items(), key=lambda item: (-item[1], str(item[0])))
    return ", ".join(f"{key} {count}" for key, count in items) or "none"


def summary(
    stats: CrawlStats,
    hosts: Sequence[HostReport],
    deferred: Sequence[DeferredHost],
    *,
    max_wait: float,
    outputs: Sequence[Path] = (),
    problems: int = 0,
    ran_on: str | None = None,
    seed_moves: Sequence[tuple[str, str]] = (),
    given_up: Mapping[str, str] | None = None,
    traps: Mapping[str, Mapping[str, int]] | None = None,
) -> str:
    """The end-of-crawl report, as text. `ran_on`: the `engine` line. `seed_moves`: (seed, where
    its redirects led), hosts that joined the scope."""
    now = stats.updated_at or stats.started_at + stats.elapsed
    runs = f" ({stats.runs} runs)" if stats.runs > 1 else ""
    lines = [
        f"crawl {stats.outcome} after {stats.elapsed:.1f} s{runs}: {stats.pages} pages "
        f"({stats.pages_per_second:.1f}/s), {stats.requests} requests, "
        f"{stats.robots_fetches} robots.txt fetches, {stats.bytes / 1e6:.1f} MB, "
        f"{stats.retries} retries",
        f"statuses: {_counts(stats.statuses)}",
        f"errors: {_counts(stats.errors)}",
        f"skips: {_counts(stats.skips)}",
        # Each URL met once, whatever became of it (crawler.stats.CrawlStats.met).
        f"URLs: {stats.met} met: {stats.fetched} fetched, {sum(stats.skips.values())} skipped, "
        f"{stats.queued} queued",
    ]
    if stats.page_rules:
        rules = stats.page_rules
        lines.append(
            f"pages read: {rules['indexed']} indexed, {rules['noindex']} noindex, "
            f"{rules['nofollow']} nofollow, {rules['with sections']} with exclusion sections, "
            f"{rules['links not followed']} links not followed"
            + (
                f", {rules['cut short']} cut short (crawler.page.bounds)"
                if rules["cut short"]
                else ""
            )
        )
    if problems:
        lines.append(f"seed lines skipped: {problems}")
    if seed_moves:
        # The last hop of each seed's chain is where it went.
        where = {seed: target for seed, target in seed_moves}
        lines.append("seeds that redirect to another host (the host joins the scope):")
        lines.extend(f"  {seed} -> {target}" for seed, target in where.items())
    if hosts:
        lines.append("politeness per host (our request starts; gap = shortest between two):")
        for host in hosts[:HOSTS_SHOWN]:
            delay = "none" if host.crawl_delay is None else f"{host.crawl_delay:g} s"
            if host.crawl_delay_capped:
                delay += " (capped)"
            gap = "-" if host.shortest_gap is None else f"{host.shortest_gap:.3f} s"
            lines.append(
                f"  {host.origin}  requests {host.requests}  interval {host.interval:g} s  "
                f"gap {gap}  Crawl-delay {delay}  robots.txt {host.robots}"
            )
        if len(hosts) > HOSTS_SHOWN:
            lines.append(f"  ... and {len(hosts) - HOSTS_SHOWN} more hosts")
        ratios = [
            host.shortest_gap / host.interval
            for host in hosts
            if host.shortest_gap is not None and host.interval > 0
        ]
        if ratios:
            lines.append(
                f"  shortest gap / interval over all {len(hosts)} hosts: {min(ratios):.3f}"
            )
    if deferred:
        pending = sum(host.pending for host in deferred)
        lines.append(
            f"deferred: {len(deferred)} hosts with {pending} URLs wait longer than "
            f"politeness.max_wait ({max_wait:g} s); they stay queued:"
        )
        lines.extend(
            f"  {waiting.origin}  until {_when(waiting.until, now)}  {waiting.pending} URLs  "
            f"{waiting.reason}"
            for waiting in deferred[:HOSTS_SHOWN]
        )
        if len(deferred) > HOSTS_SHOWN:
            lines.append(f"  ... and {len(deferred) - HOSTS_SHOWN} more hosts")
    if given_up:
        lines.append(
            f"given up: {len(given_up)} hosts whose robots.txt could not be had (their URLs are "
            "skips, 'host given up'):"
        )
        lines.extend(_host_lines([f"{origin}  {why}" for origin, why in given_up.items()]))
    if traps:
        lines.append(
            f"possible traps on {len(traps)} hosts (URLs skipped by their shape, page budgets "
            "spent):"
        )
        shown = sorted(traps.items(), key=lambda item: -sum(item[1].values()))
        lines.extend(_host_lines([f"{origin}  {_counts(counts)}" for origin, counts in shown]))
    if stats.queued and not deferred:
        lines.append(f"left queued: {stats.queued} URLs")
    if ran_on is not None:
        lines.append(f"ran on: {ran_on}")
    if outputs:
        lines.append("output: " + ", ".join(str(path) for path in outputs))
    return "\n".join(lines)


def engine(client: str) -> str:
    """What a crawl runs on: the page walk (the compiled one is about twice as fast), the HTTP
    client, the event loop."""
    return f"page walk {WALK}, HTTP client {client}, event loop {event_loop_name()}"


_PACKAGES = ("selectolax", "httptools", "aiohttp", "uvloop")


def version_text() -> str:
    """`crawl --version`: the crawler's version, what a crawl with the default configuration runs
    on, and the versions of the packages that decide it."""
    # Imported here: importlib.metadata costs a crawl's start-up more than the rest of this module.
    import importlib.metadata
    import platform

    installed = []
    for package in _PACKAGES:
        try:
            installed.append(f"{package} {importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            installed.append(f"{package} not installed")
    client = Fetcher(FetchConfig(), "").client_name
    return "\n".join(
        [
            f"crawl {__version__}",
            f"runs on: {engine(client)}",
            f"Python {platform.python_version()}; " + ", ".join(installed),
        ]
    )


def resume_advice(
    limits: LimitsConfig, stats: CrawlStats, deferred: Sequence[DeferredHost], state: CrawlState
) -> list[str]:
    """What running the same command again would do, and how to go on when it would not."""
    lines = []
    if stats.outcome == "page limit":
        lines.append(
            f"limits.max_pages ({limits.max_pages}) is reached, counting the runs before; "
            f"{stats.queued} URLs stay queued. To go on, run again with it raised "
            "(-s limits.max_pages=N), or start over with --fresh"
        )
    elif stats.queued or deferred:
        lines.append("the same command goes on from here (--fresh starts over)")
    held = len(state.held)
    if held:
        lines.append(
            f"{held} URLs found past limits.max_depth ({limits.max_depth}) are kept: run again "
            "with it raised (-s limits.max_depth=N) to crawl them"
        )
    return lines


def resume_note(
    directory: Path, state: CrawlState, seeds: Sequence[str], limits: LimitsConfig
) -> str | None:
    """What a crawl finds in a data directory an earlier run left: None for a new crawl."""
    run = state.run
    if not run.runs():
        return None
    saved = run.stats()
    pages = saved.pages if saved is not None else 0
    before = f"{pages} pages fetched in {run.runs()} runs before"
    pending = len(state.frontier)
    released = len(state.held.within(limits.max_depth))
    if pending or released:
        hosts = sum(1 for _ in state.frontier.origins())
        ended = "ended cleanly" if run.clean() else "did not end cleanly (killed?)"
        where = f"{pending} URLs pending on {hosts} hosts, " if pending else ""
        note = f"resuming the crawl in {directory}: {where}{before}; the last run {ended}"
    else:
        note = (
            f"the crawl in {directory} has nothing pending ({before}): only seeds it has not "
            "seen are crawled (--fresh starts over)"
        )
    known = set(run.seeds())
    new = sum(1 for url in seeds if url not in known)
    if new:
        note += f"; {new} of the seeds are new"
    limit = limits.max_pages
    if pending and limit is not None and pages >= limit:
        note += (
            f"\n  limits.max_pages ({limit}) is reached already: nothing more is fetched. Raise "
            "it (-s limits.max_pages=N) to go on, or start over with --fresh"
        )
    if released:
        depth = "null" if limits.max_depth is None else limits.max_depth
        note += (
            f"\n  {released} URLs held past limits.max_depth before are within "
            f"limits.max_depth ({depth}) now: they are queued"
        )
    deferred = run.deferred()
    if deferred:
        first = min(deferred, key=lambda host: host.until)
        note += (
            f"\n  the last run left {len(deferred)} hosts deferred; the first, {first.origin}, "
            f"until {_when(first.until, time.time())} ({first.reason})"
        )
    return note
