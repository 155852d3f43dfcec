"""crawler: a polite asynchronous web crawler."""

from crawler.config import Config, load_config
from crawler.crawl.crawler import Crawler
from crawler.errors import ConfigError, CrawlerError, SearchError
from crawler.output.index import IndexSink
from crawler.output.records import PageRecord, Skip
from crawler.output.search import SearchHit, export_pages, search
from crawler.page.read import Page, PageRules, read_page
from crawler.robots.txt import Explanation, RobotsOptions, RobotsTxt
from crawler.runtime import tune_allocator
from crawler.stats import CrawlStats, DeferredHost, HostReport

__all__ = [
    "Config",
    "ConfigError",
    "CrawlStats",
    "Crawler",
    "CrawlerError",
    "DeferredHost",
    "Explanation",
    "HostReport",
    "IndexSink",
    "Page",
    "PageRecord",
    "PageRules",
    "RobotsOptions",
    "RobotsTxt",
    "SearchError",
    "SearchHit",
    "Skip",
    "export_pages",
    "load_config",
    "read_page",
    "search",
    "tune_allocator",
]
