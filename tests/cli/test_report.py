"""crawler.cli.report.summary and crawler.stats: the end-of-crawl text says how the crawl ended,
what
it skipped and why, how each host was paced, and which hosts still wait, until when and why."""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import time
from collections import Counter
from pathlib import Path

import pytest

from crawler.cli.report import (
    HOSTS_SHOWN,
    Progress,
    engine,
    progress_line,
    run_stats,
    summary,
)
from crawler.cli.resuming import how_it_ended, last_ended, resume_advice, resume_note
from crawler.cli.summary_document import robots_dated
from crawler.config import LimitsConfig
from crawler.frontier import QueuedUrl
from crawler.output.sinks import output_files
from crawler.page import compiled
from crawler.robots.entry import RobotsEntry
from crawler.robots.txt import RobotsTxt
from crawler.runtime import event_loop_name
from crawler.state import MemoryCrawlState
from crawler.stats import CrawlStats, DeferredHost, HostReport
from crawler.urls import origin_of

# 2024-01-01 00:00:00 UTC.
STARTED = 1_704_067_200.0
ENDED = STARTED + 10.0


def stats(**figures: object) -> CrawlStats:
    values: dict[str, object] = {"started_at": STARTED, "elapsed": 10.0, "outcome": "finished"}
    values.update(figures)
    return CrawlStats(**values)  # type: ignore[arg-type]


def host(origin: str = "http://a.test", **figures: object) -> HostReport:
    values: dict[str, object] = {
        "requests": 5,
        "interval": 2.0,
        "crawl_delay": None,
        "crawl_delay_capped": False,
        "shortest_gap": 2.5,
        "robots": "status 200",
    }
    values.update(figures)
    return HostReport(origin, **values)  # type: ignore[arg-type]


def text(
    crawl: CrawlStats,
    hosts: list[HostReport] | None = None,
    deferred: list[DeferredHost] | None = None,
    **options: object,
) -> str:
    settings: dict[str, object] = {"max_wait": 600.0}
    settings.update(options)
    return summary(crawl, hosts or [], deferred or [], **settings)  # type: ignore[arg-type]


# --- CrawlStats ----------------------------------------------------------------------------------


def test_pages_per_second() -> None:
    assert CrawlStats(pages=30, elapsed=10.0).pages_per_second == 3.0
    assert CrawlStats(pages=30, elapsed=0.0).pages_per_second == 0.0


def test_progress_line_sums_errors_and_skips() -> None:
    line = progress_line(
        CrawlStats(
            pages=5,
            elapsed=2.0,
            in_flight=3,
            hosts_waiting=4,
            queued=17,
            errors=Counter({"timeout": 2, "dns": 1}),
            skips=Counter({"out of scope: host": 4, "disallowed by robots.txt": 1}),
        )
    )
    assert line == (
        "0:00:02  5 pages (2.5/s)  17 queued  3 errors  5 skipped  3 in flight  4 hosts waiting"
    )


def test_fresh_stats_are_zero_and_running() -> None:
    fresh = CrawlStats()
    assert fresh.outcome == "running"
    assert fresh.pages == fresh.requests == fresh.queued == 0
    assert not fresh.skips
    assert progress_line(fresh).startswith("0:00:00  0 pages (0.0/s)  0 queued  0 errors")


def test_progress_on_a_plain_stream_writes_whole_lines() -> None:
    stream = io.StringIO()
    progress = Progress(CrawlStats(pages=1, elapsed=1.0), stream, interval=10.0)
    progress.show()
    progress.clear()
    output = stream.getvalue()
    line = "0:00:01  1 page (1.0/s)  0 queued  0 errors  0 skipped  0 in flight  0 hosts waiting"
    assert output.endswith(f" crawl: {line}\n")
    assert "\r" not in output


