"""One HTTP/1.1 connection of the http1 client (crawler.http.http1): an asyncio protocol that
feeds what arrives to httptools' parser and turns it into the answer of the one exchange in
progress.

It stamps the answer's first bytes as they arrive (`Response.answered_at`: politeness counts a
host's interval from there, crawler.politeness), bounds the answer's head to
`MAX_HEADER_BYTES` and its decoded body to the cap, and ends every exchange in exactly one
outcome: a `Response`, an `ExchangeError` (kind and message of the `FetchFailure` to be), or a
`StaleConnectionError` when a connection ends before the first byte of its answer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import cast

import httptools
from multidict import CIMultiDict, CIMultiDictProxy

from crawler.http.answer import HTML_TYPES, FailureKind, Response
from crawler.http.coding import DECODE_ERRORS, Decoder, body_decoder, media_type

__all__ = ["MAX_HEADER_BYTES", "Connection", "ExchangeError", "StaleConnectionError"]

MAX_HEADER_BYTES = 64 * 1024
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
    ) -> None:
        self.key = key
        """The origin's (scheme, host, port): the pool it belongs to."""
        self._loop = loop
        self._on_lost = on_lost
        self._parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.counted = False
        """Counted among the client's open connections (once connected) until forgotten."""
        self.idle_since = 0.0
        self.reusable = False
        # The exchange in progress:
        self._waiter: asyncio.Future[Response] | None = None
        self._url = ""
        self._cap = 0
        self._html_only = False
        self._timer: asyncio.TimerHandle | None = None
        self._last_data_at = 0.0
        self._first_bytes_at: float | None = None
        self._headers: list[tuple[str, str]] = []
        self._header_bytes = 0
        self._field_bytes = 0
        self._headers_done = False
        self._eof_delimited = False
        self._status = 0
        self._content_type = ""
        self._charset: str | None = None
        self._decoder: Decoder | None = None
        self._body: list[bytes] = []
        self._size = 0
        self._keep_alive = False
        self._discarding = False
        self._discarded = 0
        self._error: ExchangeError | None = None

    # --- the exchange ---------------------------------------------------------------------------

    def exchange(
        self, request: bytes, url: str, cap: int, html_only: bool, read_timeout: float
    ) -> asyncio.Future[Response]:
        """Send `request`; the future ends with the answer, or raises `ExchangeError` or
        `StaleConnectionError`."""
        assert self.transport is not None and self._waiter is None
        self._waiter = waiter = self._loop.create_future()
        if self.closed:  # lost between its set-up and now
            waiter.set_exception(StaleConnectionError(sent=False))
            return waiter
        self._url, self._cap, self._html_only = url, cap, html_only
        self._first_bytes_at = None
        self._headers = []
        self._header_bytes = 0
        self._field_bytes = 0
        self._headers_done = False
        self._body = []
        self._size = 0
        self._decoder = None
        self._discarding = False
        self._discarded = 0
        self._error = None
        self.reusable = False
        self.transport.write(request)
        self._last_data_at = now = self._loop.time()
        self._timer = self._loop.call_at(now + read_timeout, self._on_timer, read_timeout)
        return waiter

    def _on_timer(self, read_timeout: float) -> None:
        self._timer = None
        if self._waiter is None or self._waiter.done():
            return
        due = self._last_data_at + read_timeout
        if self._loop.time() >= due:
            self._end(ExchangeError("timeout", f"no data for {read_timeout:g} s"))
            self.close()
        else:
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

    def _answer(self, truncated: bool = False) -> None:
        body = self._body[0] if len(self._body) == 1 else b"".join(self._body)
        if truncated:
            body = body[: self._cap]
        self._body = []
        headers = CIMultiDictProxy(CIMultiDict(self._headers))
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
            )
        )

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
        if not self._headers_done:
            # httptools buffers a header line until it ends: bound the head here, by what came.
            self._header_bytes += len(data)
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserCallbackError as error:
            cause = error.__context__
            self._error = ExchangeError("protocol", str(cause or error))
        except httptools.HttpParserError as error:
            kind: FailureKind = "payload" if self._headers_done else "protocol"
            self._error = ExchangeError(kind, f"malformed answer: {error}")
        if not self._headers_done and self._header_bytes > MAX_HEADER_BYTES:
            self._error = ExchangeError("protocol", f"headers over {MAX_HEADER_BYTES} bytes")
        if self._error is not None and not waiter.done():
            self._end(self._error)
            self.close()

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
            self._finish_body()
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
        self._field_bytes += len(name) + len(value)
        if self._field_bytes > MAX_HEADER_BYTES:
            self._error = ExchangeError("protocol", f"headers over {MAX_HEADER_BYTES} bytes")
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
            if self._eof_delimited or declared > DISCARD_BYTES or not self._keep_alive:
                self._answer()
            else:
                self._discarding = True
            return
        if encoding and encoding != "identity":
            self._decoder = body_decoder(encoding)

    def on_body(self, chunk: bytes) -> None:
        waiter = self._waiter
        if waiter is None or waiter.done() or self._error is not None:
            return
        if self._discarding:
            self._discarded += len(chunk)
            if self._discarded > DISCARD_BYTES:
                self._answer()  # longer than it is worth reading: not reused
            return
        decoder = self._decoder
        if decoder is None:
            self._body.append(chunk)
            self._size += len(chunk)
        else:
            try:
                data = chunk
                while data:
                    room = self._cap - self._size
                    out = decoder.decompress(data, room + 1)
                    self._body.append(out)
                    self._size += len(out)
                    if self._size > self._cap:
                        break
                    data = decoder.unconsumed_tail
            except DECODE_ERRORS as error:
                self._error = ExchangeError("payload", f"cannot decode the body: {error}")
                return
        if self._size > self._cap:
            self._answer(truncated=True)

    def on_message_complete(self) -> None:
        waiter = self._waiter
        if waiter is None or waiter.done() or self._error is not None:
            return
        if not self._headers_done:
            return  # the end of an interim answer
        self.reusable = self._keep_alive
        if self._discarding:
            self._answer()
            return
        self._finish_body()

    def _finish_body(self) -> None:
        decoder = self._decoder
        if decoder is not None:
            try:
                tail = decoder.flush()
            except DECODE_ERRORS as error:
                self._end(ExchangeError("payload", f"cannot decode the body: {error}"))
                return
            if tail:
                self._body.append(tail)
                self._size += len(tail)
        self._answer(truncated=self._size > self._cap)

    def close(self) -> None:
        self.reusable = False
        if self.transport is not None and not self.closed:
            self.transport.close()
