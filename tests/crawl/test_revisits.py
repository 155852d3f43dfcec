"""Each page's revisit interval as a recrawl pass reads it from the state: history, sitemap word
and budget in, seconds out (crawler.crawl.revisits). No server: a state file of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.config import RecrawlConfig, StateConfig
from crawler.crawl.revisits import revisit_bounds, revisit_intervals
from crawler.freshness import DAY
from crawler.frontier import Earlier, QueuedUrl
from crawler.robots import RobotsOptions
from crawler.state import CrawlState, open_state

A, B = "http://a.test", "http://b.test"
NOW = 1_800_000_000.0


def fetched(state: CrawlState, url: str, sitemap: int = 0) -> None:
    state.fetches.add(QueuedUrl(url, sitemap=sitemap), Earlier(NOW - DAY, 200))


def test_history_changefreq_and_nothing_known(tmp_path: Path) -> None:
    state = open_state(tmp_path, StateConfig(), RobotsOptions())
    for path in ("/often", "/never", "/unknown", "/weekly"):
        fetched(state, A + path)
    fetched(state, A + "/sitemap.xml", sitemap=1)
    for _ in range(10):
        state.freshness.revisited(A + "/often", DAY, True)
        state.freshness.revisited(A + "/never", DAY, False)
    state.freshness.listed(A + "/weekly", "weekly", None)
    config = RecrawlConfig(after=DAY)
    intervals = revisit_intervals(config, state)
    assert A + "/sitemap.xml" not in intervals  # sitemaps wait recrawl.after
    assert intervals[A + "/unknown"] == DAY
    assert intervals[A + "/often"] < intervals[A + "/weekly"] < intervals[A + "/never"]
    bounds = revisit_bounds(config)
    assert all(bounds.shortest <= interval <= bounds.longest for interval in intervals.values())
    # The budget (0: what recrawl.after would spend, 4 a day) is spent, not more.
    spent = sum(DAY / interval for url, interval in intervals.items() if url != A + "/unknown")
    assert spent + 1 == pytest.approx(4, rel=0.02)
    state.close()


def test_each_host_has_its_own_budget(tmp_path: Path) -> None:
    state = open_state(tmp_path, StateConfig(), RobotsOptions())
    for origin in (A, B):
        for index in range(3):
            url = f"{origin}/{index}"
            fetched(state, url)
            state.freshness.revisited(url, DAY, index == 0)
    tight = RecrawlConfig(after=DAY, budget_per_host_per_day=0.5, max_interval=60 * DAY)
    intervals = revisit_intervals(tight, state)
    for origin in (A, B):
        spent = sum(DAY / intervals[f"{origin}/{index}"] for index in range(3))
        assert spent == pytest.approx(0.5, rel=0.02)
    state.close()


def test_recrawl_after_widens_the_bounds() -> None:
    bounds = revisit_bounds(RecrawlConfig(after=0.0, min_interval=3_600.0))
    assert bounds.shortest == 0.0
    bounds = revisit_bounds(RecrawlConfig(after=90 * DAY))
    assert bounds.longest == 90 * DAY
