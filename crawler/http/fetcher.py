"""The HTTP client: pooled connections, timeouts, a cap on decoded bytes, no automatic redirects.

Two clients do the GETs: the crawl's own HTTP/1.1 client on httptools (crawler/http/http1.py), five
times lighter on the event loop, and aiohttp's ClientSession, where httptools is not installed or
`fetch.client: aiohttp` asks for it. Both end a request in the same shape: a `Response` (any
status) or a `FetchFailure` value whose `kind` names what went wrong (`timeout`, `dns`,
`connection`, `closed` (a kept-alive connection closed without an answer; http1 only), `payload`,
`protocol`, `invalid-url`). Neither raises: a failed fetch is a value the
crawl counts, retries or records. Redirects are returned, not followed: the crawl checks every hop
against robots.txt and scope before it asks for it.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from types import TracebackType
from typing import Protocol

from multidict import CIMultiDictProxy

from crawler.config import FetchConfig
from crawler.errors import ConfigError

__all__ = [
    "ACCEPT",
    "HTML_TYPES",
    "FetchFailure",
    "Fetcher",
    "Response",
    "http1_available",
    "is_html",
]

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"


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
    (crawler/http/http1.py) or aiohttp's, as `fetch.client` says. Use as an async context manager,
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
            from crawler.http.coding import accept_encoding
            from crawler.http.http1 import Http1Client

            headers = {
                "User-Agent": self._user_agent,
                "Accept": ACCEPT,
                "Accept-Encoding": accept_encoding(),
            }
            self._client = Http1Client(self._config, headers, limit=self._connections)
        else:
            # Imported here: aiohttp takes a quarter of a second to import, a cost a crawl on
            # the http1 client need not pay.
            from crawler.http.aiohttp_client import AiohttpClient

            self._client = AiohttpClient(self._config, self._user_agent, self._connections)

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
