#!/usr/bin/env python3
"""Scrapy as a fair user would set it up to crawl the local test web politely.

    python benchmarks/rivals/scrapy_bench_spider.py SEEDS --delay 0.5 [--concurrency 64]
        [--user-agent UA]

Run by benchmarks/bench_politeness.py. Scrapy ignores Crawl-delay, so the delay is set by hand as
DOWNLOAD_DELAY, with Scrapy's default jitter (RANDOMIZE_DOWNLOAD_DELAY, now
DOWNLOAD_DELAY_JITTER=0.5: each wait is 0.5x..1.5x the delay). One request at a time per download
slot; Scrapy's slots are keyed by hostname, here one IP per host, so per host as robots.txt
means. robots.txt is obeyed (Protego). The spider follows every link that LinkExtractor finds to
the seeds' hosts (allowed_domains). At the end it prints a JSON line of Scrapy's own counters.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy.crawler import CrawlerProcess
from scrapy.http import Response, TextResponse
from scrapy.linkextractors import LinkExtractor

USER_AGENT = "PoliteBot/0.1 (+https://example.org/bot)"
STATS = (
    "downloader/request_count",
    "downloader/response_count",
    "downloader/response_status_count/200",
    "downloader/response_status_count/404",
    "robotstxt/request_count",
    "robotstxt/forbidden",
    "dupefilter/filtered",
    "offsite/filtered",
    "elapsed_time_seconds",
    "finish_reason",
)


class SeedsSpider(scrapy.Spider):
    name = "politeness-bench"

    def __init__(self, seeds: Sequence[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = list(seeds)
        # Scrapy's offsite middleware compares hostnames: the seeds' IPs, ports aside. (Not
        # LinkExtractor(allow_domains=...): it compares host:port, so bare IPs never match.)
        self.allowed_domains = sorted({urlsplit(url).hostname or "" for url in seeds})
        self.links = LinkExtractor()

    def parse(self, response: Response, **kwargs: Any) -> Iterator[scrapy.Request]:
        if not isinstance(response, TextResponse):
            return
        for link in self.links.extract_links(response):
            yield scrapy.Request(link.url, callback=self.parse)


def settings(delay: float, concurrency: int, user_agent: str) -> dict[str, Any]:
    return {
        "ROBOTSTXT_OBEY": True,
        "DOWNLOAD_DELAY": delay,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "CONCURRENT_REQUESTS": concurrency,
        "USER_AGENT": user_agent,
        "LOG_LEVEL": "WARNING",
        "TELNETCONSOLE_ENABLED": False,  # no listening port of its own; no effect on the crawl
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("seeds", type=Path, help="one URL per line")
    parser.add_argument("--delay", type=float, required=True, help="DOWNLOAD_DELAY, seconds")
    parser.add_argument("--concurrency", type=int, default=64, help="CONCURRENT_REQUESTS")
    parser.add_argument("--user-agent", default=USER_AGENT)
    args = parser.parse_args(argv)
    seeds = [line.strip() for line in args.seeds.read_text().splitlines() if line.strip()]
    process = CrawlerProcess(settings(args.delay, args.concurrency, args.user_agent))
    crawler = process.create_crawler(SeedsSpider)
    process.crawl(crawler, seeds=seeds)
    process.start()
    stats = crawler.stats.get_stats() if crawler.stats else {}
    print(json.dumps({key: stats.get(key) for key in STATS}, default=str), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
