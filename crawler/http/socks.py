"""A SOCKS5 proxy for both clients (`fetch.proxy: socks5://` or `socks5h://`), spoken by
python-socks (the library aiohttp-socks is built on), with RFC 1929's user name and password
when fetch.proxy_username is given.

The two schemes mean what they mean to curl:
- `socks5://`: the crawl resolves the target's name itself (fetch.resolve, its DNS cache) and
  asks the proxy for the address, so the address guard (crawler.http.guard) judges every address
  as it does without a proxy;
- `socks5h://`: the proxy resolves the names (DNS at the proxy: names the crawl's machine cannot
  resolve), so the guard judges only targets written as IP addresses, as with an http proxy.

TLS runs from end to end over the proxy's connection, with the target's name; each connection
belongs to its target's origin, so per-host pacing and keep-alive stay the target's.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from crawler.http.connection import ExchangeError
from crawler.http.users import ProxyLogin

__all__ = ["SocksRoute", "open_socks", "socks_socket"]


@dataclass(frozen=True, slots=True)
class SocksRoute:
    """Where the SOCKS5 proxy is, who resolves the targets' names, and its login (or None)."""

    host: str
    port: int
    remote_dns: bool
    login: ProxyLogin | None = None

    @classmethod
    def of(cls, url: str, login: ProxyLogin | None) -> SocksRoute:
        """The proxy `url` (socks5://HOST:PORT or socks5h://, checked at load) names."""
        parts = urlsplit(url)
        return cls(parts.hostname or "", parts.port or 1080, parts.scheme == "socks5h", login)

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


async def open_socks(
    route: SocksRoute, destinations: Sequence[str], port: int, timeout: float
) -> socket.socket:
    """A socket connected through the proxy to the first of `destinations` (addresses, or one
    name the proxy resolves) it can reach at `port`. python-socks's errors as they are: the
    proxy unreachable (an OSError), its refusal or a broken answer (ProxyError), a timeout."""
    # Imported here: a crawl without a SOCKS proxy does not load it.
    from python_socks import ProxyError, ProxyType
    from python_socks.async_.asyncio import Proxy

    login = route.login
    proxy = Proxy(
        ProxyType.SOCKS5,
        route.host,
        route.port,
        username=login.username if login is not None else None,
        password=login.password.value if login is not None else None,
        # Always the destination as given: a name only with remote_dns (the caller resolved it
        # otherwise), so python-socks never looks one up on its own, past the guard.
        rdns=True,
    )
    refusal: ProxyError | None = None
    for destination in destinations:
        try:
            sock: socket.socket = await proxy.connect(destination, port, timeout=timeout)
        except ProxyError as error:  # this address unreachable from the proxy: the next
            refusal = error
            continue
        return sock
    assert refusal is not None, "no destination given"
    raise refusal


async def socks_socket(
    route: SocksRoute, destinations: Sequence[str], port: int, timeout: float
) -> socket.socket:
    """`open_socks`, its failures as the http1 client's ExchangeError."""
    from python_socks import ProxyConnectionError, ProxyError, ProxyTimeoutError

    where = f"{destinations[0]}:{port}" if destinations else f"port {port}"
    try:
        return await open_socks(route, destinations, port, timeout)
    except ProxyTimeoutError:
        raise ExchangeError(
            "timeout", f"the SOCKS proxy {route.address} did not connect to {where} in time"
        ) from None
    except ProxyConnectionError as error:
        raise ExchangeError(
            "connection", f"cannot connect to the SOCKS proxy {route.address}: {error.strerror}"
        ) from None
    except ProxyError as error:
        raise ExchangeError(
            "connection", f"the SOCKS proxy {route.address} refused {where}: {error}"
        ) from None
