"""The aiohttp client of the fetcher (crawler.http.fetcher): the same GETs through one aiohttp
ClientSession, where httptools is not installed or `fetch.client: aiohttp` asks for it. aiohttp's
errors become `FetchFailure` kinds here, and its connections stamp each answer's first bytes.
"""

from __future__ import annotations

import functools
import ssl
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

import aiohttp
from aiohttp.client_proto import ResponseHandler
from yarl import URL

from crawler.config import FetchConfig
from crawler.http.answer import ACCEPT, HTML_TYPES, FailureKind, FetchFailure, Response

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


def _failure(url: str, error: BaseException) -> FetchFailure:
    """`error` as the failure it is: the first kind of `_ERROR_KINDS` it is an instance of, else
    `connection`."""
    kind: FailureKind = next(
        (kind for classes, kind in _ERROR_KINDS if isinstance(error, classes)), "connection"
    )
    message = str(error) or type(error).__name__
    return FetchFailure(url, kind, message)


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


class AiohttpClient:
    """The same GETs through one aiohttp ClientSession."""

    def __init__(
        self,
        config: FetchConfig,
        user_agent: str,
        connections: int,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self._config = config
        connector = _stamping_connector(
            limit=connections, limit_per_host=0, ttl_dns_cache=300, ssl=ssl_context or True
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            headers={"User-Agent": user_agent, "Accept": ACCEPT},
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
            # A normal URL is already percent-encoded as it should go out (crawler.urls): yarl
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
