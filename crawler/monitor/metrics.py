"""/metrics: the crawl's figures in the Prometheus text exposition format, made by
`prometheus_client` from a snapshot (pure: no registry of the process's, nothing global).

The labels are bounded: no label names a URL. Status codes, error kinds, skip reasons, page rules,
changes and host states are short fixed lists; a label per host is given only to the busiest
`monitor.metrics_hosts` hosts by requests (20 by default), so a crawl of 100,000 hosts exposes
20 hosts' series, not 100,000. As the busiest change, a host's series may stop and another's begin.

The counters add up over the runs of a crawl (a resumed crawl starts them where it left off), as
summary.json's figures do; Prometheus reads a counter that goes down as a restart.
"""

from __future__ import annotations

import heapq
import typing
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from prometheus_client.core import (
    CollectorRegistry,
    CounterMetricFamily,
    GaugeMetricFamily,
    Metric,
)
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector

from crawler.monitor.hosts import HostRow
from crawler.monitor.snapshot import Snapshot
from crawler.stats import Outcome

__all__ = ["CONTENT_TYPE", "PREFIX", "exposition", "metric_families"]

PREFIX = "crawler_"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_COUNTERS = (
    ("pages", "pages", "Page records produced: fetched URLs, after redirects."),
    ("urls_met", "met", "Distinct URLs the crawl met: seeds, links, redirect targets."),
    ("urls_fetched", "fetched", "URLs asked for and done with: answered, or failed for good."),
    ("requests", "requests", "HTTP requests: pages, redirect hops, retries and robots.txt."),
    ("robots_fetches", "robots_fetches", "robots.txt files fetched."),
    ("sitemaps", "sitemaps", "Sitemap files fetched and read."),
    ("response_bytes", "bytes", "Bytes of answers' bodies read."),
    ("retries", "retries", "Requests asked again after a failure (fetch.max_retries)."),
    ("throttled", "throttled", "Requests refused (429, 503) and asked again."),
)
_LABELLED = (
    ("responses", "statuses", "code", "Answers by HTTP status code."),
    ("errors", "errors", "kind", "Failures by kind: timeout, connection, dns, ..."),
    ("skips", "skips", "reason", "URLs not fetched, by reason: each URL once."),
    ("pages_read", "page_rules", "rule", "HTML pages read, by what they allowed."),
    ("changes", "changes", "change", "Fetched URLs by what they found against the last fetch."),
    ("requisites", "requisites", "fate", "Page requisites by fate: fetched, skipped, failed."),
    ("requisite_skips", "requisite_skips", "reason", "Page requisites not fetched, by reason."),
)
_HOST_FIGURES: tuple[tuple[str, str, str, bool], ...] = (
    ("requests", "requests", "Requests to the host, robots.txt included.", True),
    ("pages", "pages", "Pages started at the host.", True),
    ("queued_urls", "queued", "URLs of the host queued.", False),
    ("in_flight", "in_flight", "Requests to the host in flight.", False),
    ("interval_seconds", "interval", "Seconds between request starts in force.", False),
    ("answer_time_seconds", "answer_time", "The host's answer time, to first byte.", False),
    ("refusals", "refusals", "429 and 503 answers from the host (all runs).", True),
)


def _name(name: str) -> str:
    return PREFIX + name


def metric_families(snapshot: Snapshot, busiest: int) -> Iterator[Metric]:
    """The snapshot's metrics, `busiest` hosts with series of their own."""
    stats = snapshot.stats
    for name, field, text in _COUNTERS:
        yield CounterMetricFamily(_name(name), text, value=getattr(stats, field))
    for name, field, label, text in _LABELLED:
        family = CounterMetricFamily(_name(name), text, labels=[label])
        counts: Mapping[Any, int] = getattr(stats, field)
        for key, count in sorted(counts.items(), key=lambda item: str(item[0])):
            family.add_metric([str(key)], count)
        yield family
    yield from _gauges(snapshot)
    yield from _host_families(snapshot.rows, busiest)


def _gauges(snapshot: Snapshot) -> Iterator[Metric]:
    stats = snapshot.stats
    yield GaugeMetricFamily(_name("queued_urls"), "URLs queued.", value=stats.queued)
    yield GaugeMetricFamily(
        _name("requests_in_flight"), "Requests in flight.", value=stats.in_flight
    )
    hosts = GaugeMetricFamily(
        _name("hosts"), "Hosts the crawl has met, by what they are doing now.", labels=["state"]
    )
    for state, count in snapshot.states.items():
        hosts.add_metric([state], count)
    yield hosts
    yield GaugeMetricFamily(
        _name("elapsed_seconds"), "Seconds the crawl has run, its runs added.", value=stats.elapsed
    )
    yield GaugeMetricFamily(
        _name("start_time_seconds"),
        "When the crawl began, epoch seconds.",
        value=stats.started_at,
    )
    projection = snapshot.projection
    if projection.seconds is not None:
        yield GaugeMetricFamily(
            _name("projected_end_time_seconds"),
            "When the queue will be done at the last minute's pace, epoch seconds.",
            value=snapshot.at + projection.seconds,
        )
    outcome = GaugeMetricFamily(
        _name("outcome"),
        "1 for how the crawl stands: running, or how it ended.",
        labels=["outcome"],
    )
    for name in typing.get_args(Outcome):
        outcome.add_metric([name], 1.0 if stats.outcome == name else 0.0)
    yield outcome
    labels = sorted(snapshot.info)
    info = GaugeMetricFamily(_name("info"), "The crawler and what it runs on.", labels=labels)
    info.add_metric([snapshot.info[label] for label in labels], 1.0)
    yield info


def _host_families(rows: Iterable[HostRow], busiest: int) -> Iterator[Metric]:
    chosen = heapq.nsmallest(busiest, rows, key=lambda row: (-row.requests, row.origin))
    for name, field, text, counter in _HOST_FIGURES:
        kind = CounterMetricFamily if counter else GaugeMetricFamily
        family = kind(_name("host_" + name), text + " The busiest hosts only.", labels=["host"])
        for row in chosen:
            value = getattr(row, field)
            if value is not None:
                family.add_metric([row.origin], value)
        yield family
    failures = CounterMetricFamily(
        _name("host_failures"),
        "Failed requests of this run: 429, 5xx asked again, or no answer (network). The busiest "
        "hosts only.",
        labels=["host", "kind"],
    )
    for row in chosen:
        failures.add_metric([row.origin, "429"], row.http_429)
        failures.add_metric([row.origin, "5xx"], row.http_5xx)
        failures.add_metric([row.origin, "network"], row.errors)
    yield failures


class _Families(Collector):
    def __init__(self, families: Iterable[Metric]) -> None:
        self._families = list(families)

    def collect(self) -> Iterable[Metric]:
        return self._families


def exposition(snapshot: Snapshot, busiest: int, also: Iterable[Collector] = ()) -> bytes:
    """/metrics' body; `also`: more collectors (the process's CPU and memory, the server's)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Families(metric_families(snapshot, busiest)))
    for collector in also:
        registry.register(collector)
    return generate_latest(registry)
