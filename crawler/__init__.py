"""crawler: a polite asynchronous web crawler.

The package is laid out by concern, the pure core at the bottom and the I/O shell on top:

    errors, config, urls, frontier, politeness, stats   small shared pieces (all pure but config)
    identity    who the crawl says it is: the placeholder User-Agent's notice
    robots/     the robots.txt engine: pure, never raises
    page/       the page step: bytes and headers in, a Page out; pure (plus the compiled walk)
    http/       GET -> Response | FetchFailure; never raises
    output/     what a crawl writes (index, JSONL) and reading it back (search, export)
    state/      what survives a stop, a kill or a reboot
    crawl/      the shell: the Crawler, its launch loop, a request's work, the decisions
    cli/        `crawl` and its subcommands
    runtime     process-wide settings: event loop, allocator, garbage collector, open files

Imports point down that list; tests/test_layering.py keeps it so.
"""

from crawler._version import __version__ as __version__
from crawler.config import Config, load_config
from crawler.crawl import Crawler
from crawler.errors import (
    ConfigError,
    CrawlerError,
    OutputError,
    SearchError,
    SeedError,
    StateError,
)
from crawler.output import (
    IndexSink,
    JsonlSink,
    PageRecord,
    PageSink,
    SearchHit,
    Skip,
    export_pages,
    search,
)
from crawler.page import Page, PageRules, read_page
from crawler.robots import Explanation, RobotsOptions, RobotsTxt
from crawler.runtime import tune_allocator
from crawler.state import CrawlState, MemoryCrawlState, open_state
from crawler.stats import CrawlStats, DeferredHost, HostReport

__all__ = [
    "Config",
    "ConfigError",
    "CrawlState",
    "CrawlStats",
    "Crawler",
    "CrawlerError",
    "DeferredHost",
    "Explanation",
    "HostReport",
    "IndexSink",
    "JsonlSink",
    "MemoryCrawlState",
    "OutputError",
    "Page",
    "PageRecord",
    "PageRules",
    "PageSink",
    "RobotsOptions",
    "RobotsTxt",
    "SearchError",
    "SearchHit",
    "SeedError",
    "Skip",
    "StateError",
    "export_pages",
    "load_config",
    "open_state",
    "read_page",
    "search",
    "tune_allocator",
]
