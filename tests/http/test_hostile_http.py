"""The HTTP layer against hostile servers (issue 17): servers that drip, never answer, send
compression bombs, endless or broken heads, broken framing, or sit at addresses an embedder
refuses. Whatever a server does, a GET ends by itself, in bounded memory, as a `Response` (a
truncated one for the caps) or a `FetchFailure` with a clear message, the same on both clients.

The servers are `RawServer`s (tests/http/test_http1.py) on 127.0.7.x, port 0. Deadlines are
made short by configuration; the tests assert which bound fired, never how long it took."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import tracemalloc
import zlib
from collections.abc import Callable, Iterator

import aiohttp
import aiohttp.connector
import brotli
import pytest
from aiohttp.abc import ResolveResult
from support.rawserver import FakeTransport, RawServer, Reply, answer

from crawler.config import FetchConfig
from crawler.http import http1
from crawler.http.addresses import blocked_reason
from crawler.http.answer import FetchFailure, Response
from crawler.http.coding import BodyReader, body_decoder
from crawler.http.connection import MAX_HEADER_BYTES, Connection, ExchangeError
from crawler.http.fetcher import Fetcher

pytestmark = pytest.mark.loopback

A = "127.0.7.1"
B = "127.0.7.2"
UA = "TestBot/1.0"
CLIENTS = ("http1", "aiohttp")
CAP = 64 * 1024


def fetcher(client: str, **options: float | bool) -> Fetcher:
    """A Fetcher with short bounds: every deadline here fires within a second."""
    settings: dict[str, float | bool] = {
        "connect_timeout": 1.0,
        "read_timeout": 0.5,
        "total_timeout": 1.0,
        "max_body_bytes": CAP,
    } | options
    return Fetcher(FetchConfig(client=client, **settings), UA)  # type: ignore[arg-type]


def failure(result: Response | FetchFailure) -> FetchFailure:
    assert isinstance(result, FetchFailure), result
    return result


def start_exchange(
    loop: asyncio.AbstractEventLoop, cap: int = CAP
) -> tuple[Connection, asyncio.Future[Response]]:
    """An http1 connection with a GET sent, its answer to be fed by hand (`data_received`)."""
    connection = Connection(loop, ("http", A, 80), lambda _: None)
    connection.connection_made(FakeTransport())
    request = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"
    outcome = connection.exchange(request, f"http://{A}/", cap, False, 30.0, (loop.time() + 30, 30))
    return connection, outcome


def drip(data: bytes, every: float) -> Reply:
    """Writes `data` a byte at a time, `every` seconds apart: never silent for a read timeout."""

    async def dripping(writer: asyncio.StreamWriter) -> None:
        for index in range(len(data)):
            writer.write(data[index : index + 1])
            await writer.drain()
            await asyncio.sleep(every)

    return dripping


# --- 1. the deadline of a whole answer -----------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("part", ["head", "body"])
async def test_an_answer_dripped_below_the_read_timeout_ends_at_the_total_timeout(
    client: str, part: str
) -> None:
    body = b"x" * 1000
    whole = answer(body, "Content-Type: text/html")
    if part == "body":
        head, _, _ = whole.partition(b"\r\n\r\n")
        route: Reply = drip(body, 0.02)

        async def head_then_drip(writer: asyncio.StreamWriter) -> None:
            writer.write(head + b"\r\n\r\n")
            await route(writer)  # type: ignore[operator]

        routes: dict[str, Reply] = {"/": head_then_drip}
    else:
        routes = {"/": drip(whole, 0.02)}
    async with RawServer(A, routes) as server, fetcher(client, total_timeout=0.3) as http:
        result = failure(await http.get(server.url()))
    assert result.kind == "timeout"
    assert "fetch.total_timeout (0.3 s)" in result.message


@pytest.mark.parametrize("client", CLIENTS)
async def test_a_server_that_accepts_and_never_answers_ends_at_the_total_timeout(
    client: str,
) -> None:
    async def never(writer: asyncio.StreamWriter) -> None:
        await server.hold()

    async with (
        RawServer(A, {"/": never}) as server,
        fetcher(client, read_timeout=30.0, total_timeout=0.2) as http,
    ):
        result = failure(await http.get(server.url()))
    assert result.kind == "timeout"
    assert "fetch.total_timeout" in result.message


@contextlib.contextmanager
def full_backlog(ip: str) -> Iterator[int]:
    """A port whose accept queue is full: a connect to it never completes (the kernel drops the
    SYN), as on a host behind a firewall that drops packets."""
    listener = socket.socket()
    fillers: list[socket.socket] = []
    try:
        listener.bind((ip, 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        for _ in range(2):
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex((ip, port))
            fillers.append(filler)
        yield port
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


@pytest.mark.parametrize("client", CLIENTS)
async def test_a_connect_that_never_completes_ends_at_the_connect_timeout(client: str) -> None:
    with full_backlog(B) as port:
        async with fetcher(client, connect_timeout=0.2, total_timeout=30.0) as http:
            result = failure(await http.get(f"http://{B}:{port}/"))
    assert result.kind == "timeout"
    assert "fetch.connect_timeout (0.2 s)" in result.message


async def test_a_total_timeout_shorter_than_the_connect_timeout_bounds_the_connect() -> None:
    with full_backlog(B) as port:
        async with fetcher("http1", connect_timeout=30.0, total_timeout=0.2) as http:
            result = failure(await http.get(f"http://{B}:{port}/"))
    assert result.kind == "timeout"
    assert "fetch.total_timeout" in result.message


# --- 2. compression bombs ------------------------------------------------------------------------

MIB = 1024 * 1024


def zeros_bomb(wire_bytes: int, *, wbits: int) -> bytes:
    """A gzip (wbits 31), zlib (15) or raw deflate (-15) stream of zeros, about `wire_bytes` long,
    that would decode to about a thousand times that: one MiB of zeros compressed once, ended with
    a full flush so that its blocks can follow each other any number of times. (The trailer never
    comes: no reader of it gets that far.)"""
    compressor = zlib.compressobj(9, zlib.DEFLATED, wbits)
    start = compressor.compress(b"\0" * MIB) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(b"\0" * MIB) + compressor.flush(zlib.Z_FULL_FLUSH)
    return start + block * (wire_bytes // len(block))


def brotli_bomb() -> bytes:
    """256 MiB of zeros in about 50 KB: one chunk or two on the wire."""
    return brotli.compress(b"\0" * (256 * MIB), quality=1)


BOMBS: dict[str, Callable[[], bytes]] = {
    "gzip": lambda: zeros_bomb(10 * MIB, wbits=31),
    "deflate": lambda: zeros_bomb(10 * MIB, wbits=15),
    "deflate-raw": lambda: zeros_bomb(10 * MIB, wbits=-15),
    "br": brotli_bomb,
}


def sending(head: bytes, body: bytes) -> Reply:
    """Writes `head`, then `body` 64 KiB at a time, as fast as the client reads it."""

    async def send(writer: asyncio.StreamWriter) -> None:
        writer.write(head)
        view = memoryview(body)
        for start in range(0, len(body), 64 * 1024):
            writer.write(view[start : start + 64 * 1024])
            await writer.drain()

    return send


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("name", BOMBS)
async def test_a_compression_bomb_is_cut_at_the_cap_in_bounded_memory(
    client: str, name: str
) -> None:
    """The cap holds inside each chunk the decoder is given: the decoded body is the cap, and the
    GET's peak memory is a small multiple of it, not what the bomb unpacks to (10 GB, 256 MB)."""
    bomb = BOMBS[name]()
    encoding = name.partition("-")[0]
    head = (
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
        f"Content-Encoding: {encoding}\r\nContent-Length: {len(bomb)}\r\n\r\n"
    ).encode()
    async with (
        RawServer(A, {"/": sending(head, bomb)}) as server,
        fetcher(client, max_body_bytes=MIB, total_timeout=10.0) as http,
    ):
        tracemalloc.start()
        try:
            result = await http.get(server.url())
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert isinstance(result, Response), result
    assert result.truncated and len(result.body) == MIB
    assert result.body.count(0) == MIB
    assert peak < 8 * MIB, f"peak {peak / MIB:.1f} MiB for a 1 MiB cap"


