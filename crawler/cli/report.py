"""What the `crawl` command shows: the final summary, what it runs on (`--version`), and what a next
run would do; the live progress line is crawler.cli.progress's (re-exported here)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from crawler._version import __version__
from crawler.cli.progress import Progress, progress_line
from crawler.cli.resume import when
from crawler.cli.text import counted
from crawler.config import FetchConfig
from crawler.http.fetcher import Fetcher
from crawler.output.warc import ArchiveFigures
from crawler.page.compiled_main import PAGE_STEP as WALK
from crawler.runtime import event_loop_name
from crawler.stats import (
    CARRIED_COUNTERS,
    CARRIED_FIGURES,
    LIVE_FIGURES,
    CrawlStats,
    DeferredHost,
    HostReport,
)

__all__ = [
    "Progress",
    "engine",
    "engine_text",
    "progress_line",
    "run_stats",
    "summary",
    "version_text",
]

HOSTS_SHOWN = 20


def _host_lines(lines: Sequence[str]) -> list[str]:
    """One indented line per host, the first HOSTS_SHOWN, and how many more."""
    shown = [f"  {line}" for line in lines[:HOSTS_SHOWN]]
    if len(lines) > HOSTS_SHOWN:
        shown.append(_more_hosts(len(lines)))
    return shown


def _more_hosts(count: int) -> str:
    return f"  ... and {counted(count - HOSTS_SHOWN, 'more host')}"


def _counts(counter: Mapping[Any, int]) -> str:
    items = sorted(counter.items(), key=lambda item: (-item[1], str(item[0])))
    return ", ".join(f"{key} {count}" for key, count in items) or "none"


_OUTCOMES = {"page limit": "stopped at limits.max_pages", "deferred": "stopped waiting for hosts"}
"""How the summary's first line says an outcome that is not a past participle."""


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
    shared: bool = False,
    archive: ArchiveFigures | None = None,
    run: CrawlStats | None = None,
    recrawl: tuple[float, int] | None = None,
) -> str:
    """The end-of-crawl report, as text. `ran_on`: the `engine` line. `seed_moves`: (seed, where
    its redirects led), hosts that joined the scope. `shared`: the report of one worker of a
    shared crawl (its URLs went to the crawl's queues, some to other workers). `archive`: what
    this run wrote to WARC files. `run`: this run's own figures (`run_stats`), said apart from
    the crawl's when it has had runs before. `recrawl`: when the crawl's recrawl pass began and
    the pages before it (crawler.state's RunStore.recrawl_began)."""
    now = stats.updated_at or stats.started_at + stats.elapsed
    outcome = _OUTCOMES.get(stats.outcome, stats.outcome)
    if run is not None and stats.runs > 1:
        # A resumed crawl or a recrawl: this run's figures, and the crawl's apart.
        opening = [
            f"crawl {outcome} after {run.elapsed:.1f} s (run {stats.runs}): {_totals(run)}",
            f"the crawl in all, {stats.runs} runs since {_date(stats.started_at)}: "
            f"{stats.elapsed:.1f} s, {_totals(stats)}",
        ]
    else:
        runs = f" ({stats.runs} runs)" if stats.runs > 1 else ""
        opening = [f"crawl {outcome} after {stats.elapsed:.1f} s{runs}: {_totals(stats)}"]
    lines = [
        *opening,
        f"statuses: {_counts(stats.statuses)}",
        f"errors: {_counts(stats.errors)}",
        f"skips: {_counts(stats.skips)}",
        # Each URL met once, whatever became of it (crawler.stats.CrawlStats.met).
        f"URLs: {stats.met} met: {stats.fetched} fetched, {sum(stats.skips.values())} skipped, "
        f"{stats.queued} queued"
        if not shared
        else f"URLs: {stats.met} met by this worker, {stats.fetched} fetched by it, "
        f"{sum(stats.skips.values())} skipped by it; {stats.queued} queued in the crawl (the "
        "rest went to other workers: crawl status --state URL)",
    ]
    if recrawl is not None or set(stats.changes) - {"new"}:
        # A recrawl: what each fetch of its pass found against the last one.
        changes = stats.changes
        found = (
            f"{changes['unchanged']} unchanged, {changes['changed']} changed, "
            f"{changes['new']} new, {changes['gone']} gone, {changes['failed']} failed"
        )
        if changes["not due by lastmod"]:
            found += f", {changes['not due by lastmod']} spared by a trusted sitemap lastmod"
        if recrawl is None:
            lines.append(f"recrawl: {found}")
        else:
            began, pages_before = recrawl
            lines.append(
                f"recrawl pass begun {_date(began)}: "
                f"{counted(stats.pages - pages_before, 'page')}: {found}"
            )
        lines.extend(_lastmod_wrong(stats.lastmod_wrong))
    if stats.sitemaps:
        lines.append(
            f"sitemaps: {counted(stats.sitemaps, 'file')} read, "
            f"{counted(stats.sitemap_urls, 'entry', 'entries')} taken"
        )
    if stats.requisites:
        fates = stats.requisites
        skips = f" ({_counts(stats.requisite_skips)})" if stats.requisite_skips else ""
        lines.append(
            f"page requisites: {fates['fetched']} fetched, {fates['skipped']} skipped{skips}, "
            f"{fates['failed']} failed"
        )
    if stats.page_rules:
        rules = stats.page_rules
        lines.append(
            f"pages read: {rules['indexed']} indexed, "
            + (
                f"{rules['usage refused']} refused for the purpose (usage below), "
                if rules["usage refused"]
                else ""
            )
            + f"{rules['noindex']} noindex, "
            f"{rules['nofollow']} nofollow, {rules['with sections']} with exclusion sections, "
            f"{rules['links not followed']} links not followed (rel=nofollow, ugc or sponsored; "
            "nofollow pages and sections)"
            + (
                f", {rules['cut short']} cut short (crawler.page.bounds)"
                if rules["cut short"]
                else ""
            )
        )
    if stats.page_rules["with usage signals"] or stats.tdmrep_fetches:
        lines.append(_usage_line(stats))
    if archive is not None:
        lines.append(
            f"warc: {counted(archive.records, 'record')} ({archive.revisits} revisits) in "
            f"{counted(archive.files, 'file')}, {archive.bytes / 1e6:.1f} MB compressed"
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
            server = f"  server {host.server}" if host.server is not None else ""
            answer = (
                ""
                if host.answer_time is None
                else f"  first byte in {host.answer_time:.3f} s"
                + ("" if host.whole_time is None else f" (whole {host.whole_time:.3f} s)")
            )
            refused = (
                f"  refused {host.refusals} (backed off {host.backed_off:.1f} s)"
                if host.refusals
                else ""
            )
            lines.append(
                f"  {host.origin}  requests {host.requests}  interval {host.interval:.3g} s "
                f"({host.reason})  gap {gap}{answer}{refused}  Crawl-delay {delay}  "
                f"robots.txt {host.robots}{server}"
            )
        if len(hosts) > HOSTS_SHOWN:
            lines.append(_more_hosts(len(hosts)))
        # Against the interval robots.txt and min_delay ask: a host's answers may have asked
        # for more since (a learned rate), which earlier gaps did not owe.
        ratios = [
            host.shortest_gap / least
            for host in hosts
            if host.shortest_gap is not None
            and (least := host.interval if host.least_interval is None else host.least_interval) > 0
        ]
        if ratios:
            over = f"all {len(hosts)} hosts" if len(hosts) > 1 else "1 host"
            lines.append(
                f"  shortest gap / interval robots.txt and min_delay ask, over {over}: "
                f"{min(ratios):.3f}"
            )
    if deferred:
        pending = sum(host.pending for host in deferred)
        wait = "waits" if len(deferred) == 1 else "wait"
        lines.append(
            f"deferred: {counted(len(deferred), 'host')} with {counted(pending, 'URL')} {wait} "
            f"longer than politeness.max_wait ({max_wait:g} s); they stay queued:"
        )
        lines.extend(
            f"  {waiting.origin}  until {when(waiting.until, now)}  "
            f"{counted(waiting.pending, 'URL')}  {waiting.reason}"
            for waiting in deferred[:HOSTS_SHOWN]
        )
        if len(deferred) > HOSTS_SHOWN:
            lines.append(_more_hosts(len(deferred)))
    if given_up:
        lines.append(
            f"given up: {counted(len(given_up), 'host')} whose robots.txt could not be had (their "
            "URLs are skips, 'host given up'):"
        )
        lines.extend(_host_lines([f"{origin}  {why}" for origin, why in given_up.items()]))
    if traps:
        lines.append(
            f"possible traps on {counted(len(traps), 'host')} (URLs skipped by their shape, page "
            "budgets spent):"
        )
        shown = sorted(traps.items(), key=lambda item: -sum(item[1].values()))
        lines.extend(_host_lines([f"{origin}  {_counts(counts)}" for origin, counts in shown]))
    if stats.queued and not deferred:
        lines.append(f"left queued: {counted(stats.queued, 'URL')}")
    if ran_on is not None:
        lines.append(f"ran on: {ran_on}")
    if outputs:
        lines.append("output: " + ", ".join(str(path) for path in outputs))
    return "\n".join(lines)


def _lastmod_wrong(wrong: Mapping[str, int]) -> list[str]:
    """A line per host whose sitemap lastmod proved wrong in the pass (crawler.freshness)."""
    return [
        f"lastmod proved wrong: {origin}: {counted(count, 'page')} changed though its sitemap's "
        "lastmod said not; it spares no request until it proves right again"
        for origin, count in sorted(wrong.items())
        if count > 0
    ]


def _totals(stats: CrawlStats) -> str:
    """Pages and rate, requests, robots.txt fetches, bytes, retries."""
    return (
        f"{counted(stats.pages, 'page')} ({stats.pages_per_second:.1f}/s), "
        f"{counted(stats.requests, 'request')}, "
        f"{counted(stats.robots_fetches, 'robots.txt fetch', 'robots.txt fetches')}, "
        + (f"{stats.tdmrep_fetches} tdmrep.json, " if stats.tdmrep_fetches else "")
        + f"{stats.bytes / 1e6:.1f} MB, {counted(stats.retries, 'retry', 'retries')}"
        + (f", {stats.throttled} throttled (429/503, asked again)" if stats.throttled else "")
    )


def _date(epoch: float) -> str:
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))
    except (OverflowError, OSError, ValueError):
        return "an unknown time"


