"""The lean RESP client (crawler/state/shared/resp.py): server URLs, the reply reader (ours beside
hiredis's), and a real connection: pipelining, error replies, a lost or unreachable server."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from support.keyvalue import StateServer, start_server

from crawler.config import ServerAddress, parse_server_url
from crawler.errors import ConfigError, SharedStateError
from crawler.state.shared.resp import ReplyError, ReplyReader, RespConnection, encode_command


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("redis://127.0.0.1:6380/2", ServerAddress("127.0.0.1", 6380, 2)),
        ("valkey://state.example", ServerAddress("state.example", 6379, 0)),
        ("redis://:s%40cret@h:1/0", ServerAddress("h", 1, 0, None, "s@cret")),
        ("redis://crawler:pw@h/3", ServerAddress("h", 6379, 3, "crawler", "pw")),
    ],
)
def test_server_urls(url: str, address: ServerAddress) -> None:
    assert parse_server_url(url) == address


@pytest.mark.parametrize(
    ("url", "complaint"),
    [
        ("http://h:6379/0", "scheme 'http' is not known"),
        ("h:6379", "scheme 'h' is not known"),
        ("redis://:6379/0", "names no host"),
        ("redis://h:port/0", "Port could not be cast"),
        ("redis://h/zero", "database 'zero' is not a number"),
        ("redis://h/0?timeout=1", "a query or fragment is not used"),
    ],
)
def test_bad_server_urls_say_what_is_expected(url: str, complaint: str) -> None:
    with pytest.raises(ConfigError, match=complaint) as raised:
        parse_server_url(url)
    assert "expected redis://HOST:PORT/DB" in str(raised.value)


REPLIES = (
    b"+OK\r\n-ERR wrong\r\n:42\r\n:-7\r\n$5\r\nhello\r\n$0\r\n\r\n$-1\r\n*-1\r\n*0\r\n"
    b"*3\r\n:1\r\n*2\r\n$1\r\na\r\n$-1\r\n+x\r\n$6\r\nab\r\ncd\r\n"
)


def read_all(reader: Any, chunks: Iterator[bytes]) -> list[Any]:
    replies = []
    for chunk in chunks:
        reader.feed(chunk)
        while (reply := reader.gets()) is not False:
            replies.append(reply)
    return replies


def normal(replies: list[Any]) -> list[Any]:
    return [f"error: {reply}" if isinstance(reply, ReplyError) else reply for reply in replies]


def test_our_reader_reads_what_hiredis_reads_in_any_chunking() -> None:
    hiredis = pytest.importorskip("hiredis")
    expected = normal(read_all(hiredis.Reader(replyError=ReplyError), iter([REPLIES])))
    assert expected[:3] == [b"OK", "error: ERR wrong", 42]
    for size in (1, 2, 3, 7, len(REPLIES)):
        chunks = (REPLIES[at : at + size] for at in range(0, len(REPLIES), size))
        assert normal(read_all(ReplyReader(), chunks)) == expected


def test_commands_are_arrays_of_bulk_strings() -> None:
    assert encode_command(["SET", "k", b"\x00v", 5]) == (
        b"*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\n\x00v\r\n$1\r\n5\r\n"
    )
    with pytest.raises(TypeError):
        encode_command(["SET", "k", None])


@pytest.mark.loopback
async def test_a_pipeline_answers_in_order_with_errors_as_values(server: StateServer) -> None:
    connection = await RespConnection.open(server.url)
    replies = await connection.pipeline(
        [("SET", "resp:k", "v"), ("INCR", "resp:k"), ("GET", "resp:k"), ("GET", "resp:none")]
    )
    assert replies[0] == b"OK" and replies[2] == b"v" and replies[3] is None
    assert isinstance(replies[1], ReplyError)
    with pytest.raises(ReplyError, match="not an integer"):
        await connection.execute("INCR", "resp:k")
    many = await asyncio.gather(*(connection.execute("ECHO", n) for n in range(500)))
    assert many == [str(n).encode() for n in range(500)]
    connection.close()
    with pytest.raises(SharedStateError, match="closed"):
        await connection.execute("PING")


@pytest.mark.loopback
async def test_a_lost_server_fails_the_commands_waiting_on_it(tmp_path: Any) -> None:
    dying = start_server(tmp_path)
    connection = await RespConnection.open(dying.url)
    waiting = asyncio.ensure_future(connection.execute("BLPOP", "resp:never", 0))
    await asyncio.sleep(0.05)
    dying.stop(kill=True)
    with pytest.raises(SharedStateError, match=f"127.0.0.1:{dying.port}/0: connection lost"):
        await waiting


@pytest.mark.loopback
async def test_an_unreachable_server_is_named() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(SharedStateError, match=f"cannot reach the state server .*:{port}/0"):
        await RespConnection.open(f"redis://127.0.0.1:{port}/0", timeout=2)


@pytest.mark.loopback
async def test_a_password_is_sent_and_a_wrong_one_is_a_refusal(tmp_path: Any) -> None:
    guarded = start_server(tmp_path, options=("--requirepass", "s@cret"))
    try:
        url = f"redis://:s%40cret@127.0.0.1:{guarded.port}/3"
        connection = await RespConnection.open(url)
        assert await connection.execute("CLIENT", "INFO") is not None
        connection.close()
        with pytest.raises(SharedStateError, match="refused the connection: WRONGPASS"):
            await RespConnection.open(f"redis://:wrong@127.0.0.1:{guarded.port}/0")
        with pytest.raises(SharedStateError, match="refused the connection: NOAUTH"):
            await RespConnection.open(f"redis://127.0.0.1:{guarded.port}/0")
    finally:
        guarded.stop()