@pytest.mark.parametrize("name", BOMBS)
def test_a_bomb_in_one_chunk_decodes_no_further_than_the_cap(name: str) -> None:
    """Sans-I/O: the whole bomb handed over as one chunk yields the cap and stops there."""
    bomb = BOMBS[name]()[: 256 * 1024]
    reader = BodyReader(MIB, body_decoder(name.partition("-")[0]))
    assert reader.feed(bomb) is False
    assert reader.size <= 2 * MIB
    body, truncated = reader.body(ended=False)
    assert truncated and len(body) == MIB


# --- 3. header limits ----------------------------------------------------------------------------


def endless(first: bytes, filler: bytes) -> Reply:
    """Writes `first`, then `filler` over and over for as long as the client reads."""

    async def send(writer: asyncio.StreamWriter) -> None:
        writer.write(first)
        for _ in range(100_000):  # 10 MB of filler at most, should the client read it all
            writer.write(filler)
            await writer.drain()

    return send


HEADS: dict[str, tuple[Reply, str]] = {
    # 1 MiB of header lines of 100 bytes: over the head's 64 KiB and the line count.
    "1 MiB of headers": (
        answer(b"ok", *[f"X-Filler-{i:05}: {'f' * 84}" for i in range(10_486)]),
        "header lines",
    ),
    # 10,000 short lines, 60 KB in all: under the byte limit, over the line count.
    "10,000 header lines": (
        answer(b"ok", *["X: y"] * 10_000),
        "header lines",
    ),
    # A line that never ends: the client stops reading it after a bounded number of bytes.
    "a header line that never ends": (
        endless(b"HTTP/1.1 200 OK\r\nX-Endless: ", b"a" * 100),
        "",
    ),
    # Lines of 10 KiB each, 200 KiB in all: each line under the line limit, the head over.
    "20 lines of 10 KiB": (
        answer(b"ok", *[f"X-Long-{i}: {'l' * 10240}" for i in range(20)]),
        "head is over 65536 bytes",
    ),
    # One line of 20 KiB: over the line limit, under the head's.
    "a header line of 20 KiB": (
        answer(b"ok", f"X-Long: {'l' * 20480}"),
        "",
    ),
}


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("case", HEADS)
async def test_an_enormous_head_is_a_protocol_failure(client: str, case: str) -> None:
    route, words = HEADS[case]
    async with RawServer(A, {"/": route}) as server, fetcher(client) as http:
        result = failure(await http.get(server.url()))
    assert result.kind == "protocol", result
    # Each client says it in its own words; the http1 client's are these.
    assert words in result.message if client == "http1" else result.message


