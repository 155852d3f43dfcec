#!/usr/bin/env python3
"""Scrapy set up for speed on the speed web of benchmarks/bench_speed.py.

    python benchmarks/rivals/speed_scrapy.py SEEDS [--concurrency 64] [--per-domain 64]

robots.txt obeyed (ROBOTSTXT_OBEY, Protego), no delay (DOWNLOAD_DELAY 0, AutoThrottle off),
CONCURRENT_REQUESTS and CONCURRENT_REQUESTS_PER_DOMAIN high, cookies off (Scrapy's advice for
broad crawls), logging at WARNING, and the extensions that only watch (telnet console, core and
periodic stats, memory usage) off. Scrapy's default reactor (asyncio) and its default
middlewares otherwise. On every HTML page the spider takes the text (`//body//text()`, joined)
and the links (LinkExtractor), and follows every link to the seeds' hosts (allowed_domains); it
yields no items, so Scrapy writes nothing: less work than ours does. At the end it prints one
JSON line: pages parsed, links, text characters, Scrapy's robots.txt counters.
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

USER_AGENT = "ScrapySpeed/1.0 (Scrapy)"
WATCHERS_OFF = {
    "scrapy.extensions.telnet.TelnetConsole": None,
    "scrapy.extensions.corestats.CoreStats": None,
    "scrapy.extensions.logstats.LogStats": None,
    "scrapy.extensions.memusage.MemoryUsage": None,
}


class SpeedSpider(scrapy.Spider):
    name = "speed-bench"

    def __init__(self, seeds: Sequence[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = list(seeds)
        # The offsite middleware compares hostnames: the seeds' IPs (LinkExtractor's
        # allow_domains would compare host:port).
        self.allowed_domains = sorted({urlsplit(url).hostname or "" for url in seeds})
        self.links = LinkExtractor()
        self.figures = {"pages": 0, "links": 0, "text_chars": 0}

    def parse(self, response: Response, **kwargs: Any) -> Iterator[scrapy.Request]:
        if not isinstance(response, TextResponse):
            return
        text = " ".join(response.xpath("//body//text()").getall())
        links = self.links.extract_links(response)
        self.figures["pages"] += 1
        self.figures["text_chars"] += len(text)
        self.figures["links"] += len(links)
        for link in links:
            yield scrapy.Request(link.url, callback=self.parse)


def settings(concurrency: int, per_domain: int) -> dict[str, Any]:
    return {
        "ROBOTSTXT_OBEY": True,
        "CONCURRENT_REQUESTS": concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": per_domain,
        "DOWNLOAD_DELAY": 0,
        "AUTOTHROTTLE_ENABLED": False,
        "COOKIES_ENABLED": False,
        "USER_AGENT": USER_AGENT,
        "LOG_LEVEL": "WARNING",
        "TELNETCONSOLE_ENABLED": False,
        "EXTENSIONS": WATCHERS_OFF,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("seeds", type=Path, help="one URL per line")
    parser.add_argument("--concurrency", type=int, default=64, help="CONCURRENT_REQUESTS")
    parser.add_argument("--per-domain", type=int, default=64, help="CONCURRENT_REQUESTS_PER_DOMAIN")
    args = parser.parse_args(argv)
    seeds = [line.strip() for line in args.seeds.read_text().splitlines() if line.strip()]
    process = CrawlerProcess(settings(args.concurrency, args.per_domain))
    crawler = process.create_crawler(SpeedSpider)
    process.crawl(crawler, seeds=seeds)
    process.start()
    spider = crawler.spider
    figures = dict(spider.figures) if isinstance(spider, SpeedSpider) else {}
    stats = crawler.stats.get_stats() if crawler.stats else {}
    for key in ("robotstxt/request_count", "robotstxt/forbidden", "finish_reason"):
        figures[key] = stats.get(key)
    print(json.dumps(figures, default=str), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
