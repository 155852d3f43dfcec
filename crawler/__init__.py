"""crawler: a polite asynchronous web crawler."""

from crawler.config import Config, load_config
from crawler.crawl import Crawler
from crawler.errors import ConfigError, CrawlerError, SearchError
from crawler.index import IndexSink, SearchHit, export_pages, search
from crawler.page import Page, PageRules, read_page
from crawler.records import PageRecord, Skip
from crawler.robots import Explanation, RobotsOptions, RobotsTxt
from crawler.stats import CrawlStats, DeferredHost, HostReport
from crawler.tuning import tune_allocator

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
