"""What a GET comes to: a `Response` (any status) or a `FetchFailure` value. Plain values, shared
by both clients, the crawl and the records; no I/O.

A failure's `kind` says what went wrong:

    timeout      no connection within fetch.connect_timeout, no more of the answer within
                 fetch.read_timeout, or not the whole answer within fetch.total_timeout
    dns          the host name does not resolve
    connection   refused, reset, or closed before an answer on a new connection
    tls          the server's certificate failed verification
    closed       a kept-alive connection closed without an answer (http1 only): the server may
                 have read the request, so it is asked again at the host's pace, not at once
    payload      the body broke off or did not decode
    protocol     not HTTP the client can read
    invalid-url  a URL the client cannot ask for
    blocked      the host is at an address fetch.block_private_addresses refuses (loopback,
                 private, link-local, ...): nothing was sent; asking again changes nothing
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from multidict import CIMultiDictProxy

__all__ = [
    "ACCEPT",
    "HTML_TYPES",
    "FailureKind",
    "FetchFailure",
    "Response",
    "head_length",
    "is_html",
]

FailureKind: TypeAlias = Literal[
    "timeout", "dns", "connection", "tls", "closed", "payload", "protocol", "invalid-url", "blocked"
]

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"


def is_html(content_type: str) -> bool:
    return content_type in HTML_TYPES


def head_length(raw: bytes) -> int | None:
    """Where the first HTTP head in `raw` ends, its blank line (CRLF or a bare LF) included;
    None when it has not ended."""
    ends = [at + len(mark) for mark in (b"\r\n\r\n", b"\n\n") if (at := raw.find(mark)) >= 0]
    return min(ends, default=None)


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
    raw: bytes | None = None
    """The answer as it came over the wire, head and body before any decoding (chunked framing
    and Content-Encoding as sent), when the client was asked to keep it (for WARC,
    crawler.output.warc); None otherwise, and for a body not wanted (not HTML, `html_only`)
    that was not read to its end either (a short one is, to keep the connection)."""
    request: bytes | None = None
    """The request as sent, head included, when `raw` is kept."""
    peer: str | None = None
    """The IP address the answer came from, when `raw` is kept."""

    @property
    def location(self) -> str | None:
        return self.headers.get("Location")


@dataclass(frozen=True, slots=True)
class FetchFailure:
    url: str
    kind: FailureKind
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"
