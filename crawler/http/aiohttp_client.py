"""The aiohttp client of the fetcher (crawler.http.fetcher): the same GETs through one aiohttp
ClientSession, where httptools is not installed or `fetch.client: aiohttp` asks for it. aiohttp's
errors become `FetchFailure` kinds here, and its connections stamp each answer's first bytes.

It is held to what the http1 client keeps (crawler.http.connection): the same limits on an
answer's head, the same deadline on a whole GET (fetch.total_timeout; here it counts a wait for
room in the pool too), and the same address guard (crawler.http.guard), on the addresses its
resolver gives and on IP literals, which aiohttp does not look up.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
import ssl
import time
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

import aiohttp
import aiohttp_socks
from aiohttp import http_exceptions
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.client_proto import ResponseHandler
from yarl import URL

from crawler.config import FetchConfig
from crawler.http.answer import ACCEPT, HTML_TYPES, FailureKind, FetchFailure, Response
from crawler.http.connection import MAX_HEADER_BYTES, MAX_HEADER_LINE_BYTES, MAX_HEADER_LINES
from crawler.http.guard import AddressGuard
from crawler.http.socks import SocksRoute
from crawler.http.socks_connector import SocksCertificateError, SocksConnector
from crawler.http.users import ProxyLogin

__all__ = ["AiohttpClient"]


def _error_kinds() -> tuple[
    tuple[type[BaseException] | tuple[type[BaseException], ...], FailureKind], ...
]:
    """aiohttp's errors and the failure kind each is, in the order they are tried (a subclass
    before its base). Classes an older aiohttp lacks are left out."""
    dns_error = getattr(aiohttp, "ClientConnectorDNSError", None)
    # ftp:, mailto: and the like; not an InvalidURL in aiohttp 3.10 and later.
    non_http = getattr(aiohttp, "NonHttpUrlClientError", None)
    optional: tuple[tuple[type[BaseException] | None, FailureKind], ...] = (
        (dns_error, "dns"),
        (non_http, "invalid-url"),
    )
    return (
        (TimeoutError, "timeout"),
        *((cls, kind) for cls, kind in optional if cls is not None),
        (aiohttp.InvalidURL, "invalid-url"),
        # A certificate that fails verification is also a ValueError: the connection's failure,
        # not the answer's.
        (aiohttp.ClientConnectorCertificateError, "tls"),
        (aiohttp.ClientPayloadError, "payload"),
        ((aiohttp.ClientResponseError, ValueError, UnicodeError), "protocol"),
    )


_ERROR_KINDS = _error_kinds()


def _failure(url: str, error: BaseException, config: FetchConfig) -> FetchFailure:
    """`error` as the failure it is: the first kind of `_ERROR_KINDS` it is an instance of, else
    `connection`. A timeout says which setting it was, as the http1 client's do."""
    kind: FailureKind = next(
        (kind for classes, kind in _ERROR_KINDS if isinstance(error, classes)), "connection"
    )
    if kind == "protocol" and _in_the_body(error):
        kind = "payload"
    message = str(error) or type(error).__name__
    if isinstance(error, aiohttp.ClientResponseError) and error.message:
        # Its status (400) is aiohttp's verdict on the answer, not one the server sent.
        message = f"malformed answer: {error.message}"
    if isinstance(error, _CONNECT_TIMEOUT):
        message = f"no connection within fetch.connect_timeout ({config.connect_timeout:g} s)"
    elif isinstance(error, _READ_TIMEOUT):
        message = f"no data for {config.read_timeout:g} s (fetch.read_timeout)"
    return FetchFailure(url, kind, message)


def _in_the_body(error: BaseException) -> bool:
    """Whether a parse error aiohttp reports as the answer's is in the body's chunks: aiohttp
    parses a body that came in the packet of its head before it hands out the answer, and then
    calls a bad chunk a bad message. The http1 client calls that a payload failure, as aiohttp
    does when the chunk comes later (`_StampingHandler.set_exception`)."""
    return isinstance(error, aiohttp.ClientResponseError) and "chunk" in error.message.lower()


