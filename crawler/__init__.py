"""crawler: a polite asynchronous web crawler.

The package is laid out by concern, the pure core at the bottom and the I/O shell on top:

    errors, urls, frontier, politeness, stats   small shared pieces (all pure); selectors, a
                field's CSS selector (extract:) checked
    config/     the typed, validated configuration: schema, checks (pure), the YAML loader
    identity    who the crawl says it is: the placeholder User-Agent's notice
    robots/     the robots.txt engine: pure, never raises
    page/       the page step: bytes and headers in, a Page out; pure (plus the compiled walk)
    http/       GET -> Response | FetchFailure; never raises
    output/     what a crawl writes (index, JSONL) and reading it back (search, export)
    state/      what survives a stop, a kill or a reboot
    crawl/      the shell: the Crawler, its launch loop, a request's parts, the decisions
    cli/        `crawl` and its subcommands
    runtime     process-wide settings: event loop, allocator, garbage collector, open files
    child       processes of the crawl's own (page reader, WARC writer): start, death, pipes

Imports point down that list; tests/test_layering.py keeps it so.
"""

import typing

from crawler._faces import lazy_names as _lazy_names
from crawler._version import __version__ as __version__

if typing.TYPE_CHECKING:
    from crawler.config import Config, load_config
    from crawler.crawl import Crawler
    from crawler.crawl.user_fields import PageDocument
    from crawler.errors import (
        ConfigError,
        CrawlerError,
        DiskFullError,
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

_HOMES = {
    "Config": "crawler.config",
    "ConfigError": "crawler.errors",
    "CrawlState": "crawler.state",
    "CrawlStats": "crawler.stats",
    "Crawler": "crawler.crawl",
    "CrawlerError": "crawler.errors",
    "DeferredHost": "crawler.stats",
    "DiskFullError": "crawler.errors",
    "Explanation": "crawler.robots",
    "HostReport": "crawler.stats",
    "IndexSink": "crawler.output",
    "JsonlSink": "crawler.output",
    "MemoryCrawlState": "crawler.state",
    "OutputError": "crawler.errors",
    "Page": "crawler.page",
    "PageDocument": "crawler.crawl.user_fields",
    "PageRecord": "crawler.output",
    "PageRules": "crawler.page",
    "PageSink": "crawler.output",
    "RobotsOptions": "crawler.robots",
    "RobotsTxt": "crawler.robots",
    "SearchError": "crawler.errors",
    "SearchHit": "crawler.output",
    "SeedError": "crawler.errors",
    "Skip": "crawler.output",
    "StateError": "crawler.errors",
    "export_pages": "crawler.output",
    "load_config": "crawler.config",
    "open_state": "crawler.state",
    "read_page": "crawler.page",
    "search": "crawler.output",
    "tune_allocator": "crawler.runtime",
}
"""Where each name of the package's interface lives. They are imported when first used, not with
the package: a process of the crawl's own (crawler.child) that reads pages needs crawler.page,
not the whole crawler, and starts in a tenth of the time."""


__getattr__, __dir__ = _lazy_names(__name__, _HOMES)

__all__ = [
    "Config",
    "ConfigError",
    "CrawlState",
    "CrawlStats",
    "Crawler",
    "CrawlerError",
    "DeferredHost",
    "DiskFullError",
    "Explanation",
    "HostReport",
    "IndexSink",
    "JsonlSink",
    "MemoryCrawlState",
    "OutputError",
    "Page",
    "PageDocument",
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
