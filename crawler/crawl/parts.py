"""The parts of one crawl, built on its state in the one order their needs allow, each given its
own slice of the config (`assemble`). What a request goes through, top-down:

    Scheduler --launch--> HostLauncher --+--> RobotsRequests --> Sitemaps.named
      (a due host)                       +--> Answers.page / Sitemaps.task --> Admission.offer
                                         |         (the answer)                 (each link)
                                         +--> Requisites.task --> Admission.offer_requisites

- `Scheduler` (scheduler.py): the launch loop, hosts by their next allowed start, one timer, the
  requests in flight, a graceful stop; `HostCoordination` (coordination.py) says whether a host
  stays this process's and when the crawl is over (the process's own, or a shared crawl's);
- `HostLauncher` (launch.py): a due host's next request, within the page budgets;
- `RobotsRequests` (robots_requests.py): an origin's robots.txt request, and what it makes of
  the host;
- `Answers` (answers.py): a page or sitemap request's answer, from the fetch to the record;
- `Sitemaps` (sitemaps.py): the sitemaps robots.txt names, read and taken;
- `Requisites` (requisites.py): what a page needs to be shown, fetched and archived
  (fetch.page_requisites);
- `Admission` (admission.py): each URL coming in, queued or skipped with its reason;
- `RecrawlPlan` (recrawl.py): which fetched URLs are due again; `FreshKeeper` (keep_fresh.py):
  the launch loop pass after pass, waiting in between (recrawl.keep_fresh);
- `Outlet` (outlet.py): the one place records and skips leave the crawl, and are counted;
- the values they share: `HostTable` (hosts.py), `CrawlClock` (clock.py), `Checkpointer`
  (checkpoint.py), `PageBudget` and `TrapTally` (tallies.py), and the `PageReader`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from crawler.config import Config
from crawler.crawl.admission import Admission
from crawler.crawl.answers import Answers
from crawler.crawl.checkpoint import Checkpointer
from crawler.crawl.clock import CrawlClock
from crawler.crawl.coordination import HostCoordination, LocalHosts
from crawler.crawl.freshness import FreshnessLedger
from crawler.crawl.hosts import HostTable
from crawler.crawl.keep_fresh import FreshKeeper
from crawler.crawl.launch import HostLauncher
from crawler.crawl.outlet import Outlet
from crawler.crawl.page_reader import PageReader
from crawler.crawl.recrawl import RecrawlPlan
from crawler.crawl.requisites import Requisites
from crawler.crawl.robots_requests import RobotsRequests
from crawler.crawl.scheduler import Scheduler
from crawler.crawl.sitemaps import Sitemaps
from crawler.crawl.tallies import PageBudget, TrapTally
from crawler.crawl.user_fields import UserExtract
from crawler.http.fetcher import Fetcher
from crawler.output.sinks import PageSink
from crawler.page.read import PageRules
from crawler.politeness import Politeness, ServerPacing
from crawler.state.interface import CrawlState
from crawler.stats import CrawlStats

__all__ = ["Coordinate", "CrawlParts", "assemble"]

Coordinate = Callable[[HostTable], HostCoordination]
"""Builds the crawl's host coordination on its hosts (crawler.crawl.shared's for a shared
crawl's worker); without one, the process's own (`LocalHosts`)."""


@dataclass(frozen=True, slots=True)
class CrawlParts:
    """The parts of one crawl on one state (see the module doc)."""

    state: CrawlState
    checkpoints: Checkpointer
    outlet: Outlet
    hosts: HostTable
    coordination: HostCoordination
    scheduler: Scheduler
    reader: PageReader
    admission: Admission
    recrawl: RecrawlPlan
    robots: RobotsRequests
    launcher: HostLauncher
    budget: PageBudget
    traps: TrapTally
    keeper: FreshKeeper


def assemble(
    config: Config,
    state: CrawlState,
    *,
    sinks: Sequence[PageSink],
    fetcher: Fetcher,
    politeness: Politeness,
    clock: CrawlClock,
    stats: CrawlStats,
    coordinate: Coordinate | None = None,
    extract: UserExtract | None = None,
) -> CrawlParts:
    """The parts of a crawl on `state`, writing to `sinks`; `extract`: the library's per-page
    callable."""
    token = config.product_token
    polite = config.politeness
    checkpoints = Checkpointer(state, sinks, config.state.commit_interval, fetcher.users.jar)
    freshness = FreshnessLedger(config.recrawl, state.freshness, stats)
    outlet = Outlet(sinks, checkpoints, stats, state.fetches, freshness)
    hosts = HostTable(politeness, state.timings, state.robots, clock, clean=state.run.clean)
    # A crawl kept fresh defers no host: it waits as long as it takes.
    max_wait = math.inf if config.recrawl.keep_fresh else polite.max_wait
    coordination = (
        coordinate(hosts) if coordinate is not None else LocalHosts(state.frontier, max_wait)
    )
    scheduler = Scheduler(
        clock=clock,
        politeness=politeness,
        hosts=hosts,
        frontier=state.frontier,
        timings=state.timings,
        starts=state.starts,
        checkpoints=checkpoints,
        stats=stats,
        coordination=coordination,
        concurrency=config.concurrency,
        stop_grace=config.state.stop_grace,
        slow_after=config.fetch.slow_after,
        max_slow=config.fetch.max_slow_requests,
        servers=(
            ServerPacing(polite.server_min_delay, polite.server_concurrency)
            if polite.per_server
            else None
        ),
        pinned=config.fetch.pinned(),
    )
    fetch = config.fetch
    page_rules = PageRules(
        token,
        config.page.follow_rel_nofollow,
        config.page.main_content,
        requisites=fetch.page_requisites,
        requisite_media=fetch.requisite_media,
        max_requisites=fetch.max_requisites_per_page,
        fields=config.extract,
    )
    reader = PageReader(page_rules, config.page.reader)
    budget, traps = PageBudget(config.limits.max_pages, stats.pages), TrapTally()
    admission = Admission(
        config.scope,
        config.limits,
        config.sitemaps,
        token=token,
        max_redirects=config.fetch.max_redirects,
        state=state,
        hosts=hosts,
        scheduler=scheduler,
        coordination=coordination,
        outlet=outlet,
        clock=clock,
        stats=stats,
        traps=traps,
        seeds_named=fetcher.guard.seeds,
    )
    recrawl = RecrawlPlan(
        config.recrawl,
        state=state,
        admission=admission,
        checkpoints=checkpoints,
        clock=clock,
        stats=stats,
        budget=budget,
        ledger=freshness,
        coordination=coordination,
    )
    answers = Answers(
        config.fetch,
        token=token,
        purpose=config.usage.purpose,
        page_rules=page_rules,
        reader=reader,
        fetcher=fetcher,
        politeness=politeness,
        frontier=state.frontier,
        admission=admission,
        scheduler=scheduler,
        outlet=outlet,
        checkpoints=checkpoints,
        clock=clock,
        stats=stats,
        extract=extract,
    )
    sitemaps = Sitemaps(
        config.sitemaps,
        admission=admission,
        recrawl=recrawl,
        answers=answers,
        outlet=outlet,
        checkpoints=checkpoints,
        turns=scheduler.turns,
        stats=stats,
    )
    requisites = Requisites(
        config.fetch,
        admission=admission,
        answers=answers,
        checkpoints=checkpoints,
        turns=scheduler.turns,
        stats=stats,
    )
    robots = RobotsRequests(
        config.robots,
        polite,
        token=token,
        tdmrep=config.usage.asks_tdmrep(),
        store=state.robots,
        fetcher=fetcher,
        reader=reader,
        politeness=politeness,
        frontier=state.frontier,
        admission=admission,
        sitemaps=sitemaps,
        scheduler=scheduler,
        outlet=outlet,
        checkpoints=checkpoints,
        clock=clock,
        stats=stats,
    )
    launcher = HostLauncher(
        max_pages_per_host=config.limits.max_pages_per_host,
        token=token,
        robots=robots,
        answers=answers,
        sitemaps=sitemaps,
        requisites=requisites,
        recrawl=recrawl,
        admission=admission,
        frontier=state.frontier,
        hosts=hosts,
        scheduler=scheduler,
        checkpoints=checkpoints,
        clock=clock,
        budget=budget,
        traps=traps,
    )
    keeper = FreshKeeper(
        config.recrawl.keep_fresh,
        scheduler=scheduler,
        recrawl=recrawl,
        checkpoints=checkpoints,
        clock=clock,
        stats=stats,
    )
    return CrawlParts(
        state,
        checkpoints,
        outlet,
        hosts,
        coordination,
        scheduler,
        reader,
        admission,
        recrawl,
        robots,
        launcher,
        budget,
        traps,
        keeper,
    )
