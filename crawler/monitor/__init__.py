"""Watching a crawl while it runs (`crawl SEEDS --serve [HOST:]PORT`, monitor.serve): a live
status page at /, Prometheus metrics at /metrics, the live summary at /status.json, served
read-only by the crawl's own process, on its event loop, at no cost per page.

    history.py   the figures over time (sampled once a second) and the projected end: pure
    hosts.py     the host table: a row per host, filtered, sorted and paged: pure
    snapshot.py  the crawl at one moment, and /status.json made of it: pure
    metrics.py   /metrics made of a snapshot (prometheus_client): pure
    workers.py   where a shared crawl's workers serve, said in their heartbeats: pure
    server.py    `Monitor`: the aiohttp server, the sampler, when a snapshot is taken
    page.html    the status page: its own script and chart drawing, nothing from elsewhere

`Monitor` is crawler.monitor.server's, imported from there only when --serve is given: its
imports (aiohttp's server, prometheus_client) would cost every crawl's start-up.
"""

from crawler.monitor.workers import served_at, worker_address, worker_info

__all__ = ["served_at", "worker_address", "worker_info"]