# aiohttp 3.10 and later tell a connect's timeout from a read's; an older one, neither.
_CONNECT_TIMEOUT: tuple[type[BaseException], ...] = tuple(
    getattr(aiohttp, name) for name in ("ConnectionTimeoutError",) if hasattr(aiohttp, name)
)
_READ_TIMEOUT: tuple[type[BaseException], ...] = tuple(
    getattr(aiohttp, name) for name in ("SocketTimeoutError",) if hasattr(aiohttp, name)
)


class BlockedAddressError(Exception):
    """A host's addresses are all ones the address guard refuses. Not an OSError, so that
    aiohttp lets it through as it is rather than as a DNS error."""


class _PinnedResolver(AbstractResolver):
    """fetch.resolve: the address given for a pinned host name; `inner`'s answer for others."""

    def __init__(self, inner: AbstractResolver, pinned: dict[str, str]) -> None:
        self._resolver = inner
        self._pinned = pinned

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        address = self._pinned.get(host.lower())
        if address is None:
            return await self._resolver.resolve(host, port, family)
        version = ipaddress.ip_address(address).version
        pinned_family = socket.AF_INET6 if version == 6 else socket.AF_INET
        return [
            {
                "hostname": host,
                "host": address,
                "port": port,
                "family": pinned_family,
                "proto": 0,
                "flags": socket.AI_NUMERICHOST,
            }
        ]

    async def close(self) -> None:
        await self._resolver.close()


class _GuardedResolver(AbstractResolver):
    """`inner`'s answers, keeping only the addresses the guard allows (crawler.http.guard): the
    connector connects to what this returns, so a name (or a redirect to one) that resolves to
    an address it refuses is never connected to."""

    def __init__(self, inner: AbstractResolver, guard: AddressGuard) -> None:
        self._resolver = inner
        self._guard = guard

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        results = await self._resolver.resolve(host, port, family)
        allowed: list[ResolveResult] = []
        refused: str | None = None
        for result in results:
            why = await self._guard.refusal(host, result["host"])
            if why is None:
                allowed.append(result)
            elif refused is None:
                refused = why
        if refused is not None and not allowed:
            raise BlockedAddressError(refused)
        return allowed

    async def close(self) -> None:
        await self._resolver.close()


_answering: ContextVar[_StampingHandler | None] = ContextVar("answering", default=None)


class _StampingHandler(ResponseHandler):
    """aiohttp's connection protocol, noting when the first bytes of each answer arrive.

    Why: politeness counts a host's interval from its answer (crawler.politeness), and the
    event loop calls `data_received` as soon as it polls the socket, while the request's task may
    resume much later, behind other work of the same iteration. The sooner stamp is still one the
    host had answered by, so the interval it starts is never short at the host.

    aiohttp calls `set_response_params` on the connection's protocol, in the requesting task,
    before each request it sends on it (a connection carries one request at a time): the stamp is
    reset there, and the protocol noted as the one answering this task (`_answering`), since a
    small answer read whole gives its connection back before the task could ask for it. Should
    the connection be reused before the task reads the stamp, the stamp is gone or later: never
    earlier than this answer."""

    first_bytes_at: float | None = None

    def set_response_params(self, **params: Any) -> None:
        self.first_bytes_at = None
        _answering.set(self)
        super().set_response_params(**params)

    def data_received(self, data: bytes) -> None:
        if self.first_bytes_at is None:
            self.first_bytes_at = time.monotonic()
        super().data_received(data)

    def set_exception(self, exc: BaseException, *args: Any) -> None:
        """The parser failed: a body being read fails with it. (aiohttp 3.14 sets the error on
        the connection alone and drops the read timeout: a reader of a body whose chunks turned
        malformed after its head would wait until the total timeout.)"""
        super().set_exception(exc, *args)
        payload = getattr(self, "_payload", None)
        if (
            isinstance(exc, http_exceptions.HttpProcessingError)
            and payload is not None
            and not payload.is_eof()
            and payload.exception() is None
        ):
            message = getattr(exc, "message", "") or str(exc) or type(exc).__name__
            payload.set_exception(aiohttp.ClientPayloadError(f"malformed body: {message}"))