# --- summary: outcome and counts -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("outcome", "said"),
    [
        ("finished", "finished"),
        ("stopped", "stopped"),
        ("deferred", "stopped waiting for hosts"),
        ("page limit", "stopped at limits.max_pages"),
    ],
)
def test_summary_opens_with_the_outcome_and_totals(outcome: str, said: str) -> None:
    crawl = stats(
        outcome=outcome,
        pages=20,
        requests=25,
        robots_fetches=2,
        bytes=3_500_000,
        retries=1,
    )
    first = text(crawl).splitlines()[0]
    assert first == (
        f"crawl {said} after 10.0 s: 20 pages (2.0/s), 25 requests, "
        "2 robots.txt fetches, 3.5 MB, 1 retry"
    )


def test_summary_counts_statuses_errors_and_skips_by_reason_most_first() -> None:
    crawl = stats(
        statuses=Counter({200: 18, 404: 2, 301: 2}),
        errors=Counter({"timeout": 1, "dns": 3}),
        skips=Counter(
            {
                "disallowed by robots.txt": 3,
                "out of scope: host": 5,
                "over max depth": 3,
            }
        ),
    )
    lines = text(crawl).splitlines()
    assert "statuses: 200 18, 301 2, 404 2" in lines
    assert "errors: dns 3, timeout 1" in lines
    assert "skips: out of scope: host 5, disallowed by robots.txt 3, over max depth 3" in lines


def test_summary_says_what_the_crawl_ran_on() -> None:
    """The page walk above all: the Python one, a silent fallback, halves the page step."""
    ran_on = engine("http1")
    assert ran_on == f"page walk {compiled.WALK}, HTTP client http1, event loop {event_loop_name()}"
    lines = text(stats(), ran_on=ran_on).splitlines()
    assert f"ran on: {ran_on}" in lines


def test_summary_says_which_seeds_moved_where_the_last_hop_of_each() -> None:
    moves = [
        ("http://a.test/", "https://a.test/"),
        ("http://a.test/", "https://www.a.test/"),
        ("http://b.test/", "https://b.example/"),
    ]
    lines = text(stats(), seed_moves=moves).splitlines()
    at = lines.index("seeds that redirect to another host (the host joins the scope):")
    assert lines[at + 1 : at + 3] == [
        "  http://a.test/ -> https://www.a.test/",
        "  http://b.test/ -> https://b.example/",
    ]


def test_summary_says_none_when_nothing_was_counted() -> None:
    lines = text(stats()).splitlines()
    assert lines[1:] == [
        "statuses: none",
        "errors: none",
        "skips: none",
        "URLs: 0 met: 0 fetched, 0 skipped, 0 queued",
    ]


def test_summary_counts_skipped_seed_lines() -> None:
    assert "seed lines skipped: 3" in text(stats(), problems=3).splitlines()
    assert "seed lines skipped" not in text(stats(), problems=0)


def test_summary_names_the_output_files() -> None:
    output = text(stats(), outputs=output_files(Path("out"), "both"))
    assert output.splitlines()[-1] == (
        f"output: {Path('out') / 'index.sqlite'}, {Path('out') / 'pages.jsonl'}, "
        f"{Path('out') / 'skips.jsonl'}"
    )
    assert "output:" not in text(stats())


def test_summary_says_how_many_urls_were_left_queued() -> None:
    assert "left queued: 7 URLs" in text(stats(outcome="stopped", queued=7)).splitlines()
    assert "left queued" not in text(stats(queued=0))


# --- summary: hosts ------------------------------------------------------------------------------


def test_summary_has_one_line_per_host_with_its_pacing() -> None:
    hosts = [
        host(
            "http://a.test",
            requests=15,
            interval=2.0,
            crawl_delay=2.0,
            shortest_gap=2.01,
            reason="robots.txt Crawl-delay",
            answer_time=0.0123,
        ),
        host(
            "https://b.test:8443",
            requests=10,
            interval=30.0,
            crawl_delay=120.0,
            crawl_delay_capped=True,
            shortest_gap=None,
            robots="status 404: unavailable",
        ),
    ]
    lines = text(stats(), hosts).splitlines()
    assert "politeness per host (our request starts; gap = shortest between two):" in lines
    assert (
        "  http://a.test  requests 15  interval 2 s (robots.txt Crawl-delay)  gap 2.010 s  "
        "first byte in 0.012 s  Crawl-delay 2 s  robots.txt status 200"
    ) in lines
    assert (
        "  https://b.test:8443  requests 10  interval 30 s (min_delay)  gap -  Crawl-delay 120 s "
        "(capped)  robots.txt status 404: unavailable"
    ) in lines
    assert (
        "  shortest gap / interval robots.txt and min_delay ask, over all 2 hosts: 1.005" in lines
    )


