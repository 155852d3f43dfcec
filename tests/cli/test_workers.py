"""The one live line of `crawl --workers N`: the workers' figures added up (pure)."""

from __future__ import annotations

import json
from collections import Counter

from crawler.cli.progress import progress_line
from crawler.cli.workers import combined_stats, feed_figures
from crawler.stats import CrawlStats


def test_the_workers_figures_add_up_the_queue_and_the_clock_are_the_crawls() -> None:
    first = CrawlStats(
        elapsed=12.0,
        pages=100,
        queued=500,
        in_flight=3,
        hosts_waiting=7,
        errors=Counter({"timeout": 2}),
        skips=Counter({"disallowed by robots.txt": 5}),
    )
    second = CrawlStats(
        elapsed=11.5,
        pages=20,
        queued=480,
        in_flight=1,
        hosts_waiting=2,
        hosts_throttled=1,
        errors=Counter({"timeout": 1, "dns": 1}),
    )
    # As they come through the pipe.
    figures = [json.loads(json.dumps(feed_figures(stats))) for stats in (first, second)]
    crawl = combined_stats([*figures, {}])  # a third not heard from yet
    assert (crawl.pages, crawl.queued, crawl.elapsed) == (120, 500, 12.0)
    assert (crawl.in_flight, crawl.hosts_waiting, crawl.hosts_throttled) == (4, 9, 1)
    assert crawl.errors == Counter({"timeout": 3, "dns": 1})
    assert crawl.skips == Counter({"disallowed by robots.txt": 5})
    assert progress_line(crawl, label="3 workers") == (
        "3 workers  0:00:12  120 pages (10.0/s)  500 queued  4 errors  5 skipped  4 in flight  "
        "9 hosts waiting  1 throttled"
    )


def test_the_sum_is_written_into_the_stats_the_line_holds() -> None:
    shown = CrawlStats()
    combined_stats([{"pages": 3, "elapsed": 1.0}], shown)
    combined_stats([{"pages": 3, "elapsed": 2.0}, {"pages": 4, "elapsed": 1.0}], shown)
    assert (shown.pages, shown.elapsed) == (7, 2.0)
    assert combined_stats([]).pages == 0
