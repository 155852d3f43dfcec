"""The HTTP client: pooled connections, timeouts, a cap on decoded bytes, no automatic redirects.

Two clients do the GETs: the crawl's own HTTP/1.1 client on httptools (crawler/http1.py), five
times lighter on the event loop, and aiohttp's ClientSession, where httptools is not installed or
`fetch.client: aiohttp` asks for it. Both end a request in the same shape: a `Response` (any
status) or a `FetchFailure` value whose `kind` names what went wrong (`timeout`, `dns`,
`connection`, `closed` (a kept-alive connection closed without an answer; http1 only), `payload`,
`protocol`, `invalid-url`). Neither raises: a failed fetch is a value the
crawl counts, retries or records. Redirects are returned, not followed: the crawl checks every hop
against robots.txt and scope before it asks for it.
"""

from __future__ import annotations

import functools
import importlib.util
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol

import aiohttp
from aiohttp.client_proto import ResponseHandler
from multidict import CIMultiDictProxy
from yarl import URL

from crawler.config import FetchConfig
from crawler.errors import ConfigError

__all__ = ["FetchFailure", "Fetcher", "Response", "is_html"]

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"


def is_html(content_type: str) -> bool:
    return content_type in HTML_TYPES


@dataclass(frozen=True, slots=True)
class Response:
    url: str
    status: int
    headers: CIMultiDictProxy[str]
    content_type: str
    """Media type, lower case, without parameters; empty when the server sent none."""
    charset: str | None
    body: bytes
    """Decoded (decompressed) body, at most the cap; empty when it was not asked for."""
    truncated: bool = False
    answered_at: float | None = None
    """`time.monotonic()` when the answer's first bytes reached the process, when the client
    could tell (see `_StampingHandler`); the host had answered by then."""

    @property
    def location(self) -> str | None:
        return self.headers.get("Location")


@dataclass(frozen=True, slots=True)
class FetchFailure:
    url: str
    kind: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


def _failure(url: str, error: BaseException) -> FetchFailure:
    dns_error = getattr(aiohttp, "ClientConnectorDNSError", None)
    # ftp:, mailto: and the like; not an InvalidURL in aiohttp 3.10 and later.
    non_http = getattr(aiohttp, "NonHttpUrlClientError", None)
    if isinstance(error, TimeoutError):
        kind = "timeout"
    elif dns_error is not None and isinstance(error, dns_error):
        kind = "dns"
    elif isinstance(error, aiohttp.InvalidURL) or (
        non_http is not None and isinstance(error, non_http)
    ):
        kind = "invalid-url"
    elif isinstance(error, aiohttp.ClientPayloadError):
        kind = "payload"
    elif isinstance(error, aiohttp.ClientResponseError | ValueError | UnicodeError):
        kind = "protocol"
    else:
        kind = "connection"
    message = str(error) or type(error).__name__
    return FetchFailure(url, kind, message)


_answering: ContextVar[_StampingHandler | None] = ContextVar("answering", default=None)


class _StampingHandler(ResponseHandler):
    """aiohttp's connection protocol, noting when the first bytes of each answer arrive.

    Why: politeness counts a host's interval from its answer (crawler/politeness.py), and the
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


def _stamping_connector(**options: Any) -> aiohttp.TCPConnector:
    """A TCPConnector whose connections are `_StampingHandler`s, where this aiohttp builds its
    protocols as the code was written against (else a plain one: answers then carry no stamp, and
    the crawl stamps them when it sees them, later but as safe)."""
    connector = aiohttp.TCPConnector(**options)
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


class _Client(Protocol):
    async def get(
        self, url: str, max_bytes: int, *, html_only: bool = False
    ) -> Response | FetchFailure: ...

    async def close(self) -> None: ...


def http1_available() -> bool:
    """Whether httptools, which the http1 client parses with, is installed."""
    return importlib.util.find_spec("httptools") is not None


class Fetcher:
    """GET with the crawl's User-Agent over pooled connections: the http1 client
    (crawler/http1.py) or aiohttp's, as `fetch.client` says. Use as an async context manager,
    or call `open()` and `close()`."""

    def __init__(self, config: FetchConfig, user_agent: str, *, connections: int = 100) -> None:
        self._config = config
        self._user_agent = user_agent
        self._connections = connections
        self._client: _Client | None = None

    @property
    def client_name(self) -> str:
        """The client `fetch.client` comes to on this machine: 'http1' or 'aiohttp'."""
        choice = self._config.client
        if choice == "auto":
            return "http1" if http1_available() else "aiohttp"
        return choice

    async def open(self) -> None:
        if self._client is not None:
            return
        if self.client_name == "http1":
            if not http1_available():
                raise ConfigError(
                    "fetch.client: http1 needs the httptools package; install it, or set "
                    "fetch.client to auto or aiohttp"
                )
            from crawler.content_coding import accept_encoding
            from crawler.http1 import Http1Client

            headers = {
                "User-Agent": self._user_agent,
                "Accept": _ACCEPT,
                "Accept-Encoding": accept_encoding(),
            }
            self._client = Http1Client(self._config, headers, limit=self._connections)
        else:
            self._client = _AiohttpClient(self._config, self._user_agent, self._connections)

    async def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    async def __aenter__(self) -> Fetcher:
        await self.open()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def get(
        self, url: str, *, max_bytes: int | None = None, html_only: bool = False
    ) -> Response | FetchFailure:
        """One GET of `url`, redirects not followed. The body is read up to `max_bytes` decoded
        bytes (default: the config's cap); with `html_only`, only an HTML body is read."""
        if self._client is None:
            raise RuntimeError("Fetcher.get() before open()")
        cap = self._config.max_body_bytes if max_bytes is None else max_bytes
        return await self._client.get(url, cap, html_only=html_only)

    def __repr__(self) -> str:
        state = "closed" if self._client is None else f"open, {self.client_name}"
        return f"Fetcher({state}, user_agent={self._user_agent!r})"


class _AiohttpClient:
    """The same GETs through one aiohttp ClientSession."""

    def __init__(self, config: FetchConfig, user_agent: str, connections: int) -> None:
        self._config = config
        connector = _stamping_connector(limit=connections, limit_per_host=0, ttl_dns_cache=300)
        self._session = aiohttp.ClientSession(
            connector=connector,
            headers={"User-Agent": user_agent, "Accept": _ACCEPT},
            timeout=aiohttp.ClientTimeout(
                total=None, sock_connect=config.connect_timeout, sock_read=config.read_timeout
            ),
            cookie_jar=aiohttp.DummyCookieJar(),
            auto_decompress=True,
            raise_for_status=False,
        )

    async def close(self) -> None:
        await self._session.close()

    async def get(
        self, url: str, max_bytes: int, *, html_only: bool = False
    ) -> Response | FetchFailure:
        try:
            # A normal URL is already percent-encoded as it should go out (crawler/urls.py): yarl
            # need not parse and quote it again for every request.
            target = URL(url, encoded=True)
            _answering.set(None)
            async with self._session.get(target, allow_redirects=False) as answer:
                protocol = _answering.get()
                answered_at = None if protocol is None else protocol.first_bytes_at
                content_type = answer.content_type.lower() if answer.content_type else ""
                if "Content-Type" not in answer.headers:
                    content_type = ""
                want_body = not html_only or content_type in HTML_TYPES or not content_type
                body, truncated = (
                    (await _read_capped(answer, max_bytes)) if want_body else (b"", False)
                )
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
        except (TimeoutError, aiohttp.ClientError, OSError, ValueError) as error:
            return _failure(url, error)


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
