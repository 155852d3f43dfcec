"""What a crawl writes (the full-text index, JSONL files) and reading it back (search, export)."""

from crawler.output.index import IndexSink
from crawler.output.jsonl import JsonlSink
from crawler.output.records import PageRecord, Skip
from crawler.output.search import SearchHit, export_pages, search
from crawler.output.sinks import PageSink, open_sinks

__all__ = [
    "IndexSink",
    "JsonlSink",
    "PageRecord",
    "PageSink",
    "SearchHit",
    "Skip",
    "export_pages",
    "open_sinks",
    "search",
]
