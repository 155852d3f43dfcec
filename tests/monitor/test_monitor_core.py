"""The live status's pure core: the history and the projected end, the host table's rows and
pages, /status.json and /metrics made of a snapshot (parsed back with Prometheus's own parser),
and where a shared crawl's workers serve. No server, no clock: times are arguments."""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import fields

import pytest
from prometheus_client.parser import text_string_to_metric_families

from crawler.config import PolitenessConfig, ServeAddress, load_config, parse_serve_address
from crawler.crawl.hosts import Host
from crawler.errors import ConfigError
from crawler.monitor import served_at, worker_address, worker_info
from crawler.monitor.history import History, Sample, project
from crawler.monitor.hosts import HostQuery, QueryError, host_row, select_rows
from crawler.monitor.metrics import exposition
from crawler.monitor.snapshot import Snapshot, copy_stats, status_document
from crawler.politeness import HostTiming, Politeness
from crawler.stats import CrawlStats


def _sample(at: float, pages: int, queued: int, fetched: int | None = None) -> Sample:
    return Sample(at, pages, pages if fetched is None else fetched, queued, 0, 0, 0)


# --- history and projection ----------------------------------------------------------------------


def test_history_keeps_the_whole_crawl_in_a_bounded_number_of_samples() -> None:
    history = History(1.0, most=10)
    for second in range(100):
        history.add(_sample(float(second), second, 0))
    samples = history.recent()
    assert len(samples) <= 12
    assert samples[0].at == 0.0  # the start stays
    assert samples[-1].at == 99.0  # and now
    assert history.every > 1.0
    kept = history.samples
    gaps = {later.at - earlier.at for earlier, later in itertools.pairwise(kept[:-1])}
    assert max(gaps) <= 2 * min(gaps) + 1


def test_history_skips_samples_that_come_too_soon() -> None:
    history = History(1.0)
    for at in (0.0, 0.3, 1.0, 1.5, 2.0):
        history.add(_sample(at, 1, 0))
    assert [sample.at for sample in history.samples] == [0.0, 1.0, 2.0]


def test_history_columns_give_pages_per_second_between_samples() -> None:
    history = History(1.0)
    for at, pages in ((100.0, 0), (101.0, 10), (103.0, 30)):
        history.add(_sample(at, pages, 5))
    columns = history.columns(100.0)
    assert columns["t"] == [0.0, 1.0, 3.0]
    assert columns["pages_per_s"] == [0.0, 10.0, 10.0]


def test_projection_goes_by_the_recent_pace() -> None:
    samples = [_sample(float(t), 10 * t, 1000 - 10 * t) for t in range(0, 121)]
    projection = project(samples, queued=samples[-1].queued, pages=1200, max_pages=None)
    assert projection.rate == pytest.approx(10.0)
    assert projection.seconds == pytest.approx(samples[-1].queued / 10.0)
    assert not projection.growing


def test_projection_says_a_growing_queue_ends_no_sooner() -> None:
    samples = [_sample(float(t), 5 * t, 100 + 20 * t) for t in range(0, 30)]
    projection = project(samples, queued=samples[-1].queued, pages=145, max_pages=None)
    assert projection.growing
    assert "no sooner" in projection.basis


def test_projection_counts_only_the_pages_left_under_max_pages() -> None:
    samples = [_sample(float(t), 10 * t, 5000) for t in range(0, 11)]
    projection = project(samples, queued=5000, pages=100, max_pages=150)
    assert projection.remaining == 50
    assert projection.seconds == pytest.approx(5.0)


@pytest.mark.parametrize(
    ("samples", "seconds"),
    [([], None), ([_sample(0.0, 0, 10)], None), ([_sample(0.0, 5, 10), _sample(9.0, 5, 10)], None)],
)
def test_projection_without_a_pace_gives_no_time(samples: list[Sample], seconds: None) -> None:
    assert project(samples, queued=10, pages=5, max_pages=None).seconds is seconds


def test_nothing_queued_is_done() -> None:
    assert project([], queued=0, pages=7, max_pages=None).seconds == 0.0


# --- host rows -----------------------------------------------------------------------------------


def _host(origin: str, **timing: float) -> Host:
    host = Host(HostTiming(origin))
    for name, value in timing.items():
        setattr(host.timing, name, value)
    return host


POLITE = Politeness(PolitenessConfig(min_delay=1.0))


