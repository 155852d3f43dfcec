"""A raw loopback server that writes exactly the bytes a test gives it, so that framing, interim
answers and broken answers are what the test says they are: the HTTP client tests' server
(tests/http)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from types import TracebackType

__all__ = ["FakeTransport", "Gauge", "RawServer", "Reply", "answer"]


class Gauge:
    """Connections open at a set of servers, and the most that were open at once."""

    def __init__(self) -> None:
        self.open = 0
        self.most = 0


Reply = bytes | Callable[[asyncio.StreamWriter], Awaitable[None]]
"""Bytes are written and the connection waits for the next request; a function does what it
likes with the connection, which is closed when it returns."""


class RawServer:
    """A server on a loopback address that answers each request for a path with the bytes the
    test gives it (`routes`), or with `script` for the whole connection.

    `requests` holds every request's head as received; `accepted` counts connections."""

    def __init__(
        self,
        ip: str,
        routes: dict[str, Reply] | None = None,
        *,
        script: Callable[[RawServer, asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
        | None = None,
        gauge: Gauge | None = None,
    ) -> None:
        self.ip = ip
        self.routes = routes or {}
        self.script = script or RawServer.answer_routes
        self.gauge = gauge or Gauge()
        self.port = 0
        self.requests: list[bytes] = []
        self.accepted = 0
        self.released = asyncio.Event()
        """Set when the test ends: whatever `hold()`s lets go."""
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    def url(self, path: str = "/") -> str:
        host = f"[{self.ip}]" if ":" in self.ip else self.ip
        return f"http://{host}:{self.port}{path}"

    async def __aenter__(self) -> RawServer:
        self._server = await asyncio.start_server(self._serve, self.ip, 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        assert self._server is not None
        self._server.close()
        self.released.set()
        for writer in list(self._writers):
            writer.transport.abort()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        self.accepted += 1
        self.gauge.open += 1
        try:
            await self.script(self, reader, writer)
        except ConnectionError:
            pass
        finally:
            self.gauge.open -= 1
            self._writers.discard(writer)
            writer.close()

    async def request(self, reader: asyncio.StreamReader) -> bytes | None:
        """The next request's head, or None when the client closed the connection."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        self.requests.append(head)
        # A connection the client closed before it sent this request is seen closed by now: the
        # close went out first, and its end was read in this or an earlier turn of the loop.
        await asyncio.sleep(0)
        self.gauge.most = max(self.gauge.most, self.gauge.open)
        return head

    async def hold(self) -> None:
        """Stall until the test ends."""
        await self.released.wait()

    async def answer_routes(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        while (head := await self.request(reader)) is not None:
            path = head.split(b" ", 2)[1].decode("ascii")
            reply = self.routes.get(path, b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            if isinstance(reply, bytes):
                writer.write(reply)
                await writer.drain()
            else:
                await reply(writer)
                return


def answer(body: bytes, *headers: str, status: str = "200 OK") -> bytes:
    """An answer with a Content-Length, these header lines, and `body`."""
    lines = "".join(f"{line}\r\n" for line in headers)
    head = f"HTTP/1.1 {status}\r\n{lines}Content-Length: {len(body)}\r\n\r\n"
    return head.encode("latin-1") + body


class FakeTransport(asyncio.Transport):
    """Enough of a transport for a connection fed by hand."""

    def write(self, data: bytes | bytearray | memoryview) -> None:
        pass

    def close(self) -> None:
        pass

    def is_closing(self) -> bool:
        return False

    def get_extra_info(self, name: str, default: object = None) -> object:
        return default