def test_summary_host_without_crawl_delay() -> None:
    assert "Crawl-delay none" in text(stats(), [host(crawl_delay=None)])


def test_summary_gap_ratio_skips_hosts_without_a_gap_or_interval() -> None:
    hosts = [
        host("http://a.test", shortest_gap=None),
        host("http://b.test", interval=0.0, shortest_gap=0.1),
        host("http://c.test", interval=2.0, shortest_gap=3.0),
    ]
    assert (
        "  shortest gap / interval robots.txt and min_delay ask, over all 3 hosts: 1.500"
        in text(stats(), hosts).splitlines()
    )


def test_summary_gap_ratio_absent_when_no_host_has_a_gap() -> None:
    assert "shortest gap / interval" not in text(stats(), [host(shortest_gap=None)])


def test_summary_shows_the_first_hosts_and_counts_the_rest() -> None:
    hosts = [host(f"http://h{n:02d}.test") for n in range(HOSTS_SHOWN + 5)]
    output = text(stats(), hosts)
    assert f"http://h{HOSTS_SHOWN - 1:02d}.test" in output
    assert f"http://h{HOSTS_SHOWN:02d}.test" not in output
    assert "  ... and 5 more hosts" in output.splitlines()
    assert f"over all {HOSTS_SHOWN + 5} hosts" in output


def test_summary_without_hosts_has_no_host_section() -> None:
    assert "politeness per host" not in text(stats())


# --- summary: deferred hosts ---------------------------------------------------------------------


def test_summary_lists_deferred_hosts_with_until_pending_and_reason() -> None:
    deferred = [
        DeferredHost(
            "http://c.test", ENDED + 2 * 3600, 4, "outside its Visit-time (06:00-08:45 UTC)"
        ),
        DeferredHost("http://d.test", ENDED + 30, 3, "backing off after errors"),
        DeferredHost("http://e.test", ENDED + 900, 1, "waiting for its interval"),
    ]
    lines = text(stats(outcome="deferred", queued=8), deferred=deferred, max_wait=600).splitlines()
    assert lines[0].startswith("crawl stopped waiting for hosts after")
    assert (
        "deferred: 3 hosts with 8 URLs wait longer than politeness.max_wait (600 s); "
        "they stay queued:"
    ) in lines
    assert (
        "  http://c.test  until 2024-01-01 02:00:10 UTC (in 2.0 h)  4 URLs  "
        "outside its Visit-time (06:00-08:45 UTC)"
    ) in lines
    assert (
        "  http://d.test  until 2024-01-01 00:00:40 UTC (in 30 s)  3 URLs  backing off after errors"
    ) in lines
    assert (
        "  http://e.test  until 2024-01-01 00:15:10 UTC (in 15.0 min)  1 URL  "
        "waiting for its interval"
    ) in lines
    # The URLs are accounted for as deferred, not as merely left queued.
    assert "left queued" not in "\n".join(lines)


def test_summary_shows_the_first_deferred_hosts_and_counts_the_rest() -> None:
    deferred = [
        DeferredHost(f"http://h{n:02d}.test", ENDED + 3600, 2, "waiting for its interval")
        for n in range(HOSTS_SHOWN + 3)
    ]
    output = text(stats(outcome="deferred"), deferred=deferred)
    assert f"deferred: {HOSTS_SHOWN + 3} hosts with {2 * (HOSTS_SHOWN + 3)} URLs" in output
    assert f"http://h{HOSTS_SHOWN:02d}.test" not in output
    assert output.splitlines()[-1] == "  ... and 3 more hosts"