def _stamping_connector(
    kind: type[aiohttp.TCPConnector] = aiohttp.TCPConnector, **options: Any
) -> aiohttp.TCPConnector:
    """A TCPConnector whose connections are `_StampingHandler`s, where this aiohttp builds its
    protocols as the code was written against (else a plain one: answers then carry no stamp, and
    the crawl stamps them when it sees them, later but as safe)."""
    connector = kind(**options)
    factory = getattr(connector, "_factory", None)
    if (
        isinstance(factory, functools.partial)
        and factory.func is ResponseHandler
        and not factory.args
        and set(factory.keywords) == {"loop"}
    ):
        stamping: Callable[[], ResponseHandler] = functools.partial(
            _StampingHandler, **factory.keywords
        )
        connector._factory = stamping  # type: ignore[assignment]
    return connector


class AiohttpClient:
    """The same GETs through one aiohttp ClientSession, with the same identity: `user_agent`, and
    `config.from_address` as the From header when it is set."""

    def __init__(
        self,
        config: FetchConfig,
        user_agent: str,
        connections: int,
        ssl_context: ssl.SSLContext | None = None,
        guard: AddressGuard | None = None,
        proxy_login: ProxyLogin | None = None,
    ) -> None:
        """`guard`: which addresses may be connected to (a crawl's knows its seeds); default, a
        lone client's. With `config.proxy`, every request goes through it (an http proxy:
        CONNECT for https, `proxy_login` as its Proxy-Authorization, and the guard judges only
        targets written as IP addresses, the proxy resolving the names; a SOCKS5 one:
        crawler.http.socks)."""
        self._config = config
        socks = config.proxy.startswith("socks")
        self._proxy = config.proxy if config.proxy and not socks else None
        self._proxy_headers = (
            {"Proxy-Authorization": proxy_login.basic().value}
            if proxy_login is not None and not socks
            else None
        )
        self._guard = guard = guard if guard is not None else AddressGuard(config)
        headers = {"User-Agent": user_agent, "Accept": ACCEPT}
        if config.from_address:
            headers["From"] = config.from_address
        resolver: AbstractResolver | None = None
        if config.resolve:
            resolver = _PinnedResolver(aiohttp.DefaultResolver(), config.pinned())
        self._guarded = guard.seeds_only or config.block_private_addresses
        if self._guarded and self._proxy is None:
            resolver = _GuardedResolver(resolver or aiohttp.DefaultResolver(), guard)
        options: dict[str, Any] = {
            "limit": connections,
            "limit_per_host": 0,
            "ttl_dns_cache": 300,
            "ssl": ssl_context or True,
        }
        if socks:
            route = SocksRoute.of(config.proxy, proxy_login)
            resolver = resolver or aiohttp.DefaultResolver()
            connector = _stamping_connector(
                SocksConnector, route=route, resolver=resolver, **options
            )
        else:
            if resolver is not None:
                options["resolver"] = resolver
            connector = _stamping_connector(aiohttp.TCPConnector, **options)
        self._session = aiohttp.ClientSession(
            connector=connector,
            headers=headers,
            timeout=aiohttp.ClientTimeout(
                total=None, sock_connect=config.connect_timeout, sock_read=config.read_timeout
            ),
            cookie_jar=aiohttp.DummyCookieJar(),
            auto_decompress=True,
            raise_for_status=False,
            max_line_size=MAX_HEADER_LINE_BYTES,
            max_field_size=MAX_HEADER_LINE_BYTES,
            max_headers=MAX_HEADER_LINES,
        )

    async def close(self) -> None:
        await self._session.close()

    async def get(
        self,
        url: str,
        max_bytes: int,
        *,
        html_only: bool = False,
        headers: Sequence[tuple[str, str]] = (),
    ) -> Response | FetchFailure:
        total = self._config.total_timeout
        deadline = asyncio.timeout(total)
        try:
            async with deadline:
                return await self._get(url, max_bytes, html_only, headers)
        except TimeoutError as error:
            if deadline.expired():
                message = f"no complete answer within fetch.total_timeout ({total:g} s)"
                return FetchFailure(url, "timeout", message)
            return _failure(url, error, self._config)
        except BlockedAddressError as error:
            return FetchFailure(url, "blocked", str(error))
        except SocksCertificateError as error:
            return FetchFailure(url, "tls", str(error))
        except aiohttp_socks.ProxyTimeoutError as error:
            return FetchFailure(url, "timeout", f"the SOCKS proxy: {error}")
        except (aiohttp_socks.ProxyConnectionError, aiohttp_socks.ProxyError) as error:
            return FetchFailure(url, "connection", f"the SOCKS proxy: {error}")
        except (aiohttp.ClientError, OSError, ValueError) as error:
            return _failure(url, error, self._config)

    async def _get(
        self, url: str, max_bytes: int, html_only: bool, headers: Sequence[tuple[str, str]]
    ) -> Response | FetchFailure:
        # A normal URL is already percent-encoded as it should go out (crawler.urls): yarl
        # need not parse and quote it again for every request.
        target = URL(url, encoded=True)
        if self._guarded:
            host = target.raw_host or ""
            # aiohttp connects to an IP literal without asking the resolver.
            why = await self._guard.refusal(host, host) if _is_ip(host) else None
            if why is not None:
                return FetchFailure(url, "blocked", why)
        _answering.set(None)
        extra = dict(headers) if headers else None
        if self._proxy_headers is not None and target.scheme == "http":
            # Asked of the proxy itself (an https URL's tunnel carries them in its CONNECT).
            extra = {**(extra or {}), **self._proxy_headers}
        async with self._session.get(
            target,
            allow_redirects=False,
            headers=extra,
            proxy=self._proxy,
            proxy_headers=self._proxy_headers,
        ) as answer:
            head = sum(len(name) + len(value) + 4 for name, value in answer.raw_headers)
            if head > MAX_HEADER_BYTES:
                message = f"the answer's head is over {MAX_HEADER_BYTES} bytes"
                return FetchFailure(url, "protocol", message)
            protocol = _answering.get()
            answered_at = None if protocol is None else protocol.first_bytes_at
            content_type = answer.content_type.lower() if answer.content_type else ""
            if "Content-Type" not in answer.headers:
                content_type = ""
            want_body = not html_only or content_type in HTML_TYPES or not content_type
            body, truncated = (await _read_capped(answer, max_bytes)) if want_body else (b"", False)
            return Response(
                url=url,
                status=answer.status,
                headers=answer.headers,
                content_type=content_type,
                charset=answer.charset,
                body=body,
                truncated=truncated,
                answered_at=answered_at,
            )


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        return False
    return True


async def _read_capped(answer: aiohttp.ClientResponse, cap: int) -> tuple[bytes, bool]:
    """At most `cap` decoded bytes of the body, and whether there was more. The cap is on decoded
    bytes so a small compressed answer cannot unpack into gigabytes."""
    length = answer.content_length
    encoding = answer.headers.get("Content-Encoding", "identity").lower()
    if length is not None and length <= cap and encoding == "identity":
        return await answer.read(), False
    chunks: list[bytes] = []
    size = 0
    async for chunk in answer.content.iter_any():
        chunks.append(chunk)
        size += len(chunk)
        if size > cap:
            return b"".join(chunks)[:cap], True
    return b"".join(chunks), False
