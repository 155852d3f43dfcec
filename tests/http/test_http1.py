"""The lean HTTP/1.1 client (crawler/http/http1.py) against real servers on loopback: the bytes it
sends, how it frames and decodes answers, its pool of keep-alive connections, and failures as
values with the same kinds as aiohttp's path, which the tests compare where the two must agree.

Most servers here are raw `asyncio.start_server` ones that write exactly the bytes a test gives
them, so framing, interim answers and broken answers are what the test says they are."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import socket
import ssl
import zlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from support.rawserver import Gauge, RawServer, Reply, answer

from crawler.config import FetchConfig
from crawler.errors import ConfigError
from crawler.http import http1
from crawler.http.addresses import interleaved
from crawler.http.answer import ACCEPT, FetchFailure, Response
from crawler.http.coding import accept_encoding, media_type
from crawler.http.connection import MAX_HEADER_BYTES
from crawler.http.fetcher import Fetcher

pytestmark = pytest.mark.loopback

A = "127.0.1.1"
B = "127.0.1.2"
C = "127.0.1.3"
D = "127.0.1.4"
UA = "TestBot/1.0"
CLIENTS = ("http1", "aiohttp")

OK = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 2\r\n\r\nok"


def request_headers(head: bytes) -> dict[str, str]:
    lines = head.decode("latin-1").split("\r\n")[1:]
    return dict(line.split(": ", 1) for line in lines if line)


def fetcher(client: str = "http1", *, connections: int = 100, **options: float) -> Fetcher:
    """A Fetcher with short timeouts: every failure here comes fast."""
    settings: dict[str, float] = {"connect_timeout": 1.0, "read_timeout": 0.2} | options
    config = FetchConfig(client=client, **settings)  # type: ignore[arg-type]
    return Fetcher(config, UA, connections=connections)


def failure_kind(result: Response | FetchFailure) -> str:
    assert isinstance(result, FetchFailure), result
    return result.kind


# --- the request and keep-alive --------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
async def test_two_gets_share_one_connection_and_send_the_target_as_given(client: str) -> None:
    async with RawServer(A, {"/a%20b?q=1": OK, "/c": OK}) as server, fetcher(client) as http:
        one = await http.get(server.url("/a%20b?q=1"))
        two = await http.get(server.url("/c"))
    assert isinstance(one, Response) and one.status == 200 and one.body == b"ok"
    assert isinstance(two, Response) and two.status == 200 and two.body == b"ok"
    assert server.accepted == 1
    assert server.requests[0].startswith(b"GET /a%20b?q=1 HTTP/1.1\r\n")
    assert server.requests[1].startswith(b"GET /c HTTP/1.1\r\n")
    headers = request_headers(server.requests[0])
    assert headers["Host"] == f"{A}:{server.port}"
    assert headers["User-Agent"] == UA
    assert headers["Accept"] == ACCEPT
    assert {"gzip", "deflate"} <= {part.strip() for part in headers["Accept-Encoding"].split(",")}


async def test_the_http1_request_head_is_exactly_these_lines() -> None:
    async with RawServer(A, {"/x": OK}) as server, fetcher() as http:
        await http.get(server.url("/x"))
    assert server.requests == [
        (
            f"GET /x HTTP/1.1\r\nHost: {A}:{server.port}\r\nUser-Agent: {UA}\r\n"
            f"Accept: {ACCEPT}\r\nAccept-Encoding: {accept_encoding()}\r\n\r\n"
        ).encode("ascii")
    ]


async def test_the_host_line_leaves_out_the_default_port(monkeypatch: pytest.MonkeyPatch) -> None:
    async with RawServer(A, {"/": OK}) as server:
        # The server's port stands in for 80: binding 80 itself needs privileges.
        monkeypatch.setitem(http1.DEFAULT_PORTS, "http", server.port)
        async with fetcher() as http:
            result = await http.get(server.url("/"))
    assert isinstance(result, Response) and result.body == b"ok"
    assert request_headers(server.requests[0])["Host"] == A


@pytest.mark.parametrize("client", CLIENTS)
async def test_an_ipv6_host_is_bracketed_in_the_host_line(client: str) -> None:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback here")
    async with RawServer("::1", {"/": OK}) as server, fetcher(client) as http:
        result = await http.get(server.url("/"))
    assert isinstance(result, Response) and result.body == b"ok"
    assert request_headers(server.requests[0])["Host"] == f"[::1]:{server.port}"


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize(
    ("tail", "target"),
    [
        ("", b"/"),
        ("?q=1", b"/?q=1"),
        ("#top", b"/"),
        ("/a#top", b"/a"),
        ("/p?x=/y&z=%2F#f/g", b"/p?x=/y&z=%2F"),
        ("/%7Euser/caf%C3%A9?a=%20", b"/%7Euser/caf%C3%A9?a=%20"),
        ("//double//slash", b"//double//slash"),
    ],
)
async def test_the_request_target_is_the_urls_path_and_query(
    client: str, tail: str, target: bytes
) -> None:
    async def any_path(
        server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        while await server.request(reader) is not None:
            writer.write(OK)
            await writer.drain()

    async with RawServer(A, script=any_path) as server, fetcher(client) as http:
        result = await http.get(f"http://{A}:{server.port}{tail}")
    assert isinstance(result, Response) and result.body == b"ok"
    assert server.requests[0].startswith(b"GET " + target + b" HTTP/1.1\r\n")
    assert request_headers(server.requests[0])["Host"] == f"{A}:{server.port}"


@pytest.mark.parametrize("client", CLIENTS)
async def test_connection_close_is_not_reused(client: str) -> None:
    closing = answer(b"ok", "Connection: close")
    async with RawServer(A, {"/one": closing, "/two": OK}) as server, fetcher(client) as http:
        one = await http.get(server.url("/one"))
        two = await http.get(server.url("/two"))
    assert isinstance(one, Response) and one.body == b"ok"
    assert isinstance(two, Response) and two.body == b"ok"
    assert server.accepted == 2


async def test_an_idle_connection_past_its_keepalive_is_not_reused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(http1, "KEEPALIVE_SECONDS", 0.0)
    async with RawServer(A, {"/": OK}) as server, fetcher() as http:
        one = await http.get(server.url())
        two = await http.get(server.url())
    assert isinstance(one, Response) and isinstance(two, Response)
    assert server.accepted == 2


# --- framing -----------------------------------------------------------------------------------


async def chunked(writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    for chunk in (b"hello", b" ", b"chunked ", b"world"):
        writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        await writer.drain()
        await asyncio.sleep(0.01)
    writer.write(b"0\r\n\r\n")
    await writer.drain()
    await asyncio.sleep(0.01)  # then close: the answer was complete before


async def until_close(writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n")
    for part in (b"all ", b"of ", b"it"):
        writer.write(part)
        await writer.drain()
        await asyncio.sleep(0.01)


async def cut_short(writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b")
    await writer.drain()


async def no_answer(writer: asyncio.StreamWriter) -> None:
    return


@pytest.mark.parametrize("client", CLIENTS)
async def test_bodies_framed_by_length_chunks_or_close(client: str) -> None:
    routes: dict[str, Reply] = {
        "/length": answer(b"hello length", "Content-Type: text/plain"),
        "/chunked": chunked,
        "/close": until_close,
        "/after": OK,
    }
    async with RawServer(A, routes) as server, fetcher(client) as http:
        length = await http.get(server.url("/length"))
        chunks = await http.get(server.url("/chunked"))
        # The server closes that connection just after the answer: let the close arrive, or the
        # next GET may meet it in flight (test_a_reused_connection_closed_after_the_request...).
        await asyncio.sleep(0.1)
        close = await http.get(server.url("/close"))
        after = await http.get(server.url("/after"))
    assert isinstance(length, Response) and length.body == b"hello length"
    assert not length.truncated
    assert isinstance(chunks, Response) and chunks.body == b"hello chunked world"
    assert "chunked" in chunks.headers["Transfer-Encoding"]
    assert isinstance(close, Response) and close.body == b"all of it"
    assert close.content_type == "text/plain"
    assert isinstance(after, Response) and after.body == b"ok"


@pytest.mark.parametrize("client", CLIENTS)
async def test_an_answer_cut_short_or_missing_is_a_failure(client: str) -> None:
    async with (
        RawServer(A, {"/short": cut_short, "/none": no_answer}) as server,
        fetcher(client) as http,
    ):
        short = await http.get(server.url("/short"))
        none = await http.get(server.url("/none"))
    assert failure_kind(short) == "payload"
    assert failure_kind(none) == "connection"


@pytest.mark.parametrize("client", CLIENTS)
async def test_a_connection_closed_while_idle_is_replaced(client: str) -> None:
    async def answer_then_close(writer: asyncio.StreamWriter) -> None:
        writer.write(OK)  # keep-alive by HTTP/1.1's default, yet the server closes
        await writer.drain()

    async with (
        RawServer(A, {"/first": answer_then_close, "/second": OK}) as server,
        fetcher(client) as http,
    ):
        first = await http.get(server.url("/first"))
        await asyncio.sleep(0.05)  # the close arrives while the connection sits idle
        second = await http.get(server.url("/second"))
    assert isinstance(first, Response) and first.body == b"ok"
    assert isinstance(second, Response) and second.body == b"ok"
    assert server.accepted == 2


async def test_a_reused_connection_closed_after_the_request_is_not_asked_again() -> None:
    """The server takes the second request on the kept-alive connection and closes it without a
    word. It may have read the request (a server that drops connections under load does): the
    client does not send it again at once, which would break the host's interval; the GET is a
    `closed` failure, which the crawl asks again at the host's pace."""

    async def script(
        server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        first_connection = server.accepted == 1
        while await server.request(reader) is not None:
            if first_connection and len(server.requests) == 2:
                return
            writer.write(OK)
            await writer.drain()

    async with RawServer(A, script=script) as server, fetcher("http1") as http:
        first = await http.get(server.url("/first"))
        second = await http.get(server.url("/second"))
        third = await http.get(server.url("/third"))
    assert isinstance(first, Response) and first.body == b"ok"
    assert failure_kind(second) == "closed"
    assert isinstance(third, Response) and third.body == b"ok"
    assert [head.split(b" ")[1] for head in server.requests] == [b"/first", b"/second", b"/third"]
    assert server.accepted == 2


async def test_a_new_connection_closed_before_the_answer_is_not_retried() -> None:
    async with RawServer(A, {"/": no_answer}) as server, fetcher() as http:
        result = await http.get(server.url())
    assert failure_kind(result) == "connection"
    assert server.accepted == 1 and len(server.requests) == 1


@pytest.mark.parametrize("client", CLIENTS)
async def test_an_http10_answer_without_keep_alive_is_read_to_the_close(client: str) -> None:
    async def old_server(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<p>old</p>")
        await writer.drain()

    async with RawServer(A, {"/old": old_server, "/new": OK}) as server, fetcher(client) as http:
        old = await http.get(server.url("/old"))
        new = await http.get(server.url("/new"))
    assert isinstance(old, Response) and old.body == b"<p>old</p>"
    assert isinstance(new, Response) and new.body == b"ok"
    assert server.accepted == 2


# --- decoding and the cap ----------------------------------------------------------------------


def raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


ENCODINGS: dict[str, tuple[str, Callable[[bytes], bytes]]] = {
    "gzip": ("gzip", gzip.compress),
    "zlib": ("deflate", zlib.compress),
    "raw-deflate": ("deflate", raw_deflate),
}


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("name", ENCODINGS)
async def test_compressed_bodies_are_decoded_and_capped_decoded(client: str, name: str) -> None:
    encoding, compress = ENCODINGS[name]
    text = b"<p>" + b"decoded text " * 100 + b"</p>"
    big = b"a" * 200_000
    routes: dict[str, Reply] = {
        "/small": answer(compress(text), f"Content-Encoding: {encoding}"),
        "/big": answer(compress(big), f"Content-Encoding: {encoding}"),
        "/after": OK,
    }
    async with RawServer(A, routes) as server, fetcher(client) as http:
        small = await http.get(server.url("/small"))
        capped = await http.get(server.url("/big"), max_bytes=1000)
        after = await http.get(server.url("/after"))
    assert isinstance(small, Response) and small.body == text and not small.truncated
    assert isinstance(capped, Response) and capped.truncated
    assert capped.body == b"a" * 1000
    assert isinstance(after, Response) and after.body == b"ok"


@pytest.mark.parametrize("client", CLIENTS)
async def test_the_cap_on_an_identity_body(client: str) -> None:
    routes: dict[str, Reply] = {
        "/over": answer(b"x" * 5000),
        "/exact": answer(b"y" * 1000),
        "/chunked": chunked,
    }
    async with RawServer(A, routes) as server, fetcher(client) as http:
        over = await http.get(server.url("/over"), max_bytes=1000)
        exact = await http.get(server.url("/exact"), max_bytes=1000)
        chunks = await http.get(server.url("/chunked"), max_bytes=7)
    assert isinstance(over, Response) and over.truncated and over.body == b"x" * 1000
    assert isinstance(exact, Response) and not exact.truncated and exact.body == b"y" * 1000
    assert isinstance(chunks, Response) and chunks.truncated and chunks.body == b"hello c"


async def test_the_config_cap_is_the_default() -> None:
    routes: dict[str, Reply] = {"/": answer(gzip.compress(b"z" * 50_000), "Content-Encoding: gzip")}
    async with RawServer(A, routes) as server, fetcher(max_body_bytes=300) as http:
        result = await http.get(server.url())
    assert isinstance(result, Response) and result.truncated and result.body == b"z" * 300


@pytest.mark.parametrize("client", CLIENTS)
async def test_a_body_that_does_not_decode_is_a_payload_failure(client: str) -> None:
    garbage = answer(b"this is not gzip at all", "Content-Encoding: gzip")
    async with RawServer(A, {"/bad": garbage, "/after": OK}) as server, fetcher(client) as http:
        bad = await http.get(server.url("/bad"))
        after = await http.get(server.url("/after"))
    assert failure_kind(bad) == "payload"
    assert isinstance(after, Response) and after.body == b"ok"


# --- html_only, content type and charset -------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
async def test_html_only_skips_other_bodies(client: str) -> None:
    routes: dict[str, Reply] = {
        "/file": answer(b"\0" * 10_000, "Content-Type: application/octet-stream"),
        "/page": answer(b"<p>page</p>", "Content-Type: text/html; charset=utf-8"),
        "/untyped": answer(b"<p>untyped</p>"),
    }
    async with RawServer(A, routes) as server, fetcher(client) as http:
        other = await http.get(server.url("/file"), html_only=True)
        page = await http.get(server.url("/page"), html_only=True)
        untyped = await http.get(server.url("/untyped"), html_only=True)
    assert isinstance(other, Response) and other.status == 200 and other.body == b""
    assert other.content_type == "application/octet-stream" and not other.truncated
    assert isinstance(page, Response) and page.body == b"<p>page</p>"
    assert isinstance(untyped, Response) and untyped.body == b"<p>untyped</p>"
    assert server.accepted == 1  # the short body was read and thrown away: the connection served on


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize(
    ("body", "framing", "reused"),
    [
        (b"x" * 60_000, "", True),
        (b"x" * 70_000, "", False),  # more than it is worth reading
        (b"x" * 60_000, "chunked", True),
        (b"x" * 200_000, "chunked", False),
    ],
)
async def test_a_body_not_wanted_keeps_its_connection_when_short(
    client: str, body: bytes, framing: str, reused: bool
) -> None:
    if framing == "chunked":
        half = len(body) // 2
        chunks = b"".join(
            b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:half], body[half:])
        )
        reply = (
            b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nTransfer-Encoding: chunked\r\n\r\n"
            + chunks
            + b"0\r\n\r\n"
        )
    else:
        reply = answer(body, "Content-Type: image/png")
    routes: dict[str, Reply] = {"/image": reply, "/page": answer(b"<p>page</p>")}
    async with RawServer(A, routes) as server, fetcher(client) as http:
        image = await http.get(server.url("/image"), html_only=True)
        page = await http.get(server.url("/page"), html_only=True)
    assert isinstance(image, Response) and image.status == 200 and image.body == b""
    assert isinstance(page, Response) and page.body == b"<p>page</p>"
    if reused or client == "http1":
        # (aiohttp decides by what it has buffered when the answer is let go.)
        assert server.accepted == (1 if reused else 2)


