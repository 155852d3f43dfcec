"""URL rules, and with crawler.canonical_urls the only place they live. Pure: no I/O.

- the normal form (SPEC section 8): `normalize_url`, the one form the seen set compares;
- links: `resolve_url`, and `LinkResolver` for the many hrefs of one page;
- a normal URL's parts: `origin_of`, `host_of`, `path_segments`, `extensions_of`, ...

The canonical form robots.txt matching compares (SPEC section 4: `match_target`,
`canonical_pattern`) is in crawler.canonical_urls; the normal form builds on its percent-encoding,
and its names are importable from here too.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

import idna

from crawler.canonical_urls import (
    CANONICAL_CHARS,
    ESCAPE,
    canonical_escape,
    canonical_path,
    canonical_pattern,
    encode_run,
    match_target,
    path_and_query,
    remove_dot_segments,
    utf8_bytes,
)

__all__ = [
    "CANONICAL_CHARS",
    "DEFAULT_PORTS",
    "REPEAT_PERIODS",
    "InvalidUrlError",
    "LinkResolver",
    "canonical_path",
    "canonical_pattern",
    "domain_to_ascii",
    "extensions_of",
    "host_of",
    "match_target",
    "most_repeats",
    "normalize_url",
    "origin_of",
    "path_and_query",
    "path_segments",
    "remove_dot_segments",
    "resolve_url",
    "robots_url_of",
    "utf8_bytes",
]

# --- normalisation (SPEC section 8) --------------------------------------------------------------


class InvalidUrlError(ValueError):
    """A string that cannot be crawled as a URL; `reason` says why in a few words.

    A plain ValueError, not a CrawlerError: callers turn it into a skip with its reason (links)
    or a ConfigError naming the line (seeds)."""

    def __init__(self, reason: str, url: str) -> None:
        super().__init__(f"{reason}: {url!r}")
        self.reason = reason
        self.url = url


DEFAULT_PORTS = {"http": "80", "https": "443"}
# Bound again by assignment: on a name a `from` import binds, CPython 3.11 compiles
# `name.sub(...)` as an attribute load and a call, not as a method call (LOAD_METHOD).
_ESCAPE = ESCAPE
# Characters a normalised path and query keep as they are: unreserved, reserved, and `%` of escapes
# already made canonical. Unlike a robots.txt match target, `*` and `$` stay literal: they are
# sub-delimiters, and encoding them would change the URL the server sees.
_TO_ENCODE_IN_NORMAL = re.compile(r"[^A-Za-z0-9\-._~!&'()+,;=:@/?\[\]%*$]+")
# The common case, already normal: lower-case http(s) scheme and host, a port, a path of plain
# characters, no escapes, no fragment, no dot segments (checked apart), no empty query.
_NORMAL_URL = re.compile(
    r"(https?)://[a-z0-9\-.]*[a-z0-9\-](?::([1-9][0-9]{0,4}))?/[A-Za-z0-9\-._~!&'()+,;=:@/?\[\]*$]*"
).fullmatch
_DOT_SEGMENT = re.compile(r"/\.\.?(?:[/?]|$)")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_STRIP = " \t\n\r\f\v\x00"
_TAB_OR_NEWLINE = re.compile(r"[\t\n\r]")
_CONTROL = re.compile(r"[\x00-\x20\x7f]")
_C0_AND_SPACE = "".join(chr(code) for code in range(0x21))
_NOT_IN_HOST = re.compile(r'[ <>"{}|\\^`%/@:\[\]]')
_NOT_IN_IP6_HOST = re.compile(r'[ <>"{}|\\^`%/@]')


def _backslashes_as_slashes(text: str) -> str:
    """As browsers read http(s) URLs: a backslash before the query or fragment is a slash; one in
    the query stays (and is percent-encoded later)."""
    if "\\" not in text:
        return text
    cut = min((at for at in (text.find("?"), text.find("#")) if at != -1), default=len(text))
    return text[:cut].replace("\\", "/") + text[cut:]


def _host_to_ascii(host: str, url: str) -> str:
    host = host.lower()
    if host.isascii():
        return host
    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError) as error:
        raise InvalidUrlError(
            f"host is not a valid international domain name ({error})", url
        ) from error


def _normal_path(path: str) -> str:
    if "%" in path:
        path = _ESCAPE.sub(canonical_escape, path)
    return _TO_ENCODE_IN_NORMAL.sub(encode_run, path)


def normalize_url(url: str) -> str:
    """`url` in the one form the seen set compares: lower-case scheme and host, no default port,
    no userinfo, no fragment, dot segments resolved, percent-encoding canonical (SPEC sections 4
    and 8), IDN hosts in punycode, `/` for an empty path. Only http and https URLs are crawlable;
    anything else raises InvalidUrlError with the reason."""
    plain = _NORMAL_URL(url)
    if plain is not None and url[-1] != "?" and not _DOT_SEGMENT.search(url):
        scheme, port = plain.groups()
        if port is None or (port != DEFAULT_PORTS[scheme] and int(port) <= 65_535):
            return url
    return _normalize_slowly(url)


def _normalize_slowly(url: str) -> str:
    text = _TAB_OR_NEWLINE.sub("", url.strip(_STRIP))
    scheme_match = _SCHEME.match(text)
    if scheme_match is None:
        raise InvalidUrlError("not an absolute URL (expected http:// or https://)", url)
    scheme = scheme_match.group(1).lower()
    if scheme not in DEFAULT_PORTS:
        raise InvalidUrlError(f"scheme {scheme!r} is not crawled (only http and https)", url)
    rest = _backslashes_as_slashes(text[scheme_match.end() :])
    if not rest.startswith("//"):
        raise InvalidUrlError("no host (expected scheme://host/...)", url)
    rest = rest[2:]
    cut = len(rest)
    for mark in "/?#":
        position = rest.find(mark)
        if position != -1 and position < cut:
            cut = position
    authority, tail = rest[:cut], rest[cut:]
    authority = authority.rpartition("@")[2]
    host, port = authority, ""
    if authority.startswith("["):
        close = authority.find("]")
        if close == -1:
            raise InvalidUrlError("unterminated IPv6 address", url)
        host, after = authority[: close + 1], authority[close + 1 :]
        if after and not after.startswith(":"):
            raise InvalidUrlError("junk after the IPv6 address", url)
        port = after[1:]
    elif ":" in authority:
        host, _, port = authority.rpartition(":")
    if port and (not port.isdigit() or not port.isascii() or int(port) > 65_535):
        raise InvalidUrlError(f"port {port!r} is not a number from 0 to 65535", url)
    if port:
        port = str(int(port))
    if "%" in host:
        host = _unquote_host(host, url)
    # A trailing dot goes before and after IDNA mapping, which can reveal one ("a.test\u3002").
    host = _host_to_ascii(host.rstrip("."), url).rstrip(".") if host.strip(".") else ""
    # Outside brackets a host has no colon: "a:80:80" is no host with a port.
    forbidden = _NOT_IN_IP6_HOST if host.startswith("[") else _NOT_IN_HOST
    if not host or forbidden.search(host) or _CONTROL.search(host):
        raise InvalidUrlError("no valid host", url)
    netloc = host if not port or port == DEFAULT_PORTS[scheme] else f"{host}:{port}"
    tail = tail.partition("#")[0]
    path, mark, query = tail.partition("?")
    # Escapes first, so an escaped dot ("%2E%2E") is a dot segment too (RFC 3986 section 6.2.2).
    path = remove_dot_segments(_normal_path(path)) if path.startswith("/") else "/"
    normal = f"{scheme}://{netloc}{path}"
    if query:
        normal += "?" + _normal_path(query)
    return normal


def _unquote_host(host: str, url: str) -> str:
    try:
        return unquote(host, errors="strict")
    except UnicodeDecodeError as error:
        raise InvalidUrlError("host has escapes that are not UTF-8", url) from error


def _directory_of(base: str) -> str:
    """A normal URL up to the last `/` of its path: what a relative path is joined to."""
    path_end = base.find("?")
    return base[: base.rindex("/", 0, path_end if path_end != -1 else len(base)) + 1]


def resolve_url(base: str, href: str) -> str:
    """A link `href` found on the page at `base` (a normal URL), resolved and normalised.
    InvalidUrlError for anything that is not a crawlable http(s) URL."""
    if href.startswith(("http://", "https://")):
        return normalize_url(href)
    # As browsers read an href: C0 controls and spaces at the ends go, tabs and newlines anywhere
    # go, and before any query or fragment a backslash is a slash.
    href = _backslashes_as_slashes(_TAB_OR_NEWLINE.sub("", href.strip(_C0_AND_SPACE)))
    if not href:
        return normalize_url(base.partition("#")[0])
    first = href[0]
    if first == "/":
        if href.startswith("//"):
            return normalize_url(base[: base.index(":") + 1] + href)
        return normalize_url(origin_of(base) + href)
    if first == "#":
        return normalize_url(base)
    scheme = _SCHEME.match(href)
    if scheme is not None:
        return normalize_url(href)
    if first == "?":
        return normalize_url(base.partition("?")[0] + href)
    return normalize_url(_directory_of(base) + href)


# An href made only of characters a normal URL keeps as they are: no escapes, spaces, controls,
# backslashes or fragment. Joined to a normal base it is normal already, unless it has dot
# segments or an empty query, which `LinkResolver` checks apart.
_PLAIN_HREF = re.compile(r"[A-Za-z0-9\-._~!&'()+,;=:@/?\[\]*$]+").fullmatch


class LinkResolver:
    """`resolve_url` for the many hrefs of one page: the base is split once, and the common
    hrefs (`/a/b.html`, `../b.html?x=1`, `http://host/b`) that need no more than joining and dot
    segments resolved take a short path. Any other href takes `resolve_url`; the answers are the
    same."""

    __slots__ = ("_directory", "_origin", "base")

    def __init__(self, base: str) -> None:
        self.base = base
        self._origin = origin_of(base)
        self._directory = _directory_of(base)

    def __call__(self, href: str) -> str:
        if "#" in href:
            # The fragment never reaches the normal form, once the rest is plain (spaces at the
            # end of the rest are not at the end of the href, so they are kept and encoded).
            rest = href[: href.index("#")]
            if _PLAIN_HREF(rest) is None or rest[-1] == "?":
                return resolve_url(self.base, href)
            href = rest
        elif _PLAIN_HREF(href) is None or href[-1] == "?":
            return resolve_url(self.base, href)
        first = href[0]
        if first == "/":
            if href[1:2] == "/":
                return resolve_url(self.base, href)
            tail = href
        elif first == "h" and href.startswith(("http://", "https://")):
            return normalize_url(href)
        elif first == "?":
            return resolve_url(self.base, href)
        elif ":" in href:
            scheme = _SCHEME.match(href)
            if scheme is not None and scheme.group(1).lower() not in DEFAULT_PORTS:
                name = scheme.group(1).lower()
                raise InvalidUrlError(f"scheme {name!r} is not crawled (only http and https)", href)
            return resolve_url(self.base, href)
        else:
            tail = self._directory[len(self._origin) :] + href
        if "/." in tail:
            path, mark, query = tail.partition("?")
            tail = remove_dot_segments(path) + mark + query
        return self._origin + tail

    @property
    def join_parts(self) -> tuple[str, str]:
        """(origin, directory) of the base: the short path joins `/x` to the first and `x` to
        the second (crawler.page._pagescan.c takes the short path the same way)."""
        return self._origin, self._directory

    def __repr__(self) -> str:
        return f"LinkResolver({self.base!r})"


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of a normal URL: the unit robots.txt and politeness apply to."""
    return url[: url.index("/", url.index("//") + 2)]


