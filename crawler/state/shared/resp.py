"""A lean asynchronous client for Valkey and Redis (RESP2), on the crawl's own event loop.

Why not redis-py: on the crawl's cycle (a claim, then a pipeline of releases, offers and
done-marks) it spends about three times the client CPU per URL of a client this size, on the
thread whose promptness is every host's pace (../shared/design/distributed.md, section 5.1; the
same reason crawler.http.http1 exists beside aiohttp). What it does:
- One connection, commands pipelined: `execute` sends one command, `pipeline` many in one write;
  replies come back in order and are matched to their callers first in, first out.
- Replies are parsed by hiredis's reader where hiredis is installed, by `ReplyReader` otherwise;
  an error reply is a `ReplyError` value (raised by `execute`, returned in `pipeline`'s list).
- `redis://[[user]:password@]host[:port][/db]` (`valkey://` too): AUTH and SELECT on connect.
  A lost connection fails every command waiting on it with `SharedStateError`; reconnecting is
  the caller's decision (a shared crawl must first find out what the server still holds).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any, cast

from crawler.config import ServerAddress, parse_server_url
from crawler.errors import SharedStateError

__all__ = ["ReplyError", "ReplyReader", "RespConnection", "encode_command"]


class ReplyError(Exception):
    """An error reply from the server (`-ERR ...`), as a value."""


def _as_bytes(value: object) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, bool):
        raise TypeError("a command argument cannot be a bool")
    if isinstance(value, int | float):
        return repr(value).encode("ascii")
    raise TypeError(f"a command argument cannot be a {type(value).__name__}")


def encode_command(args: Sequence[object]) -> bytes:
    """One command as RESP: an array of bulk strings."""
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = _as_bytes(arg)
        parts.append(b"$%d\r\n%b\r\n" % (len(data), data))
    return b"".join(parts)


class ReplyReader:
    """RESP2 replies from a byte stream, the interface of hiredis.Reader that is used here:
    `feed(data)`, then `gets()` until it returns False (no whole reply buffered)."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._at = 0

    def feed(self, data: bytes) -> None:
        self._buffer += data

    def gets(self) -> Any:
        try:
            reply, at = self._parse(self._at)
        except IndexError:  # a reply not yet whole
            return False
        self._at = at
        if at > 65536 and at * 2 > len(self._buffer):
            del self._buffer[:at]
            self._at = 0
        return reply

    def _line(self, at: int) -> tuple[bytes, int]:
        end = self._buffer.find(b"\r\n", at)
        if end < 0:
            raise IndexError
        return bytes(self._buffer[at:end]), end + 2

    def _parse(self, at: int) -> tuple[Any, int]:
        if at >= len(self._buffer):
            raise IndexError
        kind = self._buffer[at]
        line, at = self._line(at + 1)
        if kind == 0x2B:  # +
            return line, at
        if kind == 0x2D:  # -
            return ReplyError(line.decode("utf-8", "replace")), at
        if kind == 0x3A:  # :
            return int(line), at
        if kind == 0x24:  # $
            size = int(line)
            if size < 0:
                return None, at
            if at + size + 2 > len(self._buffer):
                raise IndexError
            return bytes(self._buffer[at : at + size]), at + size + 2
        if kind == 0x2A:  # *
            count = int(line)
            if count < 0:
                return None, at
            items = []
            for _ in range(count):
                item, at = self._parse(at)
                items.append(item)
            return items, at
        raise SharedStateError(f"the server sent a reply this client cannot read ({kind:#x})")


def _new_reader() -> Any:
    try:
        import hiredis
    except ImportError:
        return ReplyReader()
    return hiredis.Reader(replyError=ReplyError)


class _Protocol(asyncio.Protocol):
    def __init__(self, address: ServerAddress) -> None:
        self.address = address
        self.reader = _new_reader()
        self.waiting: deque[asyncio.Future[Any]] = deque()
        self.transport: asyncio.Transport | None = None
        self.lost: SharedStateError | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, though they are ones.
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        reader, waiting = self.reader, self.waiting
        reader.feed(data)
        while (reply := reader.gets()) is not False:
            if not waiting:
                self._lose("the server sent a reply nobody asked for")
                return
            future = waiting.popleft()
            if not future.done():
                future.set_result(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        self._lose(f"connection lost{f': {exc}' if exc else ''}")

    def _lose(self, why: str) -> None:
        if self.lost is None:
            self.lost = SharedStateError(f"state server {self.address}: {why}")
        while self.waiting:
            future = self.waiting.popleft()
            if not future.done():
                future.set_exception(self.lost)
        if self.transport is not None:
            self.transport.close()


class RespConnection:
    """One connection to the server; `await RespConnection.open(url)`."""

    def __init__(self, protocol: _Protocol) -> None:
        self._protocol = protocol
        self.address = protocol.address

    @classmethod
    async def open(cls, url: str | ServerAddress, *, timeout: float = 5.0) -> RespConnection:
        address = parse_server_url(url) if isinstance(url, str) else url
        loop = asyncio.get_running_loop()
        try:
            transport, protocol = await asyncio.wait_for(
                loop.create_connection(lambda: _Protocol(address), address.host, address.port),
                timeout,
            )
        except (OSError, TimeoutError) as error:
            why = "no answer" if isinstance(error, TimeoutError) else str(error)
            raise SharedStateError(f"cannot reach the state server {address}: {why}") from None
        # uvloop may call connection_made after create_connection has returned.
        protocol.transport = protocol.transport or transport
        connection = cls(protocol)
        try:
            if address.password is not None:
                auth = [address.username or "default", address.password]
                await asyncio.wait_for(connection.execute("AUTH", *auth), timeout)
            if address.db:
                await asyncio.wait_for(connection.execute("SELECT", address.db), timeout)
            await asyncio.wait_for(connection.execute("PING"), timeout)
        except ReplyError as error:
            connection.close()
            raise SharedStateError(
                f"state server {address} refused the connection: {error}"
            ) from None
        except TimeoutError:
            connection.close()
            raise SharedStateError(f"state server {address} does not answer") from None
        return connection

    def _send(self, data: bytes, count: int) -> list[asyncio.Future[Any]]:
        protocol = self._protocol
        if protocol.lost is not None:
            raise protocol.lost
        assert protocol.transport is not None
        loop = asyncio.get_running_loop()
        futures = [loop.create_future() for _ in range(count)]
        protocol.waiting.extend(futures)
        protocol.transport.write(data)
        return futures

    async def execute(self, *args: object) -> Any:
        """One command's reply; an error reply is raised as ReplyError."""
        (future,) = self._send(encode_command(args), 1)
        reply = await future
        if isinstance(reply, ReplyError):
            raise reply
        return reply

    async def pipeline(self, commands: Iterable[Sequence[object]]) -> list[Any]:
        """The replies to `commands`, sent in one write, in order; error replies as values."""
        encoded = [encode_command(command) for command in commands]
        if not encoded:
            return []
        futures = self._send(b"".join(encoded), len(encoded))
        return list(await asyncio.gather(*futures))

    @property
    def closed(self) -> bool:
        return self._protocol.lost is not None

    def close(self) -> None:
        self._protocol._lose("closed")

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{len(self._protocol.waiting)} waiting"
        return f"RespConnection({self.address}, {state})"
