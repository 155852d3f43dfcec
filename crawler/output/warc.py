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

Writing stays off the event loop, as the index's does: `exchange()` and `page()` append to a
batch, and one writer thread builds the records, compresses them and writes each batch with one
`write()`. `stored` counts what was written to the operating system, in the order given, so a
crawl marks a URL done only once its response is in a file (crawler.crawl.checkpoint): a kill
loses no archived response of a URL marked done. After each batch the writer notes in
DIR/warc/.complete where the last whole record of the file ends; a crawl opening the directory
after a kill cuts the partial record a batch in flight left at the end of that file, so every
file reads to its end. Each run begins a new file, and a file past `warc_file_bytes` is closed
and the next begun.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import json
import logging
import os
import queue
import threading
import zlib
from collections import OrderedDict
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from crawler.errors import OutputError
from crawler.frontier import Earlier
from crawler.http.answer import Response
from crawler.output.records import PageRecord, Skip, Unskip
from crawler.runtime import background_thread

__all__ = [
    "COMPLETE_NAME",
    "WARC_DIR",
    "ArchiveFigures",
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
GZIP_LEVEL = 6
"""zlib's default: on HTML, level 9 (warcio's own) costs about twice the time for 1% less."""
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


def warc_files(directory: Path) -> list[Path]:
    """The WARC files of a data directory, oldest first."""
    return sorted((directory / WARC_DIR).glob("*.warc.gz"))


class _WireHead(StatusAndHeaders):  # type: ignore[misc]
    """An HTTP head written as it came. warcio writes `headers_buff`, which it would otherwise
    rebuild from the parsed headers, normalising what the server sent."""

    def __init__(self, head: bytes) -> None:
        first = head.split(b"\n", 1)[0].decode("latin-1").rstrip("\r")
        protocol, _, statusline = first.partition(" ")
        super().__init__(statusline, [], protocol=protocol)
        self.headers_buff = head

    def compute_headers_buffer(self, header_filter: Any = None) -> None:
        """Kept as it came."""


class _Members:
    """The file-like warcio writes a record to: each record becomes one gzip member (warcio
    flushes after each), collected for one write of the whole batch."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0
        self._compressor = self._new()

    @staticmethod
    def _new() -> Any:
        return zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)

    def write(self, data: bytes) -> None:
        if data:
            self._keep(self._compressor.compress(data))

    def flush(self) -> None:
        self._keep(self._compressor.flush())
        self._compressor = self._new()

    def _keep(self, part: bytes) -> None:
        self.parts.append(part)
        self.size += len(part)

    def take(self) -> bytes:
        data = b"".join(self.parts)
        self.parts = []
        self.size = 0
        return data


def _head_end(raw: bytes) -> int:
    """Where an answer's head ends (after its blank line); the whole length if it never does."""
    ends = [at + len(mark) for mark in (b"\r\n\r\n", b"\n\n") if (at := raw.find(mark)) >= 0]
    return min(ends, default=len(raw))


def _whole(head: bytes, body: bytes) -> bool:
    """Whether `body` is all the answer's body: what a body cut at fetch.max_body_bytes may
    still be, when the rest had come in the same read."""
    lowered = head.lower()
    at = lowered.find(b"\ncontent-length:")
    if at >= 0 and b"\ntransfer-encoding:" not in lowered:
        value = lowered[at + 16 : lowered.find(b"\n", at + 1)].strip()
        return value.isdigit() and len(body) >= int(value)
    return b"chunked" in lowered and body.endswith(b"0\r\n\r\n")


def _sha1(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def _warc_date(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


_Event = Exchange | PageRecord | Skip | Unskip
_Batch = list[_Event]


class WarcSink:
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
        before the crawl starts. `info`: the warcinfo record's fields. A batch goes to the writer
        at `batch_size` events or `batch_bytes` of answers; `max_batches` bound those waiting,
        beyond which the crawl waits (a disk slower than the crawl holds it, not memory)."""
        self.directory = directory / WARC_DIR
        self._info = dict(info)
        self._file_bytes = file_bytes
        self._batch_size = batch_size
        self._batch_bytes = batch_bytes
        self._batch: _Batch = []
        self._pending_bytes = 0
        self._queue: queue.Queue[_Batch | None] = queue.Queue(maxsize=max_batches)
        self._error: OutputError | None = None
        self._written = 0
        self._closed = False
        # Figures, as the writer thread counts them.
        self.records = 0
        self.revisits = 0
        self.bytes_written = 0
        self.files: list[Path] = []
        # The writer thread's own:
        self._file: io.BufferedWriter | None = None
        self._file_size = 0
        self._warcinfo_id = ""
        self._payloads: OrderedDict[str, tuple[str, str]] = OrderedDict()
        self._pending: OrderedDict[str, tuple[str, str | None]] = OrderedDict()
        self._members = _Members()
        self._warc = WARCWriter(self._members, gzip=False, warc_version=WARC_VERSION)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._mend()
        except OSError as error:
            raise OutputError(f"cannot write WARC files in {self.directory}: {error}") from error
        started: Future[None] = Future()
        self._writer = threading.Thread(
            target=self._write_batches, args=(started,), name="warc-writer", daemon=True
        )
        self._writer.start()
        try:
            started.result()
        except OutputError:
            self._writer.join()
            self._closed = True
            raise

    # --- the crawl's side ------------------------------------------------------------------------

    @property
    def stored(self) -> int:
        """Events (exchanges, records, skips) written to the operating system, in the order
        given."""
        return self._written

    @property
    def figures(self) -> ArchiveFigures:
        """What the writer has written so far in this run."""
        return ArchiveFigures(self.records, self.revisits, self.bytes_written, len(self.files))

    def exchange(self, exchange: Exchange) -> None:
        raw = exchange.answer.raw
        self._add(exchange, len(raw) if raw is not None else 0)

    def page(self, record: PageRecord) -> None:
        self._add(record, 0)

    def skip(self, skip: Skip) -> None:
        self._add(skip, 0)

    def unskip(self, unskip: Unskip) -> None:
        self._add(unskip, 0)

    def flush(self) -> None:
        if self._closed:
            raise OutputError(f"WARC writer of {self.directory} is closed")
        self._hand_over()
        self._raise_error()

    def close(self) -> None:
        """Write what is left, close the file and stop the writer. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._hand_over()
        self._queue.put(None)
        self._writer.join()
        self._raise_error()

    def __enter__(self) -> WarcSink:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _add(self, event: _Event, size: int) -> None:
        if self._closed:
            raise OutputError(f"WARC writer of {self.directory} is closed")
        self._batch.append(event)
        self._pending_bytes += size
        if len(self._batch) >= self._batch_size or self._pending_bytes >= self._batch_bytes:
            self._hand_over()

    def _hand_over(self) -> None:
        if not self._batch:
            return
        batch, self._batch = self._batch, []
        self._pending_bytes = 0
        if self._error is None:
            self._queue.put(batch)  # blocks while the queue is full: the backpressure

    def _raise_error(self) -> None:
        if self._error is not None:
            raise OutputError(str(self._error)) from self._error.__cause__

    # --- the writer thread -----------------------------------------------------------------------

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

    def _write_batches(self, started: Future[None]) -> None:
        background_thread()
        started.set_result(None)
        try:
            while (batch := self._queue.get()) is not None:
                try:
                    if self._error is None:
                        self._write_batch(batch)
                        self._written += len(batch)
                except Exception as error:  # a lost batch must reach the crawl
                    self._error = OutputError(
                        f"cannot write WARC files in {self.directory}: {error}"
                    )
                    self._error.__cause__ = error
        finally:
            self._close_file()

    def _write_batch(self, batch: _Batch) -> None:
        if self._file is None and not any(isinstance(event, Exchange) for event in batch):
            return  # skips, or records of pages not archived: nothing to write
        for event in batch:
            if isinstance(event, Exchange):
                if self._file is None:
                    self._open_file()
                elif self._file_size + self._members.size >= self._file_bytes:
                    self._write(self._members.take())
                    self._close_file()
                    self._open_file()
                self._archive(event)
            elif isinstance(event, PageRecord) and self._file is not None:
                self._describe(event)
        self._write(self._members.take())
        self._note_complete()

    def _write(self, data: bytes) -> None:
        assert self._file is not None
        self._file.write(data)
        self._file.flush()
        self._file_size += len(data)
        self.bytes_written += len(data)

    def _open_file(self) -> None:
        """A new file, named for its start and its number in the run, its warcinfo record
        the first to be written."""
        stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S%f")[:17]
        path = self.directory / f"crawl-{stamp}-{len(self.files):05d}.warc.gz"
        self._file = path.open("xb")
        self._file_size = 0
        self.files.append(path)
        record = self._warc.create_warcinfo_record(path.name, self._info)
        self._warcinfo_id = record.rec_headers.get_header("WARC-Record-ID")
        self._warc.write_record(record)
        self.records += 1

    def _close_file(self) -> None:
        if self._file is None:
            return
        file, self._file = self._file, None
        file.close()
        with contextlib.suppress(OSError):
            (self.directory / COMPLETE_NAME).unlink()

    def _note_complete(self) -> None:
        assert self._file is not None
        complete = self.directory / COMPLETE_NAME
        partial = complete.with_name(COMPLETE_NAME + ".new")
        partial.write_text(f"{self.files[-1].name} {self._file_size}\n", encoding="utf-8")
        os.replace(partial, complete)

    def _headers(self, kind: str, uri: str, date: str, peer: str | None = None) -> dict[str, str]:
        """A record's first WARC headers, in the order tools print them."""
        headers = {
            "WARC-Type": kind,
            "WARC-Record-ID": self._warc._make_warc_id(),
            "WARC-Date": date,
            "WARC-Target-URI": uri,
            "WARC-Warcinfo-ID": self._warcinfo_id,
        }
        if peer:
            headers["WARC-IP-Address"] = peer
        return headers

    def _archive(self, exchange: Exchange) -> None:
        """The response (or revisit) record of an answer, and its request's."""
        answer = exchange.answer
        raw = answer.raw or b""
        end = _head_end(raw)
        head, body = raw[:end], raw[end:]
        date = _warc_date(exchange.started_at)
        uri = exchange.url
        ok = 200 <= answer.status < 300 and bool(body) and not answer.truncated
        payload_digest = _sha1(body)
        earlier = exchange.earlier
        first = self._payloads.get(payload_digest) if ok else None
        not_modified = answer.status == 304 and earlier is not None
        kind = "revisit" if not_modified or first is not None else "response"
        headers = self._headers(kind, uri, date, answer.peer)
        warc = self._warc
        if not_modified:
            assert earlier is not None
            headers["WARC-Profile"] = SERVER_NOT_MODIFIED
            headers["WARC-Refers-To-Target-URI"] = uri
            headers["WARC-Refers-To-Date"] = _warc_date(earlier.fetched_at)
            record = warc.create_warc_record(
                uri, "revisit", warc_headers_dict=headers, http_headers=_WireHead(head)
            )
            self.revisits += 1
        elif first is not None:
            record = warc.create_revisit_record(
                uri,
                payload_digest,
                first[0],
                first[1],
                http_headers=_WireHead(head),
                warc_headers_dict=headers,
            )
            self.revisits += 1
        else:
            headers["WARC-Payload-Digest"] = payload_digest
            if answer.truncated and not _whole(head, body):
                headers["WARC-Truncated"] = "length"
            record = warc.create_warc_record(
                uri,
                "response",
                payload=io.BytesIO(body),
                length=len(body),
                warc_headers_dict=headers,
                http_headers=_WireHead(head),
            )
            if ok:
                self._payloads[payload_digest] = (uri, date)
                if len(self._payloads) > REMEMBERED_PAYLOADS:
                    self._payloads.popitem(last=False)
        response_id = record.rec_headers.get_header("WARC-Record-ID")
        warc.write_record(record)
        request_headers = self._headers("request", uri, date, answer.peer)
        request_headers["WARC-Concurrent-To"] = response_id
        request = warc.create_warc_record(
            uri,
            "request",
            payload=io.BytesIO(b""),
            length=0,
            warc_headers_dict=request_headers,
            http_headers=_WireHead(answer.request or b""),
        )
        warc.write_record(request)
        self.records += 2
        if exchange.page:
            self._pending[uri] = (response_id, exchange.robots)
            self._pending.move_to_end(uri)
            if len(self._pending) > PENDING_PAGES:
                self._pending.popitem(last=False)

    def _describe(self, record: PageRecord) -> None:
        """The metadata record of a page whose answer was archived: our robots decisions and
        its links. The hops of its redirect chain wait no more."""
        for hop in record.redirects:
            self._pending.pop(hop, None)
        pending = self._pending.pop(record.final_url, None)
        if pending is None:
            return
        response_id, robots = pending
        lines = []
        if robots:
            lines.append(("robots-txt", robots))
        if record.status is not None and 200 <= record.status < 300 and record.error is None:
            lines.append(
                ("index", "yes" if record.index else f"no: {record.index_reason or 'not read'}")
            )
            lines.append(
                ("follow", "yes" if record.follow else f"no: {record.follow_reason or 'no links'}")
            )
            if record.sections:
                lines.append(("robots-sections", str(record.sections)))
        if record.error:
            lines.append(("error", record.error))
        if record.cut:
            lines.append(("cut", record.cut))
        if record.redirects:
            lines.append(("via", record.url))
        lines += [("outlink", link) for link in record.links]
        lines += [("outlink-nofollow", link) for link in record.nofollow_links]
        fields = "".join(f"{name}: {_field(value)}\r\n" for name, value in lines).encode("utf-8")
        headers = self._headers("metadata", record.final_url, _warc_date(record.fetched_at))
        headers["WARC-Concurrent-To"] = response_id
        metadata = self._warc.create_warc_record(
            record.final_url,
            "metadata",
            payload=io.BytesIO(fields),
            length=len(fields),
            warc_content_type="application/warc-fields",
            warc_headers_dict=headers,
        )
        self._warc.write_record(metadata)
        self.records += 1

    def __repr__(self) -> str:
        state = "closed" if self._closed else "failed" if self._error is not None else "open"
        return (
            f"WarcSink({self.directory}, {state}, {len(self._batch)} pending, "
            f"{self._written} written, {len(self.files)} files)"
        )


def _field(value: str) -> str:
    """A value on one line (application/warc-fields)."""
    return " ".join(value.split())


def config_digest(settings: Mapping[str, Any]) -> str:
    """A digest of the crawl's settings, for the warcinfo record: two archives made with the
    same settings carry the same one."""
    text = json.dumps(settings, sort_keys=True, default=str, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