@pytest.mark.parametrize("client", CLIENTS)
async def test_content_type_and_charset(client: str) -> None:
    routes: dict[str, Reply] = {
        "/latin": answer(b"caf\xe9", 'Content-Type: text/HTML; Charset="ISO-8859-1"'),
        "/none": answer(b"what"),
    }
    async with RawServer(A, routes) as server, fetcher(client) as http:
        latin = await http.get(server.url("/latin"))
        none = await http.get(server.url("/none"))
    assert isinstance(latin, Response)
    assert latin.content_type == "text/html" and latin.charset == "ISO-8859-1"
    assert latin.headers["content-type"] == 'text/HTML; Charset="ISO-8859-1"'
    assert isinstance(none, Response) and none.content_type == "" and none.charset is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("text/html", ("text/html", None)),
        (" Text/HTML ; charset=UTF-8", ("text/html", "UTF-8")),
        ('text/HTML; Charset="ISO-8859-1"', ("text/html", "ISO-8859-1")),
        ("text/html; q=1; charset='latin-1'", ("text/html", "latin-1")),
        ('text/plain;CHARSET = " utf-8 "', ("text/plain", "utf-8")),
        ('text/html; charset="utf-8"; charset=ascii', ("text/html", "utf-8")),
        ("text/html; charset=", ("text/html", None)),
        ('text/html; charset=""', ("text/html", None)),
        ("text/html; charset", ("text/html", None)),
        ("text/html; nocharset=x", ("text/html", None)),
        ("", ("", None)),
    ],
)
def test_media_type(value: str, expected: tuple[str, str | None]) -> None:
    assert media_type(value) == expected


