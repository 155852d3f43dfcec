"""The revisit interval of every page a recrawl pass considers (recrawl.schedule adaptive): each
page's change rate estimated from its history (or its sitemap's changefreq, or recrawl.after),
each host's schedule solved for its budget (crawler.freshness)."""

from __future__ import annotations

import math
from collections import defaultdict

from crawler.config import RecrawlConfig
from crawler.freshness import (
    DAY,
    ChangeHistory,
    RevisitBounds,
    estimate_rate,
    host_schedule,
    prior_rate,
    weight_of,
)
from crawler.state.freshness import PageHistory
from crawler.state.interface import CrawlState
from crawler.urls import origin_of

__all__ = ["revisit_bounds", "revisit_intervals"]


def revisit_bounds(config: RecrawlConfig) -> RevisitBounds:
    """The bounds of the adaptive schedule: recrawl.after widens them where it falls outside."""
    after = config.after
    return RevisitBounds(min(config.min_interval, after), max(config.max_interval, after), after)


def revisit_intervals(config: RecrawlConfig, state: CrawlState) -> dict[str, float]:
    """Seconds between revisits of each page fetched before (sitemaps are not among them: they
    are due after recrawl.after). A page with no history and no changefreq waits
    recrawl.after."""
    known = {page.url: page for page in state.freshness.histories()}
    blank = PageHistory("", ChangeHistory())
    by_origin: defaultdict[str, list[tuple[str, float, float, bool]]] = defaultdict(list)
    after = config.after
    for item in state.fetches.latest():
        if item.sitemap:
            continue
        page = known.get(item.url, blank)
        prior = prior_rate(page.changefreq, after)
        rate = estimate_rate(page.changes, prior)
        learned = page.changes.visits > 0 or page.changefreq is not None
        by_origin[origin_of(item.url)].append((item.url, rate, weight_of(page.priority), learned))
    bounds = revisit_bounds(config)
    intervals: dict[str, float] = {}
    for pages in by_origin.values():
        budget = config.budget_per_host_per_day
        if budget <= 0:
            budget = len(pages) * DAY / after if after > 0 else math.inf
        # The pages nothing is known of wait recrawl.after: what they spend is not the rest's.
        unknown = sum(1 for *_, learned in pages if not learned)
        if after > 0:
            budget = max(0.0, budget - unknown * DAY / after)
        schedule = host_schedule(
            ((rate, weight) for _, rate, weight, learned in pages if learned), budget, bounds
        )
        for url, rate, weight, learned in pages:
            intervals[url] = schedule.interval(rate, weight) if learned else after
    return intervals