def test_a_host_row_says_what_the_host_is_doing() -> None:
    now = 1000.0
    busy = _host("http://a.test", in_flight=1, requests=5)
    waiting = _host("http://b.test", next_start=now + 0.5, requests=3)
    due = _host("http://c.test", requests=2)
    backed = _host("http://d.test", backoff_until=now + 30)
    throttled = _host("http://e.test", backoff_until=now + 30)
    throttled.timing.pace.refusal_streak = 2
    idle = _host("http://f.test")
    retired = _host("http://g.test")
    retired.retired = "Crawl-delay 120 s over politeness.max_crawl_delay"
    rows = {
        host.origin: host_row(host, POLITE, queued, now)
        for host, queued in (
            (busy, 3),
            (waiting, 2),
            (due, 1),
            (backed, 4),
            (throttled, 4),
            (idle, 0),
            (retired, 9),
        )
    }
    assert {origin: row.state for origin, row in rows.items()} == {
        "http://a.test": "in flight",
        "http://b.test": "waiting",
        "http://c.test": "due",
        "http://d.test": "backed off",
        "http://e.test": "throttled",
        "http://f.test": "idle",
        "http://g.test": "retired",
    }
    assert rows["http://b.test"].next_start == pytest.approx(0.5)
    assert "429/503" in rows["http://e.test"].why
    assert rows["http://g.test"].why.startswith("Crawl-delay 120 s")
    assert rows["http://f.test"].next_start is None
    assert rows["http://a.test"].pace == "min_delay" and rows["http://a.test"].interval == 1.0


def test_a_host_counts_its_failures_by_kind() -> None:
    host = _host("http://a.test")
    for status in (429, 429, 503, 500, None, 408):
        host.failed(status)
    row = host_row(host, POLITE, 0, 0.0)
    assert (row.http_429, row.http_5xx, row.errors) == (2, 2, 1)


def _rows(count: int) -> list:
    return [
        host_row(_host(f"http://h{number:05d}.test", requests=number % 97), POLITE, number % 7, 0.0)
        for number in range(count)
    ]


def test_the_table_sends_one_page_of_the_rows_in_order() -> None:
    rows = _rows(5000)
    matched, page = select_rows(rows, HostQuery(sort="requests", descending=True, limit=50))
    assert matched == 5000
    assert len(page) == 50
    assert [row.requests for row in page] == sorted((row.requests for row in rows), reverse=True)[
        :50
    ]
    _, second = select_rows(rows, HostQuery(sort="requests", descending=True, offset=50, limit=50))
    everything = sorted(rows, key=lambda row: (row.requests, row.origin), reverse=True)
    assert second == everything[50:100]


def test_the_table_filters_by_origin_and_state() -> None:
    rows = _rows(300)
    matched, page = select_rows(rows, HostQuery.parse({"filter": "H001", "limit": "1000"}))
    assert matched == 100 and all("h001" in row.origin for row in page)
    matched, page = select_rows(rows, HostQuery(state="idle", limit=1000))
    assert matched == sum(1 for row in rows if row.queued == 0)
    assert {row.state for row in page} == {"idle"}


@pytest.mark.parametrize(
    ("params", "complaint"),
    [
        ({"sort": "url"}, "sort"),
        ({"order": "up"}, "order"),
        ({"state": "asleep"}, "state"),
        ({"limit": "5000"}, "limit"),
        ({"offset": "-1"}, "offset"),
        ({"limit": "ten"}, "limit"),
    ],
)
def test_a_bad_table_query_says_what_is_wrong(params: dict[str, str], complaint: str) -> None:
    with pytest.raises(QueryError, match=complaint):
        HostQuery.parse(params)


def test_a_table_query_defaults_to_the_busiest_first() -> None:
    query = HostQuery.parse({})
    assert (query.sort, query.descending, query.offset, query.limit) == ("requests", True, 0, 50)
    assert not HostQuery.parse({"sort": "origin"}).descending


# --- documents -----------------------------------------------------------------------------------


def _snapshot(pages: int, hosts: int = 3) -> Snapshot:
    stats = CrawlStats(started_at=1000.0, elapsed=10.0, pages=pages, fetched=pages, queued=40)
    stats.statuses.update({200: pages - 1, 404: 1})
    stats.errors["timeout"] = 2
    stats.skips["disallowed by robots.txt"] = 3
    history = History(1.0)
    history.add(_sample(1000.0, 0, 10))
    history.add(_sample(1010.0, pages, 40))
    rows = _rows(hosts)
    summary = {"outcome": "running", "figures": {"pages": pages}, "hosts": []}
    info = {"version": "0.1.0", "event_loop": "uvloop", "http_client": "http1"}
    return Snapshot.of(1010.0, stats, rows, summary, history, max_pages=None, info=info)