async def test_headers_keep_repeats_and_case_insensitive_lookup() -> None:
    routes: dict[str, Reply] = {
        "/": answer(
            b"", "Set-Cookie: a=1", "set-cookie: b=2", "Location: /next", status="302 Found"
        ),
    }
    async with RawServer(A, routes) as server, fetcher() as http:
        result = await http.get(server.url())
    assert isinstance(result, Response) and result.status == 302
    assert result.location == "/next"
    assert result.headers.getall("SET-COOKIE") == ["a=1", "b=2"]
    assert len(server.requests) == 1  # returned, not followed


# --- failures ----------------------------------------------------------------------------------


async def too_many_headers(writer: asyncio.StreamWriter) -> None:
    line = b"X-Filler: " + b"f" * 90 + b"\r\n"
    writer.write(b"HTTP/1.1 200 OK\r\n" + line * (MAX_HEADER_BYTES // 90 + 10))
    writer.write(b"Content-Length: 2\r\n\r\nok")
    await writer.drain()


@pytest.mark.parametrize("client", CLIENTS)
async def test_failures_are_values_with_a_kind(client: str) -> None:
    async def stall_after_head(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
        await writer.drain()
        await server.hold()

    routes: dict[str, Reply] = {
        "/status": b"HTTP/1.1 abc\r\nContent-Length: 0\r\n\r\n",
        "/stall": stall_after_head,
        "/after": OK,
    }
    async with RawServer(A, routes) as server, fetcher(client) as http:
        malformed = await http.get(server.url("/status"))
        stalled = await http.get(server.url("/stall"))
        after = await http.get(server.url("/after"))
        dns = await http.get("http://nonexistent.invalid/")
        refused = await http.get("http://127.0.1.9:9/")
    assert failure_kind(malformed) == "protocol"
    assert failure_kind(stalled) == "timeout"
    assert isinstance(after, Response) and after.body == b"ok"
    assert failure_kind(dns) == "dns"
    assert failure_kind(refused) == "connection"


@pytest.mark.parametrize("client", ["http1", "aiohttp"])
async def test_a_url_that_is_not_http_is_invalid(client: str) -> None:
    async with fetcher(client) as http:
        result = await http.get("ftp://x/")
    assert failure_kind(result) == "invalid-url"


async def test_headers_over_the_limit_are_a_protocol_failure() -> None:
    async with RawServer(A, {"/": too_many_headers}) as server, fetcher() as http:
        result = await http.get(server.url())
    assert failure_kind(result) == "protocol"


async def test_an_unended_header_line_over_the_limit_is_a_protocol_failure() -> None:
    async def endless_header(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nX-Endless: " + b"a" * (2 * MAX_HEADER_BYTES))
        await writer.drain()
        await server.hold()

    async with RawServer(A, {"/": endless_header}) as server, fetcher() as http:
        result = await http.get(server.url())
    assert failure_kind(result) == "protocol"


@pytest.mark.parametrize(
    "url",
    [
        "ftp://x/",
        "mailto:someone@example.com",
        "http:///no-host",
        "/relative",
        "http://127.0.1.1/a b",
        "http://127.0.1.1/a\r\nX-Injected: 1",
    ],
)
async def test_urls_the_client_cannot_send_are_invalid(url: str) -> None:
    async with fetcher() as http:
        result = await http.get(url)
    assert failure_kind(result) == "invalid-url"


@pytest.mark.parametrize("client", CLIENTS)
async def test_tls_with_a_server_that_does_not_speak_it_is_a_connection_failure(
    client: str,
) -> None:
    async def plain(
        server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await reader.read(1024)
        writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()

    async with RawServer(A, script=plain) as server, fetcher(client) as http:
        result = await http.get(f"https://{A}:{server.port}/")
    assert failure_kind(result) == "connection"


# --- interim answers and answers without a body ------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
async def test_interim_answers_are_skipped(client: str) -> None:
    continued = b"HTTP/1.1 100 Continue\r\n\r\n" + answer(b"final", "Content-Type: text/html")
    hints = b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n" + OK
    async with (
        RawServer(A, {"/continue": continued, "/hints": hints}) as server,
        fetcher(client) as http,
    ):
        one = await http.get(server.url("/continue"))
        two = await http.get(server.url("/hints"))
    assert isinstance(one, Response) and one.status == 200 and one.body == b"final"
    assert isinstance(two, Response) and two.status == 200 and two.body == b"ok"
    assert "Link" not in two.headers
    assert server.accepted == 1


@pytest.mark.parametrize("client", CLIENTS)
async def test_answers_without_a_body_end_at_their_head(client: str) -> None:
    """204 and 304 have no body whatever their headers say: the answer ends at the blank line,
    without waiting for a close (the server keeps the connection open)."""
    routes: dict[str, Reply] = {
        "/204": b"HTTP/1.1 204 No Content\r\n\r\n",
        "/304": b'HTTP/1.1 304 Not Modified\r\nETag: "x"\r\n\r\n',
        "/empty": b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        "/after": OK,
    }
    async with RawServer(A, routes) as server, fetcher(client) as http:
        results = [await http.get(server.url(path)) for path in routes]
    statuses = [(result.status, result.body) for result in results if isinstance(result, Response)]
    assert statuses == [(204, b""), (304, b""), (200, b""), (200, b"ok")]
    assert server.accepted == 1


# --- the connection limit ----------------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
async def test_one_connection_serves_two_origins_in_turn(client: str) -> None:
    async with (
        RawServer(A, {"/": OK}) as a,
        RawServer(B, {"/": OK}) as b,
        fetcher(client, connections=1) as http,
    ):
        async with asyncio.timeout(1.5):  # a lost slot would hang, not fail
            results = await asyncio.gather(http.get(a.url()), http.get(b.url()))
        again = await http.get(a.url())
    assert all(isinstance(result, Response) and result.body == b"ok" for result in results)
    assert isinstance(again, Response) and again.body == b"ok"


async def test_the_limit_holds_for_many_gets_to_many_origins() -> None:
    gauge = Gauge()

    async def script(
        server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        while await server.request(reader) is not None:
            await asyncio.sleep(0.01)
            writer.write(OK)
            await writer.drain()

    servers = [RawServer(ip, script=script, gauge=gauge) for ip in (A, B, C, D)]
    async with servers[0], servers[1], servers[2], servers[3], fetcher(connections=2) as http:
        urls = [server.url(f"/{n}") for n in range(5) for server in servers]
        async with asyncio.timeout(1.5):
            results = await asyncio.gather(*(http.get(url) for url in urls))
    assert all(isinstance(result, Response) and result.body == b"ok" for result in results)
    assert sum(len(server.requests) for server in servers) == 20
    assert 1 <= gauge.most <= 2


async def test_gets_waiting_for_room_reuse_an_idle_connection_to_their_origin() -> None:
    async with (
        RawServer(A, {f"/{n}": OK for n in range(5)}) as server,
        fetcher(connections=1) as http,
    ):
        results = await asyncio.gather(*(http.get(server.url(f"/{n}")) for n in range(5)))
    assert all(isinstance(result, Response) for result in results)
    assert server.accepted == 1


# --- cancellation ------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def stalling_server(client: str) -> AsyncIterator[tuple[RawServer, Fetcher, asyncio.Event]]:
    """A server whose /stall never answers (the event is set once it was asked) and whose /after
    does, and a one-connection fetcher for it."""
    asked = asyncio.Event()

    async def stall(writer: asyncio.StreamWriter) -> None:
        asked.set()
        await server.hold()

    async with (
        RawServer(A, {"/stall": stall, "/after": OK}) as server,
        fetcher(client, connections=1, read_timeout=5.0) as http,
    ):
        yield server, http, asked


@pytest.mark.parametrize("client", CLIENTS)
async def test_a_cancelled_get_raises_and_the_origin_stays_usable(client: str) -> None:
    async with stalling_server(client) as (server, http, asked):
        task = asyncio.create_task(http.get(server.url("/stall")))
        await asked.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        async with asyncio.timeout(1.5):  # the cancelled GET's slot must come back
            after = await http.get(server.url("/after"))
    assert isinstance(after, Response) and after.body == b"ok"


async def test_a_get_cancelled_while_waiting_for_room_gives_no_slot_away() -> None:
    async with stalling_server("http1") as (server, http, asked):
        holder = asyncio.create_task(http.get(server.url("/stall")))
        await asked.wait()
        waiter = asyncio.create_task(http.get(server.url("/after")))
        await asyncio.sleep(0.01)
        assert not waiter.done()
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        holder.cancel()
        with pytest.raises(asyncio.CancelledError):
            await holder
        async with asyncio.timeout(1.5):
            after = await asyncio.gather(*(http.get(server.url("/after")) for _ in range(3)))
    assert all(isinstance(result, Response) and result.body == b"ok" for result in after)


# --- TLS ---------------------------------------------------------------------------------------

# A self-signed certificate for tls.test, 127.0.1.1 and 127.0.1.2, valid until 2126: made once
# with `openssl req -x509 -newkey rsa:2048 -nodes -days 36500 -subj /CN=tls.test
# -addext subjectAltName=DNS:tls.test,IP:127.0.1.1,IP:127.0.1.2`. Its key is for these tests
# only: nothing trusts the certificate but the test that loads it.


async def test_https_is_verified_and_its_connection_kept_alive(test_data: Path) -> None:
    tls = test_data / "tls"
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(tls / "cert.pem", tls / "key.pem")
    accepted = 0
    heads: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal accepted
        accepted += 1
        try:
            while True:
                heads.append(await reader.readuntil(b"\r\n\r\n"))
                writer.write(answer(b"<p>secret</p>", "Content-Type: text/html"))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, A, 0, ssl=server_context)
    port = server.sockets[0].getsockname()[1]
    trusting = ssl.create_default_context(cafile=str(tls / "cert.pem"))
    headers = {"User-Agent": UA}
    try:
        client = http1.Http1Client(FetchConfig(), headers, ssl_context=trusting)
        one = await client.get(f"https://{A}:{port}/one", 1000)
        two = await client.get(f"https://{A}:{port}/two", 1000)
        await client.close()
        # The default context does not know the certificate: no answer is read from it.
        stranger = http1.Http1Client(FetchConfig(), headers)
        refused = await stranger.get(f"https://{A}:{port}/three", 1000)
        await stranger.close()
    finally:
        server.close()
        await server.wait_closed()
    assert isinstance(one, Response) and one.body == b"<p>secret</p>"
    assert isinstance(two, Response) and two.status == 200
    assert accepted == 1  # one connection for both; the stranger's handshake never completed
    assert [head.split(b" ")[1] for head in heads] == [b"/one", b"/two"]
    assert failure_kind(refused) == "tls"
    assert isinstance(refused, FetchFailure) and "CERTIFICATE_VERIFY_FAILED" in refused.message


@pytest.mark.parametrize("client", ["http1", "aiohttp"])
async def test_a_private_ca_or_no_verification_reaches_a_site_the_system_does_not_trust(
    client: str, test_data: Path
) -> None:
    """fetch.ca_bundle trusts the given authorities instead of the system's; fetch.verify_tls
    false trusts any server. By default the same site is a connection failure."""
    tls = test_data / "tls"
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(tls / "cert.pem", tls / "key.pem")

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(answer(b"<p>private</p>", "Content-Type: text/html", "Connection: close"))
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, A, 0, ssl=server_context)
    url = f"https://{A}:{server.sockets[0].getsockname()[1]}/"
    results = {}
    try:
        for name, config in (
            ("default", FetchConfig(client=client)),
            ("ca_bundle", FetchConfig(client=client, ca_bundle=str(tls / "cert.pem"))),
            ("no verification", FetchConfig(client=client, verify_tls=False)),
        ):
            async with Fetcher(config, UA) as fetcher:
                results[name] = await fetcher.get(url)
    finally:
        server.close()
        await server.wait_closed()
    assert failure_kind(results["default"]) == "tls"
    for name in ("ca_bundle", "no verification"):
        result = results[name]
        assert isinstance(result, Response) and result.body == b"<p>private</p>", name


async def test_a_ca_bundle_that_is_not_pem_is_a_config_error_naming_the_key(tmp_path: Path) -> None:
    bundle = tmp_path / "ca.pem"
    bundle.write_text("not a certificate\n")
    with pytest.raises(ConfigError, match=r"fetch\.ca_bundle: cannot load .*ca\.pem"):
        async with Fetcher(FetchConfig(ca_bundle=str(bundle)), UA):
            pass


# --- addresses ---------------------------------------------------------------------------------


def test_address_families_take_turns_the_first_first() -> None:
    six, four = socket.AF_INET6, socket.AF_INET
    given = [(six, ("::1", 80)), (six, ("::2", 80)), (six, ("::3", 80)), (four, ("1.1.1.1", 80))]
    assert [address for _, (address, _) in interleaved(given)] == [
        "::1",
        "1.1.1.1",
        "::2",
        "::3",
    ]
    assert interleaved([]) == []


async def test_an_address_that_hangs_gives_way_to_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    """A host with two addresses, the first going nowhere: the GET connects to the second once
    the first has had its attempt, long before connect_timeout."""
    async with RawServer(A, {"/": OK}) as server:
        tried: list[str] = []
        real_open = http1.Http1Client._open_connection

        async def open_connection(
            client: http1.Http1Client, target: object, family: int, address: tuple[str, int]
        ) -> object:
            tried.append(address[0])
            if address[0] == "127.0.1.99":
                await asyncio.sleep(3600)  # a route to nowhere
            return await real_open(client, target, family, address)  # type: ignore[arg-type]

        async def resolve(client: http1.Http1Client, host: str, port: int) -> list[http1.Address]:
            return [(socket.AF_INET, ("127.0.1.99", port)), (socket.AF_INET, (A, port))]

        monkeypatch.setattr(http1, "ATTEMPT_SECONDS", 0.05)
        monkeypatch.setattr(http1.Http1Client, "_open_connection", open_connection)
        monkeypatch.setattr(http1.Http1Client, "_resolve", resolve)
        async with fetcher(connect_timeout=30.0) as http:
            result = await http.get(f"http://bothways.test:{server.port}/")
    assert isinstance(result, Response) and result.body == b"ok"
    assert tried == ["127.0.1.99", A]


# --- the bytes as they came (output.warc) ---------------------------------------------------------

CHUNKED_GZIP = gzip.compress(b"<p>a chunked page</p>", mtime=0)
WIRE = {
    # Header lines ending in a bare LF, odd spacing and case: kept as sent.
    "/bare": b"HTTP/1.1 200 OK\ncontent-type:   text/html\nX-Odd:value\nContent-Length: 5\n\nhello",
    # An interim answer before the real one: not part of it.
    "/interim": b"HTTP/1.1 100 Continue\r\n\r\n" + OK,
    "/chunked": b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n"
    + b"".join(
        b"%x\r\n%s\r\n" % (len(part), part) for part in (CHUNKED_GZIP[:10], CHUNKED_GZIP[10:])
    )
    + b"0\r\n\r\n",
    "/image": answer(b"\x89PNG" + bytes(100), "Content-Type: image/png"),
}
LONG_IMAGE = answer(b"\x89PNG" + bytes(100_000), "Content-Type: image/png")


async def test_with_keep_raw_an_answer_keeps_its_bytes_as_they_came() -> None:
    async with RawServer(A, {**WIRE, "/long-image": LONG_IMAGE}) as server:
        config = FetchConfig(connect_timeout=1.0, read_timeout=1.0)
        async with Fetcher(config, UA, keep_raw=True) as kept, Fetcher(config, UA) as plain:
            results = {path: await kept.get(server.url(path)) for path in WIRE}
            image = await kept.get(server.url("/image"), html_only=True)
            long_image = await kept.get(server.url("/long-image"), html_only=True)
            unkept = await plain.get(server.url("/bare"))
    for path, wire in WIRE.items():
        result = results[path]
        assert isinstance(result, Response)
        assert result.raw == (wire if path != "/interim" else OK), path
        assert result.request is not None and result.request.startswith(f"GET {path} ".encode())
        assert result.request.endswith(b"\r\n\r\n") and result.peer == A
    chunked = results["/chunked"]
    assert isinstance(chunked, Response) and chunked.body == b"<p>a chunked page</p>"
    # A body not wanted (html_only): a short one is read to its end (to keep the connection),
    # so all of it is there; a long one is not read, and there is no whole answer to keep.
    assert isinstance(image, Response) and image.raw == WIRE["/image"] and image.body == b""
    assert isinstance(long_image, Response) and long_image.raw is None
    assert isinstance(unkept, Response) and unkept.raw is None and unkept.request is None


async def test_keep_raw_needs_the_http1_client() -> None:
    config = FetchConfig(client="aiohttp")
    with pytest.raises(ConfigError, match=r"output\.warc needs the http1 client"):
        async with Fetcher(config, UA, keep_raw=True):
            pass
