"""Where crawl output goes: sinks that take page records and skips.

`JsonlSink` writes `pages.jsonl` (one object per fetched URL) and `skips.jsonl` (one per URL not
fetched, with its reason) into the data directory. Files are appended to, never truncated, so an
earlier run's output is not lost. Writes go through a buffer the crawl flushes at each progress
tick and at the end; crash safety is the crawl state's job, not this file's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Protocol

from crawler.errors import OutputError
from crawler.records import PageRecord, Skip

__all__ = ["JsonlSink", "PageSink"]


class PageSink(Protocol):
    def page(self, record: PageRecord) -> None: ...

    def skip(self, skip: Skip) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


class JsonlSink:
    def __init__(self, directory: Path) -> None:
        try:
            directory.mkdir(parents=True, exist_ok=True)
            self._pages: IO[str] = open(directory / "pages.jsonl", "a", encoding="utf-8")  # noqa: SIM115
            self._skips: IO[str] = open(directory / "skips.jsonl", "a", encoding="utf-8")  # noqa: SIM115
        except OSError as error:
            raise OutputError(f"cannot write to data directory {directory}: {error}") from error
        self.directory = directory
        self._encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

    def page(self, record: PageRecord) -> None:
        self._pages.write(self._encode(record.to_json()) + "\n")

    def skip(self, skip: Skip) -> None:
        self._skips.write(self._encode(skip.to_json()) + "\n")

    def flush(self) -> None:
        self._pages.flush()
        self._skips.flush()

    def close(self) -> None:
        self._pages.close()
        self._skips.close()

    def __repr__(self) -> str:
        return f"JsonlSink({self.directory})"
