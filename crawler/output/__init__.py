"""What a crawl writes, and reading it back.

records.py       PageRecord and Skip: what a crawl produces, plain values
sinks.py         the PageSink interface; the sinks `output.format` names
jsonl.py         JsonlSink: DIR/pages.jsonl and DIR/skips.jsonl
index.py         IndexSink: the full-text index, DIR/index.sqlite, written off the event loop
index_schema.py  the index's tables, columns and versions
index_open.py    the index opened for writing: created, migrated, checked
index_writes.py  what the writer stores for a batch, and FTS5's entries made after
index_read.py    the index opened for reading: its version's layout, its errors
search.py        search: the pages best matching a query
ranking.py       what tells the page that defines a name from those that mention it
export.py        export: the pages, the changes or the skips, as JSON lines or CSV
"""

from crawler.output.export import export_pages
from crawler.output.index import IndexSink
from crawler.output.jsonl import JsonlSink
from crawler.output.records import PageRecord, Skip
from crawler.output.search import SearchHit, search
from crawler.output.sinks import PageSink, open_sinks, output_files

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
