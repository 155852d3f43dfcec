"""Hostile hosts: raw asyncio TCP servers on loopback that misbehave below HTTP.

Each host is one `asyncio.start_server` on its own address (127.0.5.x, 127.0.6.x), port 0, so the
crawler treats it as a host of its own. A host maps request paths to `Route`s: coroutines that
write whatever bytes they like (or none) to the connection. The server reads a request head,
logs it as a `Hit`, runs the route, then closes the connection; every answer says
`Connection: close`, so one connection carries one request and the log is simple.

The servers run on their own event loop in a thread of the test process (`HostileWeb`), while the
crawl runs in a subprocess. Each `Hit` holds the server's `time.monotonic()` when the request head
had arrived and when the client closed the connection (or the route gave up), so tests judge
politeness and deadlines where a site owner would: on the server side.

Slow routes never drip for ever: they stop after `SLOW_CAP` seconds (far beyond any deadline the
crawl is given), so a crawl without a deadline still ends and the harness can report it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gzip
import itertools
import socket
import struct
import threading
import time
import zlib
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

__all__ = [
    "CHUNK",
    "SLOW_CAP",
    "Exchange",
    "Hit",
    "HostileHost",
    "HostileWeb",
    "Route",
    "brotli_bomb",
    "close_now",
    "deflate_bomb",
    "drip",
    "gzip_bomb",
    "hang",
    "html_page",
    "raw",
    "reset_after",
    "response",
    "stream_forever",
]

SLOW_CAP = 12.0
"""Longest a slow route keeps a connection busy: well past the crawl's deadlines, short enough
that a crawl without one still ends within the suite's time."""
SELF_CHECK_S = 0.05
"""How often the servers' loop wakes to see how late it is."""
SELF_STALL_S = 0.2
"""Lateness of the servers' own loop worth noting (`HostileWeb.stalls`): a request head that
arrived meanwhile is logged that much late, and no test should blame the crawl for it."""
REQUEST_HEAD_LIMIT = 1 << 20
"""Request heads up to 1 MiB are read and logged, so a 100 KB request-target shows in the log."""
CHUNK = 64 * 1024


@dataclass
class Hit:
    """One request a host received."""

    host: str
    path: str
    """The request-target as sent (path and query)."""
    at: float
    """Server `time.monotonic()` when the request head had arrived."""
    closed_at: float | None = None
    """When the client closed the connection, or the route ended it; None while it is open."""
    sent: int = 0
    """Bytes the route wrote."""


