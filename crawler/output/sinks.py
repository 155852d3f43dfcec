"""Where crawl output goes: sinks that take page records and skips.

`open_sinks` opens those `output.format` names: the full-text index (crawler/output/index.py), the
JSONL files, or both.

`JsonlSink` writes `pages.jsonl` (one object per fetched URL) and `skips.jsonl` (one per URL not
fetched, with its reason) into the data directory. Files are appended to, never truncated, so an
earlier run's output is not lost. Writes go through a buffer the crawl flushes at each commit
of its state and at the end; a record counts as stored once flushed (a killed process loses
nothing the operating system has been given).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Protocol

from crawler.errors import OutputError
from crawler.output.index import INDEX_NAME, IndexSink
from crawler.output.records import PageRecord, Skip, compact_json

__all__ = ["JsonlSink", "PageSink", "open_sinks", "output_files"]

PAGES_NAME = "pages.jsonl"
SKIPS_NAME = "skips.jsonl"


class PageSink(Protocol):
    def page(self, record: PageRecord) -> None: ...

    def skip(self, skip: Skip) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...

    @property
    def stored(self) -> int:
        """Records (pages and skips, counted in the order given) stored for good: committed, or
        written to the operating system. A crawl marks a URL done only once its record is
        (crawler/state)."""
        ...


class JsonlSink:
    def __init__(self, directory: Path) -> None:
        try:
            directory.mkdir(parents=True, exist_ok=True)
            self._pages: IO[str] = open(directory / PAGES_NAME, "a", encoding="utf-8")  # noqa: SIM115
            self._skips: IO[str] = open(directory / SKIPS_NAME, "a", encoding="utf-8")  # noqa: SIM115
        except OSError as error:
            raise OutputError(f"cannot write to data directory {directory}: {error}") from error
        self.directory = directory
        self._written = 0
        self._stored = 0

    @property
    def stored(self) -> int:
        return self._stored

    def page(self, record: PageRecord) -> None:
        self._write(self._pages, compact_json(record.to_json()))

    def skip(self, skip: Skip) -> None:
        self._write(self._skips, compact_json(skip.to_json()))

    def flush(self) -> None:
        try:
            self._pages.flush()
            self._skips.flush()
        except OSError as error:
            raise self._failed(error) from error
        self._stored = self._written

    def close(self) -> None:
        if self._pages.closed:
            return
        try:
            self._pages.close()
            self._skips.close()
        except OSError as error:
            raise self._failed(error) from error
        finally:
            # Closes even when the first close failed: its buffered data is lost either way.
            self._skips.close()
        self._stored = self._written

    def _write(self, file: IO[str], line: str) -> None:
        try:
            file.write(line + "\n")
        except OSError as error:
            raise self._failed(error) from error
        self._written += 1

    def _failed(self, error: OSError) -> OutputError:
        return OutputError(f"cannot write to data directory {self.directory}: {error}")

    def __repr__(self) -> str:
        return f"JsonlSink({self.directory})"


_WRITES_INDEX = ("index", "both")
_WRITES_JSONL = ("jsonl", "both")


def output_files(directory: Path, output_format: str) -> list[Path]:
    """The files a crawl with `output.format` writes into `directory`."""
    files = [directory / INDEX_NAME] if output_format in _WRITES_INDEX else []
    if output_format in _WRITES_JSONL:
        files += [directory / PAGES_NAME, directory / SKIPS_NAME]
    return files


def open_sinks(directory: Path, output_format: str) -> list[PageSink]:
    """The sinks `output.format` names ('index', 'jsonl' or 'both'), open in `directory`."""
    sinks: list[PageSink] = []
    if output_format in _WRITES_INDEX:
        sinks.append(IndexSink(directory))
    if output_format in _WRITES_JSONL:
        sinks.append(JsonlSink(directory))
    return sinks
