"""The WARC writer process (crawler.output.warc): `python -m crawler.output.warc_writer`, started
by `WarcSink`, builds the records through warcio, compresses them and writes the files.

A process of its own, not a thread of the crawl's: building and compressing the records costs
about as much CPU as the crawl's own work per page (benchmarks/bench_speed.py --warc), and in a
thread each of its steps would wait for the GIL the event loop holds, and hold it back in turn.

It reads messages from its standard input and answers each on its standard output, every one a
pickle framed by its length (`send`, `receive`): first `(directory, info, file_bytes)`, answered
`("ready",)`; then batches of `ArchivedAnswer` and `ArchivedPage`, each answered once written to
the operating system with `("written", records, revisits, bytes, files)`, or with `("error",
message, file)`; None at the end, answered like a batch once the file is closed. A batch is
written whole or not at all: one that fails (a full disk) is undone, its file cut back to its
length before it, any file it began removed, and what it taught the archiver (payloads to refer
to, responses waiting for their metadata) forgotten, so the crawl may send it again once it has
made room (crawler.output.handoff), and no reader meets half a record. After any other failure
nothing more is written. It dies with the crawl (Linux: PR_SET_PDEATHSIG), so a kill of the
crawl cannot leave it writing.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import os
import sys
import zlib
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from crawler.child import die_with_parent, end, receive, send
from crawler.errors import no_room
from crawler.http.answer import head_length
from crawler.output.warc import (
    COMPLETE_NAME,
    GZIP_LEVEL,
    PENDING_PAGES,
    REMEMBERED_PAYLOADS,
    SERVER_NOT_MODIFIED,
    WARC_DIR,
    WARC_VERSION,
    ArchivedAnswer,
    ArchivedPage,
)

__all__ = ["Archiver", "main"]


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
    flushes after each), compressed in one call once whole, collected for one write."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0
        self._record: list[bytes] = []

    def write(self, data: bytes) -> None:
        if data:
            self._record.append(data)

    def flush(self) -> None:
        record, self._record = b"".join(self._record), []
        member = zlib.compress(record, GZIP_LEVEL, wbits=16 + zlib.MAX_WBITS)
        self.parts.append(member)
        self.size += len(member)

    def take(self) -> bytes:
        data = b"".join(self.parts)
        self.parts = []
        self.size = 0
        return data


def _whole(head: bytes, body: bytes) -> bool:
    """Whether `body` is all the answer's body: what a body cut at fetch.max_body_bytes may
    still be, when the rest had come in the same read."""
    lowered = head.lower()
    at = lowered.find(b"\ncontent-length:")
    if at >= 0 and b"\ntransfer-encoding:" not in lowered:
        value = lowered[at + 16 : lowered.find(b"\n", at + 1)].strip()
        return value.isdigit() and len(body) >= int(value)
    return b"chunked" in lowered and body.endswith(b"0\r\n\r\n")


def _sha1(*parts: bytes) -> str:
    digest = hashlib.sha1(parts[0])
    for part in parts[1:]:
        digest.update(part)
    return "sha1:" + base64.b32encode(digest.digest()).decode("ascii")


def _warc_date(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


_MISSING = object()


@dataclass(frozen=True, slots=True)
class _Mark:
    """Where the archiver stood before a batch: what undoing it goes back to."""

    files: int
    """Files begun; the last one open (a batch never follows the close)."""
    size: int
    figures: tuple[int, int, int]
    warcinfo_id: str


def _field(value: str) -> str:
    """A value on one line (application/warc-fields)."""
    return " ".join(value.split())


class Archiver:
    """Writes records into DIR/warc: a new file for its first record, the next one past
    `file_bytes`; DIR/warc/.complete says where the last whole record of the open file ends."""

    def __init__(self, directory: Path, info: Mapping[str, str], file_bytes: int) -> None:
        self.directory = directory / WARC_DIR
        self._info = dict(info)
        self._file_bytes = file_bytes
        self.records = 0
        self.revisits = 0
        self.bytes_written = 0
        self.files: list[Path] = []
        self._fd: int | None = None
        """The file being written, opened to append."""
        self._file_size = 0
        self.writing: Path | None = None
        """The WARC file the last batch went to: what a failure names (its .complete too)."""
        self.broken = False
        self._warcinfo_id = ""
        self._payloads: OrderedDict[str, tuple[str, str]] = OrderedDict()
        """Payload digests archived in this run: where and when each was first."""
        self._pending: OrderedDict[str, tuple[str, str | None]] = OrderedDict()
        """Responses waiting for their page's metadata record: record id, robots.txt line."""
        self._changes: list[tuple[OrderedDict[str, Any], str, object]] = []
        """This batch's changes to `_payloads` and `_pending`: each key with what it held."""
        self._members = _Members()
        self._warc = WARCWriter(self._members, gzip=False, warc_version=WARC_VERSION)

    @property
    def figures(self) -> tuple[int, int, int, int]:
        """Records, revisits, bytes and files written in this run."""
        return self.records, self.revisits, self.bytes_written, len(self.files)

    def write(self, batch: list[ArchivedAnswer | ArchivedPage]) -> None:
        """The records of a batch, written to the operating system when this returns; when it
        raises, none of them (`_undo`)."""
        if self._fd is None and not any(isinstance(item, ArchivedAnswer) for item in batch):
            return  # records of pages not archived: nothing to write
        figures = (self.records, self.revisits, self.bytes_written)
        mark = _Mark(len(self.files), self._file_size, figures, self._warcinfo_id)
        self._changes = []
        try:
            self._write_batch(batch)
        except BaseException:
            try:
                self._undo(mark)
            except BaseException:
                self.broken = True  # what is on disk is not known: nothing more is written
                raise
            raise

    def _write_batch(self, batch: list[ArchivedAnswer | ArchivedPage]) -> None:
        for item in batch:
            if isinstance(item, ArchivedAnswer):
                if self._fd is None:
                    self._open_file()
                elif self._file_size + self._members.size >= self._file_bytes:
                    self._write(self._members.take())
                    self.close()
                    self._open_file()
                self._archive(item)
            elif self._fd is not None:
                self._describe(item)
        self._write(self._members.take())
        self._note_complete()

    def _undo(self, mark: _Mark) -> None:
        """Back to where `mark` stood: the files begun since removed, the one open then cut back
        to its length, the records built and not written dropped."""
        self._members.take()
        for table, key, held in reversed(self._changes):
            if held is _MISSING:
                table.pop(key, None)
            else:
                table[key] = held
        self._changes = []
        self.records, self.revisits, self.bytes_written = mark.figures
        self._warcinfo_id = mark.warcinfo_id
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        for path in self.files[mark.files :]:
            path.unlink(missing_ok=True)
        del self.files[mark.files :]
        if mark.files:
            self._fd = os.open(self.files[-1], os.O_WRONLY | os.O_APPEND)
            os.ftruncate(self._fd, mark.size)  # no half record left for a reader to meet
            self._file_size = mark.size
            with contextlib.suppress(OSError):  # it says so already, unless a rotation removed it
                self._note_complete()

    def close(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        os.close(fd)
        with contextlib.suppress(OSError):
            (self.directory / COMPLETE_NAME).unlink()

    def _write(self, data: bytes) -> None:
        assert self._fd is not None
        self.writing = self.files[-1]
        out = memoryview(data)
        while out:
            out = out[os.write(self._fd, out) :]
        self._file_size += len(data)
        self.bytes_written += len(data)

    def _change(self, table: OrderedDict[str, Any], key: str, value: object = _MISSING) -> None:
        """Set `key` of `table` (`_payloads`, `_pending`) to `value`, or remove it, noting what it
        held for `_undo`."""
        self._changes.append((table, key, table.get(key, _MISSING)))
        if value is _MISSING:
            table.pop(key, None)
        else:
            table[key] = value
            table.move_to_end(key)

    def _open_file(self) -> None:
        """A new file, named for its start and its number in the run, its warcinfo record
        the first to be written."""
        stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S%f")[:17]
        path = self.directory / f"crawl-{stamp}-{len(self.files):05d}.warc.gz"
        self.writing = path
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        self._file_size = 0
        self.files.append(path)
        record = self._warc.create_warcinfo_record(path.name, self._info)
        self._warcinfo_id = record.rec_headers.get_header("WARC-Record-ID")
        self._warc.write_record(record)
        self.records += 1

    def _note_complete(self) -> None:
        assert self._fd is not None
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

    def _archive(self, answer: ArchivedAnswer) -> None:
        """The response (or revisit) record of an answer, and its request's."""
        raw = answer.raw
        end = head_length(raw)
        end = len(raw) if end is None else end  # no head's end: all of it is head
        head, body = raw[:end], raw[end:]
        date = _warc_date(answer.started_at)
        uri = answer.url
        ok = 200 <= answer.status < 300 and bool(body) and not answer.truncated
        payload_digest = _sha1(body)
        first = self._payloads.get(payload_digest) if ok else None
        not_modified = answer.status == 304 and answer.earlier_at is not None
        kind = "revisit" if not_modified or first is not None else "response"
        headers = self._headers(kind, uri, date, answer.peer)
        # Digests computed here, each in one call (warcio would hash in 16 KB pieces).
        headers["WARC-Block-Digest"] = _sha1(head) if kind == "revisit" else _sha1(head, body)
        warc = self._warc
        if not_modified:
            assert answer.earlier_at is not None
            headers["WARC-Profile"] = SERVER_NOT_MODIFIED
            headers["WARC-Refers-To-Target-URI"] = uri
            headers["WARC-Refers-To-Date"] = _warc_date(answer.earlier_at)
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
                self._change(self._payloads, payload_digest, (uri, date))
                if len(self._payloads) > REMEMBERED_PAYLOADS:
                    self._change(self._payloads, next(iter(self._payloads)))
        response_id = record.rec_headers.get_header("WARC-Record-ID")
        warc.write_record(record)
        request_headers = self._headers("request", uri, date, answer.peer)
        request_headers["WARC-Concurrent-To"] = response_id
        request_headers["WARC-Block-Digest"] = _sha1(answer.request)
        request = warc.create_warc_record(
            uri,
            "request",
            payload=io.BytesIO(b""),
            length=0,
            warc_headers_dict=request_headers,
            http_headers=_WireHead(answer.request),
        )
        warc.write_record(request)
        self.records += 2
        if answer.page:
            self._change(self._pending, uri, (response_id, answer.robots))
            if len(self._pending) > PENDING_PAGES:
                self._change(self._pending, next(iter(self._pending)))

    def _describe(self, page: ArchivedPage) -> None:
        """The metadata record of a page whose answer was archived: our robots decisions and
        its links. The hops of its redirect chain wait no more."""
        for hop in page.redirects:
            self._change(self._pending, hop)
        pending = self._pending.get(page.final_url)
        if pending is None:
            return
        self._change(self._pending, page.final_url)
        response_id, robots = pending
        lines = []
        if robots:
            lines.append(("robots-txt", robots))
        if page.status is not None and 200 <= page.status < 300 and page.error is None:
            lines.append(
                ("index", "yes" if page.index else f"no: {page.index_reason or 'not read'}")
            )
            lines.append(
                ("follow", "yes" if page.follow else f"no: {page.follow_reason or 'no links'}")
            )
            if page.sections:
                lines.append(("robots-sections", str(page.sections)))
            # The owner's word on use, as read: another purpose decides again from it.
            lines += [("usage", signal) for signal in page.usage]
        if page.error:
            lines.append(("error", page.error))
        if page.cut:
            lines.append(("cut", page.cut))
        if page.redirects:
            lines.append(("via", page.url))
        lines += [("outlink", link) for link in page.links]
        lines += [("outlink-nofollow", link) for link in page.nofollow_links]
        fields = "".join(f"{name}: {_field(value)}\r\n" for name, value in lines).encode("utf-8")
        headers = self._headers("metadata", page.final_url, _warc_date(page.fetched_at))
        headers["WARC-Concurrent-To"] = response_id
        metadata = self._warc.create_warc_record(
            page.final_url,
            "metadata",
            payload=io.BytesIO(fields),
            length=len(fields),
            warc_content_type="application/warc-fields",
            warc_headers_dict=headers,
        )
        self._warc.write_record(metadata)
        self.records += 1


def main() -> int:
    die_with_parent()  # and Ctrl-C is the crawl's: it stops us once it has written all
    source, answers = sys.stdin.buffer, sys.stdout.buffer
    directory, info, file_bytes = receive(source)
    archiver = Archiver(Path(directory), info, file_bytes)
    send(answers, ("ready",))
    refused: tuple[str, str, str | None] | None = None
    """The answer to every batch after a failure other than a full disk: nothing is written."""
    while True:
        try:
            batch = receive(source)
        except EOFError:
            break
        try:
            if batch is None:
                archiver.close()
            elif refused is None:
                archiver.write(batch)
        except Exception as error:  # the crawl hears of every failure: it marks nothing done
            where = str(archiver.writing) if archiver.writing is not None else None
            answer = ("error", f"{type(error).__name__}: {error}", where)
            # A full disk undid the batch: the crawl may send it again once it has made room.
            refused = answer if no_room(error) is None or archiver.broken else refused
            send(answers, answer)
            continue
        if batch is not None and refused is not None:
            send(answers, refused)
            continue
        send(answers, ("written", *archiver.figures))
        if batch is None:
            break
    archiver.close()
    return 0


if __name__ == "__main__":
    end(main())
