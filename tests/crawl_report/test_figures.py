"""The report's figures and page from given documents and rows: no files, no servers."""

from __future__ import annotations

import re
from typing import Any

import pytest

from crawler.crawl_report.figures import (
    GAP_CHARTS,
    POINTS_PER_HOST,
    TOP_HOSTS,
    host_gaps,
    report_figures,
    sample_evenly,
    time_series,
)
from crawler.crawl_report.page import report_html

A, B = "http://a.test", "http://b.test"


def document(hosts: list[dict[str, Any]], **parts: Any) -> dict[str, Any]:
    """A summary.json document as `crawl` writes it, with what a test needs."""
    return {
        "format": 1,
        "outcome": "finished",
        "data_dir": "/crawls/news",
        "crawl": {"started_at": "2026-11-27T10:00:00.000+00:00", "elapsed_s": 90.0, "runs": 1},
        "run": {"ended_at": "2026-11-27T10:01:30.000+00:00"},
        "figures": {"pages": 12, "requests": 15, "pages_per_second": 0.13, "skipped": 3},
        "statuses": {"200": 11, "404": 1},
        "errors": {},
        "skips": {"disallowed by robots.txt": 2, "out of scope: host": 1},
        "changes": {"new": 12},
        "hosts": hosts,
        **parts,
    }


def host(origin: str, requests: int, **fields: Any) -> dict[str, Any]:
    return {
        "origin": origin,
        "requests": requests,
        "interval_s": 1.0,
        "interval_reason": "min_delay",
        "least_interval_s": 1.0,
        "crawl_delay_s": None,
        "answer_time_s": 0.01,
        "refusals": 0,
        "backed_off_s": 0.0,
        "robots": "status 200",
        **fields,
    }


def test_a_hosts_gaps_are_between_its_starts_and_those_under_the_interval_are_counted() -> None:
    starts = [
        (100.0, 1.0, 1.0),
        (101.0, 1.0, 3.0),
        (103.0, 2.0, 2.0),
        (104.5, 1.0, 1.0),
        (105.2, 1.0, 1.0),
    ]
    gaps = host_gaps(A, starts, began=100.0)
    assert gaps.starts == 5
    assert gaps.shortest == pytest.approx(0.7)
    assert gaps.median == pytest.approx((1.5 + 1.0) / 2)
    assert gaps.median_pace == 1.0
    # 104.5 came 1.5 s after a start that allowed 2 s, and 105.2 0.7 s after one that allowed
    # 1 s; 103.0 came 2 s after a start whose pace was 3 s, but which allowed 1 s: not under.
    assert gaps.under == 2
    assert [tuple(round(v, 3) for v in point) for point in gaps.points] == [
        (1.0, 1.0, 1.0, 1.0),
        (3.0, 2.0, 1.0, 3.0),
        (4.5, 1.5, 2.0, 2.0),
        (5.2, 0.7, 1.0, 1.0),
    ]


def test_a_gap_a_hair_short_of_its_interval_is_kept_not_under() -> None:
    gaps = host_gaps(A, [(0.0, 1.0, 1.0), (0.9995, 1.0, 1.0)], began=0.0)
    assert gaps.under == 0
    assert host_gaps(A, [(0.0, 1.0, 1.0)], began=0.0).shortest is None


def test_a_busy_hosts_points_are_sampled_and_its_shortest_gap_is_among_them() -> None:
    starts = [(float(i), 0.5, 0.5) for i in range(5000)]
    starts[3001] = (3000.2, 0.5, 0.5)  # 0.2 s after the one before: the shortest
    gaps = host_gaps(A, starts, began=0.0)
    assert len(gaps.points) <= POINTS_PER_HOST + 1
    assert min(point[1] for point in gaps.points) == pytest.approx(0.2)
    assert gaps.under == 1 and gaps.starts == 5000


@pytest.mark.parametrize(("count", "most"), [(0, 5), (3, 5), (10, 5), (1000, 7)])
def test_even_samples_keep_the_ends_and_stay_under_the_bound(count: int, most: int) -> None:
    chosen = sample_evenly(count, most)
    assert len(chosen) == min(count, most)
    if count:
        assert chosen[0] == 0 and chosen[-1] == count - 1
        assert chosen == sorted(set(chosen))


def test_times_are_counted_in_bins_from_the_first_to_the_last() -> None:
    series = time_series([10.0, 10.5, 11.0, 19.0, 20.0], bins=10)
    assert series is not None and series.began == 10.0
    assert series.counts == (2, 1, 0, 0, 0, 0, 0, 0, 0, 2)  # [10, 11), [11, 12), ... [19, 20]
    assert series.cumulative[-1] == 5 and series.edges[-1] == pytest.approx(10.0)
    assert time_series([]) is None
    assert time_series([5.0, 5.0]) is not None


