"""The aiohttp client's way through a SOCKS5 proxy (crawler.http.socks): aiohttp-socks's
connector, which hooks the proxy into aiohttp's connection set-up, with the crawl's rules where
they differ from its own:
- `socks5://`: the target's name is resolved by the client's resolver (fetch.resolve, and the
  address guard, which raises for a name whose every address it refuses), not by python-socks
  past them; `socks5h://` sends the name;
- the connection is the connector's own protocol (the client's, which stamps each answer's
  first bytes), TLS over it with the target's name.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from ssl import SSLCertVerificationError, SSLContext
from typing import Any

from aiohttp.abc import AbstractResolver
from aiohttp.client_proto import ResponseHandler
from aiohttp_socks import ProxyConnector, ProxyType

from crawler.http.socks import SocksRoute, open_socks

__all__ = ["SocksCertificateError", "SocksConnector"]


class SocksCertificateError(Exception):
    """The target's certificate failed, through the proxy. Not an OSError, so that aiohttp lets
    it through as it is, rather than as a connection error: the client calls it a tls failure,
    as aiohttp's own certificate error."""


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        return False
    return True


class SocksConnector(ProxyConnector):
    """Connections through `route`; `resolver` resolves the targets' names for socks5://."""

    def __init__(self, route: SocksRoute, resolver: AbstractResolver, **options: Any) -> None:
        login = route.login
        super().__init__(
            route.host,
            route.port,
            ProxyType.SOCKS5,
            username=login.username if login is not None else None,
            password=login.password.value if login is not None else None,
            rdns=route.remote_dns,
            **options,
        )
        self._route = route
        self._target_resolver = resolver

    async def _connect_via_proxy(
        self,
        host: str,
        port: int,
        ssl: SSLContext | None = None,
        timeout: float | None = None,
    ) -> tuple[asyncio.Transport, ResponseHandler]:
        destinations = [host]
        if not self._route.remote_dns and not _is_ip(host):
            found = await self._target_resolver.resolve(host, port, socket.AF_UNSPEC)
            destinations = [result["host"] for result in found]
        sock = await open_socks(self._route, destinations, port, timeout or 60.0)
        try:
            transport, protocol = await self._loop.create_connection(
                self._factory, sock=sock, ssl=ssl, server_hostname=host if ssl else None
            )
        except SSLCertVerificationError as error:
            sock.close()
            raise SocksCertificateError(
                f"the certificate of {host}:{port} failed: {error}"
            ) from None
        except BaseException:
            sock.close()
            raise
        return transport, protocol
