"""Property tests (hypothesis) for what reads an answer, fed by hand, no socket: the http1
connection's parser on arbitrary bytes, and the content decoders on arbitrary bytes. Whatever
comes, an exchange ends in exactly one outcome, a `Response` no longer than the cap or an
`ExchangeError`/`StaleConnectionError`, and a decoder raises `DecodeError` or gives at most the
cap."""

from __future__ import annotations

import asyncio
import gzip
import itertools
import zlib
from collections.abc import Iterator

import brotli
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.rawserver import FakeTransport

from crawler.http.answer import Response
from crawler.http.coding import BodyReader, DecodeError, body_decoder
from crawler.http.connection import Connection, ExchangeError, StaleConnectionError

CAP = 1024


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    """A loop that never runs: futures and timers only need one to exist."""
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def cut(data: bytes, points: list[int]) -> list[bytes]:
    """`data` in pieces, cut at `points` (as a socket may deliver it)."""
    marks = sorted({0, len(data), *(point % (len(data) + 1) for point in points)})
    return [data[start:end] for start, end in itertools.pairwise(marks)]


HEADS = st.sampled_from(
    [
        b"",
        b"HTTP/1.1 200 OK\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n",
        b"HTTP/1.1 200 OK\nContent-Encoding: br\nContent-Length: 40\n\n",
        b"HTTP/1.1 100 Continue\r\n\r\n",
        b"HTTP/1.0 204 No Content\r\n\r\n",
    ]
)


@settings(max_examples=200, deadline=None)
@given(head=HEADS, data=st.binary(max_size=2000), points=st.lists(st.integers(0, 2000)))
def test_the_parser_on_arbitrary_bytes_ends_in_one_outcome(
    loop: asyncio.AbstractEventLoop, head: bytes, data: bytes, points: list[int]
) -> None:
    connection = Connection(loop, ("http", "a", 80), lambda _: None)
    connection.connection_made(FakeTransport())
    outcome = connection.exchange(
        b"GET / HTTP/1.1\r\n\r\n", "http://a/", CAP, False, 30.0, (loop.time() + 30, 30)
    )
    for piece in cut(head + data, points):
        connection.data_received(piece)
    connection.connection_lost(None)
    assert outcome.done()
    error = outcome.exception()
    if error is None:
        answer = outcome.result()
        assert isinstance(answer, Response)
        assert len(answer.body) <= CAP
    else:
        assert isinstance(error, ExchangeError | StaleConnectionError)
        assert str(error)
    connection.finished()


def compressed(encoding: str, data: bytes) -> bytes:
    if encoding == "gzip":
        return gzip.compress(data)
    if encoding == "deflate":
        return zlib.compress(data)
    return brotli.compress(data)


@settings(max_examples=200, deadline=None)
@given(
    encoding=st.sampled_from(["gzip", "deflate", "br"]),
    data=st.binary(max_size=3000),
    valid=st.booleans(),
    flips=st.lists(st.integers(0, 10_000), max_size=3),
    points=st.lists(st.integers(0, 3000)),
)
def test_the_decoders_on_arbitrary_bytes_give_at_most_the_cap_or_a_decode_error(
    encoding: str, data: bytes, valid: bool, flips: list[int], points: list[int]
) -> None:
    """Arbitrary bytes, or a real stream of them (which unpacks past the cap when long) with a
    few bytes flipped."""
    stream = bytearray(compressed(encoding, data * 4) if valid else data)
    for flip in flips:
        if stream:
            stream[flip % len(stream)] ^= 0xFF
    decoder = body_decoder(encoding)
    assert decoder is not None
    reader = BodyReader(CAP, decoder)
    try:
        for piece in cut(bytes(stream), points):
            if not reader.feed(piece):
                break
        body, truncated = reader.body(ended=True)
    except DecodeError as error:
        assert str(error)
        return
    assert len(body) <= CAP
    if valid and not flips:
        expected = data * 4
        assert body == expected[:CAP] and truncated == (len(expected) > CAP)