@dataclass
class Exchange:
    """A route's view of one request: the request, and ways to answer it."""

    hit: Hit
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    client_gone: asyncio.Event

    async def send(self, data: bytes) -> bool:
        """Write `data`; False once the client has gone."""
        if self.client_gone.is_set() or self.writer.is_closing():
            return False
        self.writer.write(data)
        self.hit.sent += len(data)
        try:
            await self.writer.drain()
        except (ConnectionError, OSError):
            self.client_gone.set()
            return False
        return not self.client_gone.is_set()

    async def wait_gone(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the client to close; True if it did."""
        try:
            await asyncio.wait_for(self.client_gone.wait(), timeout)
        except TimeoutError:
            return False
        return True


Route = Callable[[Exchange], Awaitable[None]]


def response(
    status: int = 200,
    body: bytes = b"",
    *,
    content_type: str | None = "text/html",
    headers: Iterable[tuple[str, str]] = (),
    reason: str = "",
    length: bool = True,
) -> bytes:
    """A whole, well-formed HTTP/1.1 answer."""
    lines = [f"HTTP/1.1 {status} {reason or _REASONS.get(status, 'Status')}"]
    if content_type is not None:
        lines.append(f"Content-Type: {content_type}")
    if length:
        lines.append(f"Content-Length: {len(body)}")
    lines.append("Connection: close")
    lines.extend(f"{name}: {value}" for name, value in headers)
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


_REASONS = {200: "OK", 301: "Moved Permanently", 302: "Found", 404: "Not Found", 500: "Error"}
_REASONS |= {503: "Service Unavailable"}


def html_page(*links: str, title: str = "page", text: str = "") -> bytes:
    anchors = "".join(f'<a href="{link}">{link}</a>\n' for link in links)
    return (
        f"<!doctype html><html><head><title>{title}</title></head>"
        f"<body><p>{text}</p>\n{anchors}</body></html>\n"
    ).encode()


def raw(data: bytes | Callable[[Hit], bytes]) -> Route:
    """Answer with these bytes exactly (or the bytes `data(hit)` makes), then close."""

    async def route(exchange: Exchange) -> None:
        await exchange.send(data(exchange.hit) if callable(data) else data)

    return route


def drip(head: bytes, rest: bytes, interval: float) -> Route:
    """Send `head` at once, then `rest` one byte every `interval` seconds (for at most SLOW_CAP
    seconds), as long as the client listens."""

    async def route(exchange: Exchange) -> None:
        if head and not await exchange.send(head):
            return
        deadline = time.monotonic() + SLOW_CAP
        for index in range(len(rest)):
            if time.monotonic() > deadline or await exchange.wait_gone(interval):
                return
            if not await exchange.send(rest[index : index + 1]):
                return

    return route


def hang() -> Route:
    """Read the request and never answer (until the client leaves, or SLOW_CAP)."""

    async def route(exchange: Exchange) -> None:
        await exchange.wait_gone(SLOW_CAP)

    return route


def close_now() -> Route:
    """Close without a byte."""

    async def route(exchange: Exchange) -> None:
        return None

    return route


def reset_after(data: bytes) -> Route:
    """Send `data`, then reset the connection (RST, not FIN)."""

    async def route(exchange: Exchange) -> None:
        await exchange.send(data)
        sock = exchange.writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        exchange.writer.transport.abort()
        exchange.client_gone.set()

    return route


def stream_forever(head: bytes, chunk: bytes, limit: int = 1 << 31) -> Route:
    """Send `head`, then `chunk` again and again as fast as the client reads, until it leaves (or
    `limit` bytes, or SLOW_CAP seconds)."""

    async def route(exchange: Exchange) -> None:
        if not await exchange.send(head):
            return
        deadline = time.monotonic() + SLOW_CAP
        while exchange.hit.sent < limit and time.monotonic() < deadline:
            if not await exchange.send(chunk):
                return

    return route


# --- bombs: a gigabyte of zeros, a megabyte or less on the wire -----------------------------------

BOMB_BYTES = 1 << 30
"""What each bomb decodes to: 1 GiB of zeros."""


@functools.cache
def _raw_deflate_of_zeros(total: int) -> bytes:
    """Raw DEFLATE of `total` zero bytes, made fast: after a full flush the compressor's output
    for the next MiB of zeros depends on nothing before it, so one MiB's blocks are repeated."""
    step = 1 << 20
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = bytes(step)
    first = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    return first + again * (total // step - 1) + compressor.flush(zlib.Z_FINISH)


@functools.cache
def _checksums_of_zeros(total: int) -> tuple[int, int]:
    step = bytes(1 << 20)
    adler, crc = 1, 0
    for _ in range(total // len(step)):
        adler = zlib.adler32(step, adler)
        crc = zlib.crc32(step, crc)
    return adler, crc


def deflate_bomb(total: int = BOMB_BYTES) -> bytes:
    """`Content-Encoding: deflate` (zlib-wrapped) of `total` zeros."""
    adler, _ = _checksums_of_zeros(total)
    return b"\x78\xda" + _raw_deflate_of_zeros(total) + struct.pack(">I", adler)


def gzip_bomb(total: int = BOMB_BYTES) -> bytes:
    """`Content-Encoding: gzip` of `total` zeros."""
    _, crc = _checksums_of_zeros(total)
    header = gzip.compress(b"", mtime=0)[:10]
    return header + _raw_deflate_of_zeros(total) + struct.pack("<II", crc, total & 0xFFFFFFFF)


def brotli_bomb(total: int = BOMB_BYTES) -> bytes | None:
    """`Content-Encoding: br` of `total` zeros; None where the brotli module is not installed."""
    try:
        import brotli  # type: ignore[import-untyped]
    except ImportError:
        return None
    compressor = brotli.Compressor(quality=1)
    zeros = bytes(1 << 20)
    parts = [compressor.process(zeros) for _ in range(total // len(zeros))]
    parts.append(compressor.finish())
    return b"".join(parts)


# --- the hosts ----------------------------------------------------------------------------------


@dataclass
class HostileHost:
    """One address, its routes, and what it was asked. An unknown path is a plain 404."""

    ip: str
    routes: dict[str, Route] = field(default_factory=dict)
    port: int = 0
    hits: list[Hit] = field(default_factory=list)
    accepts_connections: bool = True
    """False: a listening socket whose accept queue is kept full, so a connect never completes
    (the kernel drops further SYNs; the client's connect times out)."""

    @property
    def origin(self) -> str:
        return f"http://{self.ip}:{self.port}"

    def url(self, path: str = "/") -> str:
        return self.origin + path

    def route_for(self, target: str) -> Route | None:
        """The route for `target`: its exact key, else its path's, else the longest key ending
        in `*` that is a prefix of it."""
        path = target.split("?", 1)[0]
        route = self.routes.get(target) or self.routes.get(path)
        if route is not None:
            return route
        prefixes = [key for key in self.routes if key.endswith("*") and path.startswith(key[:-1])]
        return self.routes[max(prefixes, key=len)] if prefixes else None


class HostileWeb:
    """The hosts, served on an event loop in a thread: `with HostileWeb(hosts) as web:`."""

    def __init__(self, hosts: Iterable[HostileHost]) -> None:
        self.hosts = {host.ip: host for host in hosts}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._servers: list[asyncio.Server] = []
        self._blocked: list[socket.socket] = []
        self.stalls: list[tuple[float, float]] = []
        """(from, to), server time: where the servers' own loop woke SELF_STALL_S or more late
        (this test process's work, or the machine's), its hits logged late."""

    def __enter__(self) -> HostileWeb:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=30)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
        for sock in self._blocked:
            sock.close()

    def hits(self, ip: str) -> list[Hit]:
        return list(self.hosts[ip].hits)

    async def _watch_self(self) -> None:
        while True:
            before = time.monotonic()
            await asyncio.sleep(SELF_CHECK_S)
            after = time.monotonic()
            if after - before - SELF_CHECK_S >= SELF_STALL_S:
                self.stalls.append((before, after))

    async def _start(self) -> None:
        self._watcher = asyncio.create_task(self._watch_self())
        for host in self.hosts.values():
            if host.accepts_connections:
                server = await asyncio.start_server(
                    self._handler(host), host.ip, 0, limit=REQUEST_HEAD_LIMIT, backlog=128
                )
                host.port = server.sockets[0].getsockname()[1]
                self._servers.append(server)
            else:
                host.port = self._never_accepting(host.ip)

    def _never_accepting(self, ip: str) -> int:
        listener = socket.socket()
        listener.bind((ip, 0))
        listener.listen(0)
        port: int = listener.getsockname()[1]
        self._blocked.append(listener)
        for _ in range(4):  # fill the accept queue; later SYNs are dropped
            filler = socket.socket()
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                filler.connect((ip, port))
            self._blocked.append(filler)
        return port

    async def _stop(self) -> None:
        for server in self._servers:
            server.close()
        for task in asyncio.all_tasks(self._loop):
            if task is not asyncio.current_task():
                task.cancel()

    def _handler(
        self, host: HostileHost
    ) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                writer.close()
                return
            request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
            parts = request_line.split(" ")
            target = parts[1] if len(parts) >= 2 else request_line
            hit = Hit(host.ip, target, time.monotonic())
            host.hits.append(hit)
            gone = asyncio.Event()
            watcher = asyncio.create_task(_watch_eof(reader, gone))
            exchange = Exchange(hit, reader, writer, gone)
            route = host.route_for(target)
            try:
                if route is None:
                    await exchange.send(response(404, b"not found", content_type="text/plain"))
                else:
                    await route(exchange)
                if not gone.is_set():
                    # Let the client read what was sent before the close; note when it leaves.
                    if writer.can_write_eof():
                        writer.write_eof()
                    await exchange.wait_gone(SLOW_CAP)
            except (ConnectionError, OSError):
                pass
            finally:
                hit.closed_at = time.monotonic()
                watcher.cancel()
                writer.close()

        return handle


async def _watch_eof(reader: asyncio.StreamReader, gone: asyncio.Event) -> None:
    try:
        while await reader.read(CHUNK):
            pass
    except (ConnectionError, OSError):
        pass
    gone.set()


def pairwise_gaps(times: Iterable[float]) -> list[float]:
    ordered = sorted(times)
    return [later - earlier for earlier, later in itertools.pairwise(ordered)]