def test_summary_survives_a_deferred_host_waiting_beyond_any_date() -> None:
    # time.gmtime cannot show 1e20 s from now; the summary must still be written.
    deferred = [DeferredHost("http://a.test", ENDED + 1e20, 1, "backing off after errors")]
    assert "http://a.test" in text(stats(outcome="deferred"), deferred=deferred)


def test_summary_says_what_the_pages_allowed() -> None:
    crawl = stats()
    crawl.page_rules.update({"indexed": 7, "noindex": 2, "nofollow": 1, "with sections": 3})
    crawl.page_rules["links not followed"] += 4
    assert (
        "pages read: 7 indexed, 2 noindex, 1 nofollow, 3 with exclusion sections, "
        "4 links not followed (rel=nofollow, ugc or sponsored; nofollow pages and sections)"
    ) in text(crawl).splitlines()
    assert "pages read" not in text(stats())


# --- the progress line at a terminal's width -----------------------------------------------------

BUSY = CrawlStats(
    pages=123_456,
    elapsed=3_723.0,
    in_flight=64,
    hosts_waiting=9_876,
    queued=1_234_567,
    errors=Counter({"timeout": 1_234}),
    skips=Counter({"out of scope: host": 56_789}),
)


@pytest.mark.parametrize(
    ("width", "expected"),
    [
        (
            None,
            "1:02:03  123456 pages (33.2/s)  1234567 queued  1234 errors  56789 skipped  "
            "64 in flight  9876 hosts waiting",
        ),
        (
            100,
            "1:02:03  123456 pages (33.2/s)  1234567 queued  1234 errors  56789 skipped  "
            "64 in flight",
        ),
        # 80 columns (79 for the line): the clock and the skips are there.
        (79, "1:02:03  123456 pages (33.2/s)  1234567 queued  1234 errors  56789 skipped"),
        (60, "1:02:03  123456 pages  1234567 queued  1234 errors"),
        (44, "123456 pages  1234567 queued  1234 errors"),
        (39, "123456 pages  1234 errors"),
        (20, "123456 pages"),
        (8, "123456\u2026"),
    ],
)
def test_a_narrow_progress_line_drops_the_least_useful_figures_first(
    width: int | None, expected: str
) -> None:
    assert progress_line(BUSY, width) == expected


@pytest.mark.parametrize("width", range(1, 130))
def test_the_progress_line_never_exceeds_the_width(width: int) -> None:
    assert len(progress_line(BUSY, width)) <= width
    assert len(progress_line(CrawlStats(), width)) <= width
    assert len(progress_line(BUSY, width, label="12 workers")) <= width


@pytest.mark.parametrize("width", [79, 99, 159])
def test_a_small_crawl_shows_all_but_the_hosts_waiting_at_80_columns(width: int) -> None:
    small = CrawlStats(
        pages=598,
        elapsed=75.0,
        in_flight=1,
        hosts_waiting=1,
        queued=12,
        errors=Counter({"timeout": 1}),
        skips=Counter({"not HTML by its extension": 40}),
    )
    line = "0:01:15  598 pages (8.0/s)  12 queued  1 error  40 skipped  1 in flight"
    assert progress_line(small, width) == line + ("" if width < 84 else "  1 host waiting")


