"""`JsonlSink` writes `pages.jsonl` (one object per fetched URL) and `skips.jsonl` (one per URL not
fetched, with its reason) into the data directory. Files are appended to, never truncated, so an
earlier run's output is not lost. Writes go through a buffer the crawl flushes at each commit
of its state and at the end; a record counts as stored once flushed (a killed process loses
nothing the operating system has been given).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

from crawler.errors import OutputError
from crawler.output.records import PageRecord, Skip, Unskip, compact_json

__all__ = ["PAGES_NAME", "SKIPS_NAME", "JsonlSink"]

PAGES_NAME = "pages.jsonl"
SKIPS_NAME = "skips.jsonl"


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

    def unskip(self, unskip: Unskip) -> None:
        # The files are a log: the skip line stays, and the URL's page line, when it is fetched,
        # comes after it. Counted so `stored` keeps step with the records handed.
        self._written += 1

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