def host_of(url: str) -> str:
    """The host name of a normal URL, without port."""
    authority = url[url.index("//") + 2 : url.index("/", url.index("//") + 2)]
    if authority.startswith("["):
        return authority[: authority.index("]") + 1]
    return authority.partition(":")[0]


def path_segments(url: str) -> list[str]:
    """The segments of a normal URL's path: `http://h/a/b/?q` has `a`, `b` and `` (the end)."""
    start = url.index("/", url.index("//") + 2)
    end = url.find("?", start)
    return url[start + 1 : end if end >= 0 else len(url)].split("/")


REPEAT_PERIODS = 3
"""Groups of up to this many segments are looked for repeating: `/a/a/a`, `/a/b/a/b/a/b`."""


def most_repeats(segments: list[str]) -> int:
    """How many times in a row a segment, or a group of up to REPEAT_PERIODS segments, occurs
    in a path at most: 1 for a path with no repeat. The end's empty segment is no segment."""
    if segments and segments[-1] == "":
        segments = segments[:-1]
    most = 1 if segments else 0
    for period in range(1, REPEAT_PERIODS + 1):
        # A run of k copies of a group of `period` segments is (k - 1) * period segments in a
        # row each equal to the one `period` before it.
        streak = 0
        for index in range(period, len(segments)):
            if segments[index] == segments[index - period]:
                streak += 1
                most = max(most, 1 + streak // period)
            else:
                streak = 0
    return most


def robots_url_of(origin: str) -> str:
    return origin + "/robots.txt"


def domain_to_ascii(domain: str) -> str:
    """A configured domain in the form normal URLs carry: lower case, punycode, no end dot."""
    domain = domain.strip().strip(".")
    try:
        return _host_to_ascii(domain, domain).strip(".")
    except InvalidUrlError:
        return domain.lower()


def extensions_of(url: str) -> tuple[str, ...]:
    """The file name extensions the last segment of a normal URL's path may be read to have, lower
    case, longest first: `/a/Book.TAR.gz?x` gives ("tar.gz", "gz"); `/a/` none."""
    start = url.find("/", url.find("//") + 2)
    if start < 0:
        return ()
    end = len(url)
    for mark in "?#":
        at = url.find(mark, start)
        if 0 <= at < end:
            end = at
    segment = url[url.rfind("/", start, end) + 1 : end]
    dot = segment.find(".", 1)  # a leading dot names a hidden file, not an extension
    if dot < 0:
        return ()
    tail = segment[dot + 1 :].lower()
    found = []
    while tail:
        found.append(tail)
        dot = tail.find(".")
        tail = tail[dot + 1 :] if dot >= 0 else ""
    return tuple(found)
