"""The HTTP client: pooled connections, timeouts, a cap on decoded bytes, no automatic redirects.

Two clients do the GETs: the crawl's own HTTP/1.1 client on httptools (crawler.http.http1), lighter
on the event loop, and aiohttp's ClientSession (crawler.http.aiohttp_client), where httptools is
not installed or `fetch.client: aiohttp` asks for it. Both end a request in the same shape
(crawler.http.answer): a `Response` (any status) or a `FetchFailure` value whose `kind` names what
went wrong. Neither raises: a failed fetch is a value the crawl counts, retries or records.
Redirects are returned, not followed: the crawl checks every hop against robots.txt and scope
before it asks for it.
"""

from __future__ import annotations

import importlib.util
import os
import ssl
from collections.abc import Sequence
from types import TracebackType
from typing import Protocol

from crawler.config import FetchConfig
from crawler.errors import ConfigError
from crawler.http.answer import ACCEPT, FetchFailure, Response
from crawler.http.guard import AddressGuard
from crawler.http.users import UserRequests

__all__ = ["Client", "Fetcher", "http1_available", "tls_context"]


class Client(Protocol):
    """What the `Fetcher` asks of a client: one GET, redirects not followed, never raising; and
    closing its connections. A test or an embedder may hand one in (`Fetcher(client=...)`)."""

    async def get(
        self,
        url: str,
        max_bytes: int,
        *,
        html_only: bool = False,
        headers: Sequence[tuple[str, str]] = (),
    ) -> Response | FetchFailure:
        """`headers`: sent with this request besides the client's own (a conditional GET's
        If-None-Match and If-Modified-Since)."""
        ...

    async def close(self) -> None: ...


def tls_context(config: FetchConfig) -> ssl.SSLContext | None:
    """The TLS settings of the crawl's connections: `fetch.ca_bundle`'s certificate authorities
    instead of the system's; with `fetch.verify_tls` false, no verification at all. None for the
    defaults, which the clients load when a first https URL needs them. ConfigError when the
    bundle cannot be read as PEM."""
    if config.verify_tls and not config.ca_bundle:
        return None
    try:
        context = ssl.create_default_context(cafile=config.ca_bundle or None)
    except (OSError, ssl.SSLError) as error:
        raise ConfigError(
            f"fetch.ca_bundle: cannot load {config.ca_bundle!r} as PEM certificates ({error})"
        ) from error
    if not config.verify_tls:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def http1_available() -> bool:
    """Whether httptools, which the http1 client parses with, is installed."""
    return importlib.util.find_spec("httptools") is not None


class Fetcher:
    """GET with the crawl's User-Agent (and From: `fetch.from_address`, which either client adds)
    over pooled connections: the http1 client (crawler.http.http1) or aiohttp's, as
    `fetch.client` says, or the `client` given. Use as an async context manager, or call
    `open()` and `close()`."""

    def __init__(
        self,
        config: FetchConfig,
        user_agent: str,
        *,
        connections: int = 100,
        client: Client | None = None,
        keep_raw: bool = False,
        guard: AddressGuard | None = None,
        users: UserRequests | None = None,
    ) -> None:
        """`keep_raw`: answers keep their bytes as they came (`Response.raw`, for WARC); only the
        http1 client can, so the aiohttp client is then a ConfigError at `open()`. `guard`: the
        addresses the clients may connect to (crawler.http.guard); default, a lone client's,
        which refuses only what fetch.block_private_addresses does. `users`: the user's headers,
        credentials and cookies (crawler.http.users); default, the config's, with the passwords
        read from the environment now (ConfigError naming a variable that is not set)."""
        self.users = users if users is not None else UserRequests.of(config, os.environ)
        self._config = config
        self.guard = guard if guard is not None else AddressGuard(config)
        self._keep_raw = keep_raw
        self._user_agent = user_agent
        self._connections = connections
        self._given = client
        self._client: Client | None = None

    @property
    def client_name(self) -> str:
        """The client `fetch.client` comes to on this machine: 'http1' or 'aiohttp' (or the
        class name of the client given)."""
        if self._given is not None:
            return type(self._given).__name__
        choice = self._config.client
        if choice == "auto":
            return "http1" if http1_available() else "aiohttp"
        return choice

    async def open(self) -> None:
        if self._client is not None:
            return
        if self._given is not None:
            self._client = self._given
        elif self._keep_raw and self.client_name != "http1":
            raise ConfigError(
                "output.warc needs the http1 client, which keeps the bytes of each answer as they "
                "came: set fetch.client to http1 or auto, with the httptools package installed"
            )
        elif self.client_name == "http1":
            if not http1_available():
                raise ConfigError(
                    "fetch.client: http1 needs the httptools package; install it, or set "
                    "fetch.client to auto or aiohttp"
                )
            # Imported here: httptools, which they need, is optional.
            from crawler.http.coding import accept_encoding
            from crawler.http.http1 import Http1Client

            headers = {
                "User-Agent": self._user_agent,
                "Accept": ACCEPT,
                "Accept-Encoding": accept_encoding(),
            }
            self._client = Http1Client(
                self._config,
                headers,
                limit=self._connections,
                ssl_context=tls_context(self._config),
                keep_raw=self._keep_raw,
                guard=self.guard,
                proxy_login=self.users.proxy_login,
            )
        else:
            # Imported here: aiohttp takes a quarter of a second to import, a cost a crawl on
            # the http1 client need not pay.
            from crawler.http.aiohttp_client import AiohttpClient

            self._client = AiohttpClient(
                self._config,
                self._user_agent,
                self._connections,
                tls_context(self._config),
                guard=self.guard,
                proxy_login=self.users.proxy_login,
            )

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
        self,
        url: str,
        *,
        max_bytes: int | None = None,
        html_only: bool = False,
        headers: Sequence[tuple[str, str]] = (),
        public: bool = False,
    ) -> Response | FetchFailure:
        """One GET of `url`, redirects not followed. The body is read up to `max_bytes` decoded
        bytes (default: the config's cap); with `html_only`, only an HTML body is read.
        `headers` go with this request (values with control characters are not sent), after
        the user's (crawler.http.users) unless `public`: a robots.txt or tdmrep.json request,
        which carries no user header, credential or cookie, and whose cookies are not kept."""
        client = self._client
        if client is None:
            raise RuntimeError("Fetcher.get() before open()")
        cap = self._config.max_body_bytes if max_bytes is None else max_bytes
        if headers:
            headers = [(name, value) for name, value in headers if value.isprintable()]
        users = self.users
        if public or users.idle:
            if headers:
                return await client.get(url, cap, html_only=html_only, headers=headers)
            return await client.get(url, cap, html_only=html_only)
        sent = [*users.headers_for(url), *headers]
        answer = await client.get(url, cap, html_only=html_only, headers=sent)
        if users.jar is not None and isinstance(answer, Response):
            users.answered(url, answer.headers.getall("Set-Cookie", ()))
        return answer

    def __repr__(self) -> str:
        state = "closed" if self._client is None else f"open, {self.client_name}"
        return f"Fetcher({state}, user_agent={self._user_agent!r})"
