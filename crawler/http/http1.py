"""A lean HTTP/1.1 client for the crawl's GETs: keep-alive connections per origin, parsed by
httptools (llhttp, Node.js's parser), redirects returned and not followed, a cap on decoded bytes.

Why not aiohttp's ClientSession for every request: a GET costs the event loop's thread several
times less here (benchmarks/README.md, "The HTTP/1.1 client"), and with a thousand hosts due in
the same second that difference is the pace the last of them keep. aiohttp stays the client where
httptools is not installed, or when `fetch.client` asks for it (crawler.http.fetcher).

What it does, as aiohttp did for the crawl:
- One request at a time per connection. Idle connections wait per origin, the most recently used
  first; at most `limit` connections are open in all, and the least recently used idle one is
  closed to make room. One idle longer than `KEEPALIVE_SECONDS` is closed, not reused.
- A kept-alive connection found closed before the request goes out is replaced by a new one. One
  that ends after the request went out and before the answer's first byte is a `closed` failure,
  and the GET is not sent again here: most likely the server timed the idle connection out as
  the request arrived, but it may have read it (one that drops connections under load does), and
  a second request at once would break the host's interval. The crawl asks again at the host's
  pace, without a backoff (crawler.crawl.decide). On a new connection it is a `connection`
  failure.
- Host names are looked up through the loop's resolver, answers kept `DNS_TTL` seconds; an IP
  literal is not looked up. TLS with the default context: certificates are verified.
- `connect_timeout` bounds the look-up and the TCP (and TLS) set-up; `read_timeout` the longest
  silence while the answer comes in; `total_timeout` the whole GET from the connect's start (or
  the request's, on a kept-alive connection) to the answer's last byte, so a server dripping a
  byte at a time holds a request no longer than that. Waiting for room in the pool is not
  counted: the server is not holding the request then.
- The `guard` (crawler.http.guard) is asked about each address a name resolved to, at connect
  time, so that neither a DNS name nor a redirect gets past it: an address that is not public
  is connected to only where a seed names it or the config lists it (in a crawl), or unless
  `block_private_addresses` refuses it (a client alone).
- Content-Encoding gzip and deflate (zlib or raw) are decoded, br where brotli is installed
  (crawler.http.coding); the cap counts decoded bytes, so a small compressed answer cannot
  unpack into gigabytes.
- An answer's head over `MAX_HEADER_BYTES` is a protocol failure, not memory; each connection is
  a protocol of crawler.http.connection, which reads and stamps the answers.

Failures are values (`FetchFailure`) with the kinds crawler.http.answer names.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from yarl import URL

from crawler.config import FetchConfig
from crawler.http.addresses import Address, interleaved
from crawler.http.answer import FetchFailure, Response
from crawler.http.connection import Connection, ExchangeError, StaleConnectionError
from crawler.http.guard import AddressGuard
from crawler.http.proxy import ProxyRoute, proxy_socket
from crawler.http.socks import SocksRoute, socks_socket
from crawler.http.users import ProxyLogin

__all__ = ["DNS_TTL", "KEEPALIVE_SECONDS", "Http1Client"]

KEEPALIVE_SECONDS = 15.0
"""An idle connection older than this is closed rather than reused (aiohttp's default too):
servers drop idle connections after a while, and one found dead costs a second attempt."""
DNS_TTL = 300.0
MAX_ORIGINS_KEPT = 100_000
"""Parsed origins kept for the next GET; past this many the cache starts afresh."""
DEFAULT_PORTS = {"http": 80, "https": 443}
ATTEMPT_SECONDS = 2.0
"""Longest wait on one address of a host while others remain to be tried. (Happy Eyeballs,
RFC 8305, races them 250 ms apart; one at a time, families taking turns, is simpler and ends
the same way on a host whose IPv6 goes nowhere, a little later.)"""


class _Origin:
    """Where a GET connects and what its Host line says: one per origin, parsed once."""

    __slots__ = ("absolute", "host", "host_line", "key", "port", "tls")

    def __init__(self, parsed: URL) -> None:
        scheme = parsed.scheme
        host = parsed.raw_host
        if scheme not in DEFAULT_PORTS or not host:
            raise ValueError(f"not an http(s) URL with a host: {str(parsed)!r}")
        if not _is_clean(host):
            raise ValueError(f"whitespace or control characters in the host {host!r}")
        port = parsed.port or DEFAULT_PORTS[scheme]
        self.tls = scheme == "https"
        self.host = host
        self.port = port
        self.key = (scheme, host, port)
        authority = f"[{host}]" if ":" in host else host
        if parsed.explicit_port is not None and port != DEFAULT_PORTS[scheme]:
            authority = f"{authority}:{port}"
        self.host_line = f" HTTP/1.1\r\nHost: {authority}".encode("ascii")
        self.absolute = f"{scheme}://{authority}".encode("ascii")
        """What goes before the path when the request is asked of a proxy (absolute form)."""


def _is_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _is_clean(text: str) -> bool:
    """Printable ASCII without spaces: nothing that could end a request line or inject one."""
    return text.isascii() and text.isprintable() and " " not in text


class Http1Client:
    """GETs over pooled HTTP/1.1 connections, each request with `headers` (and From:
    `config.from_address`, when set). `get` never raises for what the network or the server did:
    it returns a `FetchFailure`."""

    def __init__(
        self,
        config: FetchConfig,
        headers: dict[str, str],
        *,
        limit: int = 100,
        ssl_context: ssl.SSLContext | None = None,
        keep_raw: bool = False,
        guard: AddressGuard | None = None,
        proxy_login: ProxyLogin | None = None,
    ) -> None:
        """`keep_raw`: each answer keeps its bytes as they came, and the request's as they went
        (`Response.raw`, `Response.request`, `Response.peer`), for WARC records. `guard`: which
        addresses may be connected to (a crawl's knows its seeds); default, a lone client's.
        With `config.proxy`, every connection goes through it (crawler.http.proxy, or
        crawler.http.socks), with `proxy_login` as its credentials."""
        self.loop = asyncio.get_running_loop()
        self._config = config
        self._guard = guard if guard is not None else AddressGuard(config)
        self._limit = max(1, limit)
        if config.from_address and not any(name.lower() == "from" for name in headers):
            headers = {**headers, "From": config.from_address}
        lines = "".join(f"\r\n{name}: {value}" for name, value in headers.items())
        self._request_tail = (lines + "\r\n\r\n").encode("latin-1")
        self._ssl_context = ssl_context
        self._idle: dict[tuple[str, str, int], list[Connection]] = {}
        self._idle_order: OrderedDict[Connection, None] = OrderedDict()
        self._open = 0
        self._room: list[asyncio.Future[None]] = []
        self._origins: dict[str, _Origin] = {}
        self._dns: dict[tuple[str, int], tuple[float, list[tuple[Any, ...]]]] = {}
        self._pinned = config.pinned()
        """fetch.resolve: host names whose address is given, not looked up."""
        self._closing = False
        self._keep_raw = keep_raw
        self._proxy: ProxyRoute | SocksRoute | None = None
        if config.proxy.startswith("socks"):
            self._proxy = SocksRoute.of(config.proxy, proxy_login)
        elif config.proxy:
            self._proxy = ProxyRoute.of(config.proxy, proxy_login.basic() if proxy_login else None)

    async def get(
        self,
        url: str,
        max_bytes: int,
        *,
        html_only: bool = False,
        headers: Sequence[tuple[str, str]] = (),
    ) -> Response | FetchFailure:
        try:
            target, request_target = self._target(url)
            extra = "".join(f"\r\n{name}: {value}" for name, value in headers).encode("latin-1")
        except (ValueError, TypeError, UnicodeError) as error:
            return FetchFailure(url, "invalid-url", str(error))
        if isinstance(self._proxy, ProxyRoute) and not target.tls:
            # Asked of the proxy: the URL whole, and the proxy's credentials.
            request_target = target.absolute + request_target
            extra += self._proxy.header_line()
        request = b"GET " + request_target + target.host_line + extra + self._request_tail
        deadline: tuple[float, float] | None = None
        for attempt in (1, 2):
            try:
                connection, reused, deadline = await self._acquire(target, deadline)
            except ExchangeError as failure:
                return FetchFailure(url, failure.kind, str(failure))
            try:
                return await connection.exchange(
                    request, url, max_bytes, html_only, self._config.read_timeout, deadline
                )
            except StaleConnectionError as stale:
                if not stale.sent and attempt == 1:
                    continue  # nothing went out: the host saw no request
                if reused:
                    message = "the server closed a kept-alive connection without an answer"
                    return FetchFailure(url, "closed", message)
                return FetchFailure(url, "connection", "the server closed without an answer")
            except ExchangeError as failure:
                return FetchFailure(url, failure.kind, str(failure))
            finally:
                self._release(connection)
        raise AssertionError("unreachable")  # pragma: no cover

    def _target(self, url: str) -> tuple[_Origin, bytes]:
        """The URL's origin and its request target (path and query, as the URL has them: a
        normal URL is percent-encoded already, crawler.urls)."""
        after_scheme = url.find("://") + 3
        path_at = url.find("/", after_scheme) if after_scheme > 2 else -1
        if path_at < 0 or any(mark in url[after_scheme:path_at] for mark in "?#"):
            parsed = URL(url, encoded=True)  # no path, or an odd form: yarl reads it whole
            origin_text = str(parsed.origin())
            path = parsed.raw_path_qs or "/"
        else:
            origin_text = url[:path_at]
            path = url[path_at:].partition("#")[0]
        origin = self._origins.get(origin_text)
        if origin is None:
            origin = _Origin(URL(origin_text, encoded=True))
            if len(self._origins) >= MAX_ORIGINS_KEPT:
                self._origins.clear()
            self._origins[origin_text] = origin
        if not _is_clean(path):
            raise ValueError(f"whitespace or control characters in {url!r}")
        return origin, path.encode("ascii")

    # --- the pool -------------------------------------------------------------------------------

    async def _acquire(
        self, target: _Origin, deadline: tuple[float, float] | None
    ) -> tuple[Connection, bool, tuple[float, float]]:
        """A connection to the origin, whether it is one reused, and the GET's deadline (the
        one given, else fetch.total_timeout from now: room in the pool is found): an idle one
        if there is one, else a new one once there is room (closing the least recently used
        idle one of another origin if need be)."""
        while True:
            idle = self._idle.get(target.key)
            while idle:
                connection = idle.pop()
                del self._idle_order[connection]
                fresh = self.loop.time() - connection.idle_since < KEEPALIVE_SECONDS
                if fresh and not connection.closed:
                    return connection, True, deadline or self._deadline()
                connection.close()
                self.forget(connection, wake=False)
            if self._open < self._limit:
                break
            if self._idle_order:
                oldest, _ = self._idle_order.popitem(last=False)
                self._idle[oldest.key].remove(oldest)
                oldest.close()
                self.forget(oldest, wake=False)  # its room is ours
                break
            room: asyncio.Future[None] = self.loop.create_future()
            self._room.append(room)
            try:
                await room
            except asyncio.CancelledError:
                if room in self._room:
                    self._room.remove(room)
                elif room.done() and not room.cancelled():
                    self._make_room()  # pass the wake-up on
                raise
        self._open += 1
        deadline = deadline or self._deadline()
        try:
            connection = await self._connect(target, deadline[0])
            connection.counted = True
            return connection, False, deadline
        except BaseException:
            self._open -= 1
            self._make_room()
            raise

    def _deadline(self) -> tuple[float, float]:
        total = self._config.total_timeout
        return self.loop.time() + total, total

    def _release(self, connection: Connection) -> None:
        connection.finished()
        if connection.reusable and not connection.closed and not self._closing:
            connection.idle_since = self.loop.time()
            self._idle.setdefault(connection.key, []).append(connection)
            self._idle_order[connection] = None
            self._make_room()
            return
        connection.close()
        self.forget(connection)

    def forget(self, connection: Connection, *, wake: bool = True) -> None:
        """The connection is closed or closing: it no longer counts, nor waits idle. With
        `wake`, a task waiting for room is told there is some."""
        if not connection.counted:
            return
        connection.counted = False
        self._open -= 1
        if connection in self._idle_order:
            del self._idle_order[connection]
            self._idle[connection.key].remove(connection)
        if wake:
            self._make_room()

    def _make_room(self) -> None:
        """Wake one task waiting for a connection: one closed, or one went idle (it may be
        closed to make room)."""
        while self._room:
            room = self._room.pop(0)
            if not room.done():
                room.set_result(None)
                return

    async def _connect(self, target: _Origin, deadline: float) -> Connection:
        config = self._config
        # Whichever ends first: connect_timeout, or what is left of the GET's total_timeout.
        by_total = deadline < self.loop.time() + config.connect_timeout
        try:
            async with asyncio.timeout_at(
                deadline if by_total else self.loop.time() + config.connect_timeout
            ):
                if self._proxy is not None:
                    return await self._through_proxy(target, self._proxy)
                addresses = await self._allowed(
                    target, interleaved(await self._resolve(target.host, target.port))
                )
                error: Exception | None = None
                for number, (family, address) in enumerate(addresses, 1):
                    try:
                        if number == len(addresses):
                            return await self._open_connection(target, family, address)
                        # More to try: a dead address (an IPv6 route that goes nowhere) may
                        # cost this long, not the whole connect_timeout.
                        async with asyncio.timeout(ATTEMPT_SECONDS):
                            return await self._open_connection(target, family, address)
                    except (OSError, TimeoutError) as failure:
                        error = failure
                assert error is not None
                raise error
        except TimeoutError:
            if by_total:
                message = (
                    f"no complete answer within fetch.total_timeout ({config.total_timeout:g} s)"
                    " (still connecting)"
                )
            else:
                message = (
                    f"no connection within fetch.connect_timeout ({config.connect_timeout:g} s)"
                )
            raise ExchangeError("timeout", message) from None
        except socket.gaierror as error:
            raise ExchangeError("dns", f"cannot resolve {target.host}: {error}") from None
        except ssl.SSLCertVerificationError as error:
            where = f"{target.host}:{target.port}"
            raise ExchangeError("tls", f"the certificate of {where} failed: {error}") from None
        except (OSError, ssl.SSLError, ValueError) as error:
            message = str(error) or type(error).__name__
            where = f"{target.host}:{target.port}"
            raise ExchangeError("connection", f"cannot connect to {where}: {message}") from None

    async def _allowed(self, target: _Origin, addresses: list[Address]) -> list[Address]:
        """The addresses the guard lets the GET connect to; when none is left, the `blocked`
        failure naming the first refused."""
        allowed: list[Address] = []
        refused: str | None = None
        for entry in addresses:
            why = await self._guard.refusal(target.host, entry[1][0])
            if why is None:
                allowed.append(entry)
            elif refused is None:
                refused = why
        if refused is not None and not allowed:
            raise ExchangeError("blocked", refused)
        return allowed

    async def _through_proxy(self, target: _Origin, proxy: ProxyRoute | SocksRoute) -> Connection:
        """A connection to `target` through the proxy. An http or socks5h proxy resolves the
        name, so only a target written as an IP address is put to the guard; through socks5,
        the crawl resolves it, and the guard judges each address as without a proxy."""
        if isinstance(proxy, SocksRoute) and not proxy.remote_dns:
            found = interleaved(await self._resolve(target.host, target.port))
            addresses = [address[0] for _, address in await self._allowed(target, found)]
        else:
            addresses = [target.host]
            if _is_literal(target.host):
                family = socket.AF_INET6 if ":" in target.host else socket.AF_INET
                await self._allowed(target, [(family, (target.host, target.port))])
        if isinstance(proxy, ProxyRoute):
            sock = await proxy_socket(proxy, target.host, target.port, tunnel=target.tls)
        else:
            timeout = self._config.connect_timeout + 1  # the caller's deadline comes first
            sock = await socks_socket(proxy, addresses, target.port, timeout)
        return await self._open_connection(target, sock.family, (), sock=sock)

    async def _open_connection(
        self,
        target: _Origin,
        family: int,
        address: tuple[Any, ...],
        *,
        sock: socket.socket | None = None,
    ) -> Connection:
        tls: ssl.SSLContext | None = None
        if target.tls:
            if self._ssl_context is None:
                self._ssl_context = ssl.create_default_context()
            tls = self._ssl_context
        factory: Callable[[], Connection] = lambda: Connection(  # noqa: E731
            self.loop, target.key, self.forget, keep_raw=self._keep_raw
        )
        hostname = target.host if tls is not None else None
        if sock is not None:
            _, connection = await self.loop.create_connection(
                factory, sock=sock, ssl=tls, server_hostname=hostname
            )
            return connection
        _, connection = await self.loop.create_connection(
            factory, address[0], address[1], family=family, ssl=tls, server_hostname=hostname
        )
        return connection

    async def _resolve(self, host: str, port: int) -> list[Address]:
        host = self._pinned.get(host, host)
        try:
            literal = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        if literal is not None:
            family = socket.AF_INET6 if literal.version == 6 else socket.AF_INET
            return [(family, (host, port))]
        now = self.loop.time()
        cached = self._dns.get((host, port))
        if cached is not None and cached[0] > now:
            return [(info[0], info[4]) for info in cached[1]]
        infos = await self.loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        if not infos:
            raise socket.gaierror(f"no address for {host}")
        self._dns[(host, port)] = (now + DNS_TTL, list(infos))
        return [(info[0], info[4]) for info in infos]

    async def close(self) -> None:
        self._closing = True
        for connections in list(self._idle.values()):
            for connection in list(connections):
                connection.close()
                self.forget(connection)
        self._idle.clear()
        self._idle_order.clear()
        # Let the transports finish closing before the loop may end.
        await asyncio.sleep(0)
