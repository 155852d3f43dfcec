"""crawler.cli.summary_document, summary_file and crawler.cli.status, the pure parts: the
summary.json document holds the figures, reads back into the same summary, and `crawl status`
says which run it was, whether it goes on, and how it ended."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from crawler.cli.report import summary
from crawler.cli.status import Status, document_from_state_values, status_text
from crawler.cli.summary_file import (
    SUMMARY_FORMAT,
    RunFacts,
    read_summary,
    report_from_document,
    summary_document,
    write_summary,
)
from crawler.errors import StateError
from crawler.state.codec import deferred_json, stats_json
from crawler.stats import CrawlStats, DeferredHost, HostReport

# 2024-01-01 00:00:00 UTC.
STARTED = 1_704_067_200.0
NOW = STARTED + 100.0

FACTS = RunFacts(
    process=4242,
    started_at=STARTED + 40.0,
    client="http1",
    max_wait=600.0,
    seed_lines_skipped=2,
    data_dir="/crawl/data",
    outputs=("/crawl/data/index.sqlite", "/crawl/data/state.sqlite"),
    page_walk="compiled",
    event_loop="uvloop",
)


def crawl_stats(**figures: Any) -> CrawlStats:
    stats = CrawlStats(
        started_at=STARTED,
        elapsed=90.0,
        updated_at=NOW,
        runs=2,
        pages=20,
        met=30,
        fetched=22,
        requests=25,
        robots_fetches=2,
        bytes=3_500_000,
        retries=1,
        queued=3,
        outcome="finished",
    )
    stats.statuses.update({200: 18, 404: 2})
    stats.errors.update({"timeout": 2})
    stats.skips.update({"disallowed by robots.txt": 4, "out of scope: host": 1})
    stats.page_rules.update({"indexed": 17, "noindex": 1})
    for name, value in figures.items():
        setattr(stats, name, value)
    return stats


HOSTS = [
    HostReport("http://a.test", 20, 2.0, 2.0, False, 2.01, "status 200"),
    HostReport("https://b.test:8443", 5, 30.0, 1e308, True, None, "status 404: unavailable"),
]
DEFERRED = [
    DeferredHost("http://c.test", NOW + 7200, 3, "outside its Visit-time (06:00-08:45 UTC)"),
    DeferredHost("http://d.test", NOW + 1e20, 1, "backing off after errors"),
]


def document(stats: CrawlStats | None = None, **options: Any) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "now": NOW,
        "given_up": {"http://e.test": "dns: name does not resolve"},
        "traps": {"http://a.test": {"over limits.max_path_repeats": 7}},
        "seed_moves": [("http://a.test/", "https://a.test/")],
    }
    settings.update(options)
    return summary_document(FACTS, stats or crawl_stats(), HOSTS, DEFERRED, **settings)


def test_the_document_holds_the_figures_and_what_the_run_ran_on() -> None:
    written = document(ended=True, stopped_by="SIGINT", resume=["the same command goes on"])
    # What a program reads: plain JSON, every time in UTC.
    written = json.loads(json.dumps(written, allow_nan=False))
    assert written["format"] == SUMMARY_FORMAT
    assert written["process"] == 4242 and written["data_dir"] == "/crawl/data"
    assert written["outcome"] == "finished" and written["stopped_by"] == "SIGINT"
    assert written["run"] == {
        "number": 2,
        "started_at": "2024-01-01T00:00:40.000+00:00",
        "updated_at": "2024-01-01T00:01:40.000+00:00",
        "ended_at": "2024-01-01T00:01:40.000+00:00",
        # A stop asked for is no clean end.
        "ended": {"clean": False, "reason": "SIGINT"},
        "elapsed_s": 60.0,
    }
    assert written["crawl"] == {
        "started_at": "2024-01-01T00:00:00.000+00:00",
        "elapsed_s": 90.0,
        "runs": 2,
    }
    assert written["figures"] == {
        "pages": 20,
        "pages_per_second": 0.222,
        "requests": 25,
        "robots_fetches": 2,
        "tdmrep_fetches": 0,
        "sitemaps": 0,
        "sitemap_urls": 0,
        "bytes": 3_500_000,
        "retries": 1,
        "throttled": 0,
        "met": 30,
        "fetched": 22,
        "skipped": 5,
        "queued": 3,
        "in_flight": 0,
        "hosts_waiting": 0,
        "hosts_throttled": 0,
    }
    assert written["statuses"] == {"200": 18, "404": 2}
    assert written["errors"] == {"timeout": 2}
    assert written["skips"] == {"disallowed by robots.txt": 4, "out of scope: host": 1}
    assert written["hosts"][1] == {
        "origin": "https://b.test:8443",
        "requests": 5,
        "interval_s": 30.0,
        "interval_reason": "min_delay",
        "least_interval_s": None,
        "answer_time_s": None,
        "whole_answer_time_s": None,
        "refusals": 0,
        "backed_off_s": 0.0,
        "crawl_delay_s": 1e308,
        "crawl_delay_capped": True,
        "shortest_gap_s": None,
        "robots": "status 404: unavailable",
    }
    assert written["deferred"] == [
        {
            "origin": "http://c.test",
            "until": "2024-01-01T02:01:40.000+00:00",
            "pending": 3,
            "reason": "outside its Visit-time (06:00-08:45 UTC)",
        },
        # A wait past any calendar has no date.
        {"origin": "http://d.test", "until": None, "pending": 1, "reason": DEFERRED[1].reason},
    ]
    assert written["ran_on"] == {
        "page_walk": "compiled",
        "http_client": "http1",
        "event_loop": "uvloop",
        "page_reader": "loop",
    }
    assert written["seed_moves"] == [{"seed": "http://a.test/", "target": "https://a.test/"}]
    assert written["resume"] == ["the same command goes on"]


def test_a_run_going_on_has_no_end() -> None:
    written = document(crawl_stats(outcome="running"))
    assert written["outcome"] == "running" and written["run"]["ended_at"] is None


def test_the_document_reads_back_into_the_summary_the_crawl_printed() -> None:
    stats = crawl_stats()
    printed = summary(
        stats,
        HOSTS,
        DEFERRED[:1],
        max_wait=600.0,
        outputs=[Path(path) for path in FACTS.outputs],
        problems=2,
        ran_on="page walk compiled, HTTP client http1, event loop uvloop",
        seed_moves=[("http://a.test/", "https://a.test/")],
        given_up={"http://e.test": "dns: name does not resolve"},
        traps={"http://a.test": {"over limits.max_path_repeats": 7}},
    )
    # Through a file: what `crawl status` reads is what the crawl wrote.
    text = json.dumps(summary_document(FACTS, stats, HOSTS, DEFERRED[:1], now=NOW, **_rest()))
    report = report_from_document(json.loads(text))
    again = summary(
        report.stats,
        report.hosts,
        report.deferred,
        max_wait=report.max_wait,
        outputs=report.outputs,
        problems=report.problems,
        ran_on=report.ran_on,
        seed_moves=report.seed_moves,
        given_up=report.given_up,
        traps=report.traps,
    )
    assert again == printed


def _rest() -> dict[str, Any]:
    return {
        "given_up": {"http://e.test": "dns: name does not resolve"},
        "traps": {"http://a.test": {"over limits.max_path_repeats": 7}},
        "seed_moves": [("http://a.test/", "https://a.test/")],
    }


def test_a_deferred_host_past_any_calendar_reads_back_as_waiting_for_ever() -> None:
    report = report_from_document(document())
    assert report.deferred[1].until == math.inf


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ({"outcome": "exploded"}, "outcome 'exploded'"),
        ({"figures": None}, "NoneType"),
        ({"statuses": {"ok": 1}}, "invalid literal"),
        ({"hosts": [{"origin": "http://a.test"}]}, "requests"),
    ],
)
def test_a_document_of_another_shape_is_refused(damage: dict[str, Any], message: str) -> None:
    with pytest.raises((ValueError, KeyError, TypeError, AttributeError), match=message):
        report_from_document({**document(), **damage})


def test_the_file_is_replaced_whole_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    write_summary(path, {"format": 1, "outcome": "running"})
    write_summary(path, document())
    assert read_summary(path) == json.loads(json.dumps(document()))
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["summary.json"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"format": 1, "outc', "is damaged: not JSON"),
        (b"[1, 2]", "is damaged: not a JSON object"),
        (b"\xff\xfe", "is damaged: not JSON"),
        (b'{"format": 99}', "has format 99, from a newer crawler"),
    ],
)
def test_a_damaged_file_is_named(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "summary.json"
    path.write_bytes(content)
    with pytest.raises(StateError, match=message):
        read_summary(path)


# --- what `crawl status` says --------------------------------------------------------------------


def test_status_of_a_run_that_ended_names_it_its_times_and_what_comes_next() -> None:
    written = document(ended=True, stopped_by="SIGINT", resume=["the same command goes on"])
    text = status_text(Status(written, Path("d/summary.json"), False), Path("d"), NOW + 5)
    lines = text.splitlines()
    assert lines[0] == (
        "the last run in d: run 2, 2024-01-01 00:00:40 UTC to 00:01:40 UTC (1.0 min); "
        "it was stopped by SIGINT"
    )
    assert lines[1].startswith("crawl finished after 90.0 s (2 runs): 20 pages")
    assert lines[-1] == "resume: the same command goes on"


def test_status_says_the_pages_were_read_in_the_page_readers_process_when_they_were() -> None:
    for beside, walk in ((True, "page walk compiled, in a process of its own,"), (False, None)):
        written = document(ended=True, pages_read_beside=beside)
        assert written["ran_on"]["page_reader"] == ("process" if beside else "loop")
        text = status_text(Status(written, Path("d/summary.json"), False), Path("d"), NOW + 5)
        [ran_on] = [line for line in text.splitlines() if line.startswith("ran on: ")]
        if walk is None:
            assert ran_on == "ran on: page walk compiled, HTTP client http1, event loop uvloop"
        else:
            assert ran_on.startswith(f"ran on: {walk}")


def test_status_of_a_run_going_on_says_how_old_its_figures_are() -> None:
    written = document(crawl_stats(outcome="running"))
    text = status_text(Status(written, Path("d/summary.json"), True), Path("d"), NOW + 3)
    assert text.splitlines()[0] == (
        "a crawl is running in d: run 2, process 4242, started 2024-01-01 00:00:40 UTC; "
        "as of 3 s ago"
    )
    assert "resume:" not in text


def test_status_of_a_run_whose_process_is_gone_says_it_did_not_end_cleanly() -> None:
    written = document(crawl_stats(outcome="running"))
    text = status_text(Status(written, Path("d/summary.json"), False), Path("d"), NOW + 3)
    assert text.splitlines()[0] == (
        "run 2 in d did not end cleanly (killed?): process 4242 is gone; its last figures, as "
        "of 2024-01-01 00:01:40 UTC"
    )
    assert text.splitlines()[-1] == (
        "resume: the same command goes on from here (--fresh starts over)"
    )


def test_status_from_the_state_alone_says_what_it_lacks() -> None:
    stats = crawl_stats()
    values = {
        "runs": "2",
        "clean": "1",
        "stats": stats_json(stats),
        "deferred": deferred_json(DEFERRED[:1]),
    }
    written = document_from_state_values(values, 3, 1, process=None, running=False, max_wait=600.0)
    assert written["outcome"] == "deferred" and written["pending"] == {"urls": 3, "hosts": 1}
    text = status_text(Status(written, Path("d/state.sqlite"), False), Path("d"), NOW)
    lines = text.splitlines()
    assert lines[0] == (
        "no summary.json in d (a crawl run from Python writes none): from state.sqlite, which "
        "keeps the figures but not the hosts; run 2 ended cleanly"
    )
    assert lines[1].startswith("crawl stopped waiting for hosts after 90.0 s (2 runs): 20 pages")
    assert "errors: timeout 2" in lines
    assert (
        "deferred: 1 host with 3 URLs waits longer than politeness.max_wait (600 s); they " in text
    )


@pytest.mark.parametrize(
    ("clean", "queued", "running", "outcome"),
    [("1", 0, False, "finished"), ("1", 4, False, "stopped"), ("0", 4, True, "running")],
)
def test_status_from_the_state_alone_names_the_outcome_it_shows(
    clean: str, queued: int, running: bool, outcome: str
) -> None:
    values = {"runs": "1", "clean": clean, "stats": stats_json(CrawlStats(pages=1))}
    written = document_from_state_values(
        values, queued, 1, process=7, running=running, max_wait=600.0
    )
    assert written["outcome"] == outcome
    assert report_from_document(written).stats.statuses == Counter()
