"""What users bring, read from the config: their fields (`extract:`), request headers
(`fetch.headers`), credentials (`fetch.auth`) and proxy (`fetch.proxy`). Each reader takes the key
and the YAML value and returns the typed value, or raises ConfigError naming the key and what it
expects. Secrets are never here: a config names the environment variable that holds each password
(`Credentials.resolve` reads them, where the crawl starts)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from crawler.errors import ConfigError
from crawler.selectors import FieldSelector, field_selector

__all__ = [
    "CONTROLLED_HEADERS",
    "AuthEntry",
    "is_loopback_host",
    "read_auth",
    "read_extract",
    "read_headers",
    "read_proxy",
]

_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""A header name (RFC 9110 section 5.6.2)."""
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

CONTROLLED_HEADERS: Mapping[str, str] = {
    "host": "the crawl sends the URL's host",
    "content-length": "a GET has no body",
    "transfer-encoding": "a GET has no body",
    "connection": "the client keeps its connections",
    "keep-alive": "the client keeps its connections",
    "proxy-connection": "the client keeps its connections",
    "upgrade": "the client speaks HTTP/1.1",
    "te": "the client reads the answer's framing",
    "trailer": "a GET has no body",
    "expect": "a GET has no body",
    "accept-encoding": "the client asks for the codings it can decode, within a cap",
    "user-agent": "set it with user_agent, which robots.txt is matched with",
    "from": "set it with fetch.from_address",
    "authorization": "give fetch.auth, which sends it only to the URLs under its prefix",
    "proxy-authorization": "give fetch.proxy_username and fetch.proxy_password_env",
    "if-none-match": "a recrawl's conditional GET sets it",
    "if-modified-since": "a recrawl's conditional GET sets it",
    "range": "the crawl reads whole bodies, up to fetch.max_body_bytes",
}
"""Headers the crawl sets itself, which `fetch.headers` may not, and why."""


def read_headers(key: str, value: object) -> tuple[tuple[str, str], ...]:
    """`fetch.headers`: a mapping of header names to values."""
    expected = "a mapping of header names to values, like {X-Api-Key: abc, Accept-Language: fr}"
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key} must be {expected}, not {value!r}")
    headers: list[tuple[str, str]] = []
    for name, text in value.items():
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            raise ConfigError(f"{key}: {name!r} is not a header name; expected {expected}")
        why = CONTROLLED_HEADERS.get(name.lower())
        if why is not None:
            raise ConfigError(f"{key}: {name} is the crawl's to set ({why})")
        if isinstance(text, int | float) and not isinstance(text, bool):
            text = str(text)
        if not isinstance(text, str) or not (text == "" or text.isprintable()):
            raise ConfigError(f"{key}.{name} must be a string on one line, not {text!r}")
        headers.append((name, text.strip()))
    return tuple(headers)


def read_extract(key: str, value: object) -> tuple[FieldSelector, ...]:
    """`extract`: field names to CSS selectors (the first match) or to {css: ..., all: true}
    (every match, a list)."""
    expected = (
        "a mapping of field names to CSS selectors, like {title: h1::text, sku: "
        '"meta[itemprop=sku]::attr(content)", tags: {css: ".tag::text", all: true}}'
    )
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key} must be {expected}, not {value!r}")
    selectors: list[FieldSelector] = []
    for name, spec in value.items():
        if not isinstance(name, str) or not _FIELD_NAME.fullmatch(name):
            raise ConfigError(
                f"{key}: {name!r} is not a field name (letters, digits, '_' and '-', a letter "
                "or '_' first)"
            )
        css, every = spec, False
        if isinstance(spec, Mapping):
            unknown = sorted(str(k) for k in spec if k not in ("css", "all"))
            if unknown:
                raise ConfigError(f"{key}.{name}: unknown key {unknown[0]}; expected css, all")
            css, every = spec.get("css"), spec.get("all", False)
            if not isinstance(every, bool):
                raise ConfigError(f"{key}.{name}.all must be true or false, not {every!r}")
        if not isinstance(css, str):
            raise ConfigError(f"{key}.{name} must be a CSS selector or {{css: ..., all: true}}")
        try:
            selectors.append(field_selector(name, css, all=every))
        except ValueError as error:
            raise ConfigError(f"{key}.{name}: {error}") from None
    return tuple(selectors)


