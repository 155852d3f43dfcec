"""The crawl's archive: `WarcSink` writes every answer as it came over the wire into
DIR/warc/*.warc.gz (WARC 1.1, ISO 28500), through warcio, the Webrecorder project's library.

Records, each its own gzip member (so a reader may seek to any record):

    warcinfo   first in every file: the software, the User-Agent, the robots policy, a digest
               of the crawl's configuration.
    response   an answer as the http1 client received it, head and body before any decoding
               (chunked framing and Content-Encoding as sent: what the server sent is what a
               replay tool sees). `WARC-Truncated: length` when the body was cut at
               fetch.max_body_bytes. robots.txt, sitemaps, redirects and retried errors too.
    request    the GET as sent, `WARC-Concurrent-To` its response.
    revisit    instead of a response: a 304 to a recrawl's conditional GET (profile
               server-not-modified, referring to the last fetch of the URL), or a 2xx payload
               already archived in this run (profile identical-payload-digest, referring to
               the first record of it). The head only, as the profiles say.
    metadata   per fetched page, `WARC-Concurrent-To` its response: the robots.txt line that
               allowed it, what META robots, X-Robots-Tag and in-page sections made of it, and
               the links it gave.

Digests are SHA-1 in base 32, as every WARC tool reads them: `WARC-Block-Digest` over the
record's block, `WARC-Payload-Digest` over the body bytes after the head, as they came (warcio
and FastWARC check it so; with chunked framing, the spec's "entity body" would be the body
without it, a reading the tools do not share).

Writing stays off the event loop, and out of the crawl's process: `exchange()` and `page()`
append to a batch, a thread hands each batch to the writer process (crawler.output.warc_writer),
which builds the records, compresses them and writes the batch with one `write()`, and answers.
`stored` counts what the writer has written to the operating system, in the order given, so a
crawl marks a URL done only once its response is in a file (crawler.crawl.checkpoint): a kill
loses no archived response of a URL marked done. A full disk loses nothing the crawl holds: the
writer process undoes the batch that failed (no half record is left in the file), and the
batches after it wait in memory and are written at the close, in the room the crawl made
(crawler.output.reserve). After each batch the writer notes in DIR/warc/.complete where the
last whole record of the file ends; a crawl opening the directory after a kill cuts the partial
record a batch in flight left at the end of that file, so every file reads to its end. Each run
begins a new file, and a file past `warc_file_bytes` is closed and the next begun.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import re
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from crawler.child import receive, send
from crawler.child import start as start_child
from crawler.errors import DiskFullError, OutputError, no_room
from crawler.frontier import Earlier
from crawler.http.answer import Response
from crawler.output.handoff import BatchHandOff
from crawler.output.records import PageRecord, Skip, Unskip, compact_json
from crawler.runtime import background_thread

__all__ = [
    "COMPLETE_NAME",
    "WARC_DIR",
    "ArchiveFigures",
    "ArchivedAnswer",
    "ArchivedPage",
    "Exchange",
    "WarcSink",
    "config_digest",
    "warc_files",
]

log = logging.getLogger(__name__)

WARC_DIR = "warc"
COMPLETE_NAME = ".complete"
"""In DIR/warc: the file being written and where its last whole record ends."""
WARC_VERSION = "WARC/1.1"
GZIP_LEVEL = 3
"""On HTML (tests/data), level 3 takes half the time of zlib's default 6 for files 9% larger;
level 9, warcio's own, takes 1.3 times 6's for nothing smaller."""
SERVER_NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
REMEMBERED_PAYLOADS = 500_000
"""Payload digests of this run kept for identical-payload revisits (about 150 bytes each); past
this many the oldest are forgotten and their payload, met again, archived again."""
PENDING_PAGES = 100_000
"""Responses kept waiting for their page's metadata record; past this many the oldest wait no
more (their page gets no metadata record)."""


@dataclass(frozen=True, slots=True)
class ArchiveFigures:
    """What a run wrote to WARC files."""

    records: int
    revisits: int
    bytes: int
    """Compressed, as written."""
    files: int


@dataclass(frozen=True, slots=True)
class Exchange:
    """A GET and its answer, to archive."""

    url: str
    started_at: float
    """Epoch seconds when the request started (the records' WARC-Date)."""
    answer: Response
    """With `raw` and `request` kept (crawler.http.fetcher, keep_raw)."""
    robots: str | None = None
    """For a page: the robots.txt decision that let it be fetched, with its line."""
    earlier: Earlier | None = None
    """A recrawl's: what the URL's last fetch found (a 304 refers to it)."""
    page: bool = True
    """An answer that ends in a page record (a page, a sitemap, a redirect hop), which gets a
    metadata record; not robots.txt."""


_CREDENTIALS = re.compile(rb"^((?:proxy-)?authorization:[ \t]*)(\S+)[^\r\n]*", re.I | re.M)


def redacted(request: bytes) -> bytes:
    """The request as archived: its credentials (fetch.auth's Authorization, the proxy's
    Proxy-Authorization) replaced, their scheme kept: `Authorization: Basic [redacted]`."""
    if b"uthorization" not in request and b"UTHORIZATION" not in request:
        return request
    return _CREDENTIALS.sub(rb"\1\2 [redacted]", request)


@dataclass(frozen=True, slots=True)
class ArchivedAnswer:
    """What the writer process is sent of an `Exchange`."""

    url: str
    started_at: float
    status: int
    raw: bytes
    request: bytes
    peer: str | None
    truncated: bool
    robots: str | None
    earlier_at: float | None
    page: bool

    @classmethod
    def of(cls, exchange: Exchange) -> ArchivedAnswer:
        answer = exchange.answer
        earlier = exchange.earlier
        return cls(
            exchange.url,
            exchange.started_at,
            answer.status,
            answer.raw or b"",
            redacted(answer.request or b""),
            answer.peer,
            answer.truncated,
            exchange.robots,
            earlier.fetched_at if earlier is not None else None,
            exchange.page,
        )


@dataclass(frozen=True, slots=True)
class ArchivedPage:
    """What the writer process is sent of a `PageRecord`: its metadata record's fields."""

    url: str
    final_url: str
    fetched_at: float
    status: int | None
    error: str | None
    index: bool
    index_reason: str | None
    follow: bool
    follow_reason: str | None
    sections: int
    cut: str | None
    redirects: tuple[str, ...]
    links: tuple[str, ...]
    nofollow_links: tuple[str, ...]
    usage: tuple[str, ...] = ()
    """Its usage signals, each as compact JSON (crawler.usage.UsageSignal.to_json)."""

    @classmethod
    def of(cls, record: PageRecord) -> ArchivedPage:
        return cls(
            record.url,
            record.final_url,
            record.fetched_at,
            record.status,
            record.error,
            record.index,
            record.index_reason,
            record.follow,
            record.follow_reason,
            record.sections,
            record.cut,
            record.redirects,
            record.links,
            record.nofollow_links,
            tuple(compact_json(signal.to_json()) for signal in record.usage),
        )


def warc_files(directory: Path) -> list[Path]:
    """The WARC files of a data directory, oldest first."""
    return sorted((directory / WARC_DIR).glob("*.warc.gz"))


_Event = Exchange | PageRecord | Skip | Unskip


class _NotWrittenError(Exception):
    """The writer process answered a batch with an error (kept in `_error`)."""


class WarcSink(BatchHandOff[_Event, None]):
    """A `PageSink` that archives: exchanges (`exchange()`) become request and response (or
    revisit) records, page records their metadata records; skips are only counted."""

    def __init__(
        self,
        directory: Path,
        *,
        info: Mapping[str, str],
        file_bytes: int = 1_000_000_000,
        batch_size: int = 64,
        batch_bytes: int = 8 * 1024 * 1024,
        max_batches: int = 8,
    ) -> None:
        """Opens DIR/warc now (cutting a killed run's partial record), so a bad directory fails
        before the crawl starts, and starts the writer process. `info`: the warcinfo record's
        fields. A batch goes to the writer at `batch_size` events or `batch_bytes` of answers;
        `max_batches` bound those waiting, beyond which the crawl waits (a disk slower than the
        crawl holds it, not memory)."""
        self.directory = directory / WARC_DIR
        super().__init__(f"WARC writer of {self.directory}", max_batches)
        self._batch_size = batch_size
        self._batch_bytes = batch_bytes
        self._pending_bytes = 0
        self._written = 0
        self._figures = ArchiveFigures(0, 0, 0, 0)
        """What the writer process says it has written in this run."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._mend()
        except OSError as error:
            raise OutputError(f"cannot write WARC files in {self.directory}: {error}") from error
        self._process = start_child("crawler.output.warc_writer")
        self._setup = (str(directory), dict(info), file_bytes)
        self._writer = threading.Thread(target=self._write_batches, name="warc-writer", daemon=True)
        self._writer.start()

    # --- the crawl's side ------------------------------------------------------------------------

    @property
    def stored(self) -> int:
        """Events (exchanges, records, skips) written to the operating system, in the order
        given."""
        return self._written

    @property
    def figures(self) -> ArchiveFigures:
        """What the writer has written so far in this run."""
        return self._figures

    def exchange(self, exchange: Exchange) -> None:
        raw = exchange.answer.raw
        self._gather(exchange, len(raw) if raw is not None else 0)

    def page(self, record: PageRecord) -> None:
        self._gather(record, 0)

    def skip(self, skip: Skip) -> None:
        self._gather(skip, 0)

    def unskip(self, unskip: Unskip) -> None:
        self._gather(unskip, 0)

    def flush(self) -> None:
        self._check_open()
        self._hand_over()
        self._raise_error()

    def _gather(self, event: _Event, size: int) -> None:
        """Gather `event`, with `size` bytes of answer: a batch goes at `batch_size` events or
        `batch_bytes` of answers."""
        self._pending_bytes += size
        full = len(self._batch) + 1 >= self._batch_size or self._pending_bytes >= self._batch_bytes
        self._add(event, full=full)

    def _hand_over(self) -> None:
        self._pending_bytes = 0
        super()._hand_over()

    def _mend(self) -> None:
        """Cut what a killed run left after the last whole record of the file it was writing
        (a batch in flight: none of its URLs was marked done)."""
        complete = self.directory / COMPLETE_NAME
        try:
            name, _, offset = complete.read_text(encoding="utf-8").strip().rpartition(" ")
        except FileNotFoundError:
            return
        path = self.directory / name
        if name and offset.isdigit() and path.is_file() and path.stat().st_size > int(offset):
            cut = path.stat().st_size - int(offset)
            with path.open("r+b") as file:
                file.truncate(int(offset))
            log.warning("%s: cut the %d bytes of a record left partial by a kill", path, cut)
        complete.unlink()

    # --- the thread that talks to the writer process ---------------------------------------------

    def _write_batches(self) -> None:
        """Hands each batch to the writer process and counts it stored once the process says it
        is written. It waits on the pipe, without the GIL, most of the time. After a full disk
        the batches are kept (crawler.output.handoff) and sent again at the close, once the
        crawl has made room: the process undid the one that failed."""
        background_thread()
        process = self._process
        assert process.stdin is not None and process.stdout is not None
        source, answers = process.stdin, process.stdout
        try:
            send(source, self._setup)
            self._answer(receive(answers))
            while (batch := self._queue.get()) is not None:
                if self._keep(batch) or self._error is not None:
                    continue  # nothing more is counted stored: the crawl marks nothing done
                try:
                    self._store(source, answers, batch)
                except _NotWrittenError:
                    self._keep(batch)  # for the close, if for want of room
            self._kept_written(functools.partial(self._store, source, answers))
            send(source, None)
            self._answer(receive(answers))
        except (OSError, EOFError) as error:
            status = process.poll()
            ended = f"it ended with status {status}" if status is not None else str(error)
            self._fail(f"the WARC writer process stopped answering ({ended})")
        finally:
            self._stop(source, answers)

    def _store(self, source: IO[bytes], answers: IO[bytes], batch: list[_Event]) -> None:
        """`batch` written by the process and counted stored; _NotWrittenError when it was not."""
        items = [
            ArchivedAnswer.of(event) if isinstance(event, Exchange) else ArchivedPage.of(event)
            for event in batch
            if isinstance(event, Exchange | PageRecord)
        ]
        if items:
            send(source, items)
            if not self._answer(receive(answers)):
                raise _NotWrittenError
        self._written += len(batch)

    def _answer(self, answer: tuple[Any, ...]) -> bool:
        """Whether the process wrote what it was sent."""
        if answer[0] == "error":
            self._fail(answer[1], answer[2] if len(answer) > 2 else None)
            return False
        if answer[0] == "written":
            self._figures = ArchiveFigures(*answer[1:])
        return True

    def _fail(self, message: str, path: str | None = None) -> None:
        """`path`: the file the process was writing, which a full disk's message names."""
        if self._error is None:
            reason = no_room(message)
            self._error = (
                DiskFullError(path or self.directory, reason)
                if reason is not None
                else OutputError(f"cannot write WARC files in {self.directory}: {message}")
            )

    def _stop(self, source: IO[bytes], answers: IO[bytes]) -> None:
        for stream in (source, answers):
            with contextlib.suppress(OSError):
                stream.close()
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "failed" if self._error is not None else "open"
        return (
            f"WarcSink({self.directory}, {state}, {len(self._batch)} pending, "
            f"{self._written} written, {self._figures.files} files)"
        )


def config_digest(settings: Mapping[str, Any]) -> str:
    """A digest of the crawl's settings, for the warcinfo record: two archives made with the
    same settings carry the same one."""
    text = json.dumps(settings, sort_keys=True, default=str, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