async def test_a_head_is_read_no_further_than_the_limit() -> None:
    """The http1 client hands the parser no more of a head than the limit: a single chunk of 1
    MiB of head, fed by hand, is cut at 64 KiB before it is parsed."""
    fed: list[int] = []

    class Counting:
        def __init__(self, parser: object) -> None:
            self._parser = parser

        def feed_data(self, data: bytes) -> None:
            fed.append(len(data))
            self._parser.feed_data(data)  # type: ignore[attr-defined]

    loop = asyncio.get_running_loop()
    connection, outcome = start_exchange(loop)
    connection._parser = Counting(connection._parser)  # type: ignore[assignment]
    connection.data_received(b"HTTP/1.1 200 OK\r\nX-Endless: " + b"a" * MIB)
    assert sum(fed) <= MAX_HEADER_BYTES
    with pytest.raises(ExchangeError, match="head is over"):
        outcome.result()


# --- 4. broken HTTP ------------------------------------------------------------------------------


def then_close(data: bytes) -> Reply:
    async def send(writer: asyncio.StreamWriter) -> None:
        writer.write(data)
        await writer.drain()

    return send


def then_reset(data: bytes) -> Reply:
    """Writes `data`, then resets the connection (RST, not FIN)."""

    async def send(writer: asyncio.StreamWriter) -> None:
        writer.write(data)
        await writer.drain()
        await asyncio.sleep(0.05)
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()

    return send


HEAD_10 = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 10\r\n\r\n"

