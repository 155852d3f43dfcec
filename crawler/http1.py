"""A lean HTTP/1.1 client for the crawl's GETs: keep-alive connections per origin, parsed by
httptools (llhttp, Node.js's parser), redirects returned and not followed, a cap on decoded bytes.

Why not aiohttp's ClientSession for every request: on this 2-core machine, against a local server,
a keep-alive GET of a 12 KB page cost the event loop's thread about 240 µs in aiohttp (request
object, header merging, tracing hooks, the connector, the response object and its stream) and
about 45 µs in a bare protocol with httptools (`scripts/bench_http_client.py`). With a thousand
hosts due in the same second that difference is a fifth of a second of every host's pace: the
loop answers, stamps and starts requests that much later (crawler/turns.py). aiohttp stays the
client where httptools is not installed, or when `fetch.client` asks for it (crawler/fetch.py).

What it does, as aiohttp did for the crawl:
- One request at a time per connection. Idle connections wait per origin, the most recently used
  first; at most `limit` connections are open in all, and the least recently used idle one is
  closed to make room. One idle longer than `KEEPALIVE_SECONDS` is closed, not reused.
- A reused connection that ends before the first byte of its answer was most likely closed by the
  server while it sat idle: the GET is sent once more on a new connection.
- Host names are looked up through the loop's resolver, answers kept `DNS_TTL` seconds; an IP
  literal is not looked up. TLS with the default context: certificates are verified.
- `connect_timeout` bounds the look-up and the TCP (and TLS) set-up; `read_timeout` the longest
  silence while the answer comes in.
- Content-Encoding gzip and deflate (zlib or raw) are decoded, br where brotli is installed; the
  cap counts decoded bytes, so a small compressed answer cannot unpack into gigabytes.
- Answer headers over `MAX_HEADER_BYTES` are a protocol failure, not memory.

Failures are values (`FetchFailure`) with the kinds crawler/fetch.py names: `timeout`, `dns`,
`connection` (refused, reset, closed before the answer, TLS), `protocol` (malformed status line or
headers), `payload` (the body broke off or could not be decoded), `invalid-url`.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, cast

import httptools
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from crawler.config import FetchConfig
from crawler.fetch import HTML_TYPES, FetchFailure, Response

__all__ = ["DNS_TTL", "KEEPALIVE_SECONDS", "MAX_HEADER_BYTES", "Http1Client"]

KEEPALIVE_SECONDS = 15.0
"""An idle connection older than this is closed rather than reused (aiohttp's default too):
servers drop idle connections after a while, and one found dead costs a second attempt."""
DNS_TTL = 300.0
MAX_HEADER_BYTES = 64 * 1024
MAX_ORIGINS_KEPT = 100_000
"""Parsed origins kept for the next GET; past this many the cache starts afresh."""
DEFAULT_PORTS = {"http": 80, "https": 443}


try:  # the same optional package aiohttp decodes br with
    import brotli  # type: ignore[import-untyped, import-not-found, unused-ignore]

    def _brotli() -> _BrotliDecoder | None:
        return _BrotliDecoder()

except ImportError:  # pragma: no cover - depends on what is installed

    def _brotli() -> _BrotliDecoder | None:
        return None


class _BrotliDecoder:
    """brotli's decompressor behind zlib's interface. It cannot bound one call's output, so the
    cap is checked after each chunk the socket delivered."""

    __slots__ = ("_decompressor",)

    def __init__(self) -> None:
        self._decompressor = brotli.Decompressor()

    def decompress(self, data: bytes, max_length: int = 0) -> bytes:
        return bytes(self._decompressor.process(data))

    @property
    def unconsumed_tail(self) -> bytes:
        return b""

    def flush(self) -> bytes:
        return b""


class _DeflateDecoder:
    """`Content-Encoding: deflate` is a zlib stream by the RFC, and a raw deflate stream from
    servers that read the name literally; the first byte tells them apart."""

    __slots__ = ("_zlib",)

    def __init__(self) -> None:
        self._zlib: Any = None

    def decompress(self, data: bytes, max_length: int = 0) -> bytes:
        if self._zlib is None:
            zlib_header = bool(data) and data[0] & 0x0F == 8
            self._zlib = zlib.decompressobj(zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS)
        return bytes(self._zlib.decompress(data, max_length))

    @property
    def unconsumed_tail(self) -> bytes:
        return b"" if self._zlib is None else bytes(self._zlib.unconsumed_tail)

    def flush(self) -> bytes:
        return b"" if self._zlib is None else bytes(self._zlib.flush())


def _decoder(encoding: str) -> Any:
    """A decompressor for the Content-Encoding, or None to take the body as it came (identity,
    or an encoding we did not ask for and cannot decode: aiohttp passes those through too)."""
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return _DeflateDecoder()
    if encoding == "br":
        return _brotli()
    return None


def accept_encoding() -> str:
    return "gzip, deflate, br" if _brotli() is not None else "gzip, deflate"


def media_type(value: str) -> tuple[str, str | None]:
    """A Content-Type value's media type (lower case, no parameters) and its charset parameter."""
    media, _, parameters = value.partition(";")
    charset = None
    if parameters:
        for parameter in parameters.split(";"):
            name, equals, given = parameter.partition("=")
            if equals and name.strip().lower() == "charset":
                charset = given.strip().strip("\"'").strip() or None
                break
    return media.strip().lower(), charset


class _ExchangeError(Exception):
    """An exchange ended without an answer: `kind` and `message` become the `FetchFailure`."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class _StaleConnectionError(Exception):
    """A reused connection ended before the first byte of the answer."""


class _Origin:
    """Where a GET connects and what its Host line says: one per origin, parsed once."""

    __slots__ = ("host", "host_line", "key", "port", "tls")

    def __init__(self, parsed: URL) -> None:
        scheme = parsed.scheme
        host = parsed.raw_host
        if scheme not in DEFAULT_PORTS or not host:
            raise ValueError(f"not an http(s) URL with a host: {str(parsed)!r}")
        if not _is_clean(host):
            raise ValueError(f"whitespace or control characters in the host {host!r}")
        port = parsed.port or DEFAULT_PORTS[scheme]
        self.tls = scheme == "https"
        self.host = host
        self.port = port
        self.key = (scheme, host, port)
        authority = f"[{host}]" if ":" in host else host
        if parsed.explicit_port is not None and port != DEFAULT_PORTS[scheme]:
            authority = f"{authority}:{port}"
        self.host_line = f" HTTP/1.1\r\nHost: {authority}".encode("ascii")


def _is_clean(text: str) -> bool:
    """Printable ASCII without spaces: nothing that could end a request line or inject one."""
    return text.isascii() and text.isprintable() and " " not in text


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection: feeds what arrives to its parser and turns it into the answer of
    the one exchange in progress. The parser's callbacks are its `on_*` methods."""

    def __init__(self, client: Http1Client, key: tuple[str, str, int]) -> None:
        self._client = client
        self.key = key
        self._loop = client.loop
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
        self._header_name = ""
        self._headers_done = False
        self._eof_delimited = False
        self._status = 0
        self._content_type = ""
        self._charset: str | None = None
        self._decoder: Any = None
        self._body: list[bytes] = []
        self._size = 0
        self._keep_alive = False
        self._error: _ExchangeError | None = None

    # --- the exchange ---------------------------------------------------------------------------

    def exchange(
        self, request: bytes, url: str, cap: int, html_only: bool, read_timeout: float
    ) -> asyncio.Future[Response]:
        """Send `request`; the future ends with the answer, or raises `_ExchangeError` or
        `_StaleConnectionError`."""
        assert self.transport is not None and self._waiter is None
        self._waiter = waiter = self._loop.create_future()
        if self.closed:  # lost between its set-up and now
            waiter.set_exception(_StaleConnectionError())
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
            self._end(_ExchangeError("timeout", f"no data for {read_timeout:g} s"))
            self.close()
        else:
            self._timer = self._loop.call_at(due, self._on_timer, read_timeout)

    def _end(self, outcome: Response | _ExchangeError | _StaleConnectionError) -> None:
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
            # When the host had answered by, for politeness (crawler/fetch.py, Response).
            self._first_bytes_at = time.monotonic()
        self._last_data_at = self._loop.time()
        if not self._headers_done:
            # httptools buffers a header line until it ends: bound the head here, by what came.
            self._header_bytes += len(data)
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserCallbackError as error:
            cause = error.__context__
            self._error = _ExchangeError("protocol", str(cause or error))
        except httptools.HttpParserError as error:
            kind = "payload" if self._headers_done else "protocol"
            self._error = _ExchangeError(kind, f"malformed answer: {error}")
        if not self._headers_done and self._header_bytes > MAX_HEADER_BYTES:
            self._error = _ExchangeError("protocol", f"headers over {MAX_HEADER_BYTES} bytes")
        if self._error is not None and not waiter.done():
            self._end(self._error)
            self.close()

    def eof_received(self) -> bool:
        return False  # close our side too; connection_lost follows

    def connection_lost(self, error: Exception | None) -> None:
        self.closed = True
        self.reusable = False
        self._client.forget(self)
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._headers_done and self._eof_delimited and self._error is None:
            self._finish_body()
        elif self._first_bytes_at is None:
            self._end(_StaleConnectionError())
        elif self._headers_done:
            self._end(_ExchangeError("payload", "the connection closed before the answer ended"))
        else:
            self._end(_ExchangeError("connection", "the connection closed in the answer's head"))

    # --- httptools callbacks ------------------------------------------------------------------

    def on_message_begin(self) -> None:
        if self._headers_done:
            self.reusable = False
            self._error = _ExchangeError("protocol", "more than one answer to one request")

    def on_header(self, name: bytes, value: bytes) -> None:
        self._field_bytes += len(name) + len(value)
        if self._field_bytes > MAX_HEADER_BYTES:
            self._error = _ExchangeError("protocol", f"headers over {MAX_HEADER_BYTES} bytes")
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
        for name, value in self._headers:
            lowered = name.lower()
            if lowered == "content-type" and not content_type:
                content_type = value
            elif lowered == "content-encoding":
                encoding = value.strip().lower()
            elif lowered == "content-length":
                length = True
            elif lowered == "transfer-encoding":
                chunked = "chunked" in value.lower()
        if content_type:
            self._content_type, self._charset = media_type(content_type)
        else:
            self._content_type, self._charset = "", None
        no_body = status in (204, 304)
        self._eof_delimited = not (length or chunked or no_body)
        if self._html_only and self._content_type and self._content_type not in HTML_TYPES:
            self._answer()  # its body is not wanted: the connection is not reused
            return
        if encoding and encoding != "identity":
            self._decoder = _decoder(encoding)

    def on_body(self, chunk: bytes) -> None:
        waiter = self._waiter
        if waiter is None or waiter.done() or self._error is not None:
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
            except (zlib.error, brotli_error) as error:
                self._error = _ExchangeError("payload", f"cannot decode the body: {error}")
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
        self._finish_body()

    def _finish_body(self) -> None:
        decoder = self._decoder
        if decoder is not None:
            try:
                tail = decoder.flush()
            except (zlib.error, brotli_error) as error:
                self._end(_ExchangeError("payload", f"cannot decode the body: {error}"))
                return
            if tail:
                self._body.append(tail)
                self._size += len(tail)
        self._answer(truncated=self._size > self._cap)

    def close(self) -> None:
        self.reusable = False
        if self.transport is not None and not self.closed:
            self.transport.close()


try:
    brotli_error: type[Exception] = brotli.error
except NameError:  # pragma: no cover - brotli not installed
    brotli_error = zlib.error


class Http1Client:
    """GETs over pooled HTTP/1.1 connections. `get` never raises for what the network or the
    server did: it returns a `FetchFailure`."""

    def __init__(
        self,
        config: FetchConfig,
        headers: dict[str, str],
        *,
        limit: int = 100,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.loop = asyncio.get_running_loop()
        self._config = config
        self._limit = max(1, limit)
        lines = "".join(f"\r\n{name}: {value}" for name, value in headers.items())
        self._request_tail = (lines + "\r\n\r\n").encode("latin-1")
        self._ssl_context = ssl_context
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._idle_order: OrderedDict[_Connection, None] = OrderedDict()
        self._open = 0
        self._room: list[asyncio.Future[None]] = []
        self._origins: dict[str, _Origin] = {}
        self._dns: dict[tuple[str, int], tuple[float, list[tuple[Any, ...]]]] = {}
        self._closing = False

    async def get(
        self, url: str, max_bytes: int, *, html_only: bool = False
    ) -> Response | FetchFailure:
        try:
            target, request_target = self._target(url)
        except (ValueError, TypeError, UnicodeError) as error:
            return FetchFailure(url, "invalid-url", str(error))
        request = b"GET " + request_target + target.host_line + self._request_tail
        for attempt in (1, 2):
            try:
                connection, reused = await self._acquire(target)
            except _ExchangeError as failure:
                return FetchFailure(url, failure.kind, str(failure))
            try:
                return await connection.exchange(
                    request, url, max_bytes, html_only, self._config.read_timeout
                )
            except _StaleConnectionError:
                if reused and attempt == 1:
                    continue
                return FetchFailure(url, "connection", "the server closed without an answer")
            except _ExchangeError as failure:
                return FetchFailure(url, failure.kind, str(failure))
            finally:
                self._release(connection)
        raise AssertionError("unreachable")  # pragma: no cover

    def _target(self, url: str) -> tuple[_Origin, bytes]:
        """The URL's origin and its request target (path and query, as the URL has them: a
        normal URL is percent-encoded already, crawler/urls.py)."""
        after_scheme = url.find("://") + 3
        path_at = url.find("/", after_scheme) if after_scheme > 2 else -1
        if path_at < 0 or any(mark in url[after_scheme:path_at] for mark in "?#"):
            parsed = URL(url, encoded=True)  # no path, or an odd form: yarl reads it whole
            origin_text = str(parsed.origin())
            path = parsed.raw_path_qs or "/"
        else:
            origin_text = url[:path_at]
            path = url[path_at:].partition("#")[0]
        origin = self._origins.get(origin_text)
        if origin is None:
            origin = _Origin(URL(origin_text, encoded=True))
            if len(self._origins) >= MAX_ORIGINS_KEPT:
                self._origins.clear()
            self._origins[origin_text] = origin
        if not _is_clean(path):
            raise ValueError(f"whitespace or control characters in {url!r}")
        return origin, path.encode("ascii")

    # --- the pool -------------------------------------------------------------------------------

    async def _acquire(self, target: _Origin) -> tuple[_Connection, bool]:
        """A connection to the origin, and whether it is one reused: an idle one if there is
        one, else a new one once there is room (closing the least recently used idle one of
        another origin if need be)."""
        while True:
            idle = self._idle.get(target.key)
            while idle:
                connection = idle.pop()
                del self._idle_order[connection]
                fresh = self.loop.time() - connection.idle_since < KEEPALIVE_SECONDS
                if fresh and not connection.closed:
                    return connection, True
                connection.close()
                self.forget(connection, wake=False)
            if self._open < self._limit:
                break
            if self._idle_order:
                oldest, _ = self._idle_order.popitem(last=False)
                self._idle[oldest.key].remove(oldest)
                oldest.close()
                self.forget(oldest, wake=False)  # its room is ours
                break
            room: asyncio.Future[None] = self.loop.create_future()
            self._room.append(room)
            try:
                await room
            except asyncio.CancelledError:
                if room in self._room:
                    self._room.remove(room)
                elif room.done() and not room.cancelled():
                    self._make_room()  # pass the wake-up on
                raise
        self._open += 1
        try:
            connection = await self._connect(target)
            connection.counted = True
            return connection, False
        except BaseException:
            self._open -= 1
            self._make_room()
            raise

    def _release(self, connection: _Connection) -> None:
        connection.finished()
        if connection.reusable and not connection.closed and not self._closing:
            connection.idle_since = self.loop.time()
            self._idle.setdefault(connection.key, []).append(connection)
            self._idle_order[connection] = None
            self._make_room()
            return
        connection.close()
        self.forget(connection)

    def forget(self, connection: _Connection, *, wake: bool = True) -> None:
        """The connection is closed or closing: it no longer counts, nor waits idle. With
        `wake`, a task waiting for room is told there is some."""
        if not connection.counted:
            return
        connection.counted = False
        self._open -= 1
        if connection in self._idle_order:
            del self._idle_order[connection]
            self._idle[connection.key].remove(connection)
        if wake:
            self._make_room()

    def _make_room(self) -> None:
        """Wake one task waiting for a connection: one closed, or one went idle (it may be
        closed to make room)."""
        while self._room:
            room = self._room.pop(0)
            if not room.done():
                room.set_result(None)
                return

    async def _connect(self, target: _Origin) -> _Connection:
        config = self._config
        try:
            async with asyncio.timeout(config.connect_timeout):
                addresses = await self._resolve(target.host, target.port)
                error: Exception | None = None
                for family, address in addresses:
                    try:
                        return await self._open_connection(target, family, address)
                    except OSError as failure:
                        error = failure
                assert error is not None
                raise error
        except TimeoutError:
            message = f"no connection within {config.connect_timeout:g} s"
            raise _ExchangeError("timeout", message) from None
        except socket.gaierror as error:
            raise _ExchangeError("dns", f"cannot resolve {target.host}: {error}") from None
        except (OSError, ssl.SSLError, ValueError) as error:
            message = str(error) or type(error).__name__
            where = f"{target.host}:{target.port}"
            raise _ExchangeError("connection", f"cannot connect to {where}: {message}") from None

    async def _open_connection(
        self, target: _Origin, family: int, address: tuple[Any, ...]
    ) -> _Connection:
        tls: ssl.SSLContext | None = None
        if target.tls:
            if self._ssl_context is None:
                self._ssl_context = ssl.create_default_context()
            tls = self._ssl_context
        factory: Callable[[], _Connection] = lambda: _Connection(self, target.key)  # noqa: E731
        _, connection = await self.loop.create_connection(
            factory,
            address[0],
            address[1],
            family=family,
            ssl=tls,
            server_hostname=target.host if tls is not None else None,
        )
        return connection

    async def _resolve(self, host: str, port: int) -> list[tuple[int, tuple[Any, ...]]]:
        try:
            literal = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        if literal is not None:
            family = socket.AF_INET6 if literal.version == 6 else socket.AF_INET
            return [(family, (host, port))]
        now = self.loop.time()
        cached = self._dns.get((host, port))
        if cached is not None and cached[0] > now:
            return [(info[0], info[4]) for info in cached[1]]
        infos = await self.loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        if not infos:
            raise socket.gaierror(f"no address for {host}")
        self._dns[(host, port)] = (now + DNS_TTL, list(infos))
        return [(info[0], info[4]) for info in infos]

    async def close(self) -> None:
        self._closing = True
        for connections in list(self._idle.values()):
            for connection in list(connections):
                connection.close()
                self.forget(connection)
        self._idle.clear()
        self._idle_order.clear()
        # Let the transports finish closing before the loop may end.
        await asyncio.sleep(0)