def run_stats(stats: CrawlStats, earlier: CrawlStats) -> CrawlStats:
    """This run's own figures: the crawl's (`stats`) less those of the runs before (`earlier`,
    as this run found them); the live ones as they are."""
    run = CrawlStats()
    for name in CARRIED_FIGURES:
        setattr(run, name, getattr(stats, name) - getattr(earlier, name))
    for name in CARRIED_COUNTERS:
        setattr(run, name, getattr(stats, name) - getattr(earlier, name))
    for name in LIVE_FIGURES:
        setattr(run, name, getattr(stats, name))
    run.started_at = stats.started_at + earlier.elapsed
    return run


def engine(client: str, *, reader: bool = False) -> str:
    """What a crawl runs on: the page walk (the compiled one is about twice as fast), and with
    `reader`, in the page reader's process (page.reader); the HTTP client; the event loop."""
    return engine_text(walk_text(WALK, reader=reader), client, event_loop_name())


def walk_text(walk: str, *, reader: bool) -> str:
    """The page walk, and with `reader`, that it ran in the page reader's process."""
    return f"{walk}, in a process of its own" if reader else walk


def engine_text(walk: str, client: str, loop: str) -> str:
    return f"page walk {walk}, HTTP client {client}, event loop {loop}"


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


def _usage_line(stats: CrawlStats) -> str:
    """What the owners' usage signals did to this crawl's purpose."""
    rules = stats.page_rules
    refused = stats.usage_refused
    kinds = ", ".join(f"{kind} {count}" for kind, count in refused.most_common())
    return (
        f"usage (purpose {stats.purpose}): {counted(rules['with usage signals'], 'page')} with "
        f"signals, {rules['usage refused']} refused"
        + (f" ({kinds})" if kinds else "")
        + (f"; {stats.tdmrep_fetches} tdmrep.json requests" if stats.tdmrep_fetches else "")
    )
