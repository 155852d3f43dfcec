"""`CookieJar`: the cookies sites set, kept for one crawl (`fetch.cookies`) and sent back.

The rules are the standard library's `http.cookiejar` (domain and host-only cookies, path
prefixes, expiry and Max-Age, Secure sent over https only, public-suffix-like domains refused by
its DefaultCookiePolicy), driven by the URL and the answer's Set-Cookie lines rather than by
urllib's request objects. `dump` and `load` carry the jar as JSON-ready rows, for the crawl's
state (crawler.state's RunStore): a resumed crawl keeps its session.

A shared crawl's workers share one jar through the server (crawler.state.shared.cookies): with
`sharing` on, the jar notes each cookie an answer sets or deletes (`take_changes`), and takes in
the others' (`apply`).
"""

from __future__ import annotations

import http.cookiejar
import json
from collections.abc import Iterable, Sequence
from email.message import Message
from typing import Any
from urllib.parse import urlsplit

__all__ = ["CookieJar"]

MAX_COOKIES = 10_000
"""Cookies kept in all: a site setting a new cookie on every page must not grow the jar, nor the
state, without bound. Past it, the jar is cleared of expired cookies, then of the oldest."""

_FIELDS = (
    "version",
    "name",
    "value",
    "port",
    "port_specified",
    "domain",
    "domain_specified",
    "domain_initial_dot",
    "path",
    "path_specified",
    "secure",
    "expires",
    "discard",
    "comment",
    "comment_url",
    "rfc2109",
)


CookieKey = tuple[str, str, str]
"""A cookie's identity in a jar: its domain, path and name."""


class _NotingJar(http.cookiejar.CookieJar):
    """The standard jar, noting into `noting` (while it is set) each cookie set, and each
    deleted (an answer's expired Set-Cookie: None)."""

    def __init__(self) -> None:
        super().__init__()
        self.noting: dict[CookieKey, http.cookiejar.Cookie | None] | None = None

    def set_cookie(self, cookie: http.cookiejar.Cookie) -> None:
        super().set_cookie(cookie)
        if self.noting is not None:
            self.noting[(cookie.domain, cookie.path, cookie.name)] = cookie

    def clear(
        self, domain: str | None = None, path: str | None = None, name: str | None = None
    ) -> None:
        super().clear(domain, path, name)
        if self.noting is not None and domain is not None and path is not None and name:
            self.noting[(domain, path, name)] = None


def _row(cookie: http.cookiejar.Cookie) -> dict[str, Any]:
    return {name: getattr(cookie, name) for name in _FIELDS}


class _Request:
    """What `http.cookiejar` asks of a request (urllib.request.Request's names), for one URL."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self._url = url
        self.type = parts.scheme
        self.host = parts.netloc.rpartition("@")[2]
        self.origin_req_host = parts.hostname or ""
        self.unverifiable = False
        self.cookie: str | None = None

    def get_full_url(self) -> str:
        return self._url

    def get_host(self) -> str:
        return self.host

    def get_type(self) -> str:
        return self.type

    def get_origin_req_host(self) -> str:
        return self.origin_req_host

    def is_unverifiable(self) -> bool:
        return self.unverifiable

    def has_header(self, name: str) -> bool:
        return name.lower() == "cookie" and self.cookie is not None

    def get_header(self, name: str, default: str | None = None) -> str | None:
        return self.cookie if name.lower() == "cookie" and self.cookie is not None else default

    def header_items(self) -> list[tuple[str, str]]:
        return []

    def add_unredirected_header(self, name: str, value: str) -> None:
        if name.lower() == "cookie":
            self.cookie = value


class _Answer:
    """What `http.cookiejar` asks of a response: its headers, as an email Message."""

    def __init__(self, set_cookies: Iterable[str]) -> None:
        self._headers = Message()
        for line in set_cookies:
            self._headers["Set-Cookie"] = line

    def info(self) -> Message:
        return self._headers


class CookieJar:
    """The cookies of one crawl: `header(url)` is the Cookie header to send with a request to
    `url`, `store(url, lines)` takes in the Set-Cookie lines of its answer."""

    def __init__(self) -> None:
        self._jar = _NotingJar()
        self.changed = False
        """Cookies were set or changed since the jar was last dumped (the state writes it)."""
        self.sharing = False
        """Note the cookies answers set or delete, for the other workers (`take_changes`)."""
        self._changes: dict[CookieKey, http.cookiejar.Cookie | None] = {}

    def header(self, url: str) -> str | None:
        request = _Request(url)
        self._jar.add_cookie_header(request)  # type: ignore[arg-type]
        return request.cookie

    def store(self, url: str, set_cookies: Sequence[str]) -> None:
        if not set_cookies:
            return
        if self.sharing:
            self._jar.noting = self._changes
        try:
            self._jar.extract_cookies(_Answer(set_cookies), _Request(url))  # type: ignore[arg-type]
        finally:
            self._jar.noting = None
        self.changed = True
        if len(self._jar) > MAX_COOKIES:
            self._jar.clear_expired_cookies()
            cookies = list(self._jar)
            for cookie in cookies[: max(0, len(cookies) - MAX_COOKIES)]:
                self._jar.clear(cookie.domain, cookie.path, cookie.name)

    def dump(self) -> list[dict[str, Any]]:
        """Every cookie as a row of plain values, session cookies (no expiry) included: a
        crawl's session is the crawl, however many runs it takes."""
        self.changed = False
        return [_row(cookie) for cookie in self._jar]

    def load(self, rows: Iterable[dict[str, Any]]) -> None:
        for row in rows:
            try:
                values = {name: row[name] for name in _FIELDS}
                cookie = http.cookiejar.Cookie(**values, rest={})
            except (KeyError, TypeError):
                continue  # a row this version cannot read: that cookie is set again
            self._jar.set_cookie(cookie)

    def take_changes(self) -> list[tuple[str, dict[str, Any] | None]]:
        """The cookies answers set (a row) or deleted (None) since the last call, each by its
        key (`apply`'s)."""
        changes, self._changes = self._changes, {}
        return [
            (json.dumps(key), None if cookie is None else _row(cookie))
            for key, cookie in changes.items()
        ]

    def noted(self, key: str) -> bool:
        """Whether a change of the cookie `key` waits in `take_changes`: newer than any the
        others sent."""
        try:
            domain, path, name = json.loads(key)
        except (ValueError, TypeError):
            return False
        return (domain, path, name) in self._changes

    def apply(self, key: str, row: dict[str, Any] | None) -> None:
        """Another worker's change: the cookie `key` set to `row`, or deleted (None)."""
        if row is not None:
            self.load([row])
            return
        try:
            domain, path, name = json.loads(key)
            self._jar.clear(domain, path, name)
        except (ValueError, TypeError, KeyError):
            pass  # not in this jar, or a key this version cannot read: nothing to delete

    def __len__(self) -> int:
        return len(self._jar)

    def __repr__(self) -> str:
        return f"CookieJar({len(self._jar)} cookies)"
