"""`Monitor` on a crawler of thousands of hosts, in this process: the table is served a page at
a time, sorted and filtered on the server, /metrics labels the busiest hosts only, and requests
close together share one snapshot."""

from __future__ import annotations

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from crawler.config import Config, ServeAddress
from crawler.crawl.crawler import Crawler
from crawler.monitor.server import Monitor

pytestmark = pytest.mark.loopback

HOSTS = 3000


async def test_thousands_of_hosts_are_served_a_page_at_a_time() -> None:
    monitor = Monitor(
        ServeAddress("127.0.0.1", 0), metrics_hosts=20, max_pages=None, info={"version": "t"}
    )
    url = await monitor.start()
    try:
        async with Crawler(Config()) as crawler:
            for number in range(HOSTS):
                host = crawler.parts.hosts.get(f"http://h{number:04d}.test")
                host.timing.requests = number % 50
                if number % 100 == 0:
                    host.failed(429)
            monitor.watch(crawler, lambda hosts: {"outcome": "running", "hosts": len(hosts)})
            async with aiohttp.ClientSession() as session:
                async with session.get(url + "status.json?sort=requests&limit=50") as answer:
                    document = await answer.json()
                async with session.get(url + "metrics") as answer:
                    metrics = await answer.text()
                async with session.get(url + "status.json?sort=http_429&filter=h00") as answer:
                    filtered = await answer.json()
        live = document["live"]
        assert live["hosts_total"] == HOSTS
        assert len(live["host_rows"]) == 50 and live["host_table"]["matched"] == HOSTS
        assert [row["requests"] for row in live["host_rows"]] == [49] * 50
        assert document["hosts"] == 100  # the summary's part: the busiest 100 only
        families = {f.name: f for f in text_string_to_metric_families(metrics)}
        labelled = {s.labels["host"] for s in families["crawler_host_requests"].samples}
        assert len(labelled) == 20
        assert families["crawler_hosts"].samples[0].labels == {"state": "in flight"}
        assert sum(s.value for s in families["crawler_hosts"].samples) == HOSTS
        rows = filtered["live"]["host_rows"]
        assert filtered["live"]["host_table"]["matched"] == 100  # h0000 ... h0099
        assert rows[0]["origin"] == "http://h0000.test" and rows[0]["http_429"] == 1
        assert monitor.snapshots == 1  # three requests within a second: one snapshot
    finally:
        await monitor.close()


async def test_before_the_crawl_is_watched_the_server_says_it_is_starting() -> None:
    monitor = Monitor(ServeAddress("127.0.0.1", 0), metrics_hosts=20, max_pages=None, info={})
    url = await monitor.start()
    try:
        async with aiohttp.ClientSession() as session:
            for path in ("status.json", "metrics"):
                async with session.get(url + path) as answer:
                    assert answer.status == 503
            # A name that is not the server's (DNS rebinding) is refused; its address is not.
            async with session.get(url, headers={"Host": "evil.example:80"}) as answer:
                assert answer.status == 403
            async with session.get(url, headers={"Host": "localhost"}) as answer:
                assert answer.status == 200
            async with session.get(url) as answer:
                assert answer.status == 200
                policy = answer.headers["Content-Security-Policy"]
                assert "default-src 'none'" in policy and "script-src 'sha256-" in policy
    finally:
        await monitor.close()