def test_status_json_holds_the_summary_and_the_live_part() -> None:
    document = status_document(_snapshot(50), HostQuery(limit=2))
    assert document["outcome"] == "running" and document["figures"]["pages"] == 50
    live = document["live"]
    assert live["history"]["pages"] == [0, 50]
    assert live["projection"]["remaining"] == 40
    assert live["hosts_total"] == 3 and len(live["host_rows"]) == 2
    assert live["host_table"]["matched"] == 3
    assert sum(live["host_states"].values()) == 3


def test_metrics_parse_and_bound_the_hosts_labelled() -> None:
    text = exposition(_snapshot(50, hosts=500), busiest=20).decode()
    families = {family.name: family for family in text_string_to_metric_families(text)}
    assert families["crawler_pages"].type == "counter"
    assert families["crawler_pages"].samples[0].value == 50
    codes = {s.labels["code"]: s.value for s in families["crawler_responses"].samples}
    assert codes == {"200": 49.0, "404": 1.0}
    hosts = {s.labels["host"] for s in families["crawler_host_requests"].samples}
    assert len(hosts) == 20  # of 500
    assert families["crawler_queued_urls"].samples[0].value == 40
    outcome = {s.labels["outcome"]: s.value for s in families["crawler_outcome"].samples}
    assert outcome["running"] == 1.0 and sum(outcome.values()) == 1.0
    # No label names a URL: every label value is bounded by kind.
    names = {name for family in families.values() for s in family.samples for name in s.labels}
    assert names <= {"code", "kind", "reason", "rule", "change", "state", "outcome", "host"} | {
        "version",
        "event_loop",
        "http_client",
    }


def test_a_snapshot_does_not_move_with_the_crawl() -> None:
    stats = CrawlStats(pages=3)
    stats.statuses[200] = 3
    copy = copy_stats(stats)
    stats.pages += 1
    stats.statuses[200] += 1
    assert copy.pages == 3 and copy.statuses == Counter({200: 3})
    counters = [field for field in fields(CrawlStats) if field.type == "Counter[str]"]
    assert counters, "the stats' counters of strings"
    for field in counters:
        getattr(stats, field.name)["moved"] += 1
        assert not getattr(copy, field.name), field.name


# --- addresses and workers -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "host", "port"),
    [
        ("8080", "127.0.0.1", 8080),
        ("0", "127.0.0.1", 0),
        ("0.0.0.0:9000", "0.0.0.0", 9000),
        ("localhost:80", "localhost", 80),
        ("[::1]:8080", "::1", 8080),
    ],
)
def test_serve_addresses(text: str, host: str, port: int) -> None:
    assert parse_serve_address(text) == ServeAddress(host, port)


@pytest.mark.parametrize("text", ["", "http", "70000", "::1:80", "[::1]", "a b:80", ":-1"])
def test_a_bad_serve_address_says_what_is_expected(text: str) -> None:
    with pytest.raises(ConfigError, match=r"expected \[HOST:\]PORT"):
        parse_serve_address(text)


def test_the_config_key_takes_a_bare_port_and_checks_the_rest() -> None:
    assert load_config(None, ["monitor.serve=8080"]).monitor.address() == ServeAddress(
        "127.0.0.1", 8080
    )
    assert load_config(None, []).monitor.address() is None
    with pytest.raises(ConfigError, match=r"monitor.serve \(--serve\)"):
        load_config(None, ["monitor.serve=somewhere"])


def test_workers_serve_on_successive_ports_and_say_where() -> None:
    first = ServeAddress("127.0.0.1", 8080)
    assert [worker_address(first, n).port for n in (1, 2, 3)] == [8080, 8081, 8082]
    assert worker_address(ServeAddress("::1", 0), 3) == ServeAddress("::1", 0)
    assert str(ServeAddress("::1", 8080)) == "[::1]:8080"
    url = "http://127.0.0.1:8081/"
    assert served_at(worker_info(url)) == url
    assert served_at("host:123:abcd") is None  # a worker that serves nothing says its id
    assert served_at('{"serve": "javascript:alert(1)"}') is None


def test_a_resumed_crawls_chart_runs_from_this_runs_first_sample() -> None:
    stats = CrawlStats(started_at=1000.0, pages=500)  # the first run, long ago
    history = History(1.0)
    history.add(_sample(90_000.0, 480, 10))
    history.add(_sample(90_001.0, 500, 10))
    snapshot = Snapshot.of(90_001.0, stats, [], {}, history, max_pages=None, info={})
    assert snapshot.history["t"] == [0.0, 1.0]
    assert snapshot.history["pages_per_s"] == [0.0, 20.0]
