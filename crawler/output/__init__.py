"""What a crawl writes, and reading it back.

records.py       PageRecord and Skip: what a crawl produces, plain values
sinks.py         the PageSink interface; the sinks `output.format` names
jsonl.py         JsonlSink: DIR/pages.jsonl and DIR/skips.jsonl
index.py         IndexSink: the full-text index, DIR/index.sqlite, written off the event loop
index_schema.py  the index's tables, columns and versions
index_open.py    the index opened for writing: created, migrated, checked
index_writes.py  what the writer stores for a batch, and FTS5's entries made after
index_read.py    the index opened for reading: its version's layout, its errors
searching.py     search: the pages best matching a query
ranking.py       what tells the page that defines a name from those that mention it
export.py        export: the pages, the changes or the skips, as JSON lines or CSV
"""

import typing

from crawler._faces import lazy_names as _lazy_names

if typing.TYPE_CHECKING:
    from crawler.output.export import export_pages
    from crawler.output.index import IndexSink
    from crawler.output.jsonl import JsonlSink
    from crawler.output.records import PageRecord, Skip
    from crawler.output.searching import SearchHit, search
    from crawler.output.sinks import PageSink, open_sinks, output_files

_HOMES = {
    "IndexSink": "crawler.output.index",
    "JsonlSink": "crawler.output.jsonl",
    "PageRecord": "crawler.output.records",
    "PageSink": "crawler.output.sinks",
    "SearchHit": "crawler.output.searching",
    "Skip": "crawler.output.records",
    "export_pages": "crawler.output.export",
    "open_sinks": "crawler.output.sinks",
    "output_files": "crawler.output.sinks",
    "search": "crawler.output.searching",
}
"""Where each name lives, imported when first used (PEP 562): the index writer's process
(crawler.output.index_writer) needs records and the writes, not search, export or the sinks."""


__getattr__, __dir__ = _lazy_names(__name__, _HOMES)

__all__ = [
    "IndexSink",
    "JsonlSink",
    "PageRecord",
    "PageSink",
    "SearchHit",
    "Skip",
    "export_pages",
    "open_sinks",
    "output_files",
    "search",
]