BROKEN: dict[str, tuple[Reply, str]] = {
    "non-HTTP bytes": (then_close(b"SSH-2.0-OpenSSH_9.6\r\n"), "protocol"),
    "binary garbage": (then_close(bytes(range(256)) * 4), "protocol"),
    "a status of four digits": (
        then_close(b"HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n"),
        "protocol",
    ),
    "a status that is no number": (
        then_close(b"HTTP/1.1 abc\r\nContent-Length: 0\r\n\r\n"),
        "protocol",
    ),
    "an HTTP/2 status line": (then_close(b"HTTP/2 200\r\nContent-Length: 0\r\n\r\n"), "protocol"),
    "a negative Content-Length": (then_close(answer(b"", "Content-Length: -1")), "protocol"),
    "a Content-Length that is no number": (
        then_close(b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n0123456789"),
        "protocol",
    ),
    "two Content-Lengths that disagree": (
        then_close(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc"),
        "protocol",
    ),
    "a chunk size that is no number": (
        then_close(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n"),
        "payload",
    ),
    "a chunk longer than its size": (
        then_close(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokay\r\n0\r\n\r\n"),
        "payload",
    ),
    "chunks cut short": (
        then_close(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc"),
        "payload",
    ),
    "a reset in the body": (then_reset(HEAD_10 + b"abc"), "payload"),
    "closed after the head": (then_close(HEAD_10), "payload"),
    "closed in the head": (then_close(b"HTTP/1.1 200 OK\r\nContent-Le"), "connection"),
    "closed before any byte": (then_close(b""), "connection"),
}


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("case", BROKEN)
async def test_a_broken_answer_is_a_failure_with_a_message(client: str, case: str) -> None:
    route, kind = BROKEN[case]
    async with (
        RawServer(A, {"/": route, "/after": answer(b"ok")}) as server,
        fetcher(client) as http,
    ):
        result = failure(await http.get(server.url()))
        after = await http.get(server.url("/after"))
    assert (result.kind, bool(result.message)) == (kind, True), result
    assert isinstance(after, Response) and after.body == b"ok"


@pytest.mark.parametrize("client", CLIENTS)
async def test_two_answers_to_one_request_do_not_reuse_the_connection(client: str) -> None:
    """The second answer is no answer to anything the client asked: the connection's framing
    is not to be trusted, and the next GET goes out on a new one and gets its own answer."""
    routes: dict[str, Reply] = {
        "/": answer(b"first") + answer(b"second"),
        "/next": answer(b"next"),
    }
    async with RawServer(A, routes) as server, fetcher(client) as http:
        first = await http.get(server.url())
        await asyncio.sleep(0.05)  # the second answer has arrived by now
        after = await http.get(server.url("/next"))
    assert isinstance(first, Response) and first.body == b"first"
    assert isinstance(after, Response) and after.body == b"next"
    assert server.accepted == 2


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize(
    "framing", ["10 GB Content-Length", "endless, to the close", "endless chunks"]
)
async def test_an_endless_body_is_cut_at_the_cap(client: str, framing: str) -> None:
    """No preallocation from a declared length, no end needed: the cap ends the read."""
    heads = {
        "10 GB Content-Length": b"Content-Length: 10737418240\r\n\r\n",
        "endless, to the close": b"Connection: close\r\n\r\n",
        "endless chunks": b"Transfer-Encoding: chunked\r\n\r\n",
    }
    filler = b"1000\r\n" + b"x" * 4096 + b"\r\n" if framing == "endless chunks" else b"x" * 4096
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" + heads[framing]
    async with RawServer(A, {"/": endless(head, filler)}) as server, fetcher(client) as http:
        result = await http.get(server.url())
    assert isinstance(result, Response), result
    assert result.truncated and result.body == b"x" * CAP


# --- 5. lenient where browsers and curl are ------------------------------------------------------

LENIENT: dict[str, bytes] = {
    "header lines ending in a bare LF": (
        b"HTTP/1.1 200 OK\nContent-Type: text/html\nContent-Length: 2\n\nok"
    ),
    "a bare LF before the body only": (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 2\r\n\nok"
    ),
    "no reason phrase": b"HTTP/1.1 200\r\nContent-Type: text/html\r\nContent-Length: 2\r\n\r\nok",
    "an empty reason phrase": b"HTTP/1.1 200 \r\nContent-Length: 2\r\n\r\nok",
    "HTTP/1.0 without keep-alive": b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\nok",
    "a folded header line": (
        b"HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\nContent-Length: 2\r\n\r\nok"
    ),
    "a control character in a header value": (
        b"HTTP/1.1 200 OK\r\nX-Odd: a\x01b\r\nContent-Length: 2\r\n\r\nok"
    ),
    "spaces after a chunk size": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2  \r\nok\r\n0\r\n\r\n"
    ),
    "chunked with bare LF header lines": (
        b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n2\r\nok\r\n0\r\n\r\n"
    ),
}


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("case", LENIENT)
async def test_deviations_browsers_read_are_read(client: str, case: str) -> None:
    async with RawServer(A, {"/": then_close(LENIENT[case])}) as server, fetcher(client) as http:
        result = await http.get(server.url())
    assert isinstance(result, Response), result
    assert (result.status, result.body) == (200, b"ok")


@pytest.mark.parametrize("client", CLIENTS)
async def test_chunks_that_turn_malformed_after_the_head_are_a_payload_failure(
    client: str,
) -> None:
    """Not a wait for a timeout: the body fails as soon as its chunks do."""

    async def later(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n")
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.write(b"zz\r\nok\r\n0\r\n\r\n")
        await writer.drain()
        await server.hold()

    async with (
        RawServer(A, {"/": later}) as server,
        fetcher(client, read_timeout=30.0, total_timeout=30.0) as http,
    ):
        result = failure(await asyncio.wait_for(http.get(server.url()), 5))
    assert result.kind == "payload"


# --- 7. fetch.block_private_addresses ------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
async def test_a_blocked_address_is_refused_without_a_connection(client: str) -> None:
    async with RawServer(A, {"/": answer(b"ok")}) as server:
        async with fetcher(client, block_private_addresses=True) as http:
            refused = failure(await http.get(server.url()))
        assert server.accepted == 0
        async with fetcher(client) as http:
            allowed = await http.get(server.url())
    assert refused.kind == "blocked"
    assert f"{A}, a loopback address" in refused.message
    assert "fetch.block_private_addresses" in refused.message
    assert isinstance(allowed, Response) and allowed.body == b"ok"


@pytest.mark.parametrize("client", CLIENTS)
async def test_a_name_that_resolves_to_a_blocked_address_is_refused(
    client: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check is on the address a name resolves to, at connect time: a public-looking name
    (or a redirect to one) that resolves to loopback is refused. With the option off it is
    fetched: the fake resolution does lead to the server."""

    async def resolve(client: object, host: str, port: int) -> list[http1.Address]:
        assert host == "public.example"
        return [(socket.AF_INET, (A, port))]

    class Resolver(aiohttp.ThreadedResolver):
        async def resolve(
            self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
        ) -> list[ResolveResult]:
            assert host == "public.example"
            found: ResolveResult = {
                "hostname": host,
                "host": A,
                "port": port,
                "family": socket.AF_INET,
                "proto": 0,
                "flags": 0,
            }
            return [found]

    monkeypatch.setattr(http1.Http1Client, "_resolve", resolve)
    monkeypatch.setattr(aiohttp, "DefaultResolver", Resolver)
    monkeypatch.setattr(aiohttp.connector, "DefaultResolver", Resolver)
    async with RawServer(A, {"/": answer(b"ok")}) as server:
        url = f"http://public.example:{server.port}/"
        async with fetcher(client, block_private_addresses=True) as http:
            refused = failure(await http.get(url))
        assert server.accepted == 0
        async with fetcher(client) as http:
            allowed = await http.get(url)
    assert refused.kind == "blocked"
    assert f"public.example is at {A}, a loopback address" in refused.message
    assert isinstance(allowed, Response) and allowed.body == b"ok"


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("10.0.0.1", "private"),
        ("172.16.5.4", "private"),
        ("192.168.0.1", "private"),
        ("fd00::1", "private"),
        ("169.254.169.254", "link-local"),
        ("fe80::1%eth0", "link-local"),
        ("224.0.0.251", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("240.0.0.1", "reserved"),
        ("100.64.0.1", "carrier-grade NAT"),
        ("::ffff:127.0.0.1", "loopback address (as 127.0.0.1)"),
        ("::ffff:169.254.169.254", "link-local"),
        ("64:ff9b::a00:1", "private address (as 10.0.0.1)"),
        ("2002:7f00:1::", "loopback address (as 127.0.0.1)"),
        ("8.8.8.8", None),
        ("2606:4700:4700::1111", None),
        ("::ffff:8.8.8.8", None),
    ],
)
def test_which_addresses_are_blocked(address: str, reason: str | None) -> None:
    found = blocked_reason(address)
    if reason is None:
        assert found is None
    else:
        assert found is not None and reason in found
