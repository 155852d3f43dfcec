"""What running the crawl again would do: the note a run says as it opens a data directory an
earlier run left (`resume_note`), the advice a run ends with (`resume_advice`), and how the last
run ended (`how_it_ended`, which `crawl status` says too)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from crawler.cli.report import when_text
from crawler.cli.text import counted
from crawler.config import LimitsConfig, RecrawlConfig
from crawler.state import CrawlState
from crawler.stats import CrawlStats, DeferredHost

__all__ = ["how_it_ended", "last_ended", "resume_advice", "resume_note"]


def how_it_ended(ended: Mapping[str, Any] | None, *, clean: bool) -> str:
    """'ended cleanly', or why not ('was stopped by SIGINT'): `ended` is summary.json's
    `run.ended` ({clean, reason}), None when there is none for the run; then `clean`, the
    state's word, decides."""
    if isinstance(ended, Mapping) and isinstance(ended.get("clean"), bool):
        if ended["clean"]:
            return "ended cleanly"
        reason = ended.get("reason")
        if reason == "disk full":
            return "stopped because the disk was full"
        return f"was stopped by {reason}" if reason else "did not end cleanly"
    return "ended cleanly" if clean else "did not end cleanly (killed?)"


def last_ended(document: Mapping[str, Any], runs: int) -> Mapping[str, Any] | None:
    """`run.ended` of a summary.json `document`, if it is of run number `runs` (a killed run
    leaves the summary of the run before, or its own without an end)."""
    run = document.get("run")
    if not isinstance(run, Mapping) or run.get("number") != runs:
        return None
    ended = run.get("ended")
    return ended if isinstance(ended, Mapping) else None


def resume_advice(
    limits: LimitsConfig, stats: CrawlStats, deferred: Sequence[DeferredHost], state: CrawlState
) -> list[str]:
    """What running the same command again would do, and how to go on when it would not."""
    lines = []
    if stats.outcome == "page limit":
        stay = "stays" if stats.queued == 1 else "stay"
        lines.append(
            f"limits.max_pages ({limits.max_pages}) is reached, counting the runs before; "
            f"{counted(stats.queued, 'URL')} {stay} queued. To go on, run again with it raised "
            "(-s limits.max_pages=N), or start over with --fresh"
        )
    elif stats.queued or deferred:
        lines.append("the same command goes on from here (--fresh starts over)")
    held = len(state.held.within(None))
    if held:
        kept, them = ("is", "it") if held == 1 else ("are", "them")
        lines.append(
            f"{counted(held, 'URL')} found past limits.max_depth ({limits.max_depth}) {kept} kept: "
            f"run again with it raised (-s limits.max_depth=N) to crawl {them}"
        )
    return lines


def resume_note(
    directory: Path,
    state: CrawlState,
    seeds: Sequence[str],
    limits: LimitsConfig,
    recrawl: RecrawlConfig | None = None,
    last_ended: Mapping[str, Any] | None = None,
) -> str | None:
    """What a crawl finds in a data directory an earlier run left: None for a new crawl.
    `last_ended`: how the last run ended, as its summary.json says (`run.ended`), when that is
    the last run's (the state alone knows only whether it ended cleanly)."""
    run = state.run
    if not run.runs():
        return None
    saved = run.stats()
    pages = saved.pages if saved is not None else 0
    before = f"{counted(pages, 'page')} fetched in {counted(run.runs(), 'run')} before"
    pending = len(state.frontier)
    released = len(state.held.within(limits.max_depth))
    if pending or released:
        hosts = sum(1 for _ in state.frontier.origins())
        ended = how_it_ended(last_ended, clean=run.clean())
        where = (
            f"{counted(pending, 'URL')} pending on {counted(hosts, 'host')}, " if pending else ""
        )
        note = f"resuming the crawl in {directory}: {where}{before}; the last run {ended}"
    elif recrawl is not None and recrawl.enabled:
        due = (
            f"URLs fetched longer ago than recrawl.after ({recrawl.after:g} s)"
            if recrawl.schedule == "uniform"
            else f"sitemaps fetched longer ago than recrawl.after ({recrawl.after:g} s) and pages "
            "due by their revisit schedule (recrawl.schedule adaptive)"
        )
        doing = (
            "keeping the crawl in {} fresh" if recrawl.keep_fresh else "recrawling the crawl in {}"
        )
        when = ", as they come due, without end" if recrawl.keep_fresh else ""
        note = (
            f"{doing.format(directory)} ({before}): {due} are asked for again, conditionally{when}"
        )
    else:
        note = (
            f"the crawl in {directory} has nothing pending ({before}): only seeds it has not "
            "seen are crawled (--recrawl goes over it again, --fresh starts over)"
        )
    known = set(run.seeds())
    new = sum(1 for url in seeds if url not in known)
    if new:
        note += f"; {new} of the seeds {'is' if new == 1 else 'are'} new"
    limit = limits.max_pages
    if pending and limit is not None and pages >= limit:
        note += (
            f"\n  limits.max_pages ({limit}) is reached already: nothing more is fetched. Raise "
            "it (-s limits.max_pages=N) to go on, or start over with --fresh"
        )
    if released:
        depth = "null" if limits.max_depth is None else limits.max_depth
        are, they = ("is", "it is") if released == 1 else ("are", "they are")
        note += (
            f"\n  {counted(released, 'URL')} held past limits.max_depth before {are} within "
            f"limits.max_depth ({depth}) now: {they} queued"
        )
    deferred = run.deferred()
    if deferred:
        first = min(deferred, key=lambda host: host.until)
        which = f"the first, {first.origin}," if len(deferred) > 1 else f"{first.origin},"
        note += (
            f"\n  the last run left {counted(len(deferred), 'host')} deferred; {which} until "
            f"{when_text(first.until, time.time())} ({first.reason})"
        )
    return note
