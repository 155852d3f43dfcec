"""One HTTP/1.1 connection of the http1 client (crawler.http.http1): an asyncio protocol that
feeds what arrives to httptools' parser and turns it into the answer of the one exchange in
progress.

It stamps the answer's first bytes as they arrive (`Response.answered_at`: politeness counts a
host's interval from there, crawler.politeness), bounds the answer's head (`MAX_HEADER_BYTES`,
`MAX_HEADER_LINES`, `MAX_HEADER_LINE_BYTES`), its decoded body to the cap and its whole exchange
to a deadline, and ends every exchange in exactly one outcome: a `Response`, an `ExchangeError`
(kind and message of the `FetchFailure` to be), or a `StaleConnectionError` when a connection
ends before the first byte of its answer.

The parser is as lenient as aiohttp's (the same llhttp, with the same three leniencies): header
lines may end in a bare LF, as browsers and curl read them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import cast

import httptools
from multidict import CIMultiDict, CIMultiDictProxy

from crawler.http.answer import HTML_TYPES, FailureKind, Response, head_length
from crawler.http.coding import BodyReader, DecodeError, body_decoder, media_type

__all__ = [
    "MAX_HEADER_BYTES",
    "MAX_HEADER_LINES",
    "MAX_HEADER_LINE_BYTES",
    "Connection",
    "ExchangeError",
    "StaleConnectionError",
    "new_parser",
]

# An answer's head is bounded, as every client bounds it: Node.js at 16 KiB, Chrome at 256 KiB,
# curl at 300 KiB (100 KiB a line); aiohttp at 128 lines of 8 KiB. The aiohttp client is given
# the same limits (crawler.http.aiohttp_client), so both clients fail the same heads.
MAX_HEADER_BYTES = 64 * 1024
"""The whole head, status line to blank line: past this many bytes the answer is a protocol
failure, however its lines are cut (one line that never ends included)."""
MAX_HEADER_LINES = 256
"""Header lines in one head (real answers carry 10 to 40)."""
MAX_HEADER_LINE_BYTES = 16 * 1024
"""One header line, or the status line (twice nginx's and aiohttp's 8 KiB: long
Content-Security-Policy and Set-Cookie lines are read)."""
DISCARD_BYTES = 64 * 1024
"""Most bytes of a body not wanted (not HTML) read and thrown away to keep its connection for
the host's next request; a longer one closes the connection instead."""


class ExchangeError(Exception):
    """An exchange ended without an answer: `kind` and `message` become the `FetchFailure`."""

    def __init__(self, kind: FailureKind, message: str) -> None:
        super().__init__(message)
        self.kind: FailureKind = kind


class StaleConnectionError(Exception):
    """The connection ended before the first byte of the answer. `sent`: whether the request
    had gone out on it (the server may have read it) or the connection was found closed first."""

    def __init__(self, *, sent: bool) -> None:
        super().__init__("the connection ended before the answer" if sent else "found closed")
        self.sent = sent


