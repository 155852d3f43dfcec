"""A forward proxy for the http1 client (`fetch.proxy`): the socket a connection runs on, to
the proxy itself for an http URL (asked of it in absolute form: `GET http://host/path`), or
through a tunnel for an https one (CONNECT host:port, then TLS from end to end over it).

Each connection still belongs to its target's origin in the client's pool, so per-host pacing
and keep-alive are the target's, not the proxy's. The proxy resolves the targets' names: the
address guard (crawler.http.guard) can only judge a target written as an IP address.
"""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from crawler.http.connection import ExchangeError
from crawler.http.users import Secret

__all__ = ["MAX_TUNNEL_HEAD_BYTES", "ProxyRoute", "proxy_socket"]

MAX_TUNNEL_HEAD_BYTES = 16 * 1024
"""The longest answer head a proxy may give to CONNECT."""


@dataclass(frozen=True, slots=True)
class ProxyRoute:
    """Where the proxy is, and the Proxy-Authorization it asks for (None: none)."""

    host: str
    port: int
    credentials: Secret | None = None

    @classmethod
    def of(cls, url: str, credentials: Secret | None) -> ProxyRoute:
        """The proxy `url` (http://HOST:PORT, checked at load) names."""
        parts = urlsplit(url)
        return cls(parts.hostname or "", parts.port or 80, credentials)

    def header_line(self) -> bytes:
        """The Proxy-Authorization line of a request asked of the proxy (b"" without one)."""
        if self.credentials is None:
            return b""
        return b"\r\nProxy-Authorization: " + self.credentials.value.encode("latin-1")


async def proxy_socket(route: ProxyRoute, host: str, port: int, *, tunnel: bool) -> socket.socket:
    """A connected socket to the proxy; with `tunnel`, through it to host:port (CONNECT), ready
    for TLS. ExchangeError when the proxy cannot be reached or refuses the tunnel."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(route.host, route.port, type=socket.SOCK_STREAM)
    error: OSError | None = None
    for family, kind, proto, _, address in infos:
        sock = socket.socket(family, kind, proto)
        sock.setblocking(False)
        try:
            await loop.sock_connect(sock, address)
            if tunnel:
                await _tunnel(loop, sock, route, host, port)
        except OSError as failure:
            sock.close()
            error = failure
            continue
        except BaseException:  # a refusal, a timeout, a cancel: the socket goes with it
            sock.close()
            raise
        return sock
    raise ExchangeError(
        "connection", f"cannot connect to the proxy {route.host}:{route.port}: {error}"
    )


async def _tunnel(
    loop: asyncio.AbstractEventLoop, sock: socket.socket, route: ProxyRoute, host: str, port: int
) -> None:
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    request = (
        f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}".encode("ascii")
        + route.header_line()
        + b"\r\n\r\n"
    )
    await loop.sock_sendall(sock, request)
    head = b""
    # Byte by byte past the head would be slow; a proxy sends nothing after its head until the
    # client speaks (TLS's ClientHello), so whatever one read brings ends with the head.
    while b"\r\n\r\n" not in head:
        data = await loop.sock_recv(sock, 4096)
        if not data:
            raise ExchangeError("connection", f"the proxy closed the tunnel to {authority}")
        head += data
        if len(head) > MAX_TUNNEL_HEAD_BYTES:
            raise ExchangeError("protocol", "the proxy's answer to CONNECT has no end")
    status_line = head.split(b"\r\n", 1)[0].decode("latin-1", "replace")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[1].isdigit() or not 200 <= int(parts[1]) < 300:
        raise ExchangeError(
            "connection", f"the proxy refused the tunnel to {authority}: {status_line[:200]}"
        )
    if not head.endswith(b"\r\n\r\n"):
        raise ExchangeError("protocol", "the proxy sent bytes after its answer to CONNECT")
