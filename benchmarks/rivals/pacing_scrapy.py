#!/usr/bin/env python3
"""Scrapy set up for the pacing servers of benchmarks/bench_pacing.py, as a careful user would.

    python benchmarks/rivals/pacing_scrapy.py SEEDS [--autothrottle]

robots.txt obeyed (ROBOTSTXT_OBEY), DOWNLOAD_DELAY 0.1 s without jitter (the same least interval
ours is given), one request at a time per host (CONCURRENT_REQUESTS_PER_DOMAIN 1) and 64 in all,
cookies off. --autothrottle turns AutoThrottle on with its defaults (AUTOTHROTTLE_START_DELAY 5 s,
target concurrency 1, max delay 60 s): the delay follows each answer's latency, DOWNLOAD_DELAY as
its floor. Retries are Scrapy's default: 429, 503 and the other codes of RETRY_HTTP_CODES asked
again twice, at once (no backoff, no Retry-After). Scrapy's timeouts are its defaults too
(DOWNLOAD_TIMEOUT 180 s). The spider follows every link to the seeds' hosts (allowed_domains) and
yields no items. At the end it prints one JSON line: pages parsed, and Scrapy's counters of
retries, statuses and robots.txt.
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

USER_AGENT = "ScrapyPacing/1.0 (Scrapy)"
DOWNLOAD_DELAY_S = 0.1
WATCHERS_OFF = {
    "scrapy.extensions.telnet.TelnetConsole": None,
    "scrapy.extensions.logstats.LogStats": None,
    "scrapy.extensions.memusage.MemoryUsage": None,
}
COUNTER_PREFIXES = ("retry/", "downloader/response_status_count/", "robotstxt/", "finish_reason")


class PacingSpider(scrapy.Spider):
    name = "pacing-bench"

    def __init__(self, seeds: Sequence[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = list(seeds)
        # The offsite middleware compares hostnames: the seeds' IPs.
        self.allowed_domains = sorted({urlsplit(url).hostname or "" for url in seeds})
        self.links = LinkExtractor()
        self.pages = 0

    def parse(self, response: Response, **kwargs: Any) -> Iterator[scrapy.Request]:
        if not isinstance(response, TextResponse):
            return
        self.pages += 1
        for link in self.links.extract_links(response):
            yield scrapy.Request(link.url, callback=self.parse)


def settings(autothrottle: bool) -> dict[str, Any]:
    return {
        "ROBOTSTXT_OBEY": True,
        "DOWNLOAD_DELAY": DOWNLOAD_DELAY_S,
        "RANDOMIZE_DOWNLOAD_DELAY": False,
        "CONCURRENT_REQUESTS": 64,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "AUTOTHROTTLE_ENABLED": autothrottle,
        "COOKIES_ENABLED": False,
        "USER_AGENT": USER_AGENT,
        "LOG_LEVEL": "WARNING",
        "TELNETCONSOLE_ENABLED": False,
        "EXTENSIONS": WATCHERS_OFF,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("seeds", type=Path, help="one URL per line")
    parser.add_argument("--autothrottle", action="store_true", help="AUTOTHROTTLE_ENABLED")
    args = parser.parse_args(argv)
    seeds = [line.strip() for line in args.seeds.read_text().splitlines() if line.strip()]
    process = CrawlerProcess(settings(args.autothrottle))
    crawler = process.create_crawler(PacingSpider)
    process.crawl(crawler, seeds=seeds)
    process.start()
    spider = crawler.spider
    figures: dict[str, Any] = {"pages": spider.pages if isinstance(spider, PacingSpider) else None}
    stats = crawler.stats.get_stats() if crawler.stats else {}
    figures |= {key: value for key, value in stats.items() if key.startswith(COUNTER_PREFIXES)}
    print(json.dumps(figures, default=str), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
