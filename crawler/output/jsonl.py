"""`JsonlSink` writes `pages.jsonl` (one object per fetched URL) and `skips.jsonl` (one per URL not
fetched, with its reason) into the data directory. Files are appended to, never truncated, so an
earlier run's output is not lost. Lines wait in memory (written out every `BUFFER_BYTES`) until
the crawl flushes at each commit of its state and at the end; a record counts as stored once
flushed (a killed process loses nothing the operating system has been given). A write that fails
(a full disk) cuts the file back to its length before it, no half line left; the records whose
lines were written before it count as stored, and its lines wait for the close, which writes them
once the crawl has made room (crawler.output.reserve). So the state and the files agree.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from crawler.errors import DiskFullError, OutputError, no_room
from crawler.output.records import PageRecord, Skip, Unskip, compact_json

__all__ = ["PAGES_NAME", "SKIPS_NAME", "JsonlSink"]

PAGES_NAME = "pages.jsonl"
SKIPS_NAME = "skips.jsonl"
BUFFER_BYTES = 1 << 16
"""Lines gathered before they are written out (stored only at the next flush)."""


class _AppendLog:
    """One JSONL file: lines gathered, written with os.write, and the length it had at the last
    flush, to which a failed write cuts it back."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._lines: list[bytes] = []
        self._bytes = 0
        self._flushed = os.fstat(self._fd).st_size
        self._end = self._flushed
        """Its length after the last write that did not fail."""
        self.failed: OSError | None = None
        self.first_waiting: int | None = None
        """The number (in the sink's order) of the first record whose line is not written."""

    def add(self, line: str, number: int) -> None:
        if not self._lines:
            self.first_waiting = number
        data = line.encode("utf-8") + b"\n"
        self._lines.append(data)
        self._bytes += len(data)
        if self._bytes >= BUFFER_BYTES and self.failed is None:
            # A failure is kept for `flush` to raise: a record handed is never refused here,
            # where the crawl would take it for a failure of its page.
            with contextlib.suppress(OSError):
                self._write()

    def flush(self) -> None:
        self._write()
        self._flushed = os.fstat(self._fd).st_size

    def _write(self) -> None:
        if self.failed is not None:
            raise self.failed
        data = b"".join(self._lines)
        out = memoryview(data)
        try:
            while out:
                out = out[os.write(self._fd, out) :]
        except OSError as error:
            self.failed = error
            # Half a line goes; the lines stay for `retry`.
            os.ftruncate(self._fd, self._end)
            self._lines, self._bytes = [data], len(data)
            raise
        self._lines, self._bytes = [], 0
        self._end += len(data)
        self.first_waiting = None

    def retry(self) -> None:
        """Write again after a full disk (flush raises its error until then)."""
        if self.failed is not None and no_room(self.failed) is not None:
            self.failed = None

    def close(self) -> None:
        if self._fd < 0:
            return
        try:
            if self.failed is None:
                self.flush()
        finally:
            os.close(self._fd)
            self._fd = -1

    @property
    def closed(self) -> bool:
        return self._fd < 0


class JsonlSink:
    def __init__(self, directory: Path) -> None:
        try:
            directory.mkdir(parents=True, exist_ok=True)
            self._pages = _AppendLog(directory / PAGES_NAME)
            self._skips = _AppendLog(directory / SKIPS_NAME)
        except OSError as error:
            raise OutputError(f"cannot write to data directory {directory}: {error}") from error
        self.directory = directory
        self._written = 0
        self._stored = 0

    @property
    def stored(self) -> int:
        return self._stored

    @property
    def failed(self) -> bool:
        return self._pages.failed is not None or self._skips.failed is not None

    def page(self, record: PageRecord) -> None:
        self._write(self._pages, compact_json(record.to_json()))

    def skip(self, skip: Skip) -> None:
        self._write(self._skips, compact_json(skip.to_json()))

    def unskip(self, unskip: Unskip) -> None:
        # The files are a log: the skip line stays, and the URL's page line, when it is fetched,
        # comes after it. Counted so `stored` keeps step with the records handed.
        self._written += 1

    def flush(self) -> None:
        for log in (self._pages, self._skips):
            try:
                log.flush()
            except OSError as error:
                # Stored: the records before the first whose line waits in memory.
                waiting = [log.first_waiting for log in (self._pages, self._skips)]
                self._stored = min([self._written, *(n for n in waiting if n is not None)])
                raise self._failed(error, log) from error
        self._stored = self._written

    def close(self) -> None:
        if self._pages.closed:
            return
        for log in (self._pages, self._skips):
            log.retry()  # the crawl has made room for the lines a full disk left in memory
        try:
            self.flush()
        finally:
            # Both closed whatever failed: what was not flushed is lost either way.
            for log in (self._pages, self._skips):
                with contextlib.suppress(OSError):  # the flush above raised the one to report
                    log.close()

    def _write(self, log: _AppendLog, line: str) -> None:
        try:
            log.add(line, self._written)
        except OSError as error:
            raise self._failed(error, log) from error
        self._written += 1

    def _failed(self, error: OSError, log: _AppendLog) -> OutputError:
        reason = no_room(error)
        if reason is not None:
            return DiskFullError(log.path, reason)
        return OutputError(f"cannot write to data directory {self.directory}: {error}")

    def __repr__(self) -> str:
        return f"JsonlSink({self.directory})"
