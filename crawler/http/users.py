"""What users bring to each request, decided per URL: their headers (`fetch.headers`), the
Basic credentials whose prefix the URL is under (`fetch.auth`), and the cookies of the crawl's jar
(`fetch.cookies`). Both clients send what `headers_for` gives; `answered` takes the cookies an
answer sets.

The passwords are read from the environment once, when the crawl starts (`UserRequests.of`), and
held only as the header values made of them, which no repr shows. robots.txt and tdmrep.json
requests carry none of this (`Fetcher.get(..., public=True)`): they ask for the file every crawler
reads, as every crawler asks for it.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from crawler.config import AuthEntry, FetchConfig
from crawler.errors import ConfigError
from crawler.http.cookies import CookieJar

__all__ = ["ProxyLogin", "Secret", "UserRequests", "basic_credentials"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class Secret:
    """A password, or a header value made of one: shown nowhere (repr and str say so)."""

    value: str = field(repr=False)

    def __str__(self) -> str:
        return "[redacted]"

    def __repr__(self) -> str:
        return "Secret([redacted])"


def basic_credentials(username: str, password: str) -> Secret:
    """The value of an Authorization (or Proxy-Authorization) header for HTTP Basic."""
    token = base64.b64encode(f"{username}:{password}".encode()).decode("ascii")
    return Secret(f"Basic {token}")


@dataclass(frozen=True, slots=True)
class ProxyLogin:
    """The proxy's user name and password (fetch.proxy_username, proxy_password_env): Basic
    for an http proxy (`basic`), RFC 1929's login for a SOCKS5 one."""

    username: str
    password: Secret

    def basic(self) -> Secret:
        """The Proxy-Authorization value an http proxy is sent."""
        return basic_credentials(self.username, self.password.value)


def _password(key: str, variable: str, environ: Mapping[str, str]) -> str:
    password = environ.get(variable)
    if password is None:
        raise ConfigError(f"{key}: the environment variable {variable} is not set")
    if not password.isprintable():
        raise ConfigError(f"{key}: the environment variable {variable} holds control characters")
    return password


@dataclass(frozen=True, slots=True)
class _Prefix:
    origin: tuple[str, str, int]
    path: str
    credentials: Secret


def _origin_path(url: str) -> tuple[tuple[str, str, int], str] | None:
    try:
        parts = urlsplit(url)
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme, 0)
    except ValueError:
        return None
    return (parts.scheme, (parts.hostname or "").lower(), port), parts.path or "/"


class UserRequests:
    """The user's part of each request: `headers_for(url)`; `answered(url, set_cookies)`."""

    def __init__(
        self,
        headers: Sequence[tuple[str, str]],
        prefixes: Sequence[_Prefix],
        jar: CookieJar | None,
        proxy_login: ProxyLogin | None,
    ) -> None:
        self._headers = list(headers)
        self._prefixes = list(prefixes)
        self.jar = jar
        self.proxy_login = proxy_login
        """fetch.proxy's user name and password, when it asks for them."""

    @classmethod
    def of(cls, config: FetchConfig, environ: Mapping[str, str]) -> UserRequests:
        """The config's headers, credentials (passwords from `environ`) and jar; ConfigError
        naming the key of a password's variable that is not set."""
        prefixes = [_prefix(number, entry, environ) for number, entry in enumerate(config.auth)]
        proxy = None
        if config.proxy_username:
            password = _password("fetch.proxy_password_env", config.proxy_password_env, environ)
            if config.proxy.startswith("socks") and len(password.encode()) > 255:
                raise ConfigError(
                    "fetch.proxy_password_env: a SOCKS5 password is at most 255 bytes (RFC 1929)"
                )
            proxy = ProxyLogin(config.proxy_username, Secret(password))
        jar = CookieJar() if config.cookies else None
        return cls(config.headers, prefixes, jar, proxy)

    @property
    def idle(self) -> bool:
        """Nothing to add to any request."""
        return not self._headers and not self._prefixes and self.jar is None

    def headers_for(self, url: str) -> list[tuple[str, str]]:
        """The headers a page or sitemap request to `url` carries besides the client's own."""
        headers = list(self._headers)
        if self._prefixes:
            credentials = self.credentials_for(url)
            if credentials is not None:
                headers.append(("Authorization", credentials.value))
        if self.jar is not None:
            cookie = self.jar.header(url)
            if cookie:
                headers.append(("Cookie", cookie))
        return headers

    def credentials_for(self, url: str) -> Secret | None:
        """The credentials of the first `fetch.auth` prefix `url` is under: the same scheme,
        host and port, and a path that begins with the prefix's."""
        where = _origin_path(url)
        if where is None:
            return None
        origin, path = where
        for prefix in self._prefixes:
            if prefix.origin == origin and path.startswith(prefix.path):
                return prefix.credentials
        return None

    def answered(self, url: str, set_cookies: Sequence[str]) -> None:
        """The answer to a request for `url` set these cookies."""
        if self.jar is not None and set_cookies:
            self.jar.store(url, set_cookies)

    def __repr__(self) -> str:
        return (
            f"UserRequests({len(self._headers)} headers, {len(self._prefixes)} credentials, "
            f"{self.jar!r})"
        )


def _prefix(number: int, entry: AuthEntry, environ: Mapping[str, str]) -> _Prefix:
    where = _origin_path(entry.url)
    assert where is not None  # checked at load (crawler.config.users)
    password = _password(f"fetch.auth[{number}].password_env", entry.password_env, environ)
    return _Prefix(where[0], where[1], basic_credentials(entry.username, password))
