"""Where crawl output goes: sinks that take page records and skips (`PageSink`), and the ones
`output.format` names: the full-text index (crawler.output.index), the JSONL files
(crawler.output.jsonl), or both (`open_sinks`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol, runtime_checkable

from crawler.config import IndexWriter, OutputFormat, Stemming
from crawler.output.index import IndexSink
from crawler.output.index_open import check_index
from crawler.output.index_schema import INDEX_NAME
from crawler.output.jsonl import PAGES_NAME, SKIPS_NAME, JsonlSink
from crawler.output.records import PageRecord, Skip, Unskip
from crawler.output.warc import WARC_DIR, Exchange, WarcSink

__all__ = ["ArchiveSink", "PageSink", "check_outputs", "open_sinks", "output_files"]


class PageSink(Protocol):
    def page(self, record: PageRecord) -> None: ...

    def skip(self, skip: Skip) -> None: ...

    def unskip(self, unskip: Unskip) -> None:
        """Withdraw the skip of a URL now queued; counts as a record handed, as `skip` does."""

    def flush(self) -> None: ...

    @property
    def failed(self) -> bool:
        """A write failed: `flush` raises it. The crawl asks at each wake, so that a full disk
        stops it at once, with little in memory, not at its next checkpoint."""
        ...

    def close(self) -> None: ...

    @property
    def stored(self) -> int:
        """Records (pages and skips, counted in the order given) stored for good: committed, or
        written to the operating system. A crawl marks a URL done only once its record is
        (crawler.state)."""
        ...


@runtime_checkable
class ArchiveSink(PageSink, Protocol):
    """A sink that also archives answers (crawler.output.warc). Its `stored` counts exchanges
    and records alike, in the order given."""

    def exchange(self, exchange: Exchange) -> None: ...


_WRITES_INDEX = ("index", "both")
_WRITES_JSONL = ("jsonl", "both")


def output_files(directory: Path, output_format: OutputFormat, *, warc: bool = False) -> list[Path]:
    """The files a crawl with `output.format` writes into `directory` (and with `warc`, the
    directory of its WARC files)."""
    files = [directory / INDEX_NAME] if output_format in _WRITES_INDEX else []
    if output_format in _WRITES_JSONL:
        files += [directory / PAGES_NAME, directory / SKIPS_NAME]
    if warc:
        files.append(directory / WARC_DIR)
    return files


def check_outputs(
    directory: Path, output_format: OutputFormat, stemming: Stemming = "auto"
) -> None:
    """OutputError if an output a crawl would write is there and cannot be written (a damaged
    index, or one made with another `index.stemming`); reads only."""
    if output_format in _WRITES_INDEX:
        check_index(directory, stemming)


def open_sinks(
    directory: Path,
    output_format: OutputFormat,
    stemming: Stemming = "auto",
    *,
    purpose: str = "search",
    writer: IndexWriter = "thread",
    warc_info: Mapping[str, str] | None = None,
    warc_file_bytes: int = 1_000_000_000,
) -> list[PageSink]:
    """The sinks `output.format` names ('index', 'jsonl' or 'both'), open in `directory`; a new
    index stems as `stemming` says, records the crawl's `purpose`, and is written where
    `writer` says (IndexSink). With `warc_info` (the
    warcinfo record's fields), the WARC archive too, files rotated at `warc_file_bytes`."""
    sinks: list[PageSink] = []
    if warc_info is not None:
        sinks.append(WarcSink(directory, info=warc_info, file_bytes=warc_file_bytes))
    if output_format in _WRITES_INDEX:
        sinks.append(IndexSink(directory, stemming=stemming, purpose=purpose, writer=writer))
    if output_format in _WRITES_JSONL:
        sinks.append(JsonlSink(directory))
    return sinks