def test_the_figures_join_the_summarys_hosts_to_their_gaps_busiest_first() -> None:
    starts = {
        A: [(0.0, 1.0, 1.0), (1.0, 1.0, 1.0)],
        B: [(0.5, 2.0, 2.0), (2.5, 2.0, 2.0), (4.6, 2.0, 2.0)],
    }
    figures = report_figures(
        document([host(A, 2), host(B, 3), host("http://c.test", 1)]),
        starts.items(),
        [0.2, 1.2, 2.7],
    )
    assert [row.origin for row in figures.hosts] == [B, A, "http://c.test"]
    assert figures.hosts[0].gaps is not None and figures.hosts[0].gaps.shortest == 2.0
    assert figures.hosts[2].gaps is None
    assert figures.totals == {"hosts": 3, "gaps": 3, "under": 0}
    assert [row.origin for row in figures.busiest] == [B, A]
    assert figures.pages is not None and sum(figures.pages.counts) == 3
    assert figures.requests is not None and sum(figures.requests.counts) == 5
    assert report_figures(document([]), None, []).gaps_known is False


def test_the_page_shows_the_crawls_figures_and_fetches_nothing_from_elsewhere() -> None:
    starts = {A: [(0.0, 1.0, 1.0), (1.0, 1.0, 1.0), (2.5, 1.0, 1.0)]}
    figures = report_figures(document([host(A, 3)]), starts.items(), [0.1, 1.1])
    page = report_html(figures, source="summary.json", made_at="now")
    assert re.search(r"\b(src|href)\s*=|@import|url\(", page) is None
    assert page.count('data-chart="gaps"') == 1
    assert 'data-figure="gaps-under">0 of 2 gaps' in page
    assert '<g data-label="200" data-count="11">' in page
    assert '<g data-label="disallowed by robots.txt" data-count="2">' in page
    assert "A first crawl: every page is new" in page


@pytest.mark.parametrize(
    ("outcome", "running", "said"),
    [
        ("finished", False, "finished: nothing left to fetch"),
        ("running", True, "running now"),
        ("running", False, "ended without a last word (killed?)"),
    ],
)
def test_the_header_says_how_the_crawl_ended(outcome: str, running: bool, said: str) -> None:
    figures = report_figures({**document([]), "outcome": outcome}, None, [])
    page = report_html(figures, source="s", made_at="now", running=running)
    assert f'<span data-figure="outcome">{said}' in page


def test_a_recrawls_changes_are_shown_by_kind() -> None:
    changes = {"unchanged": 40, "changed": 3, "gone": 1, "new": 2}
    page = report_html(
        report_figures(document([], changes=changes), None, []), source="s", made_at="now"
    )
    assert "Each URL the last recrawl pass asked for again" in page
    for kind, count in changes.items():
        assert f'<g data-label="{kind}" data-count="{count}">' in page
    assert "keeps no request starts" in page


def test_a_hostile_host_name_is_text_not_markup() -> None:
    evil = 'http://x.test/"><script>alert(1)</script>'
    page = report_html(
        report_figures(document([host(evil, 2)]), [(evil, [(0.0, 1.0, 1.0), (1.0, 1.0, 1.0)])], []),
        source="s",
        made_at="now",
    )
    assert "<script>alert(1)" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_thousands_of_hosts_make_a_bounded_page() -> None:
    count = 5000
    hosts = [host(f"http://h{i}.test", 100 + i % 50, refusals=i % 7) for i in range(count)]
    starts = [
        (f"http://h{i}.test", [(i * 0.01 + 2.0 * n, 2.0, 2.0) for n in range(100 + i % 50)])
        for i in range(count)
    ]
    figures = report_figures(document(hosts), starts, [float(n) for n in range(20000)])
    page = report_html(figures, source="s", made_at="now")
    assert len(page.encode()) < 2_000_000
    assert page.count('data-chart="gaps"') == GAP_CHARTS
    hosts_table = page.split('data-table="hosts"')[1].split("</table>")[0]
    assert hosts_table.count("<tr>") == TOP_HOSTS + 1  # the heading's row too
    assert f"The first {TOP_HOSTS} of 5,000." in page
    assert f'data-figure="gaps-under">0 of {sum(100 + i % 50 - 1 for i in range(count)):,}' in page