@dataclass(frozen=True, slots=True)
class AuthEntry:
    """One entry of `fetch.auth`: HTTP Basic credentials for the URLs under `url`."""

    url: str
    """The prefix: its scheme, host and port are matched exactly, its path as a prefix."""
    username: str
    password_env: str
    """The environment variable that holds the password (never the password itself)."""
    allow_http: bool = False
    """Send the credentials over plain http to a host that is not loopback (they go in clear)."""


def is_loopback_host(host: str) -> bool:
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def read_auth(key: str, value: object) -> tuple[AuthEntry, ...]:
    """`fetch.auth`: a list of {url: PREFIX, username: NAME, password_env: VARIABLE}."""
    expected = "a list of {url: PREFIX, username: NAME, password_env: VARIABLE}"
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ConfigError(f"{key} must be {expected}, not {value!r}")
    entries: list[AuthEntry] = []
    for number, item in enumerate(value):
        at = f"{key}[{number}]"
        if not isinstance(item, Mapping):
            raise ConfigError(f"{at} must be a mapping {{url, username, password_env}}")
        known = ("url", "username", "password_env", "allow_http")
        for name in item:
            if name == "password":
                raise ConfigError(
                    f"{at}.password: a password is never written in a config; put it in an "
                    "environment variable and name it with password_env"
                )
            if name not in known:
                raise ConfigError(f"{at}: unknown key {name}; expected {', '.join(known)}")
        url, username, env = item.get("url"), item.get("username"), item.get("password_env")
        allow_http = item.get("allow_http", False)
        if not isinstance(url, str) or not isinstance(username, str) or not isinstance(env, str):
            raise ConfigError(f"{at} must have url, username and password_env, as strings")
        if not isinstance(allow_http, bool):
            raise ConfigError(f"{at}.allow_http must be true or false, not {allow_http!r}")
        parts = urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"{at}.url must be an http(s) URL with a host, not {url!r}")
        if parts.username or parts.password or parts.query or parts.fragment:
            raise ConfigError(f"{at}.url: a prefix has no user, query or fragment: {url!r}")
        if parts.scheme == "http" and not (allow_http or is_loopback_host(parts.hostname)):
            raise ConfigError(
                f"{at}.url {url!r}: credentials go over https only (over http they travel in "
                "clear); a host on loopback may use http, and allow_http: true says you accept it"
            )
        if ":" in username or not username.isprintable():
            raise ConfigError(f"{at}.username: no ':' or control characters in {username!r}")
        if not _ENV_NAME.fullmatch(env):
            raise ConfigError(f"{at}.password_env must name an environment variable, not {env!r}")
        entries.append(AuthEntry(url.strip(), username, env, allow_http))
    return tuple(entries)


def read_proxy(key: str, value: object) -> str:
    """`fetch.proxy`: empty, http://HOST:PORT (https targets tunnel through it, CONNECT), or
    socks5://HOST:PORT (the crawl resolves the names) or socks5h://HOST:PORT (the proxy does)."""
    expected = "http://HOST:PORT, socks5://HOST:PORT or socks5h://HOST:PORT, or empty for none"
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        raise ConfigError(f"{key} must be {expected}, not {value!r}")
    try:
        parts = urlsplit(value.strip())
        parts.port  # noqa: B018 (a port that is no number raises here)
    except ValueError as error:
        raise ConfigError(f"{key}: {value!r}: {error}; expected {expected}") from None
    if parts.scheme in ("socks4", "socks4a", "https"):
        raise ConfigError(
            f"{key}: {parts.scheme}:// proxies are not supported; expected {expected}"
        )
    if parts.scheme not in ("http", "socks5", "socks5h") or not parts.hostname:
        raise ConfigError(f"{key} must be {expected}, not {value!r}")
    if parts.password is not None or parts.username:
        raise ConfigError(
            f"{key}: no credentials in the URL (they would be written in clear); give "
            "fetch.proxy_username and fetch.proxy_password_env"
        )
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ConfigError(f"{key}: a proxy URL has no path, query or fragment: {value!r}")
    return f"{parts.scheme}://{parts.netloc}"