class Connection(asyncio.Protocol):
    """One HTTP/1.1 connection: feeds what arrives to its parser and turns it into the answer of
    the one exchange in progress. The parser's callbacks are its `on_*` methods."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        key: tuple[str, str, int],
        on_lost: Callable[[Connection], None],
        *,
        keep_raw: bool = False,
    ) -> None:
        self.key = key
        """The origin's (scheme, host, port): the pool it belongs to."""
        self._loop = loop
        self._on_lost = on_lost
        self._parser = new_parser(self)
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.counted = False
        """Counted among the client's open connections (once connected) until forgotten."""
        self.idle_since = 0.0
        self.reusable = False
        self._keep_raw = keep_raw
        """Keep each exchange's bytes as they went and came (`Response.raw`, for WARC)."""
        self.peer: str | None = None
        # The exchange in progress:
        self._waiter: asyncio.Future[Response] | None = None
        self._url = ""
        self._cap = 0
        self._html_only = False
        self._timer: asyncio.TimerHandle | None = None
        self._last_data_at = 0.0
        self._deadline = 0.0
        self._total_timeout = 0.0
        self._first_bytes_at: float | None = None
        self._headers: list[tuple[str, str]] = []
        self._header_bytes = 0
        self._headers_done = False
        self._eof_delimited = False
        self._status = 0
        self._content_type = ""
        self._charset: str | None = None
        self._body = BodyReader(0)
        self._keep_alive = False
        self._discarding = False
        self._discarded = 0
        self._error: ExchangeError | None = None
        self._request = b""
        self._raw: list[bytes] | None = None
        self._interim = 0
        """Interim (1xx) heads received before the answer's: taken out of `raw`."""

    # --- the exchange ---------------------------------------------------------------------------

    def exchange(
        self,
        request: bytes,
        url: str,
        cap: int,
        html_only: bool,
        read_timeout: float,
        deadline: tuple[float, float],
    ) -> asyncio.Future[Response]:
        """Send `request`; the future ends with the answer, or raises `ExchangeError` or
        `StaleConnectionError`. `deadline`: the loop time by which the whole answer must have
        come, and the fetch.total_timeout it was counted from (for the message)."""
        assert self.transport is not None and self._waiter is None
        self._waiter = waiter = self._loop.create_future()
        if self.closed:  # lost between its set-up and now
            waiter.set_exception(StaleConnectionError(sent=False))
            return waiter
        self._url, self._cap, self._html_only = url, cap, html_only
        self._first_bytes_at = None
        self._headers = []
        self._header_bytes = 0
        self._headers_done = False
        self._body = BodyReader(cap)
        self._discarding = False
        self._discarded = 0
        self._error = None
        self.reusable = False
        if self._keep_raw:
            self._request, self._raw, self._interim = request, [], 0
        self._deadline, self._total_timeout = deadline
        self.transport.write(request)
        self._last_data_at = now = self._loop.time()
        due = min(now + read_timeout, self._deadline)
        self._timer = self._loop.call_at(due, self._on_timer, read_timeout)
        return waiter

    def _on_timer(self, read_timeout: float) -> None:
        """One timer for both bounds: the longest silence, and the deadline of the whole answer
        (a server dripping a byte a second is never silent for long)."""
        self._timer = None
        if self._waiter is None or self._waiter.done():
            return
        now = self._loop.time()
        if now >= self._deadline:
            message = f"no complete answer within fetch.total_timeout ({self._total_timeout:g} s)"
            self._end(ExchangeError("timeout", message))
            self.close()
            return
        silent_until = self._last_data_at + read_timeout
        if now >= silent_until:
            message = f"no data for {read_timeout:g} s (fetch.read_timeout)"
            self._end(ExchangeError("timeout", message))
            self.close()
        else:
            due = min(silent_until, self._deadline)
            self._timer = self._loop.call_at(due, self._on_timer, read_timeout)

    def _end(self, outcome: Response | ExchangeError | StaleConnectionError) -> None:
        waiter = self._waiter
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if waiter is None or waiter.done():
            return
        if isinstance(outcome, Response):
            waiter.set_result(outcome)
        else:
            waiter.set_exception(outcome)

    def _answer(self, *, ended: bool = False) -> None:
        """The answer, with the body read so far (`ended`: all of it came)."""
        try:
            body, truncated = self._body.body(ended=ended)
        except DecodeError as error:
            self._end(ExchangeError("payload", f"cannot decode the body: {error}"))
            return
        headers = CIMultiDictProxy(CIMultiDict(self._headers))
        raw = self._raw_answer(ended) if self._raw is not None else None
        self._end(
            Response(
                url=self._url,
                status=self._status,
                headers=headers,
                content_type=self._content_type,
                charset=self._charset,
                body=body,
                truncated=truncated,
                answered_at=self._first_bytes_at,
                raw=raw,
                request=self._request if raw is not None else None,
                peer=self.peer if raw is not None else None,
            )
        )

    def _raw_answer(self, ended: bool) -> bytes | None:
        """The bytes of the answer so far, without the interim (1xx) answers before it; None
        for one whose body was not wanted (`html_only`) and not read to its end."""
        assert self._raw is not None
        if self._discarding and not ended:
            return None
        raw = b"".join(self._raw)
        self._raw = None
        for _ in range(self._interim):
            end = head_length(raw)
            raw = raw[end:] if end is not None else raw
        return raw

    def finished(self) -> None:
        """The exchange's task has its outcome: the connection may serve the next one."""
        self._waiter = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # --- asyncio.Protocol -----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports do not derive from asyncio.Transport, though they are one.
        self.transport = cast(asyncio.Transport, transport)
        if self._keep_raw:
            peer = transport.get_extra_info("peername")
            self.peer = str(peer[0]) if peer else None

    def data_received(self, data: bytes) -> None:
        waiter = self._waiter
        if waiter is None or waiter.done():
            # Bytes no request asked for: the connection's framing cannot be trusted.
            self.reusable = False
            self.close()
            return
        if self._first_bytes_at is None:
            # When the host had answered by, for politeness (crawler.http.answer, Response).
            self._first_bytes_at = time.monotonic()
        self._last_data_at = self._loop.time()
        if self._raw is not None:
            self._raw.append(data)
        if not self._headers_done:
            # httptools buffers a header line until it ends: bound the head here, by what came.
            # The parser is given no more than the head may still take; when the head has not
            # ended within it, the rest is never parsed.
            room = MAX_HEADER_BYTES - self._header_bytes
            if len(data) > room:
                self._feed(data[:room])
                if not self._headers_done and self._error is None:
                    self._error = ExchangeError("protocol", _HEAD_TOO_LONG)
                elif self._error is None:
                    self._feed(data[room:])
            else:
                self._header_bytes += len(data)
                self._feed(data)
        else:
            self._feed(data)
        if self._error is not None and not waiter.done():
            self._end(self._error)
            self.close()

    def _feed(self, data: bytes) -> None:
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserCallbackError as error:
            cause = error.__context__
            self._error = ExchangeError("protocol", str(cause or error))
        except httptools.HttpParserError as error:
            kind: FailureKind = "payload" if self._headers_done else "protocol"
            self._error = ExchangeError(kind, f"malformed answer: {error}")

    def eof_received(self) -> bool:
        return False  # close our side too; connection_lost follows

    def connection_lost(self, error: Exception | None) -> None:
        self.closed = True
        self.reusable = False
        self._on_lost(self)
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._headers_done and self._eof_delimited and self._error is None:
            self._answer(ended=True)
        elif self._first_bytes_at is None:
            self._end(StaleConnectionError(sent=True))
        elif self._headers_done:
            self._end(ExchangeError("payload", "the connection closed before the answer ended"))
        else:
            self._end(ExchangeError("connection", "the connection closed in the answer's head"))

    # --- httptools callbacks ------------------------------------------------------------------

    def on_message_begin(self) -> None:
        if self._headers_done:
            self.reusable = False
            self._error = ExchangeError("protocol", "more than one answer to one request")

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._error is not None:
            return
        if len(self._headers) >= MAX_HEADER_LINES:
            self._error = ExchangeError("protocol", f"more than {MAX_HEADER_LINES} header lines")
            return
        if len(name) + len(value) > MAX_HEADER_LINE_BYTES:
            message = f"a header line over {MAX_HEADER_LINE_BYTES} bytes ({name[:40]!r}...)"
            self._error = ExchangeError("protocol", message)
            return
        # As aiohttp reads them: UTF-8, undecodable bytes kept as surrogates.
        self._headers.append(
            (name.decode("utf-8", "surrogateescape"), value.decode("utf-8", "surrogateescape"))
        )

    def on_headers_complete(self) -> None:
        if self._error is not None:
            return
        parser = self._parser
        status = parser.get_status_code()
        if 100 <= status < 200:
            # An interim answer (100 Continue, 103 Early Hints): the real one follows.
            self._headers = []
            self._interim += 1
            return
        self._headers_done = True
        self._status = status
        self._keep_alive = parser.should_keep_alive()
        content_type = ""
        encoding = ""
        length = chunked = False
        declared = -1
        for name, value in self._headers:
            lowered = name.lower()
            if lowered == "content-type" and not content_type:
                content_type = value
            elif lowered == "content-encoding":
                encoding = value.strip().lower()
            elif lowered == "content-length":
                length = True
                declared = int(value) if value.strip().isdigit() else -1
            elif lowered == "transfer-encoding":
                chunked = "chunked" in value.lower()
        if content_type:
            self._content_type, self._charset = media_type(content_type)
        else:
            self._content_type, self._charset = "", None
        no_body = status in (204, 304)
        self._eof_delimited = not (length or chunked or no_body)
        if self._html_only and self._content_type and self._content_type not in HTML_TYPES:
            # Its body is not wanted. A short one is read and thrown away so that the connection
            # serves the host's next request; a long one, or one that ends only with the
            # connection, is not read, and the connection is not reused.
            self._discarding = True
            if self._eof_delimited or declared > DISCARD_BYTES or not self._keep_alive:
                self._answer()
            return
        if encoding and encoding != "identity":
            self._body = BodyReader(self._cap, body_decoder(encoding))

    def on_body(self, chunk: bytes) -> None:
        waiter = self._waiter
        if waiter is None or waiter.done() or self._error is not None:
            return
        if self._discarding:
            self._discarded += len(chunk)
            if self._discarded > DISCARD_BYTES:
                self._answer()  # longer than it is worth reading: not reused
            return
        try:
            more = self._body.feed(chunk)
        except DecodeError as error:
            self._error = ExchangeError("payload", f"cannot decode the body: {error}")
            return
        if not more:
            self._answer()  # past the cap: the rest is not read, nor the connection reused

    def on_message_complete(self) -> None:
        waiter = self._waiter
        if waiter is None or waiter.done() or self._error is not None:
            return
        if not self._headers_done:
            return  # the end of an interim answer
        self.reusable = self._keep_alive
        self._answer(ended=True)

    def close(self) -> None:
        self.reusable = False
        if self.transport is not None and not self.closed:
            self.transport.close()


_HEAD_TOO_LONG = f"the answer's head is over {MAX_HEADER_BYTES} bytes"


# The leniencies aiohttp's parser has (aiohttp/_http_parser.pyx), so that both clients read the
# same answers: header lines ending in a bare LF, a header value with control characters or
# obsolete folding, spaces after a chunk size. What they allow is what browsers read; a client
# that forwards nothing has no request smuggling to fear from them.
_LENIENCIES = {
    "lenient_headers": True,
    "lenient_optional_cr_before_lf": True,
    "lenient_spaces_after_chunk_size": True,
}


def new_parser(protocol: object) -> httptools.HttpResponseParser:
    """httptools' response parser calling `protocol`'s `on_*` methods, with aiohttp's leniencies
    (httptools 0.6.2 and later; an older one is strict)."""
    parser = httptools.HttpResponseParser(protocol)
    lenient = getattr(parser, "set_dangerous_leniencies", None)
    if lenient is not None:
        lenient(**_LENIENCIES)
    return parser