@pytest.mark.parametrize(
    ("width", "expected"),
    [
        (
            None,
            "2 workers  1:02:03  123456 pages (33.2/s)  1234567 queued  1234 errors  "
            "56789 skipped  64 in flight  9876 hosts waiting",
        ),
        (
            100,
            "2 workers  1:02:03  123456 pages (33.2/s)  1234567 queued  1234 errors  "
            "56789 skipped  64 in flight",
        ),
        (79, "1:02:03  123456 pages (33.2/s)  1234567 queued  1234 errors  56789 skipped"),
    ],
)
def test_a_shared_crawls_line_says_whose_it_is_while_there_is_room(
    width: int | None, expected: str
) -> None:
    assert progress_line(BUSY, width, label="2 workers") == expected


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("columns", [40, 80])
def test_redraws_stay_on_one_row_and_blank_what_a_longer_line_left(
    columns: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    stream = _Terminal()
    crawl = CrawlStats(pages=5, elapsed=1.0, queued=10_000_000, errors=Counter({"dns": 3}))
    progress = Progress(crawl, stream, interval=10.0)
    progress.show()
    crawl.queued = 0
    progress.show()
    progress.clear()
    output = stream.getvalue()
    assert "\n" not in output
    redraws = output.split("\r")[1:]
    assert len(redraws) == 4  # two lines, the blanking, the return after it
    assert all(len(redraw) < columns for redraw in redraws)
    # Spaces cover what a longer first line left, and no more.
    second = progress_line(crawl, columns - 1)
    assert redraws[1].rstrip(" ") == second
    assert len(redraws[1]) == max(len(redraws[0]), len(second))
    assert redraws[2].strip() == "" and redraws[3] == ""


# --- counts in English ---------------------------------------------------------------------------


def test_the_summary_counts_one_in_the_singular() -> None:
    crawl = stats(pages=1, requests=1, robots_fetches=1, retries=1, queued=1, outcome="stopped")
    lines = text(crawl).splitlines()
    assert lines[0] == (
        "crawl stopped after 10.0 s: 1 page (0.1/s), 1 request, 1 robots.txt fetch, 0.0 MB, 1 retry"
    )
    assert "left queued: 1 URL" in lines
    deferred = [DeferredHost("http://a.test", ENDED + 900, 1, "waiting for its interval")]
    output = text(stats(outcome="deferred"), deferred=deferred)
    assert "deferred: 1 host with 1 URL waits longer than politeness.max_wait" in output
    hosts = [host(f"http://h{n:02d}.test") for n in range(HOSTS_SHOWN + 1)]
    assert "  ... and 1 more host" in text(stats(), hosts).splitlines()
    assert "shortest gap / interval robots.txt and min_delay ask, over 1 host: 1.250" in text(
        stats(), [host()]
    )


def _state_with(pending: list[str], pages: int, runs: int) -> MemoryCrawlState:
    state = MemoryCrawlState()
    for _ in range(runs):
        state.run.begin_run()
    state.run.save_stats(CrawlStats(pages=pages))
    for url in pending:
        state.frontier.push(origin_of(url), QueuedUrl(url, 0))
    return state


@pytest.mark.parametrize(
    ("pending", "pages", "runs", "expected"),
    [
        (["http://a.test/1"], 1, 1, "1 URL pending on 1 host, 1 page fetched in 1 run before"),
        (
            ["http://a.test/1", "http://b.test/2"],
            2,
            3,
            "2 URLs pending on 2 hosts, 2 pages fetched in 3 runs before",
        ),
    ],
)
def test_the_resume_note_counts_in_english(
    pending: list[str], pages: int, runs: int, expected: str
) -> None:
    note = resume_note(Path("d"), _state_with(pending, pages, runs), [], LimitsConfig())
    assert note is not None and f"resuming the crawl in d: {expected};" in note


def test_the_resume_advice_counts_in_english() -> None:
    crawl = stats(outcome="page limit", queued=1)
    [advice] = resume_advice(LimitsConfig(max_pages=1), crawl, [], MemoryCrawlState())
    assert "; 1 URL stays queued." in advice


async def test_a_log_record_clears_the_live_line_before_it_is_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    stream = _Terminal()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    root.addHandler(handler)
    progress = Progress(CrawlStats(pages=5, elapsed=1.0), stream, interval=10.0)
    ticker = asyncio.create_task(progress.run())
    try:
        await asyncio.sleep(0)  # the ticker starts, and watches the handler
        progress.show()
        logging.getLogger("crawler.test").warning("a host was given up")
    finally:
        ticker.cancel()
        root.removeHandler(handler)
    with contextlib.suppress(asyncio.CancelledError):
        await ticker
    line = progress_line(CrawlStats(pages=5, elapsed=1.0), 79)
    assert stream.getvalue() == f"\r{line}\r{' ' * len(line)}\ra host was given up\n"
    assert not handler.filters  # let go of when the ticker ends


def test_what_is_said_goes_above_the_live_line_which_is_drawn_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    stream = _Terminal()
    crawl = CrawlStats(pages=5, elapsed=1.0)
    progress = Progress(crawl, stream, interval=10.0, sayings=lambda now: ["crawl: a.test fails"])
    progress.show()
    progress.tell()
    line = progress_line(crawl, 39)
    assert stream.getvalue() == f"\r{line}\r{' ' * len(line)}\rcrawl: a.test fails\n\r{line}"
    # Longer than the terminal: wrapped by the crawl, not by the terminal.
    progress.clear()
    stream.seek(0)
    stream.truncate()
    progress.say("crawl: " + "word " * 20)
    assert all(len(row) <= 39 for row in stream.getvalue().splitlines())


# --- a crawl of several runs: this run's figures and the crawl's apart ---------------------------


def test_a_recrawls_summary_says_the_runs_the_passes_and_the_crawls_figures_apart() -> None:
    earlier = stats(pages=1196, requests=1210, robots_fetches=12, elapsed=452.5)
    crawl = stats(pages=1794, requests=1808, robots_fetches=12, elapsed=464.8, runs=4)
    crawl.changes.update({"unchanged": 590, "changed": 5, "new": 2, "gone": 1})
    began = ENDED - 12.3
    lines = text(crawl, run=run_stats(crawl, earlier), recrawl=(began, 1196)).splitlines()
    assert lines[0] == (
        "crawl finished after 12.3 s (run 4): 598 pages (48.6/s), 598 requests, "
        "0 robots.txt fetches, 0.0 MB, 0 retries"
    )
    assert lines[1] == (
        "the crawl in all, 4 runs since 2024-01-01 00:00:00 UTC: 464.8 s, 1794 pages (3.9/s), "
        "1808 requests, 12 robots.txt fetches, 0.0 MB, 0 retries"
    )
    assert (
        f"recrawl pass begun {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(began))} UTC: "
        "598 pages: 590 unchanged, 5 changed, 2 new, 1 gone, 0 failed"
    ) in lines
    # A crawl's first run has only its own figures.
    first = stats(pages=598, elapsed=10.0)
    assert text(first, run=run_stats(first, CrawlStats())).startswith(
        "crawl finished after 10.0 s: 598 pages (59.8/s)"
    )


def test_a_robots_txt_this_run_did_not_ask_for_says_when_it_was_fetched() -> None:
    kept = RobotsEntry(
        "http://a.test", RobotsTxt.allow_all("status 200"), 1764273600.0, 1764360000.0, "status 200"
    )
    began = kept.fetched_at + 3600
    report = robots_dated(host(robots="not fetched"), kept, began)
    assert report.robots == "status 200, fetched 2025-11-27 20:00:00 UTC (before this run)"
    assert "robots.txt status 200, fetched 2025-11-27 20:00:00 UTC" in text(stats(), [report])
    # Obeyed as an earlier run fetched it.
    assert robots_dated(host(robots="status 200"), kept, began).robots == report.robots
    # Fetched by this run, or nothing to say.
    assert robots_dated(host(robots="status 200"), kept, kept.fetched_at).robots == "status 200"
    assert robots_dated(host(robots="not fetched"), None, began).robots == "not fetched"
    assert robots_dated(host(robots="status 404"), kept, began).robots == "status 404"


def test_how_the_last_run_ended_comes_from_its_summary_then_the_state() -> None:
    disk_full = {"clean": False, "reason": "disk full"}
    assert how_it_ended(disk_full, clean=True) == "stopped because the disk was full"
    assert how_it_ended({"clean": False, "reason": "SIGTERM"}, clean=True) == (
        "was stopped by SIGTERM"
    )
    assert how_it_ended({"clean": True, "reason": "finished"}, clean=False) == "ended cleanly"
    assert how_it_ended(None, clean=True) == "ended cleanly"
    assert how_it_ended(None, clean=False) == "did not end cleanly (killed?)"
    # A summary of another run (a killed run wrote none of its own) says nothing of the last.
    document = {"run": {"number": 3, "ended": disk_full}}
    assert last_ended(document, 3) == disk_full
    assert last_ended(document, 4) is None
    assert last_ended({"run": {"number": 4, "ended": None}}, 4) is None
